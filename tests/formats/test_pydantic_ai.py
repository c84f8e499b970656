"""The pydantic-ai messages format: a real agent run read to its canonical form and written back exactly, the same
for pydantic-ai's objects (exactly as faithful as pydantic-ai's own JSON), generated documents round-tripped,
hostile documents refused with a `FormatError` that says where, and histories of other formats written as
pydantic-ai would send them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from chainsum import formats
from chainsum.errors import FormatError
from chainsum.formats import Dropped, detect_format, openai_chat
from chainsum.formats import pydantic_ai as wire
from chainsum.messages import File, Image, Message, Reasoning, Text, ToolCall, ToolResult, messages_to_list
from formats.formats_support import (
    FIXTURES_ROOT,
    assert_exact_or_format_error,
    assert_round_trips,
    assert_wrong_types_load_or_fail_cleanly,
    json_values,
    read_canonical,
    read_json,
)
from generators import well_formed_histories
from sampling import examples

FOLDER = FIXTURES_ROOT / "pydantic-ai"
AGENT_RUN = FOLDER / "agent_run.wire.json"


# --- a real agent run ---------------------------------------------------------------------------------------------


def test_an_agent_run_reads_to_its_golden_canonical_form_and_back() -> None:
    """Recorded from a pydantic-ai 2.68 agent (thinking with a signature, parallel calls with dict and string args,
    a call with no args, a retried tool, dict tool output, output-validation feedback, image, binary and document
    prompt items); timestamps and run ids fixed afterwards."""
    doc = read_json(AGENT_RUN)
    conv = wire.load(doc)
    assert messages_to_list(conv.messages) == read_canonical(AGENT_RUN)
    assert_round_trips(wire, doc)
    roles = [m.role for m in conv.messages]
    turns = ["assistant", "tool"] * 3
    assert roles == ["system", "user", *turns, "assistant", "user", "assistant"]
    first = conv.messages[2]
    assert isinstance(first.parts[0], Reasoning) and first.parts[0].signature == "EqQBCkYIBxgCKkD"
    assert [c.id for c in first.tool_calls] == ["toolu_01", "toolu_02"]
    assert first.tool_calls[0].arguments == '{"path":"src/app.py"}'  # dict args as compact JSON
    assert first.tool_calls[1].arguments == '{"path": "src/db.py"}'  # string args verbatim
    retried = conv.messages[5].tool_results[0]
    assert retried.is_error and retried.text == "tests need a database URL"
    stats = conv.messages[7].tool_results[0]
    assert not stats.is_error and json.loads(stats.text)["passed"] == 41
    assert [type(p) for p in conv.messages[1].parts] == [Text, Image, Image, File]
    assert conv.messages[9].text == "Please return text or call a tool."  # the retry feedback, as user text


def test_objects_round_trip_as_faithfully_as_pydantic_ais_own_json() -> None:
    objects = ModelMessagesTypeAdapter.validate_python(read_json(AGENT_RUN))
    canonical = wire.load_messages(objects)
    assert canonical == wire.load(read_json(AGENT_RUN)).messages
    again = wire.dump_messages(canonical)
    assert again == ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(objects, mode="json"))
    request = again[0]
    assert isinstance(request, ModelRequest) and request.instructions == "Answer briefly."
    assert request.timestamp is not None and request.timestamp.isoformat().startswith("2026-01-05T10:00")


def test_the_document_is_detected_and_loaded_from_json_text() -> None:
    text = AGENT_RUN.read_text(encoding="utf-8")
    assert detect_format(json.loads(text)) == "pydantic-ai"
    conv = formats.load(text)
    assert conv.format == "pydantic-ai" and len(conv.messages) == 11
    assert formats.dump(conv) == json.loads(text)
    assert wire.sniff(openai_chat.dump(list(conv.messages))) == 0
    assert wire.sniff([]) == 0 and wire.sniff({"kind": "request", "parts": []}) == 0


def test_writing_to_another_format_names_what_it_drops() -> None:
    conv = wire.load(read_json(AGENT_RUN))
    dropped: list[Dropped] = []
    out = formats.dump(conv.messages, to="openai", dropped=dropped)
    assert out[0] == {"role": "system", "content": "You are a careful coding agent."}
    assert "pydantic-ai-specific fields" in {d.what for d in dropped}


# --- generated documents ------------------------------------------------------------------------------------------

_stamp = st.sampled_from(["2026-01-05T10:00:00Z", "2026-01-05T10:00:01.5Z", None])
_text = st.text(min_size=0, max_size=12)
_ids = st.sampled_from(["call_1", "toolu_01", "pyd_ai_x", ""])
_names = st.sampled_from(["read_file", "search", "final_result"])
_json_content = st.recursive(
    st.none() | st.booleans() | st.integers(-9, 9) | _text,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
    max_leaves=5,
)


def _part(kind: str, required: dict[str, st.SearchStrategy[Any]], **optional: st.SearchStrategy[Any]) -> Any:
    return st.fixed_dictionaries({**required, "part_kind": st.just(kind)}, optional=optional)


_items = st.one_of(
    _text,
    st.fixed_dictionaries(
        {"url": st.just("https://example.com/a.png"), "kind": st.just("image-url")},
        optional={"media_type": st.just("image/png"), "force_download": st.booleans(), "identifier": _text},
    ),
    st.fixed_dictionaries(
        {"data": st.sampled_from(["iVBORw0KGgo=", "JVBERi0xLjQ=", "AAEC"]), "kind": st.just("binary")},
        optional={"media_type": st.sampled_from(["image/png", "application/pdf"]), "vendor_metadata": st.none()},
    ),
    st.fixed_dictionaries({"url": st.just("https://example.com/s.pdf"), "kind": st.just("document-url")}),
    st.fixed_dictionaries({"url": st.just("https://example.com/a.mp3"), "kind": st.just("audio-url")}),
)
_request_parts = st.one_of(
    _part("system-prompt", {"content": _text}, timestamp=_stamp, dynamic_ref=st.none() | _text),
    _part("user-prompt", {"content": _text | st.lists(_items, max_size=3)}, timestamp=_stamp),
    _part(
        "tool-return",
        {"tool_name": _names, "content": _json_content, "tool_call_id": _ids},
        outcome=st.sampled_from(["success", "failed", "retried", "interrupted", None]),
        metadata=st.none() | st.just({"k": 1}),
        timestamp=_stamp,
        tool_kind=st.none(),
    ),
    _part(
        "retry-prompt",
        {"content": _text | st.just([{"type": "missing"}]), "tool_call_id": _ids},
        tool_name=st.none() | _names,
        timestamp=_stamp,
    ),
    _part("retry-feedback", {"content": _text | st.just([{"msg": "bad"}])}, retry=st.just({"cause": "no_output"})),
    _part("instruction-delta", {"content": _text}),
)
_response_parts = st.one_of(
    _part("text", {"content": _text}, id=st.none(), provider_name=st.none() | st.just("openai")),
    _part("thinking", {"content": _text}, signature=st.none() | _text, provider_name=st.just("anthropic")),
    _part(
        "tool-call",
        {"tool_name": _names, "tool_call_id": _ids},
        args=st.none() | st.just('{"q": 1}') | st.dictionaries(st.sampled_from(["q", "path"]), _json_content),
        provider_details=st.none(),
    ),
    _part("builtin-tool-call", {"tool_name": st.just("web_search"), "tool_call_id": _ids}, args=st.none()),
    _part("file", {"content": st.just({"data": "AAEC", "media_type": "image/png", "kind": "binary"})}),
)
_requests = st.fixed_dictionaries(
    {"parts": st.lists(_request_parts, max_size=4), "kind": st.just("request")},
    optional={"timestamp": _stamp, "instructions": st.none() | _text, "run_id": st.none(), "metadata": st.none()},
)
_responses = st.fixed_dictionaries(
    {"parts": st.lists(_response_parts, max_size=4), "kind": st.just("response")},
    optional={"model_name": st.none() | _text, "usage": st.just({"input_tokens": 3}), "finish_reason": st.none()},
)
documents = st.lists(st.one_of(_requests, _responses), min_size=1, max_size=6)


@settings(max_examples=examples(100))
@given(documents)
def test_generated_documents_round_trip_exactly(doc: list[dict[str, Any]]) -> None:
    assert_round_trips(wire, doc)
    assert wire.sniff(doc) == 2


@settings(max_examples=examples(25))
@given(documents)
def test_wrong_types_anywhere_load_exactly_or_fail_saying_where(doc: list[dict[str, Any]]) -> None:
    assert_wrong_types_load_or_fail_cleanly(wire, doc, "")


@settings(max_examples=examples(200))
@given(json_values() | st.lists(st.fixed_dictionaries({"kind": st.sampled_from(["request", "response"])},
                                                      optional={"parts": json_values()})))  # fmt: skip
def test_arbitrary_json_is_read_exactly_or_refused(doc: Any) -> None:
    assert_exact_or_format_error(wire, doc)


_CALL = {"tool_name": "f", "args": 1, "tool_call_id": "a", "part_kind": "tool-call"}


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ({"kind": "request"}, ""),
        ([{"parts": []}], "[0]"),
        ([{"kind": "reply", "parts": []}], "[0]"),
        ([{"kind": "request", "parts": [{"content": 3, "part_kind": "system-prompt"}]}], "[0].parts[0].content"),
        ([{"kind": "request", "parts": [{"content": "x"}]}], "[0].parts[0].part_kind"),
        ([{"kind": "response", "parts": [_CALL]}], "[0].parts[0].args"),
        ([{"kind": "request", "parts": [{"tool_name": "f", "content": "r", "part_kind": "tool-return"}]}],
         "[0].parts[0].tool_call_id"),
    ],
)  # fmt: skip
def test_a_broken_document_names_where(doc: Any, where: str) -> None:
    with pytest.raises(FormatError) as raised:
        wire.load(doc)
    assert raised.value.where == where and raised.value.format == "pydantic-ai"


# --- other formats' histories, written for pydantic-ai ------------------------------------------------------------


def _content(messages: list[Message] | tuple[Message, ...]) -> list[Any]:
    """What a history says, without any format's extras."""
    out: list[Any] = []
    for m in messages:
        for p in m.parts:
            match p:
                case Text() | Reasoning():
                    out.append((m.role, p.kind, p.text, getattr(p, "signature", None)))
                case ToolCall():
                    out.append((m.role, "call", p.id, p.name, p.arguments))
                case ToolResult():
                    out.append((m.role, "result", p.call_id, p.name, p.text, p.is_error))
                case _:
                    out.append((m.role, p.kind))
    return out


