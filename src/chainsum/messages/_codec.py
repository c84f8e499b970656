"""chainsum's own JSON form of messages: lossless, versionless, and described by `MESSAGE_SCHEMA`.

Bytes are written as standard base64. Fields at their default are left out so the form stays small; reading
accepts them either way. Errors name the message index and field path.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from typing import Any, assert_never, cast

from ..errors import FormatError
from ._model import (
    ROLES,
    File,
    Image,
    Message,
    Opaque,
    Part,
    Reasoning,
    ResultPart,
    Text,
    ToolCall,
    ToolResult,
)

__all__ = ["MESSAGE_SCHEMA", "message_from_dict", "message_to_dict", "messages_from_list", "messages_to_list"]

_FORMAT = "chainsum"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _reasoning_dict(r: Reasoning) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "reasoning", "text": r.text}
    if r.signature is not None:
        out["signature"] = r.signature
    if r.data is not None:
        out["data"] = r.data
    if r.extras:
        out["extras"] = dict(r.extras)
    return out


def _part_dict(p: Part) -> dict[str, Any]:
    out: dict[str, Any]
    match p:
        case Text():
            out = {"kind": "text", "text": p.text}
            if p.reasoning is not None:
                out["reasoning"] = _reasoning_dict(p.reasoning)
        case Reasoning():
            return _reasoning_dict(p)
        case ToolCall():
            out = {"kind": "tool_call", "id": p.id, "name": p.name, "arguments": p.arguments}
            if p.reasoning is not None:
                out["reasoning"] = _reasoning_dict(p.reasoning)
        case ToolResult():
            out = {"kind": "tool_result", "call_id": p.call_id}
            if p.name is not None:
                out["name"] = p.name
            out["content"] = p.content if isinstance(p.content, str) else [_part_dict(c) for c in p.content]
            if p.is_error:
                out["is_error"] = True
        case Image() | File():
            out = {"kind": p.kind}
            if p.url is not None:
                out["url"] = p.url
            if p.data is not None:
                out["data"] = _b64(p.data)
            if p.media_type is not None:
                out["media_type"] = p.media_type
            if isinstance(p, File) and p.name is not None:
                out["name"] = p.name
        case Opaque():
            out = {"kind": "opaque", "format": p.format, "data": p.data}
        case _:  # pragma: no cover
            assert_never(p)
    if p.extras:
        out["extras"] = dict(p.extras)
    return out


def message_to_dict(message: Message) -> dict[str, Any]:
    """The JSON-ready dict of one message."""
    out: dict[str, Any] = {"role": message.role, "parts": [_part_dict(p) for p in message.parts]}
    if message.id is not None:
        out["id"] = message.id
    if message.name is not None:
        out["name"] = message.name
    if message.extras:
        out["extras"] = dict(message.extras)
    return out


def messages_to_list(messages: Iterable[Message]) -> list[dict[str, Any]]:
    return [message_to_dict(m) for m in messages]


class _Reader:
    """Typed accessors that raise `FormatError` with the path of the offending field."""

    def __init__(self, obj: object, where: str) -> None:
        if not isinstance(obj, Mapping):
            raise FormatError(f"expected an object, got {type(obj).__name__}", where=where, format=_FORMAT)
        self.obj = cast(Mapping[str, Any], obj)
        self.where = where

    def str(self, key: str, *, default: str | None = None, required: bool = True) -> str:
        value = self.obj.get(key, default)
        if value is None and required:
            raise FormatError("missing required string", where=f"{self.where}.{key}", format=_FORMAT)
        if value is not None and not isinstance(value, str):
            raise FormatError(
                f"expected a string, got {type(value).__name__}", where=f"{self.where}.{key}", format=_FORMAT
            )
        return cast(str, value)

    def opt_str(self, key: str) -> str | None:
        value = self.obj.get(key)
        if value is not None and not isinstance(value, str):
            raise FormatError(
                f"expected a string, got {type(value).__name__}", where=f"{self.where}.{key}", format=_FORMAT
            )
        return value

    def opt_bytes(self, key: str) -> bytes | None:
        value = self.opt_str(key)
        if value is None:
            return None
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise FormatError(f"invalid base64: {exc}", where=f"{self.where}.{key}", format=_FORMAT) from None

    def extras(self) -> dict[str, Any]:
        value = self.obj.get("extras", {})
        if not isinstance(value, dict):
            raise FormatError("expected an object", where=f"{self.where}.extras", format=_FORMAT)
        return cast(dict[str, Any], value)


def _reasoning_from(r: _Reader) -> Reasoning:
    return Reasoning(
        text=r.str("text", default=""),
        signature=r.opt_str("signature"),
        data=r.opt_str("data"),
        extras=r.extras(),
    )


def _opt_reasoning(r: _Reader) -> Reasoning | None:
    if r.obj.get("reasoning") is None:
        return None
    return _reasoning_from(_Reader(r.obj["reasoning"], f"{r.where}.reasoning"))


def _part_from(obj: object, where: str) -> Part:
    r = _Reader(obj, where)
    kind = r.str("kind")
    match kind:
        case "text":
            return Text(text=r.str("text"), reasoning=_opt_reasoning(r), extras=r.extras())
        case "reasoning":
            return _reasoning_from(r)
        case "tool_call":
            return ToolCall(
                id=r.str("id"),
                name=r.str("name"),
                arguments=r.str("arguments", default="{}"),
                reasoning=_opt_reasoning(r),
                extras=r.extras(),
            )
        case "tool_result":
            raw = r.obj.get("content", "")
            content: str | tuple[ResultPart, ...]
            if isinstance(raw, str):
                content = raw
            elif isinstance(raw, list):
                items: list[ResultPart] = []
                for i, item in enumerate(cast(list[Any], raw)):
                    sub = _part_from(item, f"{where}.content[{i}]")
                    if not isinstance(sub, Text | Image | File):
                        raise FormatError(
                            f"a tool result cannot contain a {sub.kind} part",
                            where=f"{where}.content[{i}]",
                            format=_FORMAT,
                        )
                    items.append(sub)
                content = tuple(items)
            else:
                raise FormatError("expected a string or a list of parts", where=f"{where}.content", format=_FORMAT)
            is_error = r.obj.get("is_error", False)
            if not isinstance(is_error, bool):
                raise FormatError("expected a boolean", where=f"{where}.is_error", format=_FORMAT)
            return ToolResult(
                call_id=r.str("call_id"),
                name=r.opt_str("name"),
                content=content,
                is_error=is_error,
                extras=r.extras(),
            )
        case "image":
            return Image(
                url=r.opt_str("url"),
                data=r.opt_bytes("data"),
                media_type=r.opt_str("media_type"),
                extras=r.extras(),
            )
        case "file":
            return File(
                url=r.opt_str("url"),
                data=r.opt_bytes("data"),
                media_type=r.opt_str("media_type"),
                name=r.opt_str("name"),
                extras=r.extras(),
            )
        case "opaque":
            if "data" not in r.obj:
                raise FormatError("missing required field", where=f"{where}.data", format=_FORMAT)
            return Opaque(format=r.str("format"), data=r.obj["data"], extras=r.extras())
        case _:
            raise FormatError(f"unknown part kind {kind!r}", where=f"{where}.kind", format=_FORMAT)


def message_from_dict(obj: object, where: str = "messages[0]") -> Message:
    """Read one message from its JSON form; `where` prefixes error locations."""
    r = _Reader(obj, where)
    role = r.str("role")
    if role not in ROLES:
        raise FormatError(
            f"unknown role {role!r} (expected one of {', '.join(ROLES)})",
            where=f"{where}.role",
            format=_FORMAT,
        )
    raw_parts = r.obj.get("parts", [])
    if not isinstance(raw_parts, list):
        raise FormatError("expected a list", where=f"{where}.parts", format=_FORMAT)
    parts = tuple(_part_from(p, f"{where}.parts[{i}]") for i, p in enumerate(cast(list[Any], raw_parts)))
    return Message(
        role=role,
        parts=parts,
        id=r.opt_str("id"),
        name=r.opt_str("name"),  # type: ignore[arg-type]
        extras=r.extras(),
    )


def messages_from_list(items: object) -> list[Message]:
    """Read a list of messages in chainsum's JSON form."""
    if not isinstance(items, list):
        raise FormatError(f"expected a list of messages, got {type(items).__name__}", format=_FORMAT)
    return [message_from_dict(m, f"messages[{i}]") for i, m in enumerate(cast(list[Any], items))]


