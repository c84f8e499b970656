"""The usage summarizers report (`chainsum.summarize.report_usage`) reaches the manager's events: from an async
summarizer, from a plain function run in a worker thread, and from calls that failed (on the failure event when
the history was kept)."""

from __future__ import annotations

from chainsum.errors import SummarizerError
from chainsum.manager import ManagerEvent, SummarizationEvent, SummarizationFailedEvent
from chainsum.summarize import SummarizerUsage, report_usage
from manager.manager_support import SYSTEM, Dict, make, turn

PER_CALL = SummarizerUsage(input_tokens=300, output_tokens=12)


def _history() -> list[Dict]:
    hist: list[Dict] = [SYSTEM]
    for i in range(30):
        hist += turn(i)
    return hist


def _check(event: ManagerEvent | None, calls: int) -> None:
    assert isinstance(event, SummarizationEvent)
    assert calls > 0 and event.summarizer_calls == calls
    assert event.summarizer_usage == SummarizerUsage(input_tokens=300 * calls, output_tokens=12 * calls, requests=calls)


def test_usage_from_a_plain_function_in_its_worker_thread_reaches_the_event() -> None:
    calls: list[str] = []

    def summarize(transcript: str) -> str:  # run in a thread by the manager: the report must cross into it
        calls.append(transcript)
        report_usage(PER_CALL)
        return "Summary: f_0 in src/mod_0.py computes value 0."

    _check(make(summarizers=[summarize]).prepare_sync(_history()).event, len(calls))


def test_usage_from_an_async_summarizer_reaches_the_event() -> None:
    calls: list[str] = []

    async def summarize(transcript: str) -> str:
        calls.append(transcript)
        report_usage(PER_CALL)
        return "Summary: f_0 in src/mod_0.py computes value 0."

    _check(make(summarizers=[summarize]).prepare_sync(_history()).event, len(calls))


def test_usage_of_failed_calls_is_on_the_failure_event() -> None:
    calls: list[str] = []

    async def refuses(transcript: str) -> str:
        calls.append(transcript)
        report_usage(PER_CALL)
        raise SummarizerError("declined", kind="refused")

    hist = _history()
    prepared = make(summarizers=[refuses]).prepare_sync(hist)
    event = prepared.event
    assert isinstance(event, SummarizationFailedEvent) and prepared.messages is hist  # kept, as the manager fails open
    assert calls and event.summarizer_usage == SummarizerUsage(
        input_tokens=300 * len(calls), output_tokens=12 * len(calls), requests=len(calls)
    )
