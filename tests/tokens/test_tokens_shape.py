"""Text shapes and the counts made from them: joined pieces count exactly as the joined text, whatever the seams;
the shape memo is shared, bounded, and reuses a known text after a prepended line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.tokens import Coefficients, HeuristicCounter
from chainsum.tokens._heuristic import ShapeMemo
from chainsum.tokens._shape import EMPTY_SHAPE, estimate_shape, join_shapes, text_shape
from chainsum.tokens._text import estimate_text, text_features

WEIGHTS = Coefficients().as_tuple()

# the classes whose runs and pairs meet at a seam: letters of both cases, digits, punctuation, newlines, spaces,
# tabs, accented, CJK and astral characters
_seamy = st.text(st.sampled_from(list("aZq  \n\r\t..,09é中😀-_/Y")), max_size=12)
_any = st.text(max_size=60)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_seamy, _any), max_size=8))
def test_joined_shapes_are_the_shape_of_the_joined_text(pieces: list[str]) -> None:
    whole = "".join(pieces)
    joined = join_shapes(text_shape(p) for p in pieces)
    assert joined == text_shape(whole)
    assert joined.features == text_features(whole)
    assert estimate_shape(joined, WEIGHTS) == estimate_text(whole, WEIGHTS)


def test_runs_across_a_seam_are_counted_once() -> None:
    for left, right in [("wor", "ds"), ("12", "34"), ("..", "."), ("\n", "\n"), ("get", "User"), ("a   ", "  b")]:
        assert join_shapes([text_shape(left), text_shape(right)]) == text_shape(left + right), (left, right)
    assert join_shapes([]) == EMPTY_SHAPE == text_shape("")
    assert join_shapes([text_shape(""), text_shape("x"), text_shape("")]) == text_shape("x")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(_seamy, _any, st.text(min_size=41, max_size=300)), max_size=8),
    st.sampled_from(["", "\n", " ", "ab"]),
)
def test_count_joined_is_the_count_of_the_joined_text(pieces: list[str], separator: str) -> None:
    counter = HeuristicCounter()
    whole = separator.join(pieces)
    assert counter.count_joined(pieces, separator) == estimate_text(whole, WEIGHTS)
    assert counter.count_joined(pieces, separator, joined=whole) == estimate_text(whole, WEIGHTS)
    assert counter.count_text(whole) == estimate_text(whole, WEIGHTS)  # remembered under the joined text
    memo = counter._shapes  # pyright: ignore[reportPrivateUsage]
    assert sum(map(len, memo._shapes)) == memo._chars <= memo.max_chars  # pyright: ignore[reportPrivateUsage]


def test_count_joined_reads_a_counted_body_from_the_memo() -> None:
    counter = HeuristicCounter()
    memo = counter._shapes = ShapeMemo()  # pyright: ignore[reportPrivateUsage]
    body = "src/app.py:12: error: name 'x' is not defined\n" * 40
    counter.count_text(body)
    assert body in memo._shapes  # pyright: ignore[reportPrivateUsage]
    lines = ['<m_0123456789abcdef n="0" role="tool" section="content">', body, "</m_0123456789abcdef>", ""]
    text = "\n".join(lines)
    assert counter.count_joined(lines, "\n", joined=text) == estimate_text(text, WEIGHTS)
    assert memo._shapes[text] == text_shape(text)  # pyright: ignore[reportPrivateUsage]


def test_a_known_text_after_a_new_first_line_is_shaped_from_the_known_one() -> None:
    memo = ShapeMemo()
    known = "<instructions>\n" + "the transcript, line after line; 42 items\n" * 100
    memo.shape(known)
    headed = "<meta total_messages=12 total_tokens=4000 depth=1 />\n" + known
    assert memo._after_line(headed) == text_shape(headed)  # pyright: ignore[reportPrivateUsage]
    assert memo.shape(headed) == text_shape(headed)
    assert memo._after_line("first line\n" + "not known " * 100) is None  # pyright: ignore[reportPrivateUsage]
    assert memo._after_line("short\ntail") is None  # pyright: ignore[reportPrivateUsage]


def test_counters_share_the_shape_memo_and_clear_it() -> None:
    text = "a shared long text that two counters both measure " * 3
    one, other = HeuristicCounter(), HeuristicCounter(Coefficients(words=2.0))
    assert one._shapes is other._shapes  # pyright: ignore[reportPrivateUsage]
    assert one.count_text(text) == estimate_text(text, WEIGHTS)
    assert other.count_text(text) == estimate_text(text, Coefficients(words=2.0).as_tuple())  # its own weights
    one.clear_cache()
    assert len(other._shapes) == 0  # pyright: ignore[reportPrivateUsage]
    assert other.count_text(text) == estimate_text(text, Coefficients(words=2.0).as_tuple())
