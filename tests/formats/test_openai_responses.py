"""OpenAI Responses input items: grouping of output items, hostile input, conversions. The golden fixtures,
generated documents, arbitrary JSON and sniffing are asked of every format in `test_all_formats`."""

from __future__ import annotations

from typing import Any

import pytest

from chainsum.errors import FormatError
from chainsum.formats import Dropped, openai_chat, openai_responses
from chainsum.messages import (
    Message,
    Opaque,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
)
from formats.formats_support import (
    FIXTURES_ROOT,
    read_json,
)

FIXTURES = FIXTURES_ROOT / "openai-responses"


def test_output_items_of_one_turn_become_one_assistant_message() -> None:
    items = [
        {"role": "user", "content": "go"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "1"},
        {"type": "function_call_output", "call_id": "b", "output": "2"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
    ]
    messages = openai_responses.load(items).messages
    assert [(m.role, [p.kind for p in m.parts]) for m in messages] == [
        ("user", ["text"]),
        ("assistant", ["reasoning", "tool_call", "tool_call"]),
        ("tool", ["tool_result"]),
        ("tool", ["tool_result"]),
        ("assistant", ["text"]),
    ]
    assert messages[2].parts == (ToolResult(call_id="a", content="1"),)
    assert openai_responses.dump(messages) == items


def test_an_edited_turn_keeps_its_items_and_adds_new_ones_in_the_default_form() -> None:
    items = [
        {"type": "message", "role": "assistant", "id": "m1", "status": "completed", "content": [
            {"type": "output_text", "text": "a", "annotations": []},
            {"type": "output_text", "text": "b", "annotations": []},
        ]},
    ]  # fmt: skip
    message = openai_responses.load(items).messages[0]
    edited = message.with_parts([*message.parts, Text(text="c"), ToolCall(id="x", name="f"), Text(text="d")])
    assert openai_responses.dump([edited]) == [
        {"type": "message", "role": "assistant", "id": "m1", "status": "completed", "content": [
            {"type": "output_text", "text": "a", "annotations": []},
            {"type": "output_text", "text": "b", "annotations": []},
            {"type": "output_text", "text": "c"},
        ]},
        {"type": "function_call", "call_id": "x", "name": "f", "arguments": "{}"},
        {"role": "assistant", "content": "d"},
    ]  # fmt: skip


def test_summary_entries_are_rebuilt_from_their_lengths() -> None:
    item = {
        "type": "reasoning",
        "id": "rs",
        "summary": [{"type": "summary_text", "text": "one\n\ntwo"}, {"type": "summary_text", "text": ""}],
    }
    (message,) = openai_responses.load([item]).messages
    hints = {"item": {"id": "rs"}, "summary": [8, 0]}  # entry lengths: the first holds the separator itself
    assert message.parts == (Reasoning(text="one\n\ntwo\n\n", extras={"openai-responses": hints}),)
    assert openai_responses.dump([message]) == [item]
    rewritten = message.with_parts([Reasoning(text="shorter", extras=message.parts[0].extras)])
    assert openai_responses.dump([rewritten])[0]["summary"] == [{"type": "summary_text", "text": "shorter"}]


def test_an_unusual_summary_is_kept_whole() -> None:
    item = {"type": "reasoning", "id": "rs", "summary": ["bare", {"type": "summary_text", "text": "t", "x": 1}]}
    (message,) = openai_responses.load([item]).messages
    hints = {"item": {"id": "rs"}, "fields": {"summary": item["summary"]}}
    assert message.parts == (Reasoning(text="", extras={"openai-responses": hints}),)
    assert openai_responses.dump([message]) == [item]


# --- malformed and hostile input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (42, ""),
        ({"input": 42}, "input"),
        ({"input": [1]}, "input[0]"),
        ([{"role": "tool", "content": "x"}], "[0].role"),
        ([{"content": "x"}], "[0].role"),
        ([{"role": ["user"], "content": "x"}], "[0].role"),
        ([{"role": "user"}], "[0].content"),
        ([{"role": "user", "content": {"a": 1}}], "[0].content"),
        ([{"role": "user", "content": [None]}], "[0].content[0]"),
        ([{"role": "user", "content": [{"text": "x"}]}], "[0].content[0].type"),
        ([{"role": "user", "content": [{"type": "input_text", "text": None}]}], "[0].content[0].text"),
        ([{"role": "assistant", "content": [{"type": "output_text"}]}], "[0].content[0].text"),
        ([{"role": "user", "content": [{"type": "input_image", "image_url": 3}]}], "[0].content[0].image_url"),
        ([{"role": "user", "content": [{"type": "input_file", "filename": []}]}], "[0].content[0].filename"),
        ([{"role": "user", "content": "x", "id": 5}], "[0].id"),
        ([{"type": 7}], "[0].type"),
        ([{"type": "function_call", "name": "f", "arguments": "{}"}], "[0].call_id"),
        ([{"type": "function_call", "call_id": "c", "name": "f", "arguments": {"a": 1}}], "[0].arguments"),
        ([{"type": "function_call", "call_id": "c", "arguments": "{}"}], "[0].name"),
        ([{"type": "custom_tool_call", "call_id": "c", "name": "f"}], "[0].input"),
        ([{"type": "function_call_output", "output": "x"}], "[0].call_id"),
        ([{"type": "function_call_output", "call_id": "c", "output": None}], "[0].output"),
        ([{"type": "function_call_output", "call_id": "c", "output": [{"type": "input_audio"}]}], "[0].output[0]"),
        ([{"type": "reasoning", "id": "r", "summary": "text"}], "[0].summary"),
        ([{"type": "reasoning", "id": "r", "summary": [], "encrypted_content": 1}], "[0].encrypted_content"),
    ],
)
def test_malformed_input_names_the_path(data: Any, where: str) -> None:
    with pytest.raises(FormatError) as err:
        openai_responses.load(data)
    assert err.value.where == where
    assert err.value.format == "openai-responses"


