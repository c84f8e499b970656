"""LangChain messages (``langchain_core`` objects and their ``messages_to_dict`` form): what each field maps to,
exact round trips of real objects and of generated ones, LangChain's own converters agreeing with chainsum's, and
the errors. Needs the ``langchain`` extra (skipped without it)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("langchain_core")

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
    messages_from_dict,
    messages_to_dict,
)

from chainsum import validate
from chainsum.errors import FormatError, MissingDependencyError
from chainsum.formats import Dropped, detect_format, dump, langchain, load, openai_chat
from chainsum.messages import (
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
from corpora_support import documents
from formats.formats_support import assert_exact_or_format_error, json_values
from generators import well_formed_histories
from sampling import examples


class _Artifact:
    """A tool artifact that is not JSON (LangChain allows any Python value)."""

    def __repr__(self) -> str:
        return "_Artifact()"


def _rich() -> list[BaseMessage]:
    """One of each message type, with the content blocks and fields LangChain's integrations produce."""
    return [
        SystemMessage("You are helpful.", id="s1"),
        HumanMessage(
            [
                {"type": "text", "text": "look at this"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "high"}},
            ],
            id="h1",
        ),
        HumanMessage(
            [
                "a bare string",
                {"type": "image", "base64": "aGVsbG8=", "mime_type": "image/png"},
                {"type": "image", "source_type": "url", "url": "https://example.com/a.png"},
                {"type": "file", "url": "https://example.com/a.pdf", "mime_type": "application/pdf"},
            ]
        ),
        AIMessage(
            [
                {"type": "thinking", "thinking": "which tool?", "signature": "c2ln"},
                {"type": "text", "text": "Calling both.", "citations": None},
                {"type": "tool_use", "id": "t2", "name": "grep", "input": {"q": "x"}},
            ],
            tool_calls=[
                {"name": "read", "args": {"path": "a.py"}, "id": "t1"},
                {"name": "grep", "args": {"q": "x"}, "id": "t2"},
            ],
            invalid_tool_calls=[
                {"name": "ls", "args": "{bad", "id": "t3", "error": "bad JSON", "type": "invalid_tool_call"}
            ],
            usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
            response_metadata={"model_provider": "anthropic", "stop_reason": "tool_use"},
            id="a1",
        ),
        ToolMessage("print('hi')", tool_call_id="t1", name="read", id="r1"),
        ToolMessage(
            [{"type": "text", "text": "a.py:1"}, {"type": "custom_block", "x": 1}],
            tool_call_id="t2",
            status="error",
            artifact={"matches": [1]},
        ),
        ToolMessage("Error: bad JSON", tool_call_id="t3", status="error"),
        ChatMessage("looks fine", role="critic"),
        FunctionMessage("42", name="legacy_fn"),
        AIMessage("", id="a2", additional_kwargs={"refusal": None}),
        AIMessageChunk("partial", id="c1"),
        AIMessage(
            [
                {"type": "reasoning", "reasoning": "short", "id": "rs_1"},
                {"type": "text", "text": "done", "annotations": []},
                {"type": "server_tool_call", "id": "srv", "name": "web_search", "args": {}},
            ]
        ),
    ]


# --- what each field maps to ---------------------------------------------------------------------------------


def test_roles_calls_and_results_map_to_canonical_parts() -> None:
    messages = langchain.load(_rich()).messages
    assert [m.role for m in messages] == [
        "system",
        "user",
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "user",
        "tool",
        "assistant",
        "assistant",
        "assistant",
    ]
    ai = messages[3]
    assert ai.id == "a1"
    reasoning, text, placed, plain, invalid = ai.parts
    assert reasoning == Reasoning(text="which tool?", signature="c2ln", extras=reasoning.extras)
    assert isinstance(text, Text) and text.text == "Calling both."
    # the tool_use block copying call t2 stands where the block was, the other call after the content
    assert (placed, plain) == (
        ToolCall(id="t2", name="grep", arguments='{"q":"x"}', extras=placed.extras),
        ToolCall(id="t1", name="read", arguments='{"path":"a.py"}'),
    )
    assert isinstance(invalid, ToolCall) and (invalid.id, invalid.arguments) == ("t3", "{bad")
    assert messages[4].parts == (ToolResult(call_id="t1", name="read", content="print('hi')"),)
    assert messages[4].id == "r1"
    result = messages[5].tool_results[0]
    assert result.is_error and result.content[0] == Text(text="a.py:1")  # type: ignore[index]
    assert messages[8].parts == (ToolResult(call_id="", name="legacy_fn", content="42"),)
    image = messages[1].parts[1]
    assert isinstance(image, Image) and image.data == b"\x89PNG\r\n\x1a\n" and image.media_type == "image/png"
    assert isinstance(messages[11].parts[2], Opaque)


