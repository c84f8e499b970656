"""Strict and repairing builds: the seven rules, with the rule and message index named."""

from __future__ import annotations

import pytest

from chainsum.chain import (
    FALLBACK_RESPONSE_CONTENT,
    BodyPair,
    Chain,
    PairKind,
    RecordBlock,
    record_message,
)
from chainsum.errors import ChainError
from chainsum.messages import Message, Text, ToolCall, ToolResult
from chainsum.testing import PREDEFINED, ChainConfig, generate_chain, generate_complex_chain


def tool(call_id: str, content: str = "ok", name: str | None = None) -> Message:
    return Message(role="tool", parts=(ToolResult(call_id=call_id, name=name, content=content),))


def ai_calls(*ids: str, name: str = "f") -> Message:
    return Message(role="assistant", parts=tuple(ToolCall(id=i, name=name) for i in ids))


def test_basic_conversation_tree() -> None:
    chain = Chain.build(PREDEFINED["basic_conversation"])
    assert len(chain.sections) == 1
    section = chain.sections[0]
    assert section.header.system is not None and section.header.system.text == "You are a helpful assistant."
    assert section.header.human is not None and section.header.human.text == "Hello"
    assert [p.kind for p in section.body] == [PairKind.COMPLETION]
    assert chain.messages() == PREDEFINED["basic_conversation"]
    assert chain.count == 3


@pytest.mark.parametrize(
    "name",
    [
        "empty",
        "system_only",
        "human_only",
        "system_human",
        "basic_conversation",
        "with_single_tool_response",
        "with_multiple_tool_responses",
        "with_multiple_sections",
        "with_summarization",
        "with_summarization_and_other_pairs",
    ],
)
def test_valid_predefined_chains_round_trip(name: str) -> None:
    messages = PREDEFINED[name]
    chain = Chain.build(messages)
    assert chain.messages() == messages
    assert chain.repairs == ()


@pytest.mark.parametrize(
    ("messages", "rule", "index"),
    [
        ([Message.of("assistant", "hi")], "rule 1", 0),
        (PREDEFINED["with_consecutive_humans"], "rule 2", 2),
        (PREDEFINED["with_tool"], "rule 3", 2),
        (PREDEFINED["with_unexpected_tool"], "rule 4", 2),
        ([Message.of("user", "a"), Message.of("system", "b")], "rule 5", 1),
        (PREDEFINED["with_missing_tool_response"], "rule 6", 2),
        ([Message.of("user", "q"), ai_calls("c1"), tool("zzz")], "rule 4", 2),
    ],
)
def test_strict_build_names_rule_and_index(messages: list[Message], rule: str, index: int) -> None:
    with pytest.raises(ChainError) as info:
        Chain.build(messages)
    assert info.value.rule.startswith(rule)
    assert info.value.index == index
    assert f"message {index}" in str(info.value)


def test_rule_7_summarization_pair_with_two_tool_messages() -> None:
    pair = BodyPair.from_summarization("sum", "call_s")
    messages = [Message.of("user", "q"), pair.ai, *pair.tool_messages, tool("call_s")]
    # The second result answers nothing (the single call is already answered): rule 4 comes first.
    with pytest.raises(ChainError, match="rule 4"):
        Chain.build(messages)


def test_repair_merges_humans_adds_fallbacks_and_drops_orphans() -> None:
    messages = [
        Message.of("system", "s"),
        Message.of("user", "one"),
        Message.of("user", "two"),
        ai_calls("c1", "c2"),
        tool("c1"),
        tool("orphan"),
        Message.of("user", "next"),
    ]
    chain = Chain.build(messages, repair=True)
    rules = [r.rule for r in chain.repairs]
    assert rules == [2, 4, 6]
    out = chain.messages()
    assert out[1].parts == (Text(text="one"), Text(text="two"))
    assert out[2] == messages[3]
    assert out[3] == messages[4]
    assert out[4].tool_results[0].call_id == "c2"
    assert out[4].tool_results[0].content == FALLBACK_RESPONSE_CONTENT
    assert out[5].text == "next"
    assert len(out) == 6
    assert Chain.build(out).messages() == out  # the repaired chain is strictly valid


def test_repair_keeps_leading_assistant_and_mid_system() -> None:
    messages = [Message.of("assistant", "Hi! How can I help?"), Message.of("user", "x"), Message.of("system", "y")]
    chain = Chain.build(messages, repair=True)
    assert [r.rule for r in chain.repairs] == [1, 5]
    assert chain.messages() == messages  # nothing lost
    assert chain.sections[0].header.is_empty
    assert chain.sections[2].header.system == messages[2]


