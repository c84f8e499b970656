"""OpenAI Responses input items: golden fixtures, grouping of output items, hostile input, conversions."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.errors import FormatError
from chainsum.formats import Dropped, detect_format, openai_chat, openai_responses
from chainsum.messages import (
    Message,
    Opaque,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    messages_from_list,
    messages_to_list,
)
from formats.formats_support import (
    FIXTURES_ROOT,
    assert_exact_or_format_error,
    assert_round_trips,
    case_ids,
    openai_chaos_documents,
    read_canonical,
    read_json,
    wire_cases,
)
from sampling import examples

FIXTURES = FIXTURES_ROOT / "openai-responses"
CASES = wire_cases(FIXTURES)
IDS = case_ids(CASES)


# --- golden fixtures ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_fixture_loads_to_the_expected_canonical_messages(path: Path) -> None:
    conv = openai_responses.load(read_json(path))
    expected = read_canonical(path)
    assert conv.format == "openai-responses"
    assert messages_to_list(conv.messages) == expected["messages"]
    assert conv.envelope == expected["envelope"]


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_fixture_round_trips_exactly(path: Path) -> None:
    wire = read_json(path)
    conv = openai_responses.load(wire)
    dropped: list[Dropped] = []
    assert openai_responses.dump(conv.messages, conv.envelope, dropped) == wire
    assert dropped == []


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_fixture_round_trips_through_chainsum_json(path: Path) -> None:
    expected = read_canonical(path)
    assert openai_responses.dump(messages_from_list(expected["messages"]), expected["envelope"]) == read_json(path)


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_fixture_is_detected(path: Path) -> None:
    assert openai_responses.sniff(read_json(path)) == 2
    assert detect_format(read_json(path)) == "openai-responses"


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


# --- generated documents (Hypothesis) ----------------------------------------------------------------------------

_text = st.text(max_size=8)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_data_url = st.binary(max_size=9).map(lambda b: "data:image/png;base64," + base64.b64encode(b).decode("ascii"))
_meta = st.fixed_dictionaries({}, optional={"id": st.none() | _text, "status": st.sampled_from(["completed", None])})
_input_part = st.one_of(
    st.builds(lambda t, a: {"type": "input_text", "text": t, **a}, _text, st.dictionaries(st.just("x"), _json)),
    st.builds(lambda t: {"type": "output_text", "text": t}, _text),
    st.builds(
        lambda u, d: {"type": "input_image", **u, **d},
        st.fixed_dictionaries({}, optional={"image_url": st.none() | _text | _data_url, "file_id": _text}),
        st.dictionaries(st.just("detail"), st.sampled_from(["auto", "low"])),
    ),
    st.builds(
        lambda f: {"type": "input_file", **f},
        st.fixed_dictionaries(
            {},
            optional={
                "file_data": _data_url | _text,
                "file_id": _text,
                "file_url": st.none() | _text,
                "filename": st.none() | _text,
            },
        ),
    ),
    st.builds(lambda d: {"type": "input_audio", "input_audio": d}, _json),
)
_output_part = st.one_of(
    st.builds(
        lambda t, a: {"type": "output_text", "text": t, **a},
        _text,
        st.fixed_dictionaries({}, optional={"annotations": st.lists(_json, max_size=2), "logprobs": st.just([])}),
    ),
    st.builds(lambda t: {"type": "refusal", "refusal": t}, _text),
    st.builds(lambda t: {"type": "input_text", "text": t}, _text),
    st.builds(lambda d: {"type": "output_audio", "data": d}, _text),
)
_item = st.one_of(
    st.builds(
        lambda role, content, typed, meta: {**typed, "role": role, "content": content, **meta},
        st.sampled_from(["user", "system", "developer"]),
        _text | st.lists(_input_part, max_size=3),
        st.sampled_from([{}, {"type": "message"}]),
        _meta,
    ),
    st.builds(
        lambda content, typed, meta: {**typed, "role": "assistant", "content": content, **meta},
        _text | st.lists(_output_part, max_size=3),
        st.sampled_from([{}, {"type": "message"}]),
        _meta,
    ),
    st.builds(
        lambda c, n, a, meta: {"type": "function_call", "call_id": c, "name": n, "arguments": a, **meta},
        _text,
        _text,
        _text,
        _meta,
    ),
    st.builds(
        lambda c, n, a: {"type": "custom_tool_call", "call_id": c, "name": n, "input": a},
        _text,
        _text,
        _text,
    ),
    st.builds(
        lambda kind, c, out, meta: {"type": kind, "call_id": c, "output": out, **meta},
        st.sampled_from(["function_call_output", "custom_tool_call_output"]),
        _text,
        _text | st.lists(_input_part.filter(lambda p: p["type"] != "input_audio"), max_size=2),
        _meta,
    ),
    st.builds(
        lambda summary, enc, rest: {"type": "reasoning", "id": "rs", "summary": summary, **enc, **rest},
        st.lists(st.builds(lambda t: {"type": "summary_text", "text": t}, st.text(alphabet="ab\n", max_size=5))),
        st.fixed_dictionaries({}, optional={"encrypted_content": st.none() | _text}),
        st.fixed_dictionaries({}, optional={"content": st.lists(_json, max_size=2), "status": _text}),
    ),
    st.builds(
        lambda kind, d: {"type": kind, "id": "x", "data": d}, st.sampled_from(["web_search_call", "mcp_call"]), _json
    ),
)
_document = st.lists(_item, max_size=7) | st.builds(
    lambda items, model: {"model": model, "input": items}, st.lists(_item, max_size=5), _text
)


@settings(max_examples=examples(100), deadline=None)
@given(_document)
def test_any_generated_document_round_trips(doc: Any) -> None:
    assert_round_trips(openai_responses, doc)


# --- arbitrary JSON ----------------------------------------------------------------------------------------------


@settings(max_examples=examples(150), deadline=None)
@given(openai_chaos_documents())
def test_any_json_either_round_trips_or_fails_with_a_format_error(doc: Any) -> None:
    """Never a traceback: whatever shape arrives, sniff answers and load reads it exactly or says where it fails."""
    assert_exact_or_format_error(openai_responses, doc)


# --- sniffing ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "score"),
    [
        ([{"role": "user", "content": "hi"}], 1),
        ([{"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]}], 1),
        ([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}], 2),
        ([{"type": "message", "role": "user", "content": "hi"}], 2),
        ([{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}], 2),
        ([{"type": "function_call_output", "call_id": "c", "output": "x"}], 2),
        ([{"type": "reasoning", "id": "r", "summary": []}], 2),
        ([{"type": "web_search_call", "id": "w"}], 2),
        ({"model": "m", "input": "hello"}, 2),
        ({"input": [{"role": "user", "content": "hi"}]}, 2),
        # contradictions
        ([{"role": "tool", "tool_call_id": "c", "content": "x"}], 0),
        ([{"role": "assistant", "content": None, "tool_calls": []}], 0),
        ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], 0),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}], 0),
        ([{"role": "user", "content": "hi", "turn_idx": 1}], 0),
        ([{"type": "user", "message": {"role": "user", "content": "hi"}}], 0),
        ([{"role": "model", "parts": [{"text": "hi"}]}], 0),
        ({"messages": [{"role": "user", "content": "hi"}]}, 0),
        ({"model": "m"}, 0),
        ([{"role": "user", "content": None}], 0),
        ([{"type": ["message"]}], 0),
        ("hi", 0),
    ],
)
def test_sniff(data: Any, score: int) -> None:
    assert openai_responses.sniff(data) == score


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
