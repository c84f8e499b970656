"""Fault injection: every summarizer failure kind, retry and backoff, the preference list, fail open or abort, a
failing archive. In every case no message is lost: the history comes back unchanged or its removed originals are
in the archive."""

from __future__ import annotations

import logging
from typing import cast

import pytest

from chainsum.errors import SummarizerError
from chainsum.manager import ContextManager, ManagerConfig, ManagerEvent, SummarizationEvent, SummarizationFailedEvent
from chainsum.store import MemoryArchive
from chainsum.strategies import Strategy
from chainsum.testing import ScriptedSummarizer
from manager.manager_support import SYSTEM, Dict, Sleeps, make, turn


def _history_over_trigger() -> list[Dict]:
    hist: list[Dict] = [SYSTEM]
    for i in range(30):
        hist += turn(i)
    return hist


@pytest.mark.parametrize("kind", ["transport", "rate_limit"])
def test_retryable_failure_is_retried_once_with_backoff_then_succeeds(kind: str) -> None:
    scripted = ScriptedSummarizer([SummarizerError("boom", kind=kind)], repeat=False)
    sleeps = Sleeps()
    events: list[ManagerEvent] = []
    manager = make(summarizers=[scripted], sleeps=sleeps, events=events)
    prepared = manager.prepare_sync(_history_over_trigger())
    assert isinstance(prepared.event, SummarizationEvent)
    assert sleeps.delays[0] == pytest.approx(0.25)  # 250 ms * 2**0
    assert scripted.call_count >= 2


def test_retry_after_is_honoured() -> None:
    scripted = ScriptedSummarizer([SummarizerError("slow down", kind="rate_limit", retry_after=3.0)])
    sleeps = Sleeps()
    manager = make(summarizers=[scripted], sleeps=sleeps)
    manager.prepare_sync(_history_over_trigger())
    assert sleeps.delays[0] == pytest.approx(3.0)


@pytest.mark.parametrize("kind", ["transport", "rate_limit"])
def test_retryable_failure_twice_fails_open(kind: str) -> None:
    scripted = ScriptedSummarizer([SummarizerError("down", kind=kind)], repeat=True)
    sleeps = Sleeps()
    events: list[ManagerEvent] = []
    archive = MemoryArchive()
    manager = make(summarizers=[scripted], sleeps=sleeps, events=events, archive=archive)
    hist = _history_over_trigger()
    prepared = manager.prepare_sync(hist)
    assert prepared.messages is hist  # the original, untouched
    assert isinstance(prepared.event, SummarizationFailedEvent)
    assert prepared.event.error_kind == kind and prepared.event.retryable
    assert all(d == pytest.approx(0.25) for d in sleeps.delays)  # one retry per call, never more
    assert archive.archived("default") == [] and archive.records("default") == []


@pytest.mark.parametrize("kind", ["invalid", "empty", "refused"])
def test_validation_failure_is_not_retried_and_goes_to_the_next_summarizer(kind: str) -> None:
    bad = ScriptedSummarizer([SummarizerError("no", kind=kind)], repeat=True)
    good = ScriptedSummarizer()
    sleeps = Sleeps()
    manager = make(summarizers=[bad, good], sleeps=sleeps)
    prepared = manager.prepare_sync(_history_over_trigger())
    assert isinstance(prepared.event, SummarizationEvent)
    assert sleeps.delays == []
    assert good.call_count >= 1
    assert bad.call_count == good.call_count  # each call tried the first summarizer exactly once


@pytest.mark.parametrize("kind", ["invalid", "empty", "refused"])
def test_validation_failure_of_the_only_summarizer_fails_open(kind: str) -> None:
    bad = ScriptedSummarizer([SummarizerError("no", kind=kind)], repeat=True)
    events: list[ManagerEvent] = []
    manager = make(summarizers=[bad], events=events)
    hist = _history_over_trigger()
    prepared = manager.prepare_sync(hist)
    assert prepared.messages is hist
    assert isinstance(prepared.event, SummarizationFailedEvent) and prepared.event.error_kind == kind
    assert not prepared.event.retryable


def test_empty_output_and_raising_callable() -> None:
    def raising(transcript: str) -> str:
        raise ConnectionError("reset by peer")

    def empty(transcript: str) -> str:
        return "   "

    events: list[ManagerEvent] = []
    manager = make(summarizers=[raising, empty], events=events)
    hist = _history_over_trigger()
    prepared = manager.prepare_sync(hist)
    assert prepared.messages is hist
    assert isinstance(prepared.event, SummarizationFailedEvent)
    assert prepared.event.error_kind == "empty"  # the last summarizer's failure


