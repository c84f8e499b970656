"""OpenAI Chat Completions: the real corpora, hostile input, and conversions. The golden fixtures, generated
documents, arbitrary JSON and sniffing are asked of every format in `test_all_formats`."""

from __future__ import annotations

from typing import Any

import pytest

from chainsum.errors import FormatError
from chainsum.formats import Dropped, detect_format, openai_chat, openai_responses
from chainsum.messages import (
    File,
    Image,
    Message,
    Opaque,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
)
from corpora_support import FULL, documents
from formats.formats_support import (
    FIXTURES_ROOT,
    read_json,
)


def test_data_url_becomes_bytes_only_when_it_rebuilds_exactly() -> None:
    conv = openai_chat.load(
        [
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgp="}},  # stray bits
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo"}},  # no padding
                    {"type": "image_url", "image_url": {"url": "data:image/svg+xml,%3Csvg%3E"}},  # not base64
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO Rw0KGgo="}},
                ],
            }
        ]
    )
    assert conv.messages[0].parts == (
        Image(data=b"\x89PNG\r\n\x1a\n", media_type="image/png"),
        Image(url="data:image/png;base64,iVBORw0KGgp="),
        Image(url="data:image/png;base64,iVBORw0KGgo"),
        Image(url="data:image/svg+xml,%3Csvg%3E"),
        Image(url="data:image/png;base64,iVBO Rw0KGgo="),
    )


# --- the real corpora --------------------------------------------------------------------------------------------


def _corpus() -> list[Any]:
    return [d for d in documents(include_subagents=False) if d.format == "openai"]


def test_every_corpus_document_round_trips_exactly() -> None:
    docs = _corpus()
    failures = []
    for doc in docs:
        conv = openai_chat.load(doc.data)
        if openai_chat.dump(conv.messages, conv.envelope) != doc.data:
            failures.append(doc.label)
    assert failures == []
    assert len(docs) >= (200 if FULL else 20)  # tau-bench's 200 runs and the bfcl-memory histories, or the excerpts


def test_every_corpus_document_is_detected_as_openai() -> None:
    assert {doc.label: detect_format(doc.data) for doc in _corpus()} == {doc.label: "openai" for doc in _corpus()}


def test_reused_tool_call_ids_are_kept_as_read() -> None:
    """tau-bench reuses ids inside one trajectory; a format module never pairs by id, so nothing is renamed."""
    for doc in _corpus():
        wire_ids = [c["id"] for m in doc.data for c in m.get("tool_calls") or []]
        if len(wire_ids) == len(set(wire_ids)):
            continue
        messages = openai_chat.load(doc.data).messages
        assert [c.id for m in messages for c in m.tool_calls] == wire_ids
        result_ids = [r.call_id for m in messages for r in m.tool_results]
        assert result_ids == [m["tool_call_id"] for m in doc.data if m["role"] == "tool"]
        return
    pytest.fail("no trajectory with a reused tool-call id found")


