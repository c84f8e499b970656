"""Bedrock Converse / Strands messages: golden fixtures, turn splitting, conversions, hostile input, properties."""

from __future__ import annotations

import base64
import json
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainsum.errors import FormatError
from chainsum.formats import Dropped, bedrock, detect_format
from chainsum.messages import (
    File,
    Image,
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
    assert_wrong_types_load_or_fail_cleanly,
    case_ids,
    json_values,
    read_json,
    wire_cases,
)
from generators import histories
from sampling import examples

FIXTURES = FIXTURES_ROOT / "bedrock"
NAMES = case_ids(wire_cases(FIXTURES))


def _fixture(name: str, kind: str) -> Any:
    return read_json(FIXTURES / f"{name}.{kind}.json")


def _round_trip(doc: Any) -> Any:
    conv = bedrock.load(doc)
    return bedrock.dump(conv.messages, conv.envelope)


# --- golden fixtures ------------------------------------------------------------------------------------------


def test_fixtures_present() -> None:
    assert NAMES == ["converse_request", "strands_session"]


@pytest.mark.parametrize("name", NAMES)
def test_load_matches_canonical_fixture(name: str) -> None:
    conv = bedrock.load(_fixture(name, "wire"))
    assert conv.format == "bedrock"
    assert messages_to_list(conv.messages) == _fixture(name, "canonical")


@pytest.mark.parametrize("name", NAMES)
def test_dump_of_load_is_identity(name: str) -> None:
    wire = _fixture(name, "wire")
    assert _round_trip(wire) == wire


@pytest.mark.parametrize("name", NAMES)
def test_canonical_json_form_is_lossless(name: str) -> None:
    wire = _fixture(name, "wire")
    envelope = bedrock.load(wire).envelope
    assert bedrock.dump(messages_from_list(_fixture(name, "canonical")), envelope) == wire


@pytest.mark.parametrize("name", NAMES)
def test_detected_as_bedrock(name: str) -> None:
    assert detect_format(_fixture(name, "wire")) == "bedrock"


@pytest.mark.parametrize(
    ("doc", "score"),
    [
        ([{"role": "user", "content": [{"text": "hi"}]}], 2),
        ([{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": {}}}]}], 2),
        ({"messages": [], "system": [{"text": "be brief"}]}, 2),
        ({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}, 2),
        ([], 1),
        ([{"role": "user", "content": []}], 1),
        ({"messages": []}, 1),
        ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], 0),
        ([{"role": "user", "content": "hi"}], 0),
        ([{"role": "system", "content": [{"text": "hi"}]}], 0),
        ([{"role": "tool", "content": [{"text": "hi"}]}], 0),
        ({"messages": [{"role": "user", "content": [{"text": "hi"}]}], "system": "be brief"}, 0),
        ({"messages": [], "system": [{"type": "text", "text": "x"}]}, 0),
        ([{"role": "user", "parts": [{"text": "hi"}]}], 0),
        ({"contents": []}, 0),
        (3, 0),
    ],
)
def test_sniff(doc: Any, score: int) -> None:
    assert bedrock.sniff(doc) == score


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


@pytest.mark.parametrize("name", NAMES)
def test_every_node_replaced_by_a_wrong_type_loads_or_fails_cleanly(name: str) -> None:
    assert_wrong_types_load_or_fail_cleanly(bedrock, _fixture(name, "wire"), "messages")


_json = json_values()


@given(_json)
def test_arbitrary_json_never_raises_anything_but_format_error(doc: Any) -> None:
    assert_exact_or_format_error(bedrock, doc)


# --- round-trip properties over generated wire documents ------------------------------------------------------

_texts = st.text(string.ascii_letters + ' {}"\n\\é中', max_size=12)
_objects = st.dictionaries(st.sampled_from(["a", "b", "q", "n"]), _json, max_size=3)
_ids = st.sampled_from(["t1", "t2", "tooluse_x", ""])


@st.composite
def _bytes(draw: st.DrawFn) -> Any:
    raw = base64.b64encode(draw(st.binary(max_size=9))).decode()
    text = draw(st.sampled_from([raw, raw.rstrip("="), raw.replace("+", "-").replace("/", "_")]))
    return {"__bytes_encoded__": True, "data": text} if draw(st.booleans()) else text


@st.composite
def _source(draw: st.DrawFn, document: bool) -> dict[str, Any]:
    kinds = ["bytes", "s3", "text"] if document else ["bytes", "s3"]
    kind = draw(st.sampled_from(kinds))
    if kind == "bytes":
        return {"bytes": draw(_bytes())}
    if kind == "text":
        return {"text": draw(_texts)}
    location: dict[str, Any] = {"uri": draw(st.sampled_from(["s3://b/k", "https://x", "data:image/png;base64,AAAA"]))}
    if draw(st.booleans()):
        location["bucketOwner"] = "123"
    return {"s3Location": location}


@st.composite
def _media(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    body: dict[str, Any] = {"source": draw(_source(kind == "document"))}
    if draw(st.booleans()):
        body["format"] = draw(st.sampled_from(["png", "jpeg"] if kind == "image" else ["pdf", "md", "rtf"]))
    if kind == "document" and draw(st.booleans()):
        body["name"] = draw(_texts)
    return {kind: body}


@st.composite
def _result_item(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "json", "image", "document", "other"]))
    if kind == "text":
        return {"text": draw(_texts)}
    if kind == "json":
        return {"json": draw(_json)}
    if kind == "other":
        return {"video": draw(_objects)}
    return draw(_media(kind))


