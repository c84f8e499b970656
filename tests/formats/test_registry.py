"""What `chainsum.formats` does over the format modules: detection that says what to fix, a byte order mark, deep
nesting, the history inputs the library accepts (`as_messages`) and message indexes as the file counts them
(`wire_indexes`), and which provider and format a result is written for (`output_target`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chainsum.errors import ChainsumError, FormatError
from chainsum.formats import as_messages, detect_format, load, openai_chat, output_target, wire_indexes
from chainsum.messages import Message

NEARLY_OPENAI: list[dict[str, Any]] = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "hello"},
    {"role": "user", "content": "one more"},
    {"content": "this one lost its role"},
]


def test_no_match_names_the_closest_format_and_its_first_problem() -> None:
    """The same problem `--format openai` names, not only "no known chat format"."""
    with pytest.raises(FormatError) as detected:
        detect_format(NEARLY_OPENAI)
    with pytest.raises(FormatError) as forced:
        load(NEARLY_OPENAI, "openai")
    message = str(detected.value)
    assert message.startswith("no known chat format matches this document")
    assert f"closest: {forced.value}" in message
    assert "openai: at [3].role: missing role" in message


def test_the_closest_format_is_the_one_that_reads_furthest() -> None:
    nearly_gemini = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "hello"}]},
        {"role": "robot", "parts": [{"text": "beep"}]},
    ]
    with pytest.raises(FormatError, match=r"closest: gemini: at contents\[2\]\.role: unknown role 'robot'"):
        load(json.dumps(nearly_gemini))


def test_nothing_close_lists_the_formats() -> None:
    with pytest.raises(FormatError, match=r"no known chat format.*; formats: openai, "):
        load("[1, 2, 3]")


@pytest.mark.parametrize(
    "data", ["\ufeff" + json.dumps(NEARLY_OPENAI[:2]), ("\ufeff" + json.dumps(NEARLY_OPENAI[:2])).encode()]
)
def test_a_utf8_byte_order_mark_is_accepted(data: str | bytes) -> None:
    conv = load(data)
    assert conv.format == "openai" and [m.text for m in conv.messages] == ["hi", "hello"]


def test_a_byte_order_mark_on_json_lines_is_accepted() -> None:
    lines = "\n".join(json.dumps(m) for m in NEARLY_OPENAI[:2])
    assert len(load(b"\xef\xbb\xbf" + lines.encode()).messages) == 2


@pytest.mark.parametrize(
    "text", ["[" * 100_000, "[" * 100_000 + "]" * 100_000, '{"a": ' * 100_000, "[]\n" + "[" * 100_000]
)
def test_deep_nesting_is_a_format_error_not_a_recursion_error(text: str) -> None:
    for data in (text, text.encode()):
        with pytest.raises(FormatError, match="nested too deeply"):
            load(data)


def test_deep_nesting_inside_parsed_data_is_a_format_error() -> None:
    deep: dict[str, Any] = {}
    for _ in range(5_000):
        deep = {"a": deep}
    call = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": deep}
    with pytest.raises(FormatError, match="recursion"):
        load([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [call]}])


def test_a_recursion_error_while_loading_is_a_format_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a format module does with a deep document, `load` raises a `FormatError`."""

    def deep(data: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(openai_chat, "load", deep)
    with pytest.raises(FormatError, match="nested too deeply"):
        load(NEARLY_OPENAI[:2], "openai")
    with pytest.raises(FormatError, match="nested too deeply"):
        load(NEARLY_OPENAI[:2])


# ------------------------------------------------------------------------------------------------ as_messages


def test_messages_come_back_as_they_are() -> None:
    messages = (Message.of("user", "hi"), Message.of("assistant", "hello"))
    assert as_messages(messages) is messages
    listed = list(messages)
    assert as_messages(listed) is listed


@pytest.mark.parametrize(
    ("items", "fmt"),
    [
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], "openai"),
        ({"system": "be brief", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}, None),
        ([{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "hello"}]}], "gemini"),
        ([{"role": "user", "content": [{"text": "hi"}]}], "bedrock"),
    ],
)
def test_wire_dicts_of_any_format_are_loaded(items: Any, fmt: str | None) -> None:
    messages = as_messages(items)
    assert all(isinstance(m, Message) for m in messages)
    assert messages == load(items, fmt).messages
    assert messages[-1].text in ("hi", "hello")


