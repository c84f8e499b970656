"""Sizes in bytes, as the chain spec counts them.

What counts: text (UTF-8 bytes), image URLs, inline binary data (byte count), tool calls (id, the type word
``function``, name and arguments), tool results (call id, name and content), and reasoning (text, signature and
opaque data, since the provider is sent all three), and opaque provider blocks (their compact JSON). Roles,
ids of messages and provider extras do not count: they are not content the model reads.
"""

from __future__ import annotations

import json
from typing import assert_never, cast

from ._model import File, Image, Message, Opaque, Part, Reasoning, Text, ToolCall, ToolResult, utf8_len

__all__ = ["message_size", "part_size"]

_FUNCTION = len("function")


def _reasoning_size(r: Reasoning | None) -> int:
    if r is None:
        return 0
    return utf8_len(r.text) + (utf8_len(r.signature) if r.signature else 0) + (utf8_len(r.data) if r.data else 0)


def part_size(part: Part) -> int:
    """Bytes one part contributes to its message."""
    # Exact-type checks first: this runs for every part of every message on each build, and `match` over class
    # patterns costs several isinstance calls per part.
    t = type(part)
    if t is Text:
        text_part = cast(Text, part)
        text = text_part.text
        size = len(text) if text.isascii() else utf8_len(text)
        r = text_part.reasoning
        return size if r is None else size + _reasoning_size(r)
    if t is ToolResult:
        result = cast(ToolResult, part)
        content = result.content
        if isinstance(content, str):
            body = len(content) if content.isascii() else utf8_len(content)
        else:
            body = sum(part_size(p) for p in content)
        name = result.name
        return utf8_len(result.call_id) + (utf8_len(name) if name else 0) + body
    match part:
        case Text() | ToolResult():  # subclasses
            return _slow_part_size(part)
        case ToolCall():
            return (
                utf8_len(part.id)
                + _FUNCTION
                + utf8_len(part.name)
                + utf8_len(part.arguments)
                + _reasoning_size(part.reasoning)
            )
        case Reasoning():
            return _reasoning_size(part)
        case Image():
            if part.data is not None:
                return len(part.data)
            return utf8_len(part.url) if part.url else 0
        case File():
            if part.data is not None:
                return len(part.data)
            return utf8_len(part.url) if part.url else 0
        case Opaque():
            return utf8_len(json.dumps(part.data, ensure_ascii=False, separators=(",", ":")))
        case _:  # pragma: no cover - exhaustiveness
            assert_never(part)


def _slow_part_size(part: Text | ToolResult) -> int:
    if isinstance(part, Text):
        return utf8_len(part.text) + _reasoning_size(part.reasoning)
    content = part.content
    body = utf8_len(content) if isinstance(content, str) else sum(part_size(p) for p in content)
    return utf8_len(part.call_id) + (utf8_len(part.name) if part.name else 0) + body


def message_size(message: Message) -> int:
    """Bytes of a message: the sum of its parts."""
    total = 0
    for p in message.parts:
        total += part_size(p)
    return total