def test_abort_on_failure_raises_after_the_event() -> None:
    events: list[ManagerEvent] = []
    bad = ScriptedSummarizer([SummarizerError("no", kind="invalid")], repeat=True)
    manager = make(summarizers=[bad], events=events, abort_on_failure=True)
    with pytest.raises(SummarizerError):
        manager.prepare_sync(_history_over_trigger())
    assert len(events) == 1 and isinstance(events[0], SummarizationFailedEvent) and events[0].aborted


def test_abort_on_failure_raises_even_where_the_model_free_path_could_compact() -> None:
    """Masks and dropping old summaries could still shrink the history around a failed summary; with
    ``abort_on_failure`` the failure is what the caller hears, the history untouched."""
    events: list[ManagerEvent] = []
    bad = ScriptedSummarizer([SummarizerError("no", kind="invalid")], repeat=True)
    archive = MemoryArchive()
    manager = make(window=1500, summarizers=[bad], events=events, archive=archive, abort_on_failure=True)
    with pytest.raises(SummarizerError):
        manager.prepare_sync(_history_over_trigger())
    assert [type(e) for e in events] == [SummarizationFailedEvent]
    assert archive.records("default") == [] and archive.archived("default") == []
    fail_open = make(window=1500, summarizers=[bad])
    hist = _history_over_trigger()
    assert fail_open.prepare_sync(hist).messages is not hist  # past the window, fail open compacts model-free


def test_failed_attempt_starts_the_cooldown() -> None:
    bad = ScriptedSummarizer([SummarizerError("no", kind="invalid")], repeat=True)
    manager = make(summarizers=[bad])
    hist = _history_over_trigger()
    manager.prepare_sync(hist)
    calls = bad.call_count
    hist = [*hist, {"role": "user", "content": "one more"}]
    assert manager.prepare_sync(hist).event is None  # 1 message since the attempt: cooldown
    assert bad.call_count == calls


def test_failing_archive_returns_the_original_history() -> None:
    archive = MemoryArchive()
    archive.fail_writes = True
    events: list[ManagerEvent] = []
    manager = make(archive=archive, events=events)
    hist = _history_over_trigger()
    prepared = manager.prepare_sync(hist)
    assert prepared.messages is hist
    assert isinstance(prepared.event, SummarizationFailedEvent) and prepared.event.error_kind == "archive"
    assert manager.state.depth == 0


def test_a_failing_event_callback_does_not_break_prepare() -> None:
    def broken(event: ManagerEvent) -> None:
        raise RuntimeError("observer bug")

    manager = make()
    manager.events.subscribe(broken)
    prepared = manager.prepare_sync(_history_over_trigger())
    assert isinstance(prepared.event, SummarizationEvent)


def test_async_callback_receives_the_event() -> None:
    seen: list[ManagerEvent] = []

    async def on_event(event: ManagerEvent) -> None:
        seen.append(event)

    manager = make()
    manager.events.subscribe(on_event)
    prepared = manager.prepare_sync(_history_over_trigger())
    assert seen == [prepared.event]


class _BrokenPlanner:
    """A strategy with a bug: every plan raises."""

    name = "broken"

    def plan(self, messages: object, ctx: object) -> object:
        raise ValueError("span 2:19 separates a tool call from its result")


def test_a_compaction_that_raises_logs_one_line_with_its_cause(caplog: pytest.LogCaptureFixture) -> None:
    """Fail open, and say why in one WARNING line: no traceback, and none of the sync wrapper's "no running event
    loop" chained to it (the repro of issue 21 logged both)."""
    events: list[ManagerEvent] = []
    manager = ContextManager(
        ManagerConfig(),
        context_window=4000,
        strategy=cast(Strategy, _BrokenPlanner()),
        summarizers=[ScriptedSummarizer(["unused"])],
        archive=MemoryArchive(),
        on_event=events.append,
    )
    history = _history_over_trigger()
    with caplog.at_level(logging.INFO):
        prepared = manager.prepare_sync(history)
    assert len(prepared.messages) == len(history)
    assert [type(e) for e in events] == [SummarizationFailedEvent]
    lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1
    message = lines[0].getMessage()
    assert "ValueError: span 2:19 separates a tool call from its result" in message
    assert lines[0].exc_info is None and "no running event loop" not in caplog.text