@st.composite
def _block(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["text", "image", "document", "use", "result", "reasoning", "opaque"]))
    block: dict[str, Any]
    if kind == "text":
        block = {"text": draw(_texts)}
    elif kind in ("image", "document"):
        block = draw(_media(kind))
    elif kind == "use":
        use: dict[str, Any] = {"toolUseId": draw(_ids), "name": draw(_texts)}
        if draw(st.booleans()):
            use["input"] = draw(_json)
        block = {"toolUse": use}
    elif kind == "result":
        result: dict[str, Any] = {"toolUseId": draw(_ids)}
        if draw(st.integers(0, 4)):
            result["content"] = draw(st.lists(_result_item(), max_size=3))
        if draw(st.integers(0, 3)):
            result["status"] = draw(st.sampled_from(["success", "error"]))
        block = {"toolResult": result}
    elif kind == "reasoning":
        body: dict[str, Any] = {}
        if draw(st.booleans()):
            text: dict[str, Any] = {"text": draw(_texts)}
            if draw(st.booleans()):
                text["signature"] = draw(_texts)
            body["reasoningText"] = text
        else:
            body["redactedContent"] = draw(_bytes())
        block = {"reasoningContent": body}
    else:
        block = {draw(st.sampled_from(["cachePoint", "guardContent", "video", "somethingNew"])): draw(_objects)}
    if kind != "opaque" and draw(st.integers(0, 6)) == 0:
        block["x-extra"] = draw(_json)  # an unknown key beside the member
    member = next(iter(block.values()))
    if isinstance(member, dict) and draw(st.integers(0, 6)) == 0:
        member["x-inner"] = draw(_json)  # and one inside it
    return block


@st.composite
def _documents(draw: st.DrawFn) -> Any:
    messages: list[Any] = []
    for _ in range(draw(st.integers(0, 6))):
        message: dict[str, Any] = {
            "role": draw(st.sampled_from(["user", "assistant"])),
            "content": draw(st.lists(_block(), max_size=4)),
        }
        if draw(st.integers(0, 5)) == 0:
            message["metadata"] = draw(_objects)
        messages.append(message)
    if draw(st.booleans()):
        return messages
    doc: dict[str, Any] = {"messages": messages}
    if draw(st.booleans()):
        doc["system"] = draw(
            st.lists(
                st.one_of(st.builds(lambda t: {"text": t}, _texts), st.just({"cachePoint": {"type": "default"}})),
                max_size=2,
            )
        )
    if draw(st.booleans()):
        doc["inferenceConfig"] = draw(_objects)
    return doc


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_generated_documents_round_trip(doc: Any) -> None:
    conv = bedrock.load(doc)
    assert bedrock.dump(conv.messages, conv.envelope) == doc
    again = messages_from_list(json.loads(json.dumps(messages_to_list(conv.messages))))
    assert again == list(conv.messages)
    assert bedrock.dump(again, conv.envelope) == doc


@settings(max_examples=examples(75), suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_any_canonical_history_dumps_to_a_stable_wire_form(messages: list[Message]) -> None:
    first = bedrock.dump(messages, dropped=[])
    conv = bedrock.load(json.loads(json.dumps(first)))
    dropped: list[Dropped] = []
    assert bedrock.dump(conv.messages, conv.envelope, dropped) == first
    assert dropped == []
