"""Bedrock Converse / Strands messages: turn splitting, blocks, conversions, hostile input. The golden fixtures,
round-trip properties and sniffing are asked of every format in `test_all_formats`."""

from __future__ import annotations

from typing import Any

import pytest

from chainsum.errors import FormatError
from chainsum.formats import Dropped, bedrock
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


def _round_trip(doc: Any) -> Any:
    conv = bedrock.load(doc)
    return bedrock.dump(conv.messages, conv.envelope)


# --- splitting and rejoining user turns -----------------------------------------------------------------------

_CALLS = {
    "role": "assistant",
    "content": [
        {"toolUse": {"toolUseId": "t1", "name": "f", "input": {"a": 1}}},
        {"toolUse": {"toolUseId": "t2", "name": "g", "input": {}}},
    ],
}


def _result(call_id: str, text: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": call_id, "content": [{"text": text}], "status": "success"}}


def test_mixed_user_message_splits_into_tool_then_user() -> None:
    doc = [_CALLS, {"role": "user", "content": [_result("t1", "1"), _result("t2", "2"), {"text": "and now?"}]}]
    messages = bedrock.load(doc).messages
    assert messages == (
        Message(
            role="assistant",
            parts=(ToolCall(id="t1", name="f", arguments='{"a":1}'), ToolCall(id="t2", name="g", arguments="{}")),
        ),
        Message(
            role="tool",
            parts=(ToolResult(call_id="t1", name="f", content="1"), ToolResult(call_id="t2", name="g", content="2")),
        ),
        Message.of("user", "and now?"),
    )
    assert bedrock.dump(messages) == {"messages": doc}


def test_interleaved_message_rejoins_in_wire_order_until_edited() -> None:
    turn = {
        "role": "user",
        "content": [{"text": "a"}, _result("t1", "1"), {"cachePoint": {"type": "default"}}, _result("t2", "2")],
    }
    call, tool, user = bedrock.load([_CALLS, turn]).messages
    assert tool.extras == {"bedrock": {"layout": "utut"}}
    assert bedrock.dump([call, tool, user])["messages"][1] == turn
    assert bedrock.dump([call, tool, user.with_parts(user.parts[:1])])["messages"][1] == {
        "role": "user",
        "content": [_result("t1", "1"), _result("t2", "2"), {"text": "a"}],
    }


def test_consecutive_user_messages_stay_apart_but_foreign_runs_merge() -> None:
    doc = [
        _CALLS,
        {"role": "user", "content": [_result("t1", "1"), _result("t2", "2")]},
        {"role": "user", "content": [{"text": "x"}]},
    ]
    messages = bedrock.load(doc).messages
    assert messages[2].extras == {"bedrock": {"turn": "new"}}
    assert bedrock.dump(messages) == {"messages": doc}
    foreign = [Message(role=m.role, parts=m.parts) for m in messages]
    assert bedrock.dump(foreign)["messages"][1:] == [
        {"role": "user", "content": [_result("t1", "1"), _result("t2", "2"), {"text": "x"}]}
    ]


# --- blocks ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("result", "part"),
    [
        (
            {"toolUseId": "t1", "content": [{"text": "ok"}], "status": "success"},
            ToolResult(call_id="t1", name="f", content="ok"),
        ),
        (
            {"toolUseId": "t1", "content": [{"text": "a"}, {"text": "b"}], "status": "error"},
            ToolResult(call_id="t1", name="f", content=(Text(text="a"), Text(text="b")), is_error=True),
        ),
        (
            {"toolUseId": "t1", "content": [{"json": {"rows": [1, 2]}}], "status": "success"},
            ToolResult(
                call_id="t1", name="f", content=(Text(text='{"rows":[1,2]}', extras={"bedrock": {"json": True}}),)
            ),
        ),
        (
            {
                "toolUseId": "t1",
                "content": [
                    {"json": "plain"},
                    {"document": {"format": "csv", "name": "d", "source": {"bytes": "YSxi"}}},
                ],
            },
            ToolResult(
                call_id="t1",
                name="f",
                content=(
                    Text(text='"plain"', extras={"bedrock": {"json": True}}),
                    File(data=b"a,b", media_type="text/csv", name="d"),
                ),
                extras={"bedrock": {"absent": ["status"]}},
            ),
        ),
        ({"toolUseId": "t1", "content": [], "status": "success"}, ToolResult(call_id="t1", name="f", content=())),
        (
            {"toolUseId": "t9", "status": "success"},
            ToolResult(call_id="t9", content=(), extras={"bedrock": {"absent": ["content"]}}),
        ),
        (
            {"toolUseId": "t1", "content": [{"video": {"format": "mp4"}}], "status": "success"},
            ToolResult(
                call_id="t1",
                name="f",
                content=(Text(text='{"video":{"format":"mp4"}}', extras={"bedrock": {"raw": True}}),),
            ),
        ),
    ],
)
def test_tool_result_content(result: dict[str, Any], part: ToolResult) -> None:
    doc = [_CALLS, {"role": "user", "content": [{"toolResult": result}]}]
    messages = bedrock.load(doc).messages
    assert messages[1] == Message(role="tool", parts=(part,))
    assert _round_trip(doc) == doc