def test_an_invalid_tool_call_and_its_error_result_are_a_pair() -> None:
    """LangChain answers an unparseable call with an error ToolMessage; chainsum sees the call, so the result is
    not an orphan for any provider's rules."""
    history = [
        HumanMessage("list files"),
        AIMessage(
            "",
            invalid_tool_calls=[{"name": "ls", "args": "{", "id": "c1", "error": "bad", "type": "invalid_tool_call"}],
        ),
        ToolMessage("Error: bad", tool_call_id="c1", status="error"),
    ]
    messages = langchain.load(history).messages
    assert validate(messages, "openai") == []
    assert validate(messages, "anthropic") == []


# --- exact round trips ---------------------------------------------------------------------------------------


def test_objects_round_trip_exactly_except_a_non_json_artifact_which_is_reported() -> None:
    objects = [*_rich(), ToolMessage("done", tool_call_id="t9", artifact=_Artifact())]
    conv = langchain.load(objects)
    assert conv.envelope == {"objects": True}
    dropped: list[Dropped] = []
    back = langchain.dump(conv.messages, conv.envelope, dropped)
    assert back[:-1] == objects[:-1]
    assert type(back[10]) is AIMessageChunk
    assert back[-1] == ToolMessage("done", tool_call_id="t9")  # the artifact was not JSON: left out...
    assert dropped == [Dropped(len(objects) - 1, "LangChain field 'artifact' (not JSON: only its repr was kept)")]
    # ...and what the archive keeps is JSON, naming it
    stored = json.loads(json.dumps(messages_to_list(conv.messages)))
    assert messages_from_list(stored) == list(conv.messages)
    assert conv.messages[-1].extras["langchain"]["fields"]["artifact"] == {"repr": "_Artifact()", "class": "_Artifact"}


def test_the_dict_form_is_detected_and_round_trips_through_json() -> None:
    doc = json.loads(json.dumps(messages_to_dict(_rich())))
    assert detect_format(doc) == "langchain"
    conv = load(doc)
    assert conv.format == "langchain"
    assert dump(conv) == doc
    assert messages_from_dict(dump(conv)) == _rich()
    wrapped = {"thread_id": "t1", "messages": doc}
    assert langchain.dump(*_conv(langchain.load(wrapped))) == wrapped


def _conv(conv: Any) -> tuple[Any, Any]:
    return conv.messages, conv.envelope


def test_a_minimal_dict_keeps_its_missing_keys_missing() -> None:
    doc = [{"type": "human", "data": {"content": "hi"}}, {"type": "ai", "data": {"content": "hello", "id": "a"}}]
    conv = langchain.load(doc)
    assert [m.text for m in conv.messages] == ["hi", "hello"]
    assert langchain.dump(conv.messages, conv.envelope) == doc
    assert messages_from_dict(doc) == langchain.to_objects(conv.messages)


# generated LangChain objects

_texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_ids = st.one_of(st.none(), st.text("abc123_-", min_size=1, max_size=8))
_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 5), _texts),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_texts, inner, max_size=3)),
    max_leaves=6,
)
_blocks = st.one_of(
    _texts,
    st.builds(lambda t: {"type": "text", "text": t}, _texts),
    st.builds(lambda t, a: {"type": "text", "text": t, "annotations": a}, _texts, st.lists(_json, max_size=2)),
    st.builds(lambda t: {"type": "reasoning", "reasoning": t}, _texts),
    st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, _texts, _texts),
    st.just({"type": "image", "url": "https://example.com/i.png"}),
    st.just({"type": "image_url", "image_url": "https://example.com/j.png"}),
    st.builds(lambda d: {"type": "non_standard", "value": d}, _json),
)
_content = st.one_of(_texts, st.lists(_blocks, max_size=3))
_kwargs = st.dictionaries(st.sampled_from(["lc_source", "refusal", "x"]), _json, max_size=2)


@st.composite
def _ai(draw: st.DrawFn) -> AIMessage:
    calls = draw(
        st.lists(
            st.builds(
                lambda n, a, i: {"name": n, "args": a, "id": i},
                st.sampled_from(["read", "grep"]),
                st.dictionaries(_texts, _json, max_size=2),
                st.text("xyz0", min_size=1, max_size=4),
            ),
            max_size=3,
            unique_by=lambda c: c["id"],
        )
    )
    content = draw(_content)
    if calls and draw(st.booleans()):  # Anthropic-style: the first call copied into the content as a block
        c = calls[0]
        content = [
            *(content if isinstance(content, list) else [content]),
            {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]},
        ]
    return AIMessage(
        content,
        tool_calls=calls,
        id=draw(_ids),
        name=draw(st.one_of(st.none(), _texts)),
        additional_kwargs=draw(_kwargs),
        response_metadata=draw(st.dictionaries(st.just("model_provider"), _texts, max_size=1)),
    )


_messages = st.one_of(
    st.builds(SystemMessage, _content, id=_ids),
    st.builds(HumanMessage, _content, id=_ids, name=st.one_of(st.none(), _texts), additional_kwargs=_kwargs),
    _ai(),
    st.builds(
        ToolMessage,
        _content,
        tool_call_id=st.text("xyz0", max_size=4),
        status=st.sampled_from(["success", "error"]),
        artifact=_json,
        id=_ids,
    ),
    st.builds(ChatMessage, _content, role=st.sampled_from(["user", "critic", "assistant"])),
)


