"""The heuristic counter: text features, estimates on known shapes, hostile input, and message framing."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.messages import File, Image, Message, Opaque, Reasoning, Text, ToolCall, ToolResult
from chainsum.tokens import Coefficients, HeuristicCounter, TokenCounter
from chainsum.tokens._structure import MESSAGE_OVERHEAD, REPLY_PRIMING, TOOL_CALL_OVERHEAD, TOOL_RESULT_OVERHEAD
from chainsum.tokens._text import FEATURE_NAMES, estimate_text, text_features
from generators import histories


def features(text: str) -> dict[str, int]:
    return dict(zip(FEATURE_NAMES, text_features(text), strict=True))


def test_features_count_runs_not_characters() -> None:
    f = features("Hello  world, getUserName 12345!\n\n\tdone é 中文 → 🎉")
    assert f["words"] == 5  # Hello, world, getUserName, done, é; 中文 is CJK, not a word run
    assert f["camel"] == 2  # tU, rN
    assert f["digits"] == 5
    assert f["digit_runs"] == 1
    assert f["punct"] == 2  # , !
    assert f["punct_runs"] == 2
    assert f["newline_runs"] == 1
    assert f["indent"] == 1
    assert f["tabs"] == 1
    assert f["accented"] == 1
    assert f["cjk"] == 2
    assert f["symbols"] == 1
    assert f["astral"] == 1


def test_features_of_empty_text_are_zero() -> None:
    assert text_features("") == (0,) * len(FEATURE_NAMES)


def test_coefficients_round_trip_in_feature_order() -> None:
    c = Coefficients()
    assert Coefficients.from_sequence(c.as_tuple()) == c
    assert [f.name for f in dataclasses.fields(Coefficients)] == list(FEATURE_NAMES)
    with pytest.raises(ValueError, match="expected"):
        Coefficients.from_sequence([1.0])


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("hello world", 2, 2),
        ("The quick brown fox jumps over the lazy dog.", 9, 11),
        ('{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}', 17, 26),
        ("人工智能是计算机科学的一个分支", 9, 14),
        ("Искусственный интеллект — это наука", 7, 14),
    ],
)
def test_estimates_of_known_shapes(text: str, low: int, high: int) -> None:
    # Ranges around the o200k counts (2, 10, 21, 11, 9): a loose check that the model has the right shape.
    assert low <= HeuristicCounter().count_text(text) <= high


def test_hostile_text_is_counted_not_crashed() -> None:
    counter = HeuristicCounter()
    assert counter.count_text("\ud800 lone surrogate") > 0
    assert counter.count_text("\x00" * 1000) > 0
    assert counter.count_text("<|endoftext|>") > 0
    assert counter.count_text("\u0301" * 50) > 0  # combining marks alone
    huge = "word " * 2_000_000  # 10 MB: linear, no regex
    assert 1_300_000 <= counter.count_text(huge) <= 2_700_000


@settings(max_examples=200)
@given(st.text())
def test_any_text_gives_a_sane_count(text: str) -> None:
    n = HeuristicCounter().count_text(text)
    assert n >= 0
    assert (n == 0) == (text == "")
    assert n <= 2 * len(text.encode("utf-8", "surrogatepass")) + 1


@settings(max_examples=100)
@given(st.text(min_size=1), st.text(min_size=1))
def test_estimate_is_nearly_additive(a: str, b: str) -> None:
    # Joining two strings can merge or split a run at the seam, and each side rounds: a few tokens at most.
    counter = HeuristicCounter()
    assert abs(counter.count_text(a + b) - counter.count_text(a) - counter.count_text(b)) <= 4


def test_message_framing() -> None:
    counter = HeuristicCounter()
    text = counter.count_text
    assert counter.count_message(Message.of("user", "hello world")) == MESSAGE_OVERHEAD + text("user") + 2
    named = Message.of("user", "hi", name="alice")
    assert counter.count_message(named) == counter.count_message(Message.of("user", "hi")) + 1 + text("alice")
    call = ToolCall(id="call_1", name="get_weather", arguments='{"city": "Paris"}')
    assistant = Message(role="assistant", parts=(call,))
    expected = MESSAGE_OVERHEAD + text("assistant") + TOOL_CALL_OVERHEAD + text("call_1")
    expected += text("get_weather") + text('{"city": "Paris"}')
    assert counter.count_message(assistant) == expected
    result = Message(role="tool", parts=(ToolResult(call_id="call_1", content="sunny, 21 C"),))
    expected = MESSAGE_OVERHEAD + text("tool") + TOOL_RESULT_OVERHEAD + text("call_1") + text("sunny, 21 C")
    assert counter.count_message(result) == expected
    assert counter.count_messages([]) == 0
    assert counter.count_messages([assistant, result]) == (
        counter.count_message(assistant) + counter.count_message(result) + REPLY_PRIMING
    )


def test_every_part_kind_counts() -> None:
    counter = HeuristicCounter()
    parts = [
        Text(text="hello"),
        Reasoning(text="thinking about it", signature="sig" * 100),
        Reasoning(data="A" * 1600),
        ToolCall(id="c", name="f"),
        ToolResult(call_id="c", content=(Text(text="x"), Image(url="https://example.com/a.png"))),
        Image(url="https://example.com/b.png"),
        File(data=b"plain text file", media_type="text/plain"),
        File(data=b"%PDF-1.4 /Type /Page /Type /Page /Type /Pages", media_type="application/pdf"),
        File(url="https://example.com/f.bin"),
        Opaque(format="anthropic", data={"type": "server_tool_use", "input": {"q": "x"}}),
    ]
    base = counter.count_message(Message(role="user"))
    for part in parts:
        assert counter.count_message(Message(role="user", parts=(part,))) > base, part
    # A signature is verified, not read: it costs nothing.
    signed = Message(role="assistant", parts=(Reasoning(text="a", signature="s" * 10_000),))
    assert counter.count_message(signed) == counter.count_message(
        Message(role="assistant", parts=(Reasoning(text="a"),))
    )
    # Two PDF pages bill twice one.
    pdf2 = counter.count_message(Message(role="user", parts=(parts[7],)))
    pdf1 = counter.count_message(Message(role="user", parts=(File(data=b"%PDF-1.4 /Type /Page"),)))
    assert pdf2 - base == 2 * (pdf1 - base)


@settings(max_examples=60, deadline=None)
@given(histories())
def test_history_count_is_the_sum_and_leaves_input_alone(messages: list[Message]) -> None:
    counter = HeuristicCounter()
    before = list(messages)
    total = counter.count_messages(messages)
    assert messages == before
    assert total == sum(counter.count_message(m) for m in messages) + (REPLY_PRIMING if messages else 0)
    assert total == HeuristicCounter(cache_size=0).count_messages(messages)  # the cache never changes a result
    assert total == counter.count_messages(tuple(messages))  # deterministic, and any sequence works


def test_custom_coefficients_change_the_estimate() -> None:
    doubled = Coefficients.from_sequence([2 * c for c in Coefficients().as_tuple()])
    text = "The quick brown fox jumps over the lazy dog."
    assert HeuristicCounter(doubled).count_text(text) == pytest.approx(2 * HeuristicCounter().count_text(text), abs=1)
    assert estimate_text(text, (0.0,) * len(FEATURE_NAMES)) == 1  # never zero for non-empty text


def test_is_a_token_counter() -> None:
    counter = HeuristicCounter()
    assert isinstance(counter, TokenCounter)
    assert counter.name == "heuristic"
    assert "heuristic" in repr(counter)


def test_opaque_data_json_cannot_write_is_still_counted() -> None:
    cyclic: dict[str, object] = {"type": "server_tool_use"}
    cyclic["self"] = cyclic
    counter = HeuristicCounter()
    assert counter.count_message(Message(role="assistant", parts=(Opaque(format="anthropic", data=cyclic),))) > 0
    odd = Opaque(format="gemini", data={"when": object(), "n": 10**400})
    assert counter.count_message(Message(role="assistant", parts=(odd,))) > 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=41, max_size=400), min_size=1, max_size=30))
def test_remembered_long_strings_count_as_fresh_ones_and_stay_bounded(texts: list[str]) -> None:
    """A long string counted a second time (a resent tool output, in a new message object) is looked up, not
    counted again: the same figure as the estimate of the text itself, and the memo never holds more than its
    bound."""
    seen = HeuristicCounter()
    weights = Coefficients().as_tuple()
    for text in texts:
        seen.count_text(text)
    for text in texts:
        assert seen.count_text(text) == estimate_text(text, weights)
    memo = seen._shapes  # pyright: ignore[reportPrivateUsage]
    assert memo._chars <= memo.max_chars  # pyright: ignore[reportPrivateUsage]
    assert sum(map(len, memo._shapes)) == memo._chars  # pyright: ignore[reportPrivateUsage]


def test_the_long_string_memo_is_cleared_when_it_would_pass_its_bound() -> None:
    from chainsum.tokens._heuristic import ShapeMemo

    counter = HeuristicCounter()
    memo = counter._shapes = ShapeMemo(max_chars=1_000)  # pyright: ignore[reportPrivateUsage]
    texts = [f"{i} " + "word " * 60 for i in range(10)]  # about 300 characters each
    for text in texts:
        counter.count_text(text)
        assert memo._chars <= 1_000  # pyright: ignore[reportPrivateUsage]
    assert texts[-1] in memo._shapes  # pyright: ignore[reportPrivateUsage]
    assert texts[0] not in memo._shapes  # pyright: ignore[reportPrivateUsage]
    assert counter.count_text("x" * 2_000) == estimate_text("x" * 2_000, Coefficients().as_tuple())  # too long
    assert "x" * 2_000 not in memo._shapes  # pyright: ignore[reportPrivateUsage]