def test_reasoning_blocks() -> None:
    content = [
        {"reasoningContent": {"reasoningText": {"text": "think", "signature": "sig=="}}},
        {"reasoningContent": {"redactedContent": "b3BhcXVl"}},
        {"reasoningContent": {"redactedContent": {"__bytes_encoded__": True, "data": "b3BhcXVl"}}},
        {"reasoningContent": {"reasoningText": {"text": "no signature"}}},
    ]
    doc = [{"role": "assistant", "content": content}]
    (message,) = bedrock.load(doc).messages
    assert message.parts == (
        Reasoning(text="think", signature="sig=="),
        Reasoning(data="b3BhcXVl"),
        Reasoning(data="b3BhcXVl", extras={"bedrock": {"bytes": "strands"}}),
        Reasoning(text="no signature"),
    )
    assert _round_trip(doc) == doc


def test_media_blocks_and_strands_bytes() -> None:
    content = [
        {"image": {"format": "gif", "source": {"bytes": {"__bytes_encoded__": True, "data": "R0lGOA=="}}}},
        {"image": {"format": "png", "source": {"bytes": "iVBORw"}}},
        {"document": {"format": "rtf", "name": "n", "source": {"s3Location": {"uri": "https://not-s3/x"}}}},
        {"document": {"format": "txt", "name": "t", "source": {"content": [{"text": "x"}]}}},
    ]
    doc = [{"role": "user", "content": content}]
    (message,) = bedrock.load(doc).messages
    assert message.parts == (
        Image(data=b"GIF8", media_type="image/gif", extras={"bedrock": {"bytes": "strands"}}),
        Image(data=b"\x89PNG", media_type="image/png", extras={"bedrock": {"b64": "iVBORw"}}),
        File(url="https://not-s3/x", name="n", extras={"bedrock": {"format": "rtf", "s3": True}}),
        Opaque(format="bedrock", data=content[3]),
    )
    assert _round_trip(doc) == doc


# --- conversions from other formats ---------------------------------------------------------------------------


def test_dump_of_a_foreign_history() -> None:
    """Canonical messages as OpenAI Chat / Anthropic / Gemini histories read them, with no Bedrock hints."""
    messages = [
        Message.of("system", "Be brief."),
        Message.of("user", "Chart?", Image(url="data:image/jpeg;base64,/9j/", media_type="image/jpeg"), name="bob"),
        Message(
            role="assistant",
            parts=(
                Reasoning(text="thinking", signature="s1", data="REDACTED"),
                Text(text="Checking.", reasoning=Reasoning(signature="gemini-sig")),
                ToolCall(id="call_1", name="chart", arguments='{"id": 7}'),
                ToolCall(id="call_2", name="clock", arguments=""),
            ),
        ),
        Message(
            role="tool",
            parts=(ToolResult(call_id="call_1", content=(Text(text="done"), Image(url="https://x/c.png"))),),
        ),
        Message(role="tool", parts=(ToolResult(call_id="call_2", content="09:00", is_error=True),)),
        Message.of("system", "Mind the budget."),
        Message.of("user", File(data=b"%PDF", media_type="application/pdf", name="r.pdf")),
        Message(
            role="assistant",
            parts=(Opaque(format="openai-responses", data={"type": "web_search_call"}), Text(text="ok")),
        ),
    ]
    dropped: list[Dropped] = []
    assert bedrock.dump(messages, dropped=dropped) == {
        "messages": [
            {
                "role": "user",
                "content": [{"text": "Chart?"}, {"image": {"format": "jpeg", "source": {"bytes": "/9j/"}}}],
            },
            {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "thinking", "signature": "s1"}}},
                    {"reasoningContent": {"redactedContent": "REDACTED"}},
                    {"text": "Checking."},
                    {"toolUse": {"toolUseId": "call_1", "name": "chart", "input": {"id": 7}}},
                    {"toolUse": {"toolUseId": "call_2", "name": "clock", "input": {}}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "call_1", "content": [{"text": "done"}], "status": "success"}},
                    {"toolResult": {"toolUseId": "call_2", "content": [{"text": "09:00"}], "status": "error"}},
                    {"text": "[system] Mind the budget."},
                    {"document": {"format": "pdf", "name": "r.pdf", "source": {"bytes": "JVBERg=="}}},
                ],
            },
            {"role": "assistant", "content": [{"text": "ok"}]},
        ],
        "system": [{"text": "Be brief."}],
    }
    assert dropped == [
        Dropped(5, "system message after the first turn sent as user text"),
        Dropped(1, "participant name"),
        Dropped(2, "reasoning attached to a text part"),
        Dropped(3, "image by URL (Bedrock reads bytes or S3 only)"),
        Dropped(7, "openai-responses block"),
    ]


