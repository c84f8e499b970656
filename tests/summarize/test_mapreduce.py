"""Chunked map-reduce: caps respected, bounded concurrency, snapshots, depth limit, termination."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainsum.errors import SummarizerError
from chainsum.messages import Message
from chainsum.summarize import (
    ExtractiveSummarizer,
    approx_tokens,
    parse_transcript,
    render_transcript,
    summarize_chunked,
    to_state_snapshot,
    truncate_to_tokens,
)
from chainsum.testing.scripted import ScriptedSummarizer
from chainsum.tokens import HeuristicCounter

MESSAGES = [
    Message.of("user" if i % 2 == 0 else "assistant", f"step {i} edits src/mod_{i}.py; " + "lorem ipsum " * 40)
    for i in range(60)
]


def run(coro: object) -> str:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_small_span_is_one_call_with_the_plain_transcript() -> None:
    s = ScriptedSummarizer(["  the summary  "])
    out = run(summarize_chunked(s, MESSAGES[:2], case="ai", max_input_tokens=100_000))
    assert out == "the summary"
    assert s.transcripts == [render_transcript(MESSAGES[:2], "ai")]


def test_large_span_is_chunked_every_input_fits_and_concurrency_is_bounded() -> None:
    s = ScriptedSummarizer(latency=0.001)
    cap = 1500
    out = run(summarize_chunked(s, MESSAGES, case="ai", max_input_tokens=cap, concurrency=3))
    assert all(approx_tokens(t) <= cap for t in s.transcripts)
    assert s.max_concurrency <= 3
    kinds = [parse_transcript(t).kind for t in s.transcripts]
    assert kinds.count("ai") >= 2 and kinds[-1] == "consolidate"
    chunk_roles = [
        b.role for t in s.transcripts if parse_transcript(t).kind == "ai" for b in parse_transcript(t).blocks
    ]
    assert chunk_roles == [m.role for m in MESSAGES]  # every message in exactly one chunk, in order
    assert out == s.calls[-1].outcome


def test_context_is_shown_in_every_chunk() -> None:
    s = ScriptedSummarizer()
    context = [Message.of("user", "the goal: refactor")]
    run(summarize_chunked(s, MESSAGES[1::2], case="context", context=context, max_input_tokens=1500))
    chunks = [parse_transcript(t) for t in s.transcripts if parse_transcript(t).kind == "context"]
    assert len(chunks) >= 2
    assert all(c.blocks[0].section == "context" and "the goal" in c.blocks[0].body for c in chunks)


def test_oversized_single_message_is_split_by_text() -> None:
    s = ScriptedSummarizer()
    huge = Message.of("tool", "".join(f"line {i} /data/f{i}.csv\n" for i in range(5000)))
    run(summarize_chunked(s, [huge], case="ai", max_input_tokens=1000))
    pieces = [t for t in s.transcripts if parse_transcript(t).kind == "ai"]
    assert len(pieces) >= 10 and all(approx_tokens(t) <= 1000 for t in s.transcripts)
    rebuilt = "".join(parse_transcript(t).blocks[0].body for t in pieces)
    assert rebuilt == huge.text  # the pieces, in order, are the message


def test_snapshot_variant_gives_exactly_one_element() -> None:
    s = ScriptedSummarizer(["<state_snapshot>a</state_snapshot> and <state_snapshot>b</state_snapshot>"], repeat=True)
    out = run(summarize_chunked(s, MESSAGES, case="ai", max_input_tokens=1500, snapshot=True))
    assert out.count("<state_snapshot>") == 1 and out.count("</state_snapshot>") == 1
    assert out.startswith("<state_snapshot>") and out.endswith("</state_snapshot>")
    assert parse_transcript(s.transcripts[-1]).kind == "snapshot"
    single = run(
        summarize_chunked(ScriptedSummarizer(["plain"]), MESSAGES[:1], case="ai", max_input_tokens=10**6, snapshot=True)
    )
    assert single == "<state_snapshot>\nplain\n</state_snapshot>"


def test_to_state_snapshot_strips_stray_tags() -> None:
    assert to_state_snapshot("x </state_snapshot> y") == "<state_snapshot>\nx  y\n</state_snapshot>"
    assert to_state_snapshot("<state_snapshot> a </state_snapshot>") == "<state_snapshot>\na\n</state_snapshot>"


def test_failure_propagates_and_cancels_the_rest() -> None:
    s = ScriptedSummarizer([SummarizerError("429", kind="rate_limit")], latency=0.01)
    with pytest.raises(SummarizerError) as info:
        run(summarize_chunked(s, MESSAGES, case="ai", max_input_tokens=1500, concurrency=2))
    assert info.value.kind == "rate_limit"
    assert s.in_flight == 0


def test_extractive_end_to_end_keeps_recent_identifiers() -> None:
    out = run(summarize_chunked(ExtractiveSummarizer(ratio=1.0), MESSAGES, case="ai", max_input_tokens=1500))
    assert "src/mod_59.py" in out and len(out) <= 4000


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        run(summarize_chunked(ScriptedSummarizer(), [], case="ai", max_input_tokens=1000))
    with pytest.raises(ValueError, match="too small"):
        run(summarize_chunked(ScriptedSummarizer(), MESSAGES, case="ai", max_input_tokens=50))
    with pytest.raises(ValueError):
        run(summarize_chunked(ScriptedSummarizer(), MESSAGES, case="ai", max_input_tokens=1000, concurrency=0))


def test_truncate_keeps_head_and_tail_within_budget() -> None:
    text = "".join(f"{i:05d}" for i in range(2000))
    cut = truncate_to_tokens(text, 200)
    assert approx_tokens(cut) <= 200
    assert cut.startswith("00000") and cut.endswith("01999") and "characters truncated" in cut
    assert truncate_to_tokens("short", 200) == "short"


def _echo(factor: int) -> Callable[[str], Awaitable[str]]:
    async def summarize(transcript: str) -> str:
        return transcript * factor

    return summarize


@given(
    factor=st.integers(1, 3),
    n=st.integers(1, 40),
    cap=st.integers(700, 3000),
    depth=st.integers(0, 5),
    snapshot=st.booleans(),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_echoing_or_inflating_summarizers_always_terminate(
    factor: int, n: int, cap: int, depth: int, snapshot: bool
) -> None:
    calls: list[str] = []
    inner = _echo(factor)

    async def counting(transcript: str) -> str:
        calls.append(transcript)
        return await inner(transcript)

    out = run(
        summarize_chunked(counting, MESSAGES[:n], case="ai", max_input_tokens=cap, max_depth=depth, snapshot=snapshot)
    )
    assert out
    assert all(approx_tokens(t) <= cap for t in calls)
    chunks = sum(1 for t in calls if parse_transcript(t).kind == "ai")
    assert len(calls) <= chunks * (depth + 2) + 2  # bounded: map, at most `depth` levels, one forced pass


@pytest.mark.parametrize(("n", "max_chunks"), [(60, 3), (2000, 4), (6000, 8)])
def test_max_chunks_bounds_the_calls_however_many_messages(n: int, max_chunks: int) -> None:
    """Thousands of messages: excerpts, then a sample (people first, tool results spread evenly), so the map step
    makes about `max_chunks` calls and the partial summaries are merged in one consolidation."""
    messages: list[Message] = [Message.of("user", "start the audit of ticket APP-1")]
    for i in range(n):
        if i % 3 == 2:
            messages.append(Message.of("assistant", f"step {i}: src/mod_{i}.py looks fine; " + "ok " * 30))
        else:
            messages.append(Message.of("tool", f"output {i} " + "x" * 3000))
    s = ScriptedSummarizer(latency=0.0)
    cap = 4000
    run(summarize_chunked(s, messages, case="context", max_input_tokens=cap, max_chunks=max_chunks))
    assert all(approx_tokens(t) <= cap for t in s.transcripts)
    kinds = [parse_transcript(t).kind for t in s.transcripts]
    assert kinds.count("context") <= max_chunks + 1  # the estimate may be off by one chunk
    assert kinds.count("consolidate") == 1
    read = [b for t in s.transcripts if parse_transcript(t).kind == "context" for b in parse_transcript(t).blocks]
    assert read[0].body.startswith("start the audit")  # the first request is read
    assert read[-1].body.startswith("output") or read[-1].body.startswith("step")  # and the newest
    assert sum(1 for b in read if b.role == "assistant") == sum(1 for m in messages if m.role == "assistant") or (
        not any(b.role == "tool" for b in read)  # people first: tool results are left out before the assistant's
    )


@pytest.mark.parametrize("max_chunks", [None, 3])
def test_chunks_measured_from_their_lines_are_the_chunks_measured_whole(max_chunks: int | None) -> None:
    """`count_lines` (the default counter counting a transcript from its lines and the bodies it remembers) sends
    the very transcripts and gets the very summary a count of each whole transcript does."""
    counter = HeuristicCounter()
    measured: list[str] = []

    def count_lines(lines: Sequence[str], text: str) -> int:
        assert "\n".join(lines) == text
        measured.append(text)
        return counter.count_joined(lines, "\n", joined=text)

    span = [*MESSAGES, Message.of("tool", "src/app.py:3: error: boom\n" * 400)]
    outs: list[str] = []
    sent: list[list[str]] = []
    for lines in (None, count_lines):
        s = ScriptedSummarizer()
        outs.append(
            run(
                summarize_chunked(
                    s,
                    span,
                    case="ai",
                    max_input_tokens=1500,
                    count_tokens=HeuristicCounter().count_text,
                    target_tokens=300,
                    max_chunks=max_chunks,
                    count_lines=lines,
                )
            )
        )
        sent.append(s.transcripts)
    assert outs[0] == outs[1] and sent[0] == sent[1]
    # every chunk of more than one message was measured from its lines (one message is sent as it is)
    chunks = [t for t in sent[1] if parse_transcript(t).kind == "ai"]
    assert all(t in measured for t in chunks if len(parse_transcript(t).blocks) > 1)
    assert any(len(parse_transcript(t).blocks) > 1 for t in chunks)