def test_deep_nesting_and_huge_strings_are_carried_by_reference() -> None:
    deep: Any = 0
    for _ in range(100_000):
        deep = [deep]
    big = "y" * 20_000_000
    items = [{"type": "web_search_call", "id": "w", "action": deep}, {"role": "user", "content": big, "x": deep}]
    conv = openai_responses.load(items)
    out = openai_responses.dump(conv.messages)
    assert out[0] is items[0]
    assert out[1]["x"] is deep
    assert out[1]["content"] is big


# --- writing messages from other formats -------------------------------------------------------------------------


def test_other_formats_are_written_as_items_and_losses_reported() -> None:
    messages = [
        Message.of("system", "rules"),
        Message.of("user", "hi", name="ana"),
        Message(
            role="assistant",
            parts=(
                Reasoning(text="thinking", signature="sig"),
                Text(text="one"),
                Text(text="two"),
                ToolCall(id="t1", name="a", arguments='{"x":1}'),
                Opaque(format="anthropic", data={"type": "server_tool_use"}),
            ),
        ),
        Message(role="tool", parts=(ToolResult(call_id="t1", name="a", content="r", is_error=True),)),
        Message(role="user", parts=(ToolCall(id="u", name="check"),)),
    ]
    dropped: list[Dropped] = []
    assert openai_responses.dump(messages, dropped=dropped) == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "hi"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "one"}, {"type": "output_text", "text": "two"}],
        },
        {"type": "function_call", "call_id": "t1", "name": "a", "arguments": '{"x":1}'},
        {"type": "function_call_output", "call_id": "t1", "output": "r"},
        {"role": "user", "content": ""},
    ]
    assert [str(d) for d in dropped] == [
        "message 1: participant name 'ana'",
        "message 2: reasoning from another provider (Responses only takes back its own)",
        "message 2: anthropic block with no Responses equivalent",
        "message 3: tool name 'a' on the output of call 't1' (outputs carry only the id)",
        "message 3: error flag of the output of call 't1'",
        "message 4: tool call 'check' made by the user role",
    ]


def test_responses_to_chat_and_back_keeps_text_calls_and_results() -> None:
    wire = read_json(FIXTURES / "request.wire.json")
    messages = openai_responses.load(wire).messages
    chat = openai_chat.dump(messages)
    through = openai_chat.load(chat).messages
    items = openai_responses.dump(through)
    back = openai_responses.load(items).messages

    def essence(ms: tuple[Message, ...]) -> list[Any]:
        return [
            (m.role, p.kind, getattr(p, "text", None), getattr(p, "id", None), getattr(p, "call_id", None))
            for m in ms
            for p in m.parts
            if isinstance(p, Text | ToolCall | ToolResult)
        ]

    assert essence(back) == essence(messages)
    # the custom tool call stays custom across both APIs
    assert {"type": "custom_tool_call", "call_id": "call_b", "name": "apply_patch", "input": "*** Begin Patch"} in items


CODEX_TOOLS = {
    "type": "additional_tools",
    "role": "developer",
    "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object", "properties": {}}}],
}


def test_an_unknown_item_with_the_role_of_instructions_is_a_system_message_written_back_as_it_came() -> None:
    """Codex 0.171 sends its tool definitions as a first ``additional_tools`` item: instructions, so chainsum
    keeps it as it keeps the system prompt (read into an assistant turn, it was summarized away and the model lost
    its tools)."""
    items = [CODEX_TOOLS, {"role": "user", "content": "run the tests"}, {"type": "web_search_call", "id": "ws_1"}]
    conv = openai_responses.load(items)
    first = conv.messages[0]
    assert first.role == "system" and first.parts == (Opaque(format="openai-responses", data=CODEX_TOOLS),)
    assert conv.messages[2].role == "assistant"  # an item with no role stays in the assistant turn
    dropped: list[Dropped] = []
    assert openai_responses.dump(conv.messages, dropped=dropped) == items and dropped == []
