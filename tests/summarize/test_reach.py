"""What a transcript shows of the conversation (`transcript_reach`), and what chunked summarization shows to no
summarizer (`report_unread` into the open `ReachMeter`): the two halves of model coverage."""

from __future__ import annotations

import asyncio

from chainsum.messages import Message
from chainsum.summarize import (
    ReachMeter,
    reaching,
    render_consolidation,
    render_transcript,
    report_unread,
    summarize_chunked,
    transcript_reach,
)


def test_a_transcript_shows_its_content_bodies_and_not_its_context() -> None:
    context = [Message.of("user", "what is in src/app.py?")]
    content = [Message.of("assistant", "a" * 300), Message.of("assistant", "b" * 200)]
    assert transcript_reach(render_transcript(content, "context", context)) == 500
    assert transcript_reach(render_consolidation(["one summary", "another"])) is None
    assert transcript_reach("not a transcript at all") is None


def test_excerpts_for_bounded_calls_are_reported_unread_to_the_open_meter_only() -> None:
    span = [Message.of("user", "ask " * 20), *(Message.of("assistant", f"{i} " + "word " * 4000) for i in range(6))]
    shown: list[int] = []

    async def summarizer(transcript: str) -> str:
        shown.append(transcript_reach(transcript) or 0)
        return "short"

    async def run(max_chunks: int) -> int:
        shown.clear()
        meter = ReachMeter()
        with reaching(meter):
            await summarize_chunked(summarizer, span, case="ai", max_input_tokens=3000, max_chunks=max_chunks)
        return meter.unread_chars

    total = sum(len(m.text) for m in span)
    assert asyncio.run(run(64)) == 0 and sum(shown) >= total  # enough calls: every message whole
    unread = asyncio.run(run(2))
    assert unread > total // 2  # two calls of 3,000 tokens cannot show 120,000 characters
    assert sum(shown) + unread >= total * 0.98  # what was shown plus what was not is the span (markers aside)
    report_unread(100)  # no meter open: goes nowhere, raises nothing


def test_meters_of_concurrent_passes_do_not_mix() -> None:
    async def one(chars: int) -> int:
        meter = ReachMeter()
        with reaching(meter):
            await asyncio.sleep(0)
            report_unread(chars)
            await asyncio.sleep(0)
        return meter.unread_chars

    async def both() -> list[int]:
        return list(await asyncio.gather(one(5), one(7)))

    assert asyncio.run(both()) == [5, 7]


def test_a_large_context_message_does_not_starve_the_span_of_its_calls() -> None:
    """A user message shown as context is repeated in every chunk: left whole, one of 6,700 tokens left a Claude
    Code span 64 tokens a call and 94 % of it unread; it is shown as an excerpt now, and the span is read whole."""
    context = [Message.of("user", "pasted log line\n" * 1600)]
    span = [Message.of("assistant", f"step {i}: " + "edited src/app.py and ran the tests " * 40) for i in range(40)]
    shown: list[int] = []

    async def summarizer(transcript: str) -> str:
        shown.append(transcript_reach(transcript) or 0)
        return "short"

    async def run() -> int:
        meter = ReachMeter()
        with reaching(meter):
            await summarize_chunked(
                summarizer, span, case="context", context=context, max_input_tokens=8000, max_chunks=32
            )
        return meter.unread_chars

    assert asyncio.run(run()) == 0
    assert sum(shown) >= sum(len(m.text) for m in span)
