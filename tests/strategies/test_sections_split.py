"""`determine_last_section_pairs` as a table, and the type-preservation rules."""

from __future__ import annotations

import pytest

from chainsum.chain import SUMMARIZED_CONTENT_PREFIX, BodyPair, Header, Section
from chainsum.messages import Message, ToolCall, ToolResult
from chainsum.strategies._sections import determine_last_section_pairs
from chainsum.strategies._sections_common import form_for_pair, form_for_pairs


def completion(size: int) -> BodyPair:
    return BodyPair(Message.of("assistant", "x" * size))


def request(n: int) -> BodyPair:
    call = ToolCall(id=f"c{n}", name="f", arguments="{}")
    return BodyPair(
        Message(role="assistant", parts=(call,)),
        (Message(role="tool", parts=(ToolResult(call_id=call.id, name="f", content="r"),)),),
    )


def section(header_bytes: int, *sizes: int) -> Section:
    header = Header(None, Message.of("user", "h" * header_bytes)) if header_bytes else Header()
    return Section(header, tuple(completion(s) for s in sizes))


@pytest.mark.parametrize(
    ("header", "sizes", "max_bytes", "reserve", "kept"),
    [
        # no body: nothing either way
        (10, (), 100, 25, 0),
        # the last pair is kept even when it alone is over the threshold
        (10, (500,), 100, 25, 1),
        (10, (50, 500), 100, 25, 1),
        # threshold 75: header 10 + last 20 + 20 + 20 = 70 fits, one more 20 would be 90
        (10, (20, 20, 20, 20, 20), 100, 25, 3),
        # no reserve: threshold 100: 10 + 4 * 20 = 90 fits, the fifth would be 110
        (10, (20, 20, 20, 20, 20), 100, 0, 4),
        # the header counts: 70 + last 20 = 90 > 75: only the last pair
        (70, (20, 20, 20), 100, 25, 1),
        # exactly at the threshold is kept
        (15, (20, 20, 20), 100, 25, 3),
        # stop at the first pair that does not fit: the smaller older ones are summarized too (a prefix)
        (0, (5, 5, 60, 10, 10), 100, 25, 2),
        # everything fits: nothing to summarize
        (0, (10, 10, 10), 100, 25, 3),
        # integer threshold: 99 * 75 // 100 = 74
        (0, (37, 37, 1), 99, 25, 2),
        (0, (36, 37, 1), 99, 25, 3),
    ],
)
def test_determine_last_section_pairs(
    header: int, sizes: tuple[int, ...], max_bytes: int, reserve: int, kept: int
) -> None:
    s = section(header, *sizes)
    assert s.header.size == header
    to_keep, to_summarize = determine_last_section_pairs(s, max_bytes, reserve)
    assert len(to_keep) == kept
    # a prefix to summarize and a suffix to keep, in order, covering the body
    assert to_summarize + to_keep == s.body
    if s.body:
        assert to_keep[-1] is s.body[-1]


def test_determine_last_section_pairs_never_mutates() -> None:
    s = section(10, 50, 50, 50)
    before = (s.header, s.body)
    determine_last_section_pairs(s, 60, 25)
    assert (s.header, s.body) == before


SUMMARY = BodyPair.from_summarization("s")
PREFIXED = BodyPair(Message.of("assistant", SUMMARIZED_CONTENT_PREFIX + "s"))


@pytest.mark.parametrize(
    ("pairs", "form"),
    [
        ((completion(1),), "completion"),
        ((completion(1), completion(2)), "completion"),
        ((PREFIXED, completion(2)), "completion"),  # a prefixed summary is a Completion
        ((completion(1), request(1)), "pair"),
        ((request(1),), "pair"),
        ((SUMMARY, completion(1)), "pair"),
        ((SUMMARY,), "pair"),
    ],
)
def test_section_type_preservation(pairs: tuple[BodyPair, ...], form: str) -> None:
    assert form_for_pairs(pairs) == form


@pytest.mark.parametrize(
    ("pair", "form"),
    [(completion(1), "completion"), (request(1), "pair"), (PREFIXED, "completion"), (SUMMARY, "completion")],
)
def test_oversized_pair_type_preservation(pair: BodyPair, form: str) -> None:
    # the spec: RequestResponse -> Summarization pair, anything else -> Completion (summaries are skipped anyway)
    assert form_for_pair(pair) == form
