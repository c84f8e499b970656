"""Gemini parts → canonical parts, and the key spellings both directions share (`gemini` holds the rest).

A part is read in the spelling of its first styled key (REST camelCase or the Python SDK's snake_case); the part
mapping and the layout hints it leaves are described in `gemini`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, cast

from ..errors import FormatError
from ..messages import File, Image, Opaque, Part, Reasoning, Text, ToolCall, ToolResult
from ._base import require_mapping
from ._split import compact_json, decode_b64, parse_data_url, with_extras

__all__ = ["NAME", "SNAKE", "fail", "read_parts", "wire_key", "wrap_key"]

NAME: Final = "gemini"

_DATA = ("text", "inlineData", "fileData", "functionCall", "functionResponse")
"""Part members chainsum models; a part holds at most one."""
_OPAQUE_DATA = ("executableCode", "codeExecutionResult", "toolCall", "toolResponse")
_META = ("videoMetadata", "partMetadata", "mediaResolution")
_INNER: dict[str, tuple[str, ...]] = {
    "inlineData": ("mimeType", "data", "displayName"),
    "fileData": ("mimeType", "fileUri", "displayName"),
    "functionCall": ("id", "name", "args"),
    "functionResponse": ("id", "name", "response"),
}
_PART_KEYS = (*_DATA, *_OPAQUE_DATA, *_META, "thought", "thoughtSignature")
_CAMEL_PART_KEYS: Final = frozenset(_PART_KEYS)


def _to_snake(key: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), key)


_ALL_KEYS = {*_PART_KEYS, *(k for keys in _INNER.values() for k in keys)}
SNAKE: Final = {k: _to_snake(k) for k in _ALL_KEYS}
"""camelCase → snake_case for every key this module reads."""
_FROM_CAMEL: Final = {k: k for k in _ALL_KEYS}
_FROM_SNAKE: Final = {v: k for k, v in SNAKE.items()}
_STYLED: Final = {k: k in _FROM_CAMEL for k in _FROM_CAMEL.keys() ^ _FROM_SNAKE.keys()}
"""Keys spelled differently in the two styles: True for camelCase."""
_WRAP_KEYS = ("output", "result", "error")
"""Response keys whose lone text value is read as the tool result itself (Gemini's documented convention)."""


def fail(detail: str, where: str) -> FormatError:
    return FormatError(detail, where=where, format=NAME)


def read_parts(items: list[Any], where: str) -> list[Part]:
    """The canonical parts of a Content's ``parts`` list at path `where`."""
    out: list[Part] = []
    for j, raw in enumerate(items):
        if type(raw) is dict and len(cast(dict[str, Any], raw)) == 1:  # the common case, kept cheap
            text = cast(dict[str, Any], raw).get("text")
            if type(text) is str:
                out.append(Text(text=text))
                continue
        out.append(_part(raw, f"{where}.parts[{j}]"))
    return out


def _part(raw: Any, where: str) -> Part:
    if not isinstance(raw, dict):
        raise fail(f"expected an object, got {type(raw).__name__}", where)
    part = cast(dict[str, Any], raw)
    r = _PartReader(where)
    if part.keys() <= _CAMEL_PART_KEYS and None not in part.values():  # camelCase, nothing unknown: the usual
        known = part
    else:
        r.snake = next((not _STYLED[k] for k in part if k in _STYLED), False)
        names = _FROM_SNAKE if r.snake else _FROM_CAMEL
        known = {}
        for key, value in part.items():
            name = names.get(key)
            if value is None:
                r.nulls.append(key)
            elif name is None or name not in _PART_KEYS:
                r.fields[key] = value
            else:
                known[name] = value
    if not known.keys().isdisjoint(_OPAQUE_DATA):
        return Opaque(format=NAME, data=part)
    kinds = [k for k in _DATA if k in known]
    if len(kinds) > 1:
        raise fail("a part holds one of text, inlineData, fileData, functionCall, functionResponse; found "
                    + ", ".join(kinds), where)  # fmt: skip
    for k in _META:
        if k in known:
            r.fields[r.key(k)] = known[k]
    signature = known.get("thoughtSignature")
    if signature is not None and not isinstance(signature, str):
        raise fail(f"expected a string, got {type(signature).__name__}", f"{where}.{r.key('thoughtSignature')}")
    kind = kinds[0] if kinds else None
    thought = known.get("thought")
    if thought is not None and kind != "text":
        r.fields["thought"] = thought
    if signature is not None and kind not in ("text", "functionCall", None):
        r.fields[r.key("thoughtSignature")] = signature
    result: Part
    match kind:
        case "text":
            result = r.text(known["text"], thought, signature)
        case "functionCall":
            result = r.function_call(known[kind], signature)
        case "functionResponse":
            result = r.function_response(known[kind])
        case "inlineData" | "fileData":
            result = r.media(kind, known[kind])
        case None:
            if signature is None:
                return Opaque(format=NAME, data=part)
            r.hints["form"] = "signature"
            result = Reasoning(signature=signature)
        case _:  # pragma: no cover
            raise AssertionError(kind)
    hints = r.finish()
    return with_extras(result, {NAME: hints}) if hints else result


def wire_key(name: str, snake: bool) -> str:
    """The wire spelling of camelCase key `name` in a part written in snake_case (`snake`) or not."""
    return SNAKE[name] if snake else name


def wrap_key(is_error: bool) -> str:
    return "error" if is_error else "output"


class _PartReader:
    """Reads the members of one part, collecting on the way its hints, unknown fields and null-valued keys."""

    __slots__ = ("fields", "hints", "nulls", "snake", "where")

    def __init__(self, where: str) -> None:
        self.where = where
        self.snake = False
        self.hints: dict[str, Any] = {}
        self.fields: dict[str, Any] = {}
        self.nulls: list[str] = []

    def key(self, name: str) -> str:
        return SNAKE[name] if self.snake else name

    def finish(self) -> dict[str, Any]:
        if self.snake:
            self.hints["snake"] = True
        if self.fields:
            self.hints["fields"] = self.fields
        if self.nulls:
            self.hints["nulls"] = self.nulls
        return self.hints

    def inner(self, raw: Any, kind: str) -> tuple[dict[str, Any], str]:
        """The known members of the part's container object (``functionCall`` and so on), and its path."""
        wire = self.key(kind)
        where = f"{self.where}.{wire}"
        obj = require_mapping(raw, where, NAME)
        names = _FROM_SNAKE if self.snake else _FROM_CAMEL
        allowed = _INNER[kind]
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in obj.items():
            name = names.get(key)
            if value is None:
                self.nulls.append(f"{wire}.{key}")
            elif name is None or name not in allowed:
                extra[key] = value
            else:
                known[name] = value
        if extra:
            self.fields[wire] = extra
        return known, where

    def str(self, obj: Mapping[str, Any], name: str, where: str, *, required: bool = False) -> str | None:
        value = obj.get(name)
        if value is None:
            if required:
                other = wire_key(name, not self.snake)
                hint = (
                    f" (found {other}: a part is read in the spelling of its first styled key)" if other in obj else ""
                )
                raise fail("missing required string" + hint, f"{where}.{self.key(name)}")
            return None
        if not isinstance(value, str):
            raise fail(f"expected a string, got {type(value).__name__}", f"{where}.{self.key(name)}")
        return value

    def call_id(self, obj: Mapping[str, Any], where: str) -> str:
        call_id = self.str(obj, "id", where) or ""
        if "id" in obj and not call_id:
            self.hints["empty_id"] = True
        return call_id

    def text(self, text: Any, thought: Any, signature: str | None) -> Text | Reasoning:
        if not isinstance(text, str):
            raise fail(f"expected a string, got {type(text).__name__}", f"{self.where}.text")
        if thought is not None and not isinstance(thought, bool):
            raise fail(f"expected a boolean, got {type(thought).__name__}", f"{self.where}.thought")
        if thought:
            return Reasoning(text=text, signature=signature)
        if thought is False:
            self.hints["thought"] = False
        return Text(text=text, reasoning=Reasoning(signature=signature) if signature is not None else None)

    def function_call(self, raw: Any, signature: str | None) -> ToolCall:
        obj, where = self.inner(raw, "functionCall")
        name = cast(str, self.str(obj, "name", where, required=True))
        args = obj.get("args")
        if args is None:
            self.hints["absent"] = ["args"]
            arguments = "{}"
        elif isinstance(args, dict):
            arguments = compact_json(args)
        else:
            raise fail(f"expected an object, got {type(args).__name__}", f"{where}.args")
        reasoning = Reasoning(signature=signature) if signature is not None else None
        return ToolCall(id=self.call_id(obj, where), name=name, arguments=arguments, reasoning=reasoning)

    def function_response(self, raw: Any) -> ToolResult:
        obj, where = self.inner(raw, "functionResponse")
        name = cast(str, self.str(obj, "name", where, required=True))
        response = obj.get("response")
        if response is None:
            self.hints["absent"] = ["response"]
            content, is_error = "{}", False
        elif isinstance(response, dict):
            response = cast(dict[str, Any], response)
            is_error = "error" in response and "output" not in response
            key, value = next(iter(response.items())) if len(response) == 1 else ("", None)
            if type(value) is str and key in _WRAP_KEYS and not value.lstrip().startswith("{"):
                content = value  # {"output": text}: the text itself, not re-serialized
                if key != wrap_key(is_error):
                    self.hints["key"] = key
            else:
                content = compact_json(response)
        else:
            raise fail(f"expected an object, got {type(response).__name__}", f"{where}.response")
        return ToolResult(call_id=self.call_id(obj, where), name=name, content=content, is_error=is_error)

    def media(self, kind: str, raw: Any) -> Image | File:
        obj, where = self.inner(raw, kind)
        media_type = self.str(obj, "mimeType", where)
        display = self.str(obj, "displayName", where)
        data: bytes | None = None
        url: str | None = None
        if kind == "inlineData":
            if "data" not in obj:
                raise fail("missing required base64 string", f"{where}.data")
            data, original = decode_b64(obj["data"], f"{where}.data", NAME)
            if original is not None:
                self.hints["b64"] = original
        else:
            url = cast(str, self.str(obj, "fileUri", where, required=True))
            if parse_data_url(url) is not None:
                self.hints["file"] = True
        if media_type is not None and media_type.startswith("image/"):
            if display is not None:
                self.fields.setdefault(self.key(kind), {})[self.key("displayName")] = display
            return Image(url=url, data=data, media_type=media_type)
        return File(url=url, data=data, media_type=media_type, name=display)