# --- malformed and hostile input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ("just text", ""),
        ({"model": "m"}, "messages"),
        ({"messages": {"role": "user"}}, "messages"),
        (["not a message"], "[0]"),
        ([{"content": "hi"}], "[0].role"),
        ([{"role": "robot", "content": "hi"}], "[0].role"),
        ([{"role": {"a": 1}, "content": "hi"}], "[0].role"),
        ([{"role": "user", "content": 42}], "[0].content"),
        ([{"role": "user", "content": {"text": "hi"}}], "[0].content"),
        ([{"role": "user", "content": ["hi"]}], "[0].content[0]"),
        ([{"role": "user", "content": [{"text": "hi"}]}], "[0].content[0].type"),
        ([{"role": "user", "content": [{"type": "text", "text": 3}]}], "[0].content[0].text"),
        ([{"role": "user", "content": [{"type": "image_url"}]}], "[0].content[0].image_url"),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": None}}]}],
            "[0].content[0].image_url.url",
        ),
        ([{"role": "user", "content": [{"type": "file", "file": "f"}]}], "[0].content[0].file"),
        ([{"role": "user", "content": [{"type": "file", "file": {"filename": 1}}]}], "[0].content[0].file.filename"),
        ([{"role": "user", "content": "x", "name": 7}], "[0].name"),
        ([{"role": "assistant", "tool_calls": {"id": "c"}}], "[0].tool_calls"),
        ([{"role": "assistant", "tool_calls": "call"}], "[0].tool_calls"),
        ([{"role": "assistant", "tool_calls": [None]}], "[0].tool_calls[0]"),
        ([{"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]}], "[0].tool_calls[0].function"),
        (
            [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": {"a": 1}}}]}],
            "[0].tool_calls[0].function.arguments",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": 5, "function": {"name": "f", "arguments": "{}"}}]}],
            "[0].tool_calls[0].id",
        ),
        (
            [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}],
            "[0].tool_calls[0].function.name",
        ),
        ([{"role": "assistant", "tool_calls": [{"id": "c", "type": 3}]}], "[0].tool_calls[0].type"),
        ([{"role": "assistant", "tool_calls": [{"id": "c", "type": "custom"}]}], "[0].tool_calls[0].custom"),
        ([{"role": "assistant", "refusal": ["no"]}], "[0].refusal"),
        ([{"role": "assistant", "function_call": "f()"}], "[0].function_call"),
        ([{"role": "assistant", "function_call": {"name": "f", "arguments": None}}], "[0].function_call.arguments"),
        ([{"role": "tool", "content": "x"}], "[0].tool_call_id"),
        ([{"role": "tool", "tool_call_id": None, "content": "x"}], "[0].tool_call_id"),
        ([{"role": "tool", "tool_call_id": "c", "content": 1.5}], "[0].content"),
        ([{"role": "tool", "tool_call_id": "c", "content": [{"type": "input_audio"}]}], "[0].content[0].type"),
        ({"messages": [{"role": "user", "content": "ok"}, {"role": "user", "content": 1}]}, "messages[1].content"),
    ],
)
def test_malformed_input_names_the_path(data: Any, where: str) -> None:
    with pytest.raises(FormatError) as err:
        openai_chat.load(data)
    assert err.value.where == where
    assert err.value.format == "openai"


def test_deep_nesting_in_unknown_fields_is_carried_by_reference() -> None:
    deep: Any = "leaf"
    for _ in range(100_000):  # far beyond the recursion limit: nothing may walk it
        deep = {"d": deep}
    doc = [{"role": "user", "content": "hi", "x_deep": deep}, {"role": "assistant", "content": [deep]}]
    with pytest.raises(FormatError) as err:
        openai_chat.load(doc)  # a dict part without a type is malformed: reported, not recursed into
    assert err.value.where == "[1].content[0].type"
    conv = openai_chat.load(doc[:1])
    out = openai_chat.dump(conv.messages, conv.envelope)
    assert out[0]["x_deep"] is deep
    assert openai_chat.sniff(doc) == 0


def test_huge_strings_are_not_copied() -> None:
    big = "x" * 50_000_000
    conv = openai_chat.load([{"role": "tool", "tool_call_id": "c", "content": big}, {"role": "user", "content": big}])
    assert conv.messages[0].parts[0] == ToolResult(call_id="c", content=big)
    assert conv.messages[1].parts[0].text is big  # type: ignore[union-attr]
    assert openai_chat.dump(conv.messages)[1]["content"] is big


# --- writing messages from other formats -------------------------------------------------------------------------


def test_other_formats_are_written_in_the_modern_form_and_losses_reported() -> None:
    messages = [
        Message.of("system", "rules"),
        Message(
            role="user",
            parts=(
                Text(text="look", extras={"anthropic": {"fields": {"cache_control": {"type": "ephemeral"}}}}),
                Image(data=b"\x89PNG\r\n\x1a\nrest"),
                Image(url="https://e.x/a.jpg", media_type="image/jpeg"),
                File(data=b"%PDF-1.7", name="doc.pdf"),
                File(url="https://e.x/doc.pdf"),
            ),
            name="ana",
        ),
        Message(
            role="assistant",
            parts=(
                Reasoning(text="thinking", signature="sig"),
                Text(text="calling"),
                ToolCall(id="t1", name="a", arguments='{"x":1}', reasoning=Reasoning(signature="g")),
                Text(text="and"),
                ToolCall(id="t2", name="b", arguments="{}"),
                Opaque(format="anthropic", data={"type": "server_tool_use"}),
            ),
        ),
        Message(
            role="tool",
            parts=(
                ToolResult(call_id="t1", content="one", is_error=True),
                ToolResult(call_id="t2", name="b", content=(Text(text="two"), Image(url="https://e.x/p.png"))),
                Text(text="also this"),
            ),
        ),
        Message(role="user", parts=(ToolCall(id="u1", name="check", arguments="{}"), Text(text="done"))),
    ]
    dropped: list[Dropped] = []
    assert openai_chat.dump(messages, dropped=dropped) == [
        {"role": "system", "content": "rules"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgpyZXN0"}},
                {"type": "image_url", "image_url": {"url": "https://e.x/a.jpg"}},
                {
                    "type": "file",
                    "file": {"file_data": "data:application/pdf;base64,JVBERi0xLjc=", "filename": "doc.pdf"},
                },
            ],
            "name": "ana",
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "calling"}, {"type": "text", "text": "and"}],
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "a", "arguments": '{"x":1}'}},
                {"id": "t2", "type": "function", "function": {"name": "b", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "one"},
        {
            "role": "tool",
            "tool_call_id": "t2",
            "name": "b",
            "content": [
                {"type": "text", "text": "two"},
                {"type": "image_url", "image_url": {"url": "https://e.x/p.png"}},
            ],
        },
        {"role": "user", "content": "also this"},
        {"role": "user", "content": "done"},
    ]
    assert [str(d) for d in dropped] == [
        "message 1: file by URL (https://e.x/doc.pdf): Chat Completions files are inline or uploaded",
        "message 2: reasoning (Chat Completions accepts no reasoning input)",
        "message 2: reasoning bound to tool call 'a'",
        "message 2: anthropic block with no Chat Completions equivalent",
        "message 3: error flag of the result of call 't1'",
        "message 3: non-result parts of a tool message (written as a user message after the results)",
        "message 4: tool call 'check' made by the user role",
        "message 1: anthropic-specific fields",
    ]


