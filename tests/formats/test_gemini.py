"""Gemini contents: turn splitting, signatures, conversions, hostile input. The golden fixtures, round-trip
properties and sniffing are asked of every format in `test_all_formats`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chainsum.errors import FormatError
from chainsum.formats import Dropped, gemini
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
    read_json,
)

FIXTURES = FIXTURES_ROOT / "gemini"


def _fixture(name: str, kind: str) -> Any:
    return read_json(FIXTURES / f"{name}.{kind}.json")


def _round_trip(doc: Any) -> Any:
    conv = gemini.load(doc)
    return gemini.dump(conv.messages, conv.envelope)


# --- splitting and rejoining user turns -----------------------------------------------------------------------

_CALL = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}, {"functionCall": {"name": "g"}}]}


def _fr(name: str, output: str) -> dict[str, Any]:
    return {"functionResponse": {"name": name, "response": {"output": output}}}


def test_mixed_user_turn_splits_into_tool_then_user() -> None:
    doc = [_CALL, {"role": "user", "parts": [_fr("f", "1"), _fr("g", "2"), {"text": "and now?"}]}]
    messages = gemini.load(doc).messages
    assert messages[1:] == (
        Message(
            role="tool",
            parts=(ToolResult(call_id="", name="f", content="1"), ToolResult(call_id="", name="g", content="2")),
        ),
        Message.of("user", "and now?"),
    )
    assert gemini.dump(messages) == {"contents": doc}


def test_interleaved_turn_rejoins_in_wire_order() -> None:
    turn = {"role": "user", "parts": [{"text": "a"}, _fr("f", "1"), {"text": "b"}, _fr("g", "2")]}
    messages = gemini.load([_CALL, turn]).messages
    assert [m.role for m in messages] == ["assistant", "tool", "user"]
    assert messages[1].extras == {"gemini": {"layout": "utut"}}
    assert gemini.dump(messages)["contents"][1] == turn


def test_edited_split_turn_falls_back_to_results_first() -> None:
    turn = {"role": "user", "parts": [{"text": "a"}, _fr("f", "1"), {"text": "b"}, _fr("g", "2")]}
    call, tool, user = gemini.load([_CALL, turn]).messages
    shorter = user.with_parts(user.parts[:1])  # the layout no longer fits: results first, then the rest
    assert gemini.dump([call, tool, shorter])["contents"][1] == {
        "role": "user",
        "parts": [_fr("f", "1"), _fr("g", "2"), {"text": "a"}],
    }
    assert gemini.dump([call, tool])["contents"][1] == {"role": "user", "parts": [_fr("f", "1"), _fr("g", "2")]}


def test_consecutive_user_turns_stay_apart_but_foreign_runs_merge() -> None:
    doc = [_CALL, {"role": "user", "parts": [_fr("f", "1"), _fr("g", "2")]}, {"role": "user", "parts": [{"text": "x"}]}]
    messages = gemini.load(doc).messages
    assert messages[2].extras == {"gemini": {"turn": "new"}}
    assert gemini.dump(messages) == {"contents": doc}
    foreign = [Message(role=m.role, parts=m.parts) for m in messages]  # the same history without hints
    assert gemini.dump(foreign)["contents"][1:] == [
        {"role": "user", "parts": [_fr("f", "1"), _fr("g", "2"), {"text": "x"}]}
    ]


# --- thought signatures ---------------------------------------------------------------------------------------


def test_thought_signatures_ride_on_their_parts_exactly() -> None:
    signature = "CiQBjz1rX2sigAxN0pRMmYHUiIdnA0kDwX4pHrb5Yh3aD9sIzA=="
    doc = [
        {"role": "user", "parts": [{"text": "weather in Paris and Lyon?"}]},
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "w", "args": {"city": "Paris"}}, "thoughtSignature": signature},
                {"functionCall": {"name": "w", "args": {"city": "Lyon"}}},
            ],
        },
    ]
    messages = gemini.load(doc).messages
    assert messages[1] == Message(
        role="assistant",
        parts=(
            ToolCall(id="", name="w", arguments='{"city":"Paris"}', reasoning=Reasoning(signature=signature)),
            ToolCall(id="", name="w", arguments='{"city":"Lyon"}'),
        ),
    )
    again = messages_from_list(json.loads(json.dumps(messages_to_list(messages))))
    assert gemini.dump(again) == {"contents": doc}


def test_thought_parts_and_signature_only_parts() -> None:
    parts = [
        {"text": "plan", "thought": True, "thoughtSignature": "c2ln"},
        {"thoughtSignature": "b25seQ=="},
        {"text": "answer", "thoughtSignature": "dGV4dA=="},
    ]
    messages = gemini.load([{"role": "model", "parts": parts}]).messages
    assert messages[0].parts == (
        Reasoning(text="plan", signature="c2ln"),
        Reasoning(signature="b25seQ==", extras={"gemini": {"form": "signature"}}),
        Text(text="answer", reasoning=Reasoning(signature="dGV4dA==")),
    )
    assert _round_trip([{"role": "model", "parts": parts}]) == [{"role": "model", "parts": parts}]


def test_snake_case_sdk_dump_keeps_its_spelling_and_signature() -> None:
    wire = _fixture("sdk_snake", "wire")
    messages = gemini.load(wire).messages
    call = messages[1].parts[1]
    assert isinstance(call, ToolCall)
    assert call.reasoning == Reasoning(signature="Q2lRQmp6MXJYMnNpZ0E=")
    assert call.arguments == '{"room":"kitchen"}'
    dumped = gemini.dump(messages, gemini.load(wire).envelope)
    assert dumped[1]["parts"][1]["thought_signature"] == "Q2lRQmp6MXJYMnNpZ0E="
    assert "thoughtSignature" not in dumped[1]["parts"][1]


# --- conversions from other formats ---------------------------------------------------------------------------


def test_dump_of_a_foreign_history() -> None:
    """Canonical messages as an OpenAI Chat history reads them: one tool message per result, no hints."""
    messages = [
        Message.of("system", "Be brief."),
        Message.of("user", "Weather in Paris?", name="alice"),
        Message(
            role="assistant",
            parts=(
                Reasoning(text="look it up"),
                Reasoning(data="ENCRYPTED"),
                ToolCall(id="call_1", name="weather", arguments='{"city": "Paris"}'),
                ToolCall(id="call_2", name="clock", arguments=""),
            ),
        ),
        Message(role="tool", parts=(ToolResult(call_id="call_1", content="18C"),)),
        Message(role="tool", parts=(ToolResult(call_id="call_2", content='{"time": "09:00"}', is_error=False),)),
        Message.of("system", "The user is in a hurry."),
        Message.of("user", "Thanks", Image(url="data:image/png;base64,AAAA", media_type="image/png")),
        Message(
            role="assistant",
            parts=(
                Text(text="Welcome", extras={"openai": {"fields": {"refusal": None}}}),
                Opaque(format="anthropic", data={"type": "server_tool_use"}),
            ),
        ),
        Message(role="tool", parts=(ToolResult(call_id="call_9", content="boom", is_error=True),)),
    ]
    dropped: list[Dropped] = []
    assert gemini.dump(messages, dropped=dropped) == {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "look it up", "thought": True},
                    {"functionCall": {"name": "weather", "id": "call_1", "args": {"city": "Paris"}}},
                    {"functionCall": {"name": "clock", "id": "call_2", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "weather", "id": "call_1", "response": {"output": "18C"}}},
                    {"functionResponse": {"name": "clock", "id": "call_2", "response": {"time": "09:00"}}},
                    {"text": "[system] The user is in a hurry."},
                    {"text": "Thanks"},
                    {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
                ],
            },
            {"role": "model", "parts": [{"text": "Welcome"}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "", "id": "call_9", "response": {"error": "boom"}}}],
            },
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
    }
    assert [str(d) for d in dropped] == [
        "message 7: openai-specific fields",
        "message 5: system message after the first turn sent as user text",
        "message 1: participant name",
        "message 2: encrypted reasoning data",
        "message 7: anthropic block",
        "message 8: tool result call_9: no tool name (Gemini needs one)",
    ]


def test_dump_reports_what_gemini_cannot_hold() -> None:
    messages = [
        Message(
            role="assistant", parts=(ToolCall(id="c", name="f", arguments="not json", reasoning=Reasoning(text="why")),)
        ),
        Message(
            role="tool",
            parts=(ToolResult(call_id="c", name="f", content=(Text(text="see"), Image(url="https://x/y.png"))),),
        ),
        Message(role="user", parts=(File(name="empty"),)),
    ]
    dropped: list[Dropped] = []
    assert gemini.dump(messages, dropped=dropped)["contents"] == [
        {"role": "model", "parts": [{"functionCall": {"name": "f", "id": "c", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "id": "c", "response": {"output": "see"}}}]},
    ]
    assert dropped == [
        Dropped(0, "arguments of tool call c (not a JSON object)"),
        Dropped(0, "reasoning text or data attached to a tool call"),
        Dropped(1, "images or files in tool result c"),
        Dropped(2, "file with neither data nor URL"),
    ]


def test_leading_system_messages_join_and_shapes() -> None:
    messages = [Message.of("system", "a"), Message.of("system", "b"), Message.of("user", "hi")]
    assert gemini.dump(messages) == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "a"}, {"text": "b"}]},
    }
    # a bare list takes no system instruction: the dump becomes a request
    bare = gemini.load([{"role": "user", "parts": [{"text": "hi"}]}])
    assert gemini.dump(bare.messages, bare.envelope) == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert gemini.dump([messages[0], *bare.messages], bare.envelope) == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "a"}]},
    }
    text_system = {"contents": [], "system_instruction": "Be kind."}
    conv = gemini.load(text_system)
    assert conv.messages == (
        Message(role="system", parts=(Text(text="Be kind."),), extras={"gemini": {"shape": "text"}}),
    )
    assert gemini.dump(conv.messages, conv.envelope) == text_system
    assert gemini.dump((), conv.envelope) == {"contents": []}


@pytest.mark.parametrize(
    ("response", "content", "is_error", "extras"),
    [
        ({"output": "18C"}, "18C", False, {}),
        ({"error": "boom"}, "boom", True, {}),
        ({"result": "ok"}, "ok", False, {"gemini": {"key": "result"}}),
        ({"output": "{not json"}, '{"output":"{not json"}', False, {}),
        ({"output": 3}, '{"output":3}', False, {}),
        ({"error": "x", "code": 5}, '{"error":"x","code":5}', True, {}),
        ({"error": "x", "output": "y"}, '{"error":"x","output":"y"}', False, {}),
        ({}, "{}", False, {}),
    ],
)
def test_function_response_content(response: dict[str, Any], content: str, is_error: bool, extras: Any) -> None:
    doc = [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": response}}]}]
    (message,) = gemini.load(doc).messages
    assert message.parts == (ToolResult(call_id="", name="f", content=content, is_error=is_error, extras=extras),)
    assert _round_trip(doc) == doc


@pytest.mark.parametrize(
    ("data", "canonical"),
    [
        ("QUJD", True),
        ("QUI=", True),
        ("QQ==", True),
        ("", True),
        ("QR==", False),  # non-zero trailing bits: decodes to b"A" but does not re-encode to itself
        ("QUI", False),  # unpadded
        ("-_-_", False),  # URL-safe alphabet
        ("QUJD\nREVG", False),  # MIME line break
    ],
)
def test_base64_is_kept_exactly(data: str, canonical: bool) -> None:
    doc = [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": data}}]}]
    (message,) = gemini.load(doc).messages
    (image,) = message.parts
    assert isinstance(image, Image)
    assert image.extras == ({} if canonical else {"gemini": {"b64": data}})
    assert _round_trip(doc) == doc
    changed = Image(data=b"other", media_type="image/png", extras=image.extras)  # a stale hint is not used
    assert gemini.dump([message.with_parts([changed])])["contents"][0]["parts"][0]["inlineData"]["data"] == "b3RoZXI="


# --- hostile input --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ("text", ""),
        ({"contents": {}}, "contents"),
        ({"model": "x"}, "contents"),
        ({"contents": [], "systemInstruction": 5}, "systemInstruction"),
        ({"contents": [], "systemInstruction": {"parts": "x"}}, "systemInstruction.parts"),
        ([5], "contents[0]"),
        ([{"role": "user"}], "contents[0].parts"),
        ([{"role": "user", "parts": {}}], "contents[0].parts"),
        ([{"role": "assistant", "parts": []}], "contents[0].role"),
        ([{"role": 1, "parts": []}], "contents[0].role"),
        ([{"role": "user", "parts": [[]]}], "contents[0].parts[0]"),
        ([{"role": "user", "parts": [{"text": 5}]}], "contents[0].parts[0].text"),
        ([{"role": "user", "parts": [{"text": "x", "thought": "yes"}]}], "contents[0].parts[0].thought"),
        ([{"role": "user", "parts": [{"text": "x", "thoughtSignature": 1}]}], "contents[0].parts[0].thoughtSignature"),
        ([{"role": "user", "parts": [{"text": "x", "functionCall": {"name": "f"}}]}], "contents[0].parts[0]"),
        ([{"role": "model", "parts": [{"functionCall": []}]}], "contents[0].parts[0].functionCall"),
        ([{"role": "model", "parts": [{"functionCall": {"args": {}}}]}], "contents[0].parts[0].functionCall.name"),
        (
            [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": []}}]}],
            "contents[0].parts[0].functionCall.args",
        ),
        (
            [{"role": "model", "parts": [{"functionCall": {"name": "f", "id": 3}}]}],
            "contents[0].parts[0].functionCall.id",
        ),
        (
            [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": "ok"}}]}],
            "contents[0].parts[0].functionResponse.response",
        ),
        (
            [{"role": "user", "parts": [{"function_response": {"response": {}}}]}],
            "contents[0].parts[0].function_response.name",
        ),
        (
            [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png"}}]}],
            "contents[0].parts[0].inlineData.data",
        ),
        ([{"role": "user", "parts": [{"inlineData": {"data": "!!!!"}}]}], "contents[0].parts[0].inlineData.data"),
        ([{"role": "user", "parts": [{"inlineData": {"data": 5}}]}], "contents[0].parts[0].inlineData.data"),
        (
            [{"role": "user", "parts": [{"fileData": {"mimeType": 5, "fileUri": "x"}}]}],
            "contents[0].parts[0].fileData.mimeType",
        ),
        ([{"role": "user", "parts": [{"fileData": {"file_uri": "gs://x"}}]}], "contents[0].parts[0].fileData.fileUri"),
    ],
)
def test_malformed_input_names_the_place(doc: Any, where: str) -> None:
    with pytest.raises(FormatError) as info:
        gemini.load(doc)
    assert info.value.where == where
    assert info.value.format == "gemini"