def test_system_blocks_and_what_they_cannot_hold() -> None:
    doc = {
        "messages": [],
        "system": [{"text": "a"}, {"cachePoint": {"type": "default"}}, {"guardContent": {"text": {"text": "g"}}}],
    }
    conv = bedrock.load(doc)
    assert conv.messages == (
        Message(
            role="system",
            parts=(
                Text(text="a"),
                Opaque(format="bedrock", data={"cachePoint": {"type": "default"}}),
                Opaque(format="bedrock", data={"guardContent": {"text": {"text": "g"}}}),
            ),
        ),
    )
    assert bedrock.dump(conv.messages, conv.envelope) == doc
    dropped: list[Dropped] = []
    system = Message(role="system", parts=(Text(text="s"), Image(data=b"x"), Opaque(format="gemini", data={})))
    assert bedrock.dump([system], dropped=dropped) == {"messages": [], "system": [{"text": "s"}]}
    assert dropped == [Dropped(0, "image part in a system message"), Dropped(0, "gemini block")]
    # an empty system list is kept as it was, and a bare list takes a system only by becoming a request
    assert _round_trip({"messages": [], "system": []}) == {"messages": [], "system": []}
    bare = bedrock.load([{"role": "user", "content": [{"text": "hi"}]}])
    assert bedrock.dump(bare.messages, bare.envelope) == [{"role": "user", "content": [{"text": "hi"}]}]
    assert bedrock.dump([Message.of("system", "s"), *bare.messages], bare.envelope) == {
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "system": [{"text": "s"}],
    }


@pytest.mark.parametrize(
    ("media_type", "fmt"),
    [
        ("application/pdf", "pdf"),
        ("text/plain", "txt"),
        ("text/markdown", "md"),
        ("application/json", "json"),
        (None, None),
    ],
)
def test_foreign_document_formats(media_type: str | None, fmt: str | None) -> None:
    dumped = bedrock.dump([Message.of("user", File(data=b"x", media_type=media_type, name="d"))])
    document = dumped["messages"][0]["content"][0]["document"]
    assert document.get("format") == fmt
    assert document["source"] == {"bytes": "eA=="}


# --- hostile input --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ("x", ""),
        ({"system": []}, "messages"),
        ({"messages": [], "system": "be brief"}, "system"),
        ({"messages": [], "system": [5]}, "system[0]"),
        ([5], "messages[0]"),
        ([{"content": []}], "messages[0].role"),
        ([{"role": "system", "content": []}], "messages[0].role"),
        ([{"role": "user"}], "messages[0].content"),
        ([{"role": "user", "content": "hi"}], "messages[0].content"),
        ([{"role": "user", "content": ["hi"]}], "messages[0].content[0]"),
        ([{"role": "user", "content": [{"text": 5}]}], "messages[0].content[0].text"),
        ([{"role": "user", "content": [{"text": "a", "image": {}}]}], "messages[0].content[0]"),
        ([{"role": "user", "content": [{"image": []}]}], "messages[0].content[0].image"),
        ([{"role": "user", "content": [{"image": {"format": "png"}}]}], "messages[0].content[0].image.source"),
        (
            [{"role": "user", "content": [{"image": {"format": 1, "source": {}}}]}],
            "messages[0].content[0].image.format",
        ),
        (
            [{"role": "user", "content": [{"image": {"source": {"bytes": "!!!!"}}}]}],
            "messages[0].content[0].image.source.bytes",
        ),
        (
            [{"role": "user", "content": [{"image": {"source": {"bytes": 5}}}]}],
            "messages[0].content[0].image.source.bytes",
        ),
        (
            [{"role": "user", "content": [{"image": {"source": {"bytes": {"__bytes_encoded__": True}}}}]}],
            "messages[0].content[0].image.source.bytes",
        ),
        (
            [{"role": "user", "content": [{"image": {"source": {"s3Location": {"bucketOwner": "1"}}}}]}],
            "messages[0].content[0].image.source.s3Location.uri",
        ),
        (
            [{"role": "user", "content": [{"document": {"name": 3, "source": {}}}]}],
            "messages[0].content[0].document.name",
        ),
        (
            [{"role": "assistant", "content": [{"toolUse": {"name": "f", "input": {}}}]}],
            "messages[0].content[0].toolUse.toolUseId",
        ),
        (
            [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "input": {}}}]}],
            "messages[0].content[0].toolUse.name",
        ),
        (
            [{"role": "user", "content": [{"toolResult": {"content": []}}]}],
            "messages[0].content[0].toolResult.toolUseId",
        ),
        (
            [{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": {}}}]}],
            "messages[0].content[0].toolResult.content",
        ),
        (
            [{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": [3]}}]}],
            "messages[0].content[0].toolResult.content[0]",
        ),
        (
            [{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "status": "ok"}}]}],
            "messages[0].content[0].toolResult.status",
        ),
        (
            [{"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"signature": "s"}}}]}],
            "messages[0].content[0].reasoningContent.reasoningText.text",
        ),
        (
            [{"role": "assistant", "content": [{"reasoningContent": {"redactedContent": 5}}]}],
            "messages[0].content[0].reasoningContent.redactedContent",
        ),
    ],
)
def test_malformed_input_names_the_place(doc: Any, where: str) -> None:
    with pytest.raises(FormatError) as info:
        bedrock.load(doc)
    assert info.value.where == where
    assert info.value.format == "bedrock"
