"""The scripted summarizer double: script order, failures, default answers, latency and the call log."""

from __future__ import annotations

import asyncio

import pytest

from chainsum.errors import SummarizerError
from chainsum.messages import Message
from chainsum.summarize import call_summarizer, render_transcript
from chainsum.testing.scripted import ScriptedSummarizer, default_summary

TRANSCRIPT = render_transcript([Message.of("user", "a"), Message.of("assistant", "b")], "ai")


def test_script_in_order_then_default() -> None:
    boom = SummarizerError("slow down", kind="rate_limit", retry_after=2.0)
    s = ScriptedSummarizer(["first", boom, lambda t: f"len={len(t)}"])

    async def run() -> list[str | BaseException]:
        out: list[str | BaseException] = []
        for _ in range(4):
            try:
                out.append(await s(TRANSCRIPT))
            except SummarizerError as exc:
                out.append(exc)
        return out

    results = asyncio.run(run())
    assert results[0] == "first"
    assert results[1] is boom
    assert results[2] == f"len={len(TRANSCRIPT)}"
    assert results[3] == default_summary(TRANSCRIPT)
    assert [c.index for c in s.calls] == [0, 1, 2, 3]
    assert s.calls[1].outcome is boom
    assert s.transcripts == [TRANSCRIPT] * 4 and s.call_count == 4


def test_default_summary_counts_blocks_and_is_deterministic() -> None:
    summary = default_summary(TRANSCRIPT)
    assert summary.startswith("summary of 2 messages [") and summary == default_summary(TRANSCRIPT)
    assert default_summary("free text").startswith("summary of 1 message [")
    assert default_summary("x") != default_summary("y")


def test_repeat_and_function_script() -> None:
    s = ScriptedSummarizer(["a", "b"], repeat=True)
    assert asyncio.run(_many(s, 5)) == ["a", "b", "a", "b", "a"]
    f = ScriptedSummarizer(lambda t: t.upper()[:5])
    assert asyncio.run(_many(f, 2)) == [TRANSCRIPT.upper()[:5]] * 2


async def _many(s: ScriptedSummarizer, n: int) -> list[str]:
    return [await s(TRANSCRIPT) for _ in range(n)]


def test_other_exceptions_are_wrapped_by_call_summarizer() -> None:
    s = ScriptedSummarizer([ConnectionError("reset"), "", 42])  # type: ignore[list-item]
    with pytest.raises(SummarizerError) as first:
        asyncio.run(call_summarizer(s, TRANSCRIPT))
    assert first.value.kind == "transport"
    with pytest.raises(SummarizerError) as second:
        asyncio.run(call_summarizer(s, TRANSCRIPT))
    assert second.value.kind == "empty"


def test_concurrency_high_water_mark_and_times() -> None:
    s = ScriptedSummarizer(latency=[0.01, 0.0])

    async def run() -> None:
        await asyncio.gather(*(s(f"t{i}") for i in range(5)))

    asyncio.run(run())
    assert s.max_concurrency == 5 and s.in_flight == 0
    assert all(c.ended >= c.started for c in s.calls)
    assert sorted(c.index for c in s.calls) == [0, 1, 2, 3, 4]


def test_cancelled_calls_are_logged_and_release_the_slot() -> None:
    s = ScriptedSummarizer(latency=10.0)

    async def run() -> None:
        task = asyncio.ensure_future(s("x"))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert s.in_flight == 0
    assert isinstance(s.calls[0].outcome, asyncio.CancelledError)


def test_negative_latency_rejected() -> None:
    with pytest.raises(ValueError):
        ScriptedSummarizer(latency=-1)
