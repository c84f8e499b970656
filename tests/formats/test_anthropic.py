"""Anthropic Messages: the request envelope, split user turns, conversions from other formats, hostile input,
round trips. The golden fixtures, generated documents and sniffing are asked of every format in `test_all_formats`."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainsum.errors import FormatError
from chainsum.formats import Dropped, anthropic, detect_format
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
from formats.formats_support import FIXTURES_ROOT, read_json
from formats.wire_documents import DOCUMENTS
from generators import histories, well_formed_histories
from sampling import examples

FIXTURES = FIXTURES_ROOT / "anthropic"
PNG = b"\x89PNG\r\n\x1a\n"


def _json(name: str) -> Any:
    return read_json(FIXTURES / name)


def _hint(**hints: Any) -> dict[str, Any]:
    return {"anthropic": hints}


# ------------------------------------------------------------------------------------------- request envelope


def test_request_envelope_keeps_everything_but_the_messages() -> None:
    doc = _json("request.wire.json")
    envelope = anthropic.load(doc).envelope
    assert envelope == {
        "keys": ["model", "max_tokens", "system", "tools", "thinking", "messages", "metadata"],
        "fields": {k: v for k, v in doc.items() if k not in ("system", "messages")},
    }
    assert anthropic.load(_json("blocks.wire.json")).envelope == {}


# ------------------------------------------------------------------------------------------- split user turns


def test_mixed_user_turn_is_split_into_runs_and_rejoined_in_order() -> None:
    doc = [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {"n": 1}},
                {"type": "tool_use", "id": "b", "name": "f", "input": {"n": 2}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "first"},
                {"type": "tool_result", "tool_use_id": "a", "content": "A"},
                {"type": "tool_result", "tool_use_id": "b", "content": "B", "is_error": True},
                {"type": "text", "text": "last"},
            ],
            "id": "wire-7",
        },
    ]
    messages = anthropic.load(doc).messages
    assert messages == (
        Message(
            role="assistant",
            parts=(ToolCall(id="a", name="f", arguments='{"n":1}'), ToolCall(id="b", name="f", arguments='{"n":2}')),
        ),
        Message(role="user", parts=(Text(text="first"),), id="wire-7", extras=_hint(fields={"id": "wire-7"})),
        Message(
            role="tool",
            parts=(ToolResult(call_id="a", content="A"), ToolResult(call_id="b", content="B", is_error=True)),
            extras=_hint(continues=True),
        ),
        Message(role="user", parts=(Text(text="last"),), extras=_hint(continues=True)),
    )
    assert anthropic.dump(messages) == doc


def test_consecutive_user_turns_stay_separate() -> None:
    doc = [
        {"role": "user", "content": "one"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": ""}]},
        {"role": "user", "content": []},
        {"role": "user", "content": [{"type": "text", "text": "four"}]},
        {"role": "assistant", "content": "ok"},
    ]
    messages = anthropic.load(doc).messages
    assert [(m.role, dict(m.extras)) for m in messages] == [
        ("user", {}),
        ("tool", _hint(separate=True)),
        ("user", _hint(separate=True)),
        ("user", _hint(separate=True, blocks=True)),
        ("assistant", {}),
    ]
    assert anthropic.dump(messages) == doc


def test_messages_from_other_formats_merge_into_one_user_turn_results_first() -> None:
    messages = [
        Message.of("user", "weather?"),
        Message.of("assistant", ToolCall(id="c1", name="w", arguments='{"city":"Oslo"}'), ToolCall(id="c2", name="w")),
        Message.of("user", "hurry"),
        Message.of("tool", ToolResult(call_id="c1", name="w", content="cold")),
        Message.of("tool", ToolResult(call_id="c2", name="w", content="colder")),
        Message.of("assistant", "Cold."),
    ]
    dropped: list[Dropped] = []
    wire = anthropic.dump(messages, dropped=dropped)
    assert wire == [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "c1", "name": "w", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "c2", "name": "w", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "cold"},
                {"type": "tool_result", "tool_use_id": "c2", "content": "colder"},
                {"type": "text", "text": "hurry"},
            ],
        },
        {"role": "assistant", "content": "Cold."},
    ]
    assert dropped == []
    back = anthropic.load(wire).messages
    assert [(m.role, m.parts) for m in back] == [
        ("user", (Text(text="weather?"),)),
        ("assistant", messages[1].parts),
        ("tool", (ToolResult(call_id="c1", content="cold"), ToolResult(call_id="c2", content="colder"))),
        ("user", (Text(text="hurry"),)),
        ("assistant", (Text(text="Cold."),)),
    ]


# ------------------------------------------------------------------------------------------- from other formats


def test_dump_of_other_formats_converts_and_reports_what_it_cannot_express() -> None:
    messages = [
        Message.of("system", "You are terse."),
        Message.of("system", "Use metric units."),
        Message.of("user", Text(text="hi", extras={"openai": {"fields": {"audio": {"id": "a1"}}}}), name="alice"),
        Message.of(
            "assistant",
            Reasoning(text="unsigned thoughts"),
            Reasoning(text="signed", signature="sig"),
            Reasoning(data="encrypted"),
            Text(text="Calling", reasoning=Reasoning(signature="gemini-sig")),
            ToolCall(id="call_1", name="f", arguments='{"a": 1}', reasoning=Reasoning(signature="t")),
            ToolCall(id="call_2", name="g", arguments="not json"),
            ToolCall(id="call_3", name="h", arguments=""),
            Opaque(format="openai-responses", data={"type": "web_search_call"}),
        ),
        Message.of("tool", ToolResult(call_id="call_1", name="f", content="1")),
        Message.of(
            "tool",
            ToolResult(
                call_id="call_2",
                content=(
                    Text(text="ok"),
                    Image(data=PNG),
                    Image(url="data:image/jpeg;base64,/9j/"),
                    File(data=b"%PDF", media_type="application/pdf", name="a.pdf"),
                    File(data="notes ✓".encode(), media_type="text/markdown"),
                    File(url="https://example.com/y.pdf"),
                ),
                is_error=True,
            ),
        ),
        Message.of("tool", ToolResult(call_id="call_3", content="")),
        Message.of("system", "Be brief now."),
        Message.of("user", Image(data=b"\x00\x01"), Image(), File()),
        Message.of("assistant", "ok"),
    ]
    dropped: list[Dropped] = []
    wire = anthropic.dump(messages, dropped=dropped)
    assert wire == {
        "system": [{"type": "text", "text": "You are terse."}, {"type": "text", "text": "Use metric units."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},  # not plain: it has openai fields
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "signed", "signature": "sig"},
                    {"type": "text", "text": "Calling"},
                    {"type": "tool_use", "id": "call_1", "name": "f", "input": {"a": 1}},
                    {"type": "tool_use", "id": "call_2", "name": "g", "input": {}},
                    {"type": "tool_use", "id": "call_3", "name": "h", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "1"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_2",
                        "content": [
                            {"type": "text", "text": "ok"},
                            {
                                "type": "image",
                                "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                            },
                            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/"}},
                            {
                                "type": "document",
                                "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERg=="},
                                "title": "a.pdf",
                            },
                            {
                                "type": "document",
                                "source": {"type": "text", "media_type": "text/markdown", "data": "notes ✓"},
                            },
                            {"type": "document", "source": {"type": "url", "url": "https://example.com/y.pdf"}},
                        ],
                        "is_error": True,
                    },
                    {"type": "tool_result", "tool_use_id": "call_3", "content": ""},
                    {"type": "text", "text": "[system] Be brief now."},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAE="}},
                ],
            },
            {"role": "assistant", "content": "ok"},
        ],
    }
    assert dropped == [
        Dropped(2, "openai-specific fields"),
        Dropped(2, "message name"),
        Dropped(3, "reasoning without an Anthropic signature (cannot be sent as thinking)"),
        Dropped(3, "reasoning without an Anthropic signature (cannot be sent as thinking)"),
        Dropped(3, "reasoning attached to a text part"),
        Dropped(3, "reasoning attached to tool call call_1"),
        Dropped(3, "arguments of tool call call_2 are not a JSON object (sent as {})"),
        Dropped(3, "openai-responses block with no Anthropic equivalent"),
        Dropped(7, "system message after the start (sent as a user text block prefixed [system])"),
        Dropped(8, "media type of an image (unknown; sent as image/png)"),
        Dropped(8, "image with neither data nor URL"),
        Dropped(8, "file with neither data nor URL"),
    ]


def test_dump_without_dropped_list_still_converts() -> None:
    messages = [Message.of("user", "q"), Message.of("assistant", Reasoning(text="x"), "a")]
    assert anthropic.dump(messages) == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
    ]


def test_system_prompt_shapes() -> None:
    """One plain text is a string (a loaded one-block list keeps its hint); several system messages become a
    block list; a lone system message gives a request object even without an envelope."""
    loaded = anthropic.load({"system": "Be kind.", "messages": []})
    assert loaded.messages == (Message.of("system", "Be kind."),)
    assert anthropic.dump(loaded.messages, loaded.envelope) == {"system": "Be kind.", "messages": []}
    as_list = {"system": [{"type": "text", "text": "Be kind."}], "messages": []}
    assert anthropic.load(as_list).messages == (Message.of("system", "Be kind.", extras=_hint(blocks=True)),)
    assert anthropic.dump(anthropic.load(as_list).messages) == as_list
    assert anthropic.dump([Message.of("system", "Be kind.")]) == {"system": "Be kind.", "messages": []}
    assert anthropic.dump([Message.of("system", "a"), Message.of("system", "b")]) == {
        "system": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        "messages": [],
    }
    dropped: list[Dropped] = []
    assert anthropic.dump([Message.of("user", "q"), Message.of("system", "late")], dropped=dropped) == [
        {"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "text", "text": "[system] late"}]}
    ]
    assert dropped == [Dropped(1, "system message after the start (sent as a user text block prefixed [system])")]
    # the envelope of a request without system: a system message added later is put before the messages
    envelope = anthropic.load({"model": "m", "messages": [], "max_tokens": 5}).envelope
    assert list(anthropic.dump([Message.of("system", "s")], envelope)) == ["model", "system", "messages", "max_tokens"]


# ------------------------------------------------------------------------------------------- mid-conversation system


def test_system_messages_inside_the_list_are_read_in_place_and_written_back_as_they_came() -> None:
    """Claude Code's ``mid-conversation-system`` beta: a system message anywhere in ``messages``, a string or text
    blocks (cache control and unknown keys kept), first in the list too; never lifted into ``system``."""
    cached = {"type": "text", "text": "Plan mode is on.", "cache_control": {"type": "ephemeral"}}
    doc = {
        "model": "claude-opus-4-5",
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "messages": [
            {"role": "system", "content": "First, before anything."},
            {"role": "user", "content": "hi"},
            {"role": "system", "content": [cached]},
            {"role": "system", "content": [{"type": "text", "text": "one block"}], "x-note": 1},
            {"role": "user", "content": "more"},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "system", "content": "last"},
        ],
    }
    loaded = anthropic.load(doc)
    roles = ["system", "system", "user", "system", "system", "user", "assistant", "system"]
    assert [m.role for m in loaded.messages] == roles
    inline = [False, True, False, True, True, False, False, True]
    assert [anthropic.is_inline_system(m) for m in loaded.messages] == inline
    assert loaded.messages[3] == Message.of(
        "system",
        Text(text="Plan mode is on.", extras=_hint(fields={"cache_control": {"type": "ephemeral"}})),
        extras=_hint(inline=True),
    )
    assert anthropic.dump(loaded.messages, loaded.envelope) == doc
    bare = doc["messages"]
    assert anthropic.dump(anthropic.load(bare).messages) == bare


def test_a_system_message_inside_the_list_holds_text_only() -> None:
    """Anything else there is a shape chainsum does not know: a `FormatError` naming where (a proxy then sends the
    request on untouched, and the upstream decides)."""
    with pytest.raises(FormatError) as info:
        anthropic.load([{"role": "system", "content": [{"type": "image", "source": {"type": "url", "url": "u"}}]}])
    assert info.value.where == "[0].content[0]" and "text only" in info.value.detail
    with pytest.raises(FormatError) as role:
        anthropic.load([{"role": "critic", "content": "x"}])
    assert role.value.where == "[0].role"


def test_system_messages_of_other_formats_are_still_folded_into_user_text() -> None:
    """Only a system message read from Anthropic's own list goes back there: one from another format (an OpenAI
    history converted) is sent the way every Anthropic API version takes, as ``[system]`` user text (reported)."""
    dropped: list[Dropped] = []
    wire = anthropic.dump([Message.of("user", "q"), Message.of("system", "late")], dropped=dropped)
    assert wire == [
        {"role": "user", "content": [{"type": "text", "text": "q"}, {"type": "text", "text": "[system] late"}]}
    ]
    assert len(dropped) == 1


def test_a_list_with_system_messages_sniffs_as_anthropic_only_with_something_else_anthropic() -> None:
    plain = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    assert anthropic.sniff(plain) == 0  # OpenAI Chat's shape
    assert detect_format({"system": "S", "messages": plain}) == "anthropic"
    thinking = [*plain, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]}]
    assert anthropic.sniff(thinking) == 2 and detect_format(thinking) == "anthropic"


def test_tool_inputs_are_compact_json_text_and_parse_back() -> None:
    tool_input = {"path": "/tmp/ü.txt", "lines": [1, 2.5, -0.0, 10**30], "flags": {"a": None, "b": False}, "q": '"'}
    doc = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "w", "input": tool_input}]}]
    (message,) = anthropic.load(doc).messages
    (call,) = message.tool_calls
    assert call.arguments == json.dumps(tool_input, ensure_ascii=False, separators=(",", ":"))
    assert json.loads(call.arguments) == tool_input
    assert anthropic.dump([message]) == doc


def test_non_canonical_base64_is_kept_opaque() -> None:
    block = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QR=="}}
    (message,) = anthropic.load([{"role": "user", "content": [block]}]).messages
    assert message.parts == (Opaque(format="anthropic", data=block),)
    canonical = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QQ=="}}
    (message,) = anthropic.load([{"role": "user", "content": [canonical]}]).messages
    assert message.parts == (Image(data=b"A", media_type="image/png"),)


def test_opaque_blocks_of_anthropic_are_written_back_verbatim() -> None:
    block = {"type": "code_execution_tool_result", "tool_use_id": "srv", "content": {"stdout": "4"}}
    dropped: list[Dropped] = []
    assert anthropic.dump([Message.of("assistant", Opaque(format="anthropic", data=block))], dropped=dropped) == [
        {"role": "assistant", "content": [block]}
    ]
    assert dropped == []


# ------------------------------------------------------------------------------------------- hostile input


def _user(*blocks: Any) -> list[Any]:
    return [{"role": "user", "content": list(blocks)}]


def _assistant(*blocks: Any) -> list[Any]:
    return [{"role": "assistant", "content": list(blocks)}]


HOSTILE: list[tuple[Any, str]] = [
    (42, ""),
    ("text", ""),
    (None, ""),
    ({"model": "x"}, "messages"),
    ({"messages": {"role": "user"}}, "messages"),
    ({"system": 5, "messages": []}, "system"),
    ({"system": [{"type": "text"}], "messages": []}, "system[0].text"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": None}]}]}, "messages[0].content[0].text"),
    ([5], "[0]"),
    ([{"role": "bot", "content": "x"}], "[0].role"),
    ([{"role": ["user"], "content": "x"}], "[0].role"),
    ([{"role": "user"}], "[0].content"),
    ([{"role": "user", "content": None}], "[0].content"),
    ([{"role": "user", "content": {"type": "text"}}], "[0].content"),
    (_user(7), "[0].content[0]"),
    (_user({"text": "x"}), "[0].content[0].type"),
    (_user({"type": 3}), "[0].content[0].type"),
    ([{"role": "user", "content": "ok"}, *_user({"type": "text", "text": 5})], "[1].content[0].text"),
    (_assistant({"type": "tool_use", "name": "f", "input": {}}), "[0].content[0].id"),
    (_assistant({"type": "tool_use", "id": "t", "name": None, "input": {}}), "[0].content[0].name"),
    (_assistant({"type": "tool_use", "id": "t", "name": "f", "input": []}), "[0].content[0].input"),
    (_assistant({"type": "tool_use", "id": "t", "name": "f"}), "[0].content[0].input"),
    (_user({"type": "tool_result", "content": "x"}), "[0].content[0].tool_use_id"),
    (_user({"type": "tool_result", "tool_use_id": "t", "content": 5}), "[0].content[0].content"),
    (_user({"type": "tool_result", "tool_use_id": "t", "content": [5]}), "[0].content[0].content[0]"),
    (
        _user({"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": 1}]}),
        "[0].content[0].content[0].text",
    ),
    (_user({"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}), "[0].content[0].is_error"),
    (_user({"type": "tool_result", "tool_use_id": "t", "is_error": None}), "[0].content[0].is_error"),
    (_assistant({"type": "thinking", "thinking": 5}), "[0].content[0].thinking"),
    (_assistant({"type": "thinking", "thinking": "", "signature": 5}), "[0].content[0].signature"),
    (_assistant({"type": "thinking", "thinking": "", "signature": None}), "[0].content[0].signature"),
    (_assistant({"type": "redacted_thinking"}), "[0].content[0].data"),
    (_user({"type": "image", "source": "x"}), "[0].content[0].source"),
    (_user({"type": "image"}), "[0].content[0].source"),
    (
        _user({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": 5}}),
        "[0].content[0].source.data",
    ),
    (
        _user({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "!!"}}),
        "[0].content[0].source.data",
    ),
    (
        _user({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "ü"}}),
        "[0].content[0].source.data",
    ),
    (
        _user({"type": "image", "source": {"type": "base64", "data": "AA==", "x": 1}}),
        "[0].content[0].source.media_type",
    ),
    (_user({"type": "image", "source": {"type": "url", "url": 5}}), "[0].content[0].source.url"),
    (_user({"type": "document", "source": {"type": "url", "url": "u"}, "title": 5}), "[0].content[0].title"),
    (
        _user({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": None}}),
        "[0].content[0].source.data",
    ),
]


@pytest.mark.parametrize(("data", "where"), HOSTILE)
def test_hostile_input_names_the_path(data: Any, where: str) -> None:
    with pytest.raises(FormatError) as info:
        anthropic.load(data)
    assert info.value.where == where
    assert info.value.format == "anthropic"
    assert str(info.value).startswith("anthropic: ")


def test_unserializable_tool_input_given_as_python_objects() -> None:
    with pytest.raises(FormatError) as info:
        anthropic.load(_assistant({"type": "tool_use", "id": "t", "name": "f", "input": {"s": {1, 2}}}))
    assert info.value.where == "[0].content[0].input"


_KEYS = st.sampled_from(
    "role content type text tool_use_id id name input source data media_type url thinking signature is_error title"
    " messages system".split()
)
_WORDS = st.sampled_from(
    "user assistant text tool_use tool_result thinking redacted_thinking image document base64 url AA=="
    " server_tool_use x".split()
)
_HOSTILE_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _WORDS | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow])
@given(_HOSTILE_JSON)
def test_arbitrary_json_gives_a_conversation_or_a_format_error(data: Any) -> None:
    assert anthropic.sniff(data) in (0, 1, 2)
    try:
        conversation = anthropic.load(data)
    except FormatError as e:
        assert e.format == "anthropic"
        return
    anthropic.dump(conversation.messages, conversation.envelope, [])


# ------------------------------------------------------------------------------------------- round-trip property


@settings(max_examples=examples(75), suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS["anthropic"])
def test_load_dump_load_is_stable_without_envelope(doc: Any) -> None:
    """Dumping without the envelope still gives the same canonical messages back."""
    messages = anthropic.load(doc).messages
    assert anthropic.load(anthropic.dump(messages)).messages == messages


# ------------------------------------------------------------------------------------------- canonical histories


def _tool_ids(messages: Any) -> tuple[Counter[str], Counter[str]]:
    calls: Counter[str] = Counter(c.id for m in messages for c in m.tool_calls)
    results: Counter[str] = Counter(r.call_id for m in messages for r in m.tool_results)
    return calls, results


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_any_canonical_history_dumps_loads_back_and_keeps_every_tool_part(messages: list[Message]) -> None:
    dropped: list[Dropped] = []
    wire = anthropic.dump(messages, dropped=dropped)
    back = anthropic.load(json.loads(json.dumps(wire))).messages
    assert _tool_ids(back) == _tool_ids(messages)
    foreign = sum(isinstance(p, Opaque) and p.format != "anthropic" for m in messages for p in m.parts)
    assert len(dropped) >= foreign


@settings(max_examples=examples(75), suppress_health_check=[HealthCheck.too_slow])
@given(well_formed_histories())
def test_well_formed_histories_convert_without_loss_of_text(messages: list[Message]) -> None:
    """Valid histories from other formats lose nothing but what is reported, and read back with the same text."""
    dropped: list[Dropped] = []
    back = anthropic.load(anthropic.dump(messages, dropped=dropped)).messages
    assert [m.text for m in back if m.role != "tool"] == [m.text for m in messages if m.role != "tool"]
    assert all(d.what.endswith("-specific fields") or "name" in d.what for d in dropped)