def test_a_conversation_and_json_text_are_accepted() -> None:
    conv = load(NEARLY_OPENAI[:2])
    assert as_messages(conv) == conv.messages
    assert as_messages(json.dumps(NEARLY_OPENAI[:2])) == conv.messages


@pytest.mark.parametrize(
    ("items", "where"),
    [
        ([Message.of("user", "hi"), {"role": "assistant", "content": "x"}], r"at \[1\]: expected a chainsum Message"),
        ([{"role": "user", "content": "hi"}, "hello"], r"at \[1\]: expected a message dict"),
        ([None], r"at \[0\]: expected a message dict"),
        (NEARLY_OPENAI, r"at \[3\]\.role: missing role"),
    ],
)
def test_what_is_neither_is_a_format_error_naming_where(items: list[Any], where: str) -> None:
    with pytest.raises(ChainsumError, match=where):
        as_messages(items)


# ---------------------------------------------------------------------------------------------- wire_indexes


def test_anthropic_indexes_count_the_messages_list_not_the_system_prompt() -> None:
    doc = {
        "system": "be brief",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
                    {"type": "text", "text": "and?"},
                ],
            },
            {"role": "user", "content": "still there?"},
            {"role": "assistant", "content": "yes"},
        ],
    }
    conv = load(doc)
    assert [m.role for m in conv.messages] == ["system", "user", "assistant", "tool", "user", "user", "assistant"]
    assert wire_indexes(conv) == (None, 0, 1, 2, 2, 3, 4)
    assert wire_indexes(load(doc["messages"], "anthropic")) == (0, 1, 2, 2, 3, 4)


SPLIT_TURNS = {
    "bedrock": {
        "system": [{"text": "be brief"}],
        "messages": [
            {"role": "user", "content": [{"text": "hi"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {}}}]},
            {
                "role": "user",
                "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "ok"}]}}, {"text": "and?"}],
            },
            {"role": "user", "content": [{"text": "still there?"}]},
            {"role": "assistant", "content": [{"text": "yes"}]},
        ],
    },
    "gemini": {
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "f", "response": {"output": "ok"}}}, {"text": "and?"}],
            },
            {"role": "user", "parts": [{"text": "still there?"}]},
            {"role": "model", "parts": [{"text": "yes"}]},
        ],
    },
}


@pytest.mark.parametrize("fmt", sorted(SPLIT_TURNS))
def test_split_turns_and_the_system_prompt_count_as_in_the_file(fmt: str) -> None:
    conv = load(SPLIT_TURNS[fmt], fmt)
    assert [m.role for m in conv.messages] == ["system", "user", "assistant", "tool", "user", "user", "assistant"]
    assert wire_indexes(conv) == (None, 0, 1, 2, 2, 3, 4)


def test_formats_read_one_for_one_count_alike() -> None:
    conv = load(NEARLY_OPENAI[:3])
    assert wire_indexes(conv) == (0, 1, 2)


@pytest.mark.parametrize(
    ("input_format", "provider", "keep_format", "expected"),
    [
        ("anthropic", None, False, ("anthropic", "anthropic")),
        ("openai-responses", None, False, ("openai", "openai-responses")),
        ("claude-code", None, False, ("anthropic", "anthropic")),
        ("openai", "anthropic", False, ("anthropic", "anthropic")),
        ("openai", "anthropic", True, ("anthropic", "openai")),
        ("claude-code", "gemini", True, ("gemini", "gemini")),
        ("tau2", None, True, ("openai", "tau2")),
    ],
)
def test_output_target_names_the_rules_and_the_format_to_write(
    input_format: str, provider: str | None, keep_format: bool, expected: tuple[str, str]
) -> None:
    """The provider's rules and format when one is given; `keep_format` (``chainsum repair``) keeps a format that
    can be written; a read-only Claude Code log is always written as its provider's format."""
    assert output_target(input_format, provider, keep_format=keep_format) == expected
