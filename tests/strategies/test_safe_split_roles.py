"""`ensure_alternating_roles`: merges same-role user/assistant runs into new messages, touching nothing else."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given

from chainsum.messages import Message, Text, ToolCall
from chainsum.strategies._safe_split_roles import ensure_alternating_roles
from generators import histories
from strategies.safe_split_words import a, sys, tool, u


def test_consecutive_users_merge_and_untouched_messages_keep_their_identity() -> None:
    first, second, reply = Message.of("user", "one", id="m1"), Message.of("user", "two", id="m2"), a()
    history = [sys(), first, second, reply]
    before = list(history)
    out = ensure_alternating_roles(history)
    assert history == before and all(x is y for x, y in zip(history, before, strict=True))
    assert first.parts == (Text(text="one"),) and second.parts == (Text(text="two"),)  # inputs unchanged
    assert len(out) == 3
    assert out[0] is history[0] and out[2] is reply
    assert out[1] == Message(role="user", parts=(Text(text="one"), Text(text="two")), id="m1")


def test_consecutive_assistants_merge_text_then_calls() -> None:
    call = Message(role="assistant", parts=(ToolCall(id="c", name="f"),))
    out = ensure_alternating_roles([u(), a(2), call, tool("c"), a(1)])
    assert [m.role for m in out] == ["user", "assistant", "tool", "assistant"]
    assert out[1].parts == (Text(text="w w"), ToolCall(id="c", name="f"))


def test_a_message_with_calls_absorbs_nothing() -> None:
    history = [u(), a(1, "c"), a(1), tool("c")]
    assert ensure_alternating_roles(history) == tuple(history)


def test_tool_and_system_messages_are_never_merged() -> None:
    history = [sys(), sys(), u(), a(1, "c", "d"), tool("c"), tool("d"), u()]
    out = ensure_alternating_roles(history)
    assert out == tuple(history)
    assert all(x is y for x, y in zip(out, history, strict=True))


def test_extras_of_the_second_message_are_carried_for_missing_keys() -> None:
    first = Message(role="user", parts=(Text(text="a"),), extras={"openai": {"x": 1}})
    second = Message(role="user", parts=(Text(text="b"),), extras={"openai": {"x": 2}, "anthropic": {"y": 3}})
    (merged,) = ensure_alternating_roles([first, second])
    assert merged.extras == {"openai": {"x": 1}, "anthropic": {"y": 3}}


@given(histories())
def test_alternation_properties(history: list[Message]) -> None:
    before = list(history)
    out = ensure_alternating_roles(history)
    assert history == before
    assert [p for m in out for p in m.parts] == [p for m in history for p in m.parts]  # nothing lost or reordered
    assert [m.role for m in out if m.role in ("system", "tool")] == [
        m.role for m in history if m.role in ("system", "tool")
    ]
    for prev, cur in pairwise(out):
        if prev.role == cur.role and prev.role in ("user", "assistant"):
            assert prev.tool_calls  # only a message with calls may be followed by the same role
    out_ids = {id(m) for m in out}
    for j, x in enumerate(history):  # an input not in the output as the same object was merged with a neighbour
        if id(x) not in out_ids:
            assert x.role in ("user", "assistant")
            neighbours = history[max(0, j - 1) : j] + history[j + 1 : j + 2]
            assert any(y.role == x.role for y in neighbours)
    assert ensure_alternating_roles(out) == out  # idempotent