@settings(max_examples=examples(100))
@given(st.lists(_messages, max_size=6))
def test_generated_objects_and_their_dicts_round_trip_exactly(objects: list[BaseMessage]) -> None:
    conv = langchain.load(objects)
    dropped: list[Dropped] = []
    assert langchain.dump(conv.messages, conv.envelope, dropped) == objects
    assert dropped == []
    doc = json.loads(json.dumps(messages_to_dict(objects)))
    assert langchain.dump(*_conv(langchain.load(doc))) == doc
    again = messages_from_list(json.loads(json.dumps(messages_to_list(conv.messages))))
    assert langchain.to_objects(again) == objects


@settings(max_examples=examples(60))
@given(well_formed_histories())
def test_canonical_histories_keep_their_meaning_and_reach_a_fixed_point(history: list[Message]) -> None:
    """Whatever another format hands over: written as objects and read back, it validates for OpenAI when it did,
    keeps its roles, texts and calls, and writing it again changes nothing."""
    objects = langchain.to_objects(history)
    back = langchain.from_objects(objects)
    assert langchain.to_objects(back) == objects
    assert validate(back, "openai") == validate(openai_chat.load(openai_chat.dump(history)).messages, "openai")
    assert [(m.role, m.text) for m in back if m.role != "tool"] == [
        (m.role, m.text) for m in history if m.role != "tool" and (m.role != "user" or not m.tool_results)
    ]
    calls = [(c.id, c.name, json.loads(c.arguments)) for m in back for c in m.tool_calls]
    assert calls == [(c.id, c.name, json.loads(c.arguments)) for m in history for c in m.tool_calls]


# --- LangChain's own converter agrees -----------------------------------------------------------------------


def _normalized(openai_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in openai_messages:
        m = dict(m)
        for call in m.get("tool_calls") or []:
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        if m.get("content") in ("", None) and m.get("tool_calls"):
            m.pop("content", None)
        out.append(m)
    return out


def test_langchain_converts_our_objects_to_the_same_openai_messages_as_chainsum() -> None:
    """A tau-bench run (parallel calls, reused ids) read by chainsum, written as LangChain objects, and converted by
    LangChain's ``convert_to_openai_messages``: the same messages chainsum's own OpenAI writer gives."""
    doc = next(d for d in documents() if d.label.startswith("tau-bench/") and len(d.data) > 30)
    messages = load(doc.data, doc.format).messages
    objects = langchain.to_objects(messages)
    theirs = convert_to_openai_messages(objects)
    ours = openai_chat.dump(messages)
    assert _normalized(theirs) == _normalized(ours)  # type: ignore[arg-type]


# --- errors and detection ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ([{"type": "remove", "data": {"id": "x"}}], "[0].type"),
        ([{"type": "tool", "data": {"content": "x"}}], "[0].data.tool_call_id"),
        ([{"type": "ai", "data": {"content": 3}}], "[0].data.content"),
        ([{"type": "ai", "data": {"content": "", "tool_calls": [{"name": "f"}]}}], "[0].data.tool_calls[0]"),
        ([{"type": "human", "data": {"content": [7]}}], "[0].data.content[0]"),
        ({"messages": 3}, "messages"),
    ],
)
def test_bad_input_is_a_format_error_naming_where(doc: Any, where: str) -> None:
    with pytest.raises(FormatError) as err:
        langchain.load(doc)
    assert err.value.where == where and err.value.format == "langchain"


@pytest.mark.parametrize(
    ("data", "score"),
    [
        ([{"type": "human", "data": {"content": "hi"}}], 2),
        ({"messages": [{"type": "ai", "data": {}}]}, 2),
        ([HumanMessage("hi")], 2),
        ([], 0),
        ([{"role": "user", "content": "hi"}], 0),
        ([{"type": "message", "role": "user", "content": "hi"}], 0),
        ([{"type": "human", "data": {}, "extra": 1}], 0),
        ([{"type": "remove", "data": {}}], 0),
        ("text", 0),
    ],
)
def test_sniff(data: Any, score: int) -> None:
    assert langchain.sniff(data) == score


def test_writing_objects_without_langchain_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    with pytest.raises(MissingDependencyError, match=r"chainsum\[langchain\]"):
        langchain.to_objects([Message.of("user", "hi")])
    # the dict form needs no LangChain
    assert langchain.dump([Message.of("user", "hi")])[0]["type"] == "human"


@settings(max_examples=examples(100))
@given(json_values())
def test_any_json_either_round_trips_or_fails_with_a_format_error(doc: Any) -> None:
    """The registry loads every format while detecting: whatever shape arrives, a FormatError or an exact trip."""
    assert_exact_or_format_error(langchain, doc)
    assert_exact_or_format_error(langchain, [{"type": "ai", "data": doc}])