def test_tool_results_inside_a_user_message_are_written_first() -> None:
    message = Message(role="user", parts=(Text(text="and now?"), ToolResult(call_id="c", content="r")))
    dropped: list[Dropped] = []
    assert openai_chat.dump([message], dropped=dropped) == [
        {"role": "tool", "tool_call_id": "c", "content": "r"},
        {"role": "user", "content": "and now?"},
    ]
    assert dropped == []


def test_hints_that_no_longer_fit_an_edited_message_fall_back_to_the_default() -> None:
    conv = openai_chat.load([{"role": "assistant", "content": None, "tool_calls": None}])
    edited = conv.messages[0].with_parts([Text(text="now with text"), ToolCall(id="c", name="f")])
    assert openai_chat.dump([edited]) == [
        {
            "role": "assistant",
            "content": "now with text",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        }
    ]


# --- conversions -------------------------------------------------------------------------------------------------


def _essence(messages: list[Message] | tuple[Message, ...]) -> list[Any]:
    """What a conversion between the two OpenAI APIs must keep: roles, text, calls and results."""
    out: list[Any] = []
    for m in messages:
        for p in m.parts:
            match p:
                case Text():
                    out.append((m.role, "text", p.text))
                case ToolCall():
                    out.append((m.role, "call", p.id, p.name, p.arguments))
                case ToolResult():
                    out.append((m.role, "result", p.call_id, p.content))
                case _:
                    out.append((m.role, p.kind))
    return out


def test_chat_to_responses_and_back_keeps_text_calls_and_results() -> None:
    for doc in _corpus()[:50]:
        messages = openai_chat.load(doc.data).messages
        dropped: list[Dropped] = []
        items = openai_responses.dump(messages, dropped=dropped)
        assert {d.what.split(" ", 2)[0:2] == ["tool", "name"] for d in dropped} <= {True}
        through = openai_responses.load(items).messages
        assert _essence(through) == _essence(messages)
        back = openai_chat.dump(through)
        without_names = [{k: v for k, v in m.items() if not (m["role"] == "tool" and k == "name")} for m in doc.data]
        assert back == without_names


def test_responses_fixture_to_chat_reports_what_it_drops() -> None:
    wire = read_json(FIXTURES_ROOT / "openai-responses" / "request.wire.json")
    messages = openai_responses.load(wire).messages
    dropped: list[Dropped] = []
    chat = openai_chat.dump(messages, dropped=dropped)
    assert _essence(openai_chat.load(chat).messages) == [
        e for e in _essence(messages) if e[1] not in ("reasoning", "opaque", "file")
    ]
    assert [str(d) for d in dropped] == [
        "message 1: file without data: Chat Completions files are inline or uploaded",
        "message 1: file by URL (https://example.com/r.pdf): Chat Completions files are inline or uploaded",
        "message 2: reasoning (Chat Completions accepts no reasoning input)",
        "message 2: openai-responses block with no Chat Completions equivalent",
        "message 4: reasoning (Chat Completions accepts no reasoning input)",
        "message 6: openai-responses block with no Chat Completions equivalent",
        "message 8: openai-responses block with no Chat Completions equivalent",
        "message 1: openai-responses-specific fields",
        "message 4: openai-responses-specific fields",
        "message 9: openai-responses-specific fields",
    ]
    # a custom tool call stays custom between the two OpenAI APIs
    assert chat[6]["tool_calls"] == [
        {"id": "call_b", "type": "custom", "custom": {"name": "apply_patch", "input": "*** Begin Patch"}}
    ]