def test_reused_ids_pair_by_position() -> None:
    # tau-bench reuses ids: every call is answered right after it is made.
    messages = [Message.of("user", "q"), ai_calls("dup"), tool("dup", "first"), ai_calls("dup"), tool("dup", "second")]
    chain = Chain.build(messages)
    pairs = [p for _, _, p in chain.pairs()]
    assert [p.tool_calls_info().completed[0].result.text for p in pairs] == ["first", "second"]
    assert all(p.is_valid() for p in pairs)


def test_duplicate_ids_inside_one_turn_pair_in_order() -> None:
    messages = [Message.of("user", "q"), ai_calls("x", "x"), tool("x", "a"), tool("x", "b")]
    info = Chain.build(messages).sections[0].body[0].tool_calls_info()
    assert [c.result.text for c in info.completed] == ["a", "b"]
    assert info.pending == () and info.unmatched == ()


def test_id_less_results_match_by_name_and_order() -> None:
    calls = Message(role="assistant", parts=(ToolCall(id="", name="a"), ToolCall(id="", name="b")))
    messages = [
        Message.of("user", "q"),
        calls,
        Message(
            role="tool",
            parts=(ToolResult(call_id="", name="b", content="B"), ToolResult(call_id="", name="a", content="A")),
        ),
    ]
    info = Chain.build(messages).sections[0].body[0].tool_calls_info()
    assert [(c.call.name, c.result.text) for c in info.completed] == [("a", "A"), ("b", "B")]


def test_user_tool_calls_kept_in_header() -> None:
    # tau2 telecom: the simulated user runs a tool on their phone.
    user = Message(role="user", parts=(Text(text="checking"), ToolCall(id="u1", name="toggle_airplane_mode")))
    messages = [Message.of("assistant", "Hi"), user, tool("u1", "done"), Message.of("assistant", "great")]
    chain = Chain.build(messages, repair=True)
    assert [r.rule for r in chain.repairs] == [1]
    header = chain.sections[1].header
    assert header.human == user
    assert header.human_tool_messages == (messages[2],)
    assert chain.messages() == messages


def test_parallel_calls_in_one_anthropic_style_tool_message() -> None:
    results = Message(role="tool", parts=(ToolResult(call_id="a", content="1"), ToolResult(call_id="b", content="2")))
    messages = [Message.of("user", "q"), ai_calls("a", "b"), results]
    pair = Chain.build(messages).sections[0].body[0]
    assert pair.kind is PairKind.REQUEST_RESPONSE and pair.is_valid()


def test_pending_tail_allowed_only_when_asked() -> None:
    messages = PREDEFINED["with_tool"]
    with pytest.raises(ChainError):
        Chain.build(messages)
    chain = Chain.build(messages, allow_pending_tail=True)
    info = chain.sections[0].body[0].tool_calls_info()
    assert info.pending_ids == ("call_1",)


def test_generated_chains_build_strictly() -> None:
    config = ChainConfig(
        sections=3,
        body_pairs_per_section=[1, 2, 1],
        tools_for_body_pairs=[False, True, False, True],
        tool_calls_per_body_pair=[0, 2, 0, 3],
    )
    messages = generate_chain(config)
    chain = Chain.build(messages)
    assert len(chain.sections) == 3
    assert [len(s.body) for s in chain.sections] == [1, 2, 1]
    assert chain.messages() == messages


def test_complex_chain_missing_responses_are_repaired() -> None:
    messages = generate_complex_chain(5, 3, 7)
    with pytest.raises(ChainError):
        Chain.build(messages)
    chain = Chain.build(messages, repair=True)
    assert len(chain.repairs) == 7
    assert all(p.is_valid() for _, _, p in chain.pairs())


def test_a_record_before_a_kept_user_message_is_not_merged_into_it() -> None:
    """chainsum writes its record of the earlier conversation as a user message right before the user message it
    keeps (an agent's task); the repair build merged the two, and the next compaction, finding no user message of
    its own, summarized the task away."""
    record = record_message([RecordBlock(id="sum_1", depth=1, messages=4, text="Earlier: the build failed.")])
    task = Message.of("user", "Fix the nightly build (APP-1000).")
    messages = [Message.of("system", "You are a coding agent."), record, task, Message.of("assistant", "On it.")]
    chain = Chain.build(messages, repair=True)
    assert chain.repairs == ()
    assert chain.messages() == messages