@settings(max_examples=examples(100))
@given(well_formed_histories())
def test_any_valid_history_is_written_as_pydantic_ai_reads_it(history: list[Message]) -> None:
    dropped: list[Dropped] = []
    doc = wire.dump(history, dropped=dropped)
    assert {d.what for d in dropped} <= {"file name"}
    objects = ModelMessagesTypeAdapter.validate_python(doc)  # pydantic-ai takes it
    assert sum(isinstance(o, ModelResponse) for o in objects) == sum(m.role == "assistant" for m in history)
    assert _content(wire.load(doc).messages) == _content(history)
    assert _content(wire.load_messages(objects)) == _content(history)


def test_consecutive_user_side_messages_become_one_request_unless_loaded_as_two() -> None:
    history = [
        Message.of("system", "be brief"),
        Message.of("user", "hi"),
        Message(role="assistant", parts=(ToolCall(id="a", name="f"),)),
        Message(role="tool", parts=(ToolResult(call_id="a", content="r", is_error=True),)),
        Message.of("user", "and then?"),
    ]
    objects = wire.dump_messages(history)
    assert [type(o) for o in objects] == [ModelRequest, ModelResponse, ModelRequest]
    returned = objects[2].parts[0]
    assert isinstance(returned, ToolReturnPart) and returned.tool_name == "f" and returned.outcome == "failed"
    assert isinstance(objects[2].parts[1], UserPromptPart)
    two = [ModelRequest(parts=[UserPromptPart("one")]), ModelRequest(parts=[UserPromptPart("two")])]
    assert len(wire.dump_messages(wire.load_messages(two))) == 2


def test_thinking_keeps_its_signature_and_provider() -> None:
    response = ModelResponse(
        parts=[ThinkingPart("hmm", signature="sig", provider_name="anthropic"), TextPart("ok"), ToolCallPart("f", {})]
    )
    canonical = wire.load_messages([response])
    reasoning = canonical[0].parts[0]
    assert isinstance(reasoning, Reasoning) and reasoning.signature == "sig"
    (back,) = wire.dump_messages(canonical)
    assert isinstance(back, ModelResponse)
    thinking = back.parts[0]
    assert isinstance(thinking, ThinkingPart) and (thinking.signature, thinking.provider_name) == ("sig", "anthropic")
    call = back.parts[2]
    assert isinstance(call, ToolCallPart) and call.tool_call_id == response.parts[2].tool_call_id  # type: ignore[union-attr]