_REASONING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["kind"],
    "properties": {
        "kind": {"const": "reasoning"},
        "text": {"type": "string"},
        "signature": {"type": "string"},
        "data": {"type": "string"},
        "extras": {"type": "object"},
    },
    "additionalProperties": False,
}

MESSAGE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://chainsum.dev/schema/message.json",
    "title": "chainsum message",
    "type": "object",
    "required": ["role", "parts"],
    "properties": {
        "role": {"enum": list(ROLES)},
        "id": {"type": "string"},
        "name": {"type": "string"},
        "extras": {"type": "object"},
        "parts": {"type": "array", "items": {"$ref": "#/$defs/part"}},
    },
    "additionalProperties": False,
    "$defs": {
        "reasoning": _REASONING_SCHEMA,
        "text": {
            "type": "object",
            "required": ["kind", "text"],
            "properties": {
                "kind": {"const": "text"},
                "text": {"type": "string"},
                "reasoning": {"$ref": "#/$defs/reasoning"},
                "extras": {"type": "object"},
            },
            "additionalProperties": False,
        },
        "tool_call": {
            "type": "object",
            "required": ["kind", "id", "name"],
            "properties": {
                "kind": {"const": "tool_call"},
                "id": {"type": "string"},
                "name": {"type": "string"},
                "arguments": {"type": "string", "description": "JSON text, as the provider sent it"},
                "reasoning": {"$ref": "#/$defs/reasoning"},
                "extras": {"type": "object"},
            },
            "additionalProperties": False,
        },
        "media": {
            "type": "object",
            "required": ["kind"],
            "properties": {
                "kind": {"enum": ["image", "file"]},
                "url": {"type": "string"},
                "data": {"type": "string", "contentEncoding": "base64"},
                "media_type": {"type": "string"},
                "name": {"type": "string"},
                "extras": {"type": "object"},
            },
            "additionalProperties": False,
        },
        "tool_result": {
            "type": "object",
            "required": ["kind", "call_id"],
            "properties": {
                "kind": {"const": "tool_result"},
                "call_id": {"type": "string"},
                "name": {"type": "string"},
                "content": {
                    "oneOf": [
                        {"type": "string"},
                        {
                            "type": "array",
                            "items": {"oneOf": [{"$ref": "#/$defs/text"}, {"$ref": "#/$defs/media"}]},
                        },
                    ]
                },
                "is_error": {"type": "boolean"},
                "extras": {"type": "object"},
            },
            "additionalProperties": False,
        },
        "opaque": {
            "type": "object",
            "required": ["kind", "format", "data"],
            "properties": {
                "kind": {"const": "opaque"},
                "format": {"type": "string"},
                "data": {},
                "extras": {"type": "object"},
            },
            "additionalProperties": False,
        },
        "part": {
            "oneOf": [
                {"$ref": "#/$defs/opaque"},
                {"$ref": "#/$defs/text"},
                {"$ref": "#/$defs/reasoning"},
                {"$ref": "#/$defs/tool_call"},
                {"$ref": "#/$defs/tool_result"},
                {"$ref": "#/$defs/media"},
            ]
        },
    },
}
