"""Edits, sizes, constructors, id templates and reasoning cleanup."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.chain import (
    FAKE_REASONING_SIGNATURE,
    SUMMARIZATION_TOOL_ARGS,
    SUMMARIZATION_TOOL_NAME,
    SUMMARIZED_CONTENT_PREFIX,
    BodyPair,
    Chain,
    PairKind,
    contains_summarized_content,
    contains_tool_call_reasoning,
    parse_template,
)
from chainsum.errors import ChainError, TemplateError, ToolCallError
from chainsum.messages import Image, Message, Reasoning, Text, ToolCall, ToolResult, message_size
from chainsum.testing import PREDEFINED, ChainConfig, generate_chain, generate_large_chain


def test_sizes_follow_the_spec_list() -> None:
    call = ToolCall(id="c1", name="get", arguments='{"a":1}')
    result = ToolResult(call_id="c1", name="get", content="héllo")  # é is two UTF-8 bytes
    image = Image(url="https://x/y.png")
    raw = Image(data=b"\x00" * 10, media_type="image/png")
    assert message_size(Message(role="assistant", parts=(call,))) == 2 + len("function") + 3 + 7
    assert message_size(Message(role="tool", parts=(result,))) == 2 + 3 + 6
    assert message_size(Message(role="user", parts=(Text(text="ab"), image, raw))) == 2 + 15 + 10


chains = st.builds(
    lambda sections, pairs, tools, calls: generate_chain(
        ChainConfig(
            include_system=True,
            sections=sections,
            body_pairs_per_section=pairs,
            tools_for_body_pairs=tools,
            tool_calls_per_body_pair=calls,
        )
    ),
    st.integers(0, 6),
    st.lists(st.integers(1, 4), max_size=6),
    st.lists(st.booleans(), max_size=24),
    st.lists(st.integers(1, 4), max_size=24),
)


def _check_sizes(chain: Chain) -> None:
    assert chain.size == sum(s.size for s in chain.sections)
    assert chain.size == sum(message_size(m) for m in chain.messages())
    for s in chain.sections:
        assert s.size == s.header.size + sum(p.size for p in s.body)
        assert s.header.size == sum(message_size(m) for m in s.header.messages())
        for p in s.body:
            assert p.size == sum(message_size(m) for m in p.messages())


@given(chains, st.lists(st.text(max_size=20), max_size=4))
@settings(max_examples=60, deadline=None)
@pytest.mark.slow
def test_sizes_are_sums_after_every_edit(messages: list[Message], extra: list[str]) -> None:
    chain = Chain.build(messages)
    _check_sizes(chain)
    for text in extra:
        chain = chain.append_human(text)
        _check_sizes(chain)
        chain = chain.append(Message.of("assistant", text + "!"))
        _check_sizes(chain)
    assert chain.count == len(chain.messages())


@given(chains)
@settings(max_examples=60, deadline=None)
def test_append_one_by_one_equals_build(messages: list[Message]) -> None:
    chain = Chain()
    for m in messages:
        chain = chain.append(m)
    assert chain == Chain.build(messages)
    assert chain.messages() == messages


def test_append_is_strict_by_default_and_can_repair() -> None:
    chain = Chain.build(PREDEFINED["basic_conversation"])
    with pytest.raises(ChainError, match="rule 5"):
        chain.append(Message.of("system", "late"))
    repaired = chain.append(Message.of("system", "late"), repair=True)
    assert [r.rule for r in repaired.repairs] == [5]
    assert repaired.messages()[-1].text == "late"


def test_append_human_four_rules() -> None:
    empty = Chain()
    one = empty.append_human("a")  # rule 1
    assert len(one.sections) == 1 and one.sections[0].header.human == Message.of("user", "a")
    system_only = Chain.build(PREDEFINED["system_only"]).append_human("b")  # rule 3
    assert len(system_only.sections) == 1 and system_only.sections[0].header.human == Message.of("user", "b")
    merged = one.append_human("c")  # rule 4
    assert len(merged.sections) == 1
    human = merged.sections[0].header.human
    assert human is not None and human.parts == (Text(text="a"), Text(text="c"))
    assert merged.size == 2
    new_section = Chain.build(PREDEFINED["basic_conversation"]).append_human("d")  # rule 2
    assert len(new_section.sections) == 2


def test_add_tool_response_adds_then_updates_and_resizes() -> None:
    chain = Chain.build(PREDEFINED["with_multiple_tools"], allow_pending_tail=True)
    chain = chain.add_tool_response("call_1", "get_weather", "rainy")
    pair = chain.sections[0].body[0]
    assert pair.tool_calls_info().pending_ids == ("call_2",)
    chain = chain.add_tool_response("call_1", "get_weather", "sunny!")
    assert [r.text for r in chain.find_tool_call_responses("call_1")] == ["sunny!"]
    chain = chain.add_tool_response("call_2", "get_time", "noon")
    assert chain.sections[0].body[0].is_valid()
    _check_sizes(chain)
    with pytest.raises(ToolCallError):
        chain.add_tool_response("missing", "x", "y")


def test_summarization_pair_and_detection() -> None:
    pair = BodyPair.from_summarization("the summary", "call_abc", add_fake_signature=True)
    assert pair.kind is PairKind.SUMMARIZATION and pair.is_valid()
    call = pair.ai.tool_calls[0]
    assert call.name == SUMMARIZATION_TOOL_NAME
    assert json.loads(call.arguments) == json.loads(SUMMARIZATION_TOOL_ARGS)
    assert call.reasoning == Reasoning(signature=FAKE_REASONING_SIGNATURE)
    assert pair.tool_messages[0].tool_results[0].content == "the summary"
    assert contains_summarized_content(pair)
    assert contains_summarized_content(BodyPair.from_completion(SUMMARIZED_CONTENT_PREFIX + "x"))
    assert not contains_summarized_content(BodyPair.from_completion("plain"))
    generated = BodyPair.from_summarization("s")
    assert parse_template("call_{r:24:x}").matches(generated.ai.tool_calls[0].id)
    assert generated == BodyPair.from_summarization("s")  # deterministic


def test_contains_tool_call_reasoning_ignores_text_reasoning() -> None:
    text_reasoning = Message(role="assistant", parts=(Text(text="x", reasoning=Reasoning(signature="s")),))
    call_reasoning = Message(role="assistant", parts=(ToolCall(id="a", name="b", reasoning=Reasoning(signature="s")),))
    assert not contains_tool_call_reasoning([text_reasoning])
    assert contains_tool_call_reasoning([text_reasoning, call_reasoning])


@pytest.mark.parametrize(
    ("template", "good", "bad"),
    [
        ("call_{r:24:x}", "call_" + "0a" * 12, "call_" + "0A" * 12),
        ("toolu_{r:24:b}", "toolu_" + "aZ9" * 8, "toolu_" + "a-" * 12),
        ("id-{r:4:d}-{r:2:u}", "id-1234-AB", "id-123-AB"),
    ],
)
def test_templates_validate(template: str, good: str, bad: str) -> None:
    tpl = parse_template(template)
    assert tpl.matches(good) and not tpl.matches(bad)
    assert tpl.matches(tpl.generate("seed"))


@pytest.mark.parametrize(
    "template", ["", "call_", "call_{r:x:x}", "call_{r:24:q}", "c_{r:0:x}", "c_{r:2:x", "c}{r:2:x}"]
)
def test_bad_templates_raise(template: str) -> None:
    with pytest.raises(TemplateError):
        parse_template(template)


def test_normalize_tool_call_ids_keeps_matching_and_renames_by_position() -> None:
    messages = [
        Message.of("user", "q"),
        Message(role="assistant", parts=(ToolCall(id="dup", name="a"), ToolCall(id="toolu_" + "A" * 24, name="b"))),
        Message(role="tool", parts=(ToolResult(call_id="dup", content="1"),)),
        Message(role="tool", parts=(ToolResult(call_id="toolu_" + "A" * 24, content="2"),)),
        Message(role="assistant", parts=(ToolCall(id="dup", name="a"),)),
        Message(role="tool", parts=(ToolResult(call_id="dup", content="3"),)),
    ]
    chain = Chain.build(messages).normalize_tool_call_ids("toolu_{r:24:b}")
    out = chain.messages()
    first, kept = out[1].tool_calls
    assert kept.id == "toolu_" + "A" * 24
    assert out[2].tool_results[0].call_id == first.id
    assert out[3].tool_results[0].call_id == kept.id
    second = out[4].tool_calls[0]
    assert second.id != first.id  # reused ids become distinct ids
    assert out[5].tool_results[0].call_id == second.id
    tpl = parse_template("toolu_{r:24:b}")
    assert all(tpl.matches(c.id) for m in out for c in m.tool_calls)
    assert Chain.build(messages).normalize_tool_call_ids("toolu_{r:24:b}") == chain  # deterministic
    assert all(p.is_valid() for _, _, p in chain.pairs())


def test_clear_reasoning_removes_signatures_only() -> None:
    ai = Message(
        role="assistant",
        parts=(
            Reasoning(text="thinking", signature="sig"),
            Text(text="answer", reasoning=Reasoning(signature="t")),
            ToolCall(id="c", name="n", arguments="{}", reasoning=Reasoning(signature="g")),
        ),
    )
    messages = [Message.of("user", "q"), ai, Message(role="tool", parts=(ToolResult(call_id="c", content="r"),))]
    out = Chain.build(messages).clear_reasoning().messages()
    assert out[1].parts == (Text(text="answer"), ToolCall(id="c", name="n", arguments="{}"))
    assert out[2] == messages[2]


def test_large_chain_builds_and_appends() -> None:
    messages = generate_large_chain(2000)
    chain = Chain.build(messages)
    assert chain.count == len(messages)
    bigger = chain.append(Message.of("user", "more"))
    assert bigger.count == chain.count + 1
    assert bigger.sections[:-1] == chain.sections
    assert bigger.size == chain.size + 4
