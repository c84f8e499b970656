"""Anthropic content blocks → canonical parts (`anthropic` holds the message-level reading and all writing).

The block mapping and the layout hints it leaves are described in `anthropic`. Claude Code session logs hold the
same blocks, so `claude_code` reads them here too (through `anthropic.read_content`).
"""

from __future__ import annotations

import base64
import binascii
import json
import json.encoder as json_encoder
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from ..errors import FormatError
from ..messages import File, Image, Opaque, Part, Reasoning, ResultPart, Text, ToolCall, ToolResult
from ._wire import is_list, is_object

__all__ = ["NAME", "at", "fail", "read_blocks", "read_content", "type_name"]

_T = TypeVar("_T")

NAME: Final = "anthropic"

_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _make_to_json() -> Callable[[Any], str]:
    """Compact JSON text of a value, UTF-8 kept as is. Tool inputs are serialized once each at load, which on a
    tool-heavy history is a good part of the load time: the C encoder is built once here, where
    `JSONEncoder.encode` would build it again for every call (a quarter of the time on small inputs)."""
    make = getattr(json_encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - interpreters without the C accelerator
        return _ENCODER.encode
    join = "".join
    try:
        encoder = make(None, _ENCODER.default, json_encoder.encode_basestring, None, ":", ",", False, False, True)
        sample: dict[str, Any] = {"a": ["é\n", 1, 2.5, None, True], "b": {}}
        if join(encoder(sample, 0)) != _ENCODER.encode(sample):  # pragma: no cover - a changed private API
            return _ENCODER.encode
    except TypeError:  # pragma: no cover - a changed private API
        return _ENCODER.encode
    return lambda value: join(encoder(value, 0))


_to_json: Final = _make_to_json()

_B64: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


# ---------------------------------------------------------------------------------------------- reading
#
# Readers raise `FormatError` with a path relative to what they read (".source.data"); each level adds its own
# prefix only when an error passes through, so the common path builds no path strings at all.


def fail(detail: str, where: str = "") -> FormatError:
    return FormatError(detail, where=where, format=NAME)


def at(prefix: str, error: FormatError, fmt: str = NAME) -> FormatError:
    return FormatError(error.detail, where=prefix + error.where, format=fmt)


def type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _not_str(obj: Mapping[str, Any], key: str, prefix: str = "") -> FormatError:
    if key not in obj:
        return fail("missing required string", f"{prefix}.{key}")
    return fail(f"expected a string, got {type_name(obj[key])}", f"{prefix}.{key}")


def _fields(block: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k not in known}


def _read_each(read: Callable[[Any], _T], items: list[Any], prefix: str) -> list[_T]:
    """`read` applied to every item. Only when one fails are they read again one by one, to find which and put
    ``prefix[index]`` in front of its path: the common path does no index bookkeeping."""
    try:
        return [read(item) for item in items]
    except FormatError:
        for j, item in enumerate(items):
            try:
                read(item)
            except FormatError as e:
                raise at(f"{prefix}[{j}]", e) from None
        raise  # pragma: no cover - the loop re-raises


def _decode_b64(text: str) -> bytes | None:
    """The bytes of base64 `text`, or None when re-encoding them would not give `text` back (non-zero padding
    bits, which `binascii` accepts): such a block is kept opaque so that it round-trips."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise fail("invalid base64 data", ".source.data") from None
    if text.endswith("=="):
        return raw if _B64.index(text[-3]) & 0x0F == 0 else None
    if text.endswith("="):
        return raw if _B64.index(text[-2]) & 0x03 == 0 else None
    return raw


_TEXT: Final = frozenset({"type", "text"})
_TOOL_USE: Final = frozenset({"type", "id", "name", "input"})
_TOOL_RESULT: Final = frozenset({"type", "tool_use_id", "content", "is_error"})
_THINKING: Final = frozenset({"type", "thinking", "signature"})
_REDACTED: Final = frozenset({"type", "data"})
_MEDIA: Final = frozenset({"type", "source"})
_DOCUMENT: Final = frozenset({"type", "source", "title"})


def _media(block: dict[str, Any], *, document: bool) -> Part:
    """An image or document block: `Image`/`File` when its source maps losslessly, else `Opaque`."""
    source = block.get("source")
    if not is_object(source):
        raise fail(f"expected an object, got {type_name(source)}", ".source")
    kind = source.get("type")
    title = block.get("title") if document else None
    if title is not None and not isinstance(title, str):
        raise fail(f"expected a string, got {type_name(title)}", ".title")
    known, present = (_DOCUMENT, 3) if title is not None else (_MEDIA, 2)
    ns: dict[str, Any] = {"fields": _fields(block, known)} if len(block) > present else {}
    if kind in ("base64", "text") and len(source) == 3 and (kind == "base64" or document):
        media_type, data = source.get("media_type"), source.get("data")
        if not isinstance(media_type, str):
            raise _not_str(source, "media_type", ".source")
        if not isinstance(data, str):
            raise _not_str(source, "data", ".source")
        if kind == "text":
            ns["text_source"] = True
            return File(
                data=data.encode("utf-8", "surrogatepass"), media_type=media_type, name=title, extras={NAME: ns}
            )
        decoded = _decode_b64(data)
        if decoded is not None:
            extras = {NAME: ns} if ns else {}
            if document:
                return File(data=decoded, media_type=media_type, name=title, extras=extras)
            return Image(data=decoded, media_type=media_type, extras=extras)
    elif kind == "url" and len(source) == 2:
        url = source.get("url")
        if not isinstance(url, str):
            raise _not_str(source, "url", ".source")
        if not url.startswith("data:"):  # dump turns data URLs into base64 sources; keep this one as it was
            extras = {NAME: ns} if ns else {}
            return File(url=url, name=title, extras=extras) if document else Image(url=url, extras=extras)
    return Opaque(format=NAME, data=block)


def _result_item(item: Any) -> ResultPart:
    part = _block(item)
    if isinstance(part, Text | Image | File):
        return part
    # a search_result, a file-id image, ...: ToolResult content has no slot for it, so it travels as its JSON text
    return Text(text=_to_json(item), extras={NAME: {"json_block": True}})


def _tool_result(block: dict[str, Any]) -> ToolResult:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str):
        raise _not_str(block, "tool_use_id")
    ns: dict[str, Any] = {}
    content: Any = block.get("content", "")
    if not isinstance(content, str):
        if not is_list(content):
            raise fail(f"expected a string or a list of blocks, got {type_name(content)}", ".content")
        content = tuple(_read_each(_result_item, content, ".content"))
    elif "content" not in block:
        ns["no_content"] = True
    is_error = block.get("is_error", False)
    if is_error is False:
        if "is_error" in block:
            ns["is_error_false"] = True
    elif is_error is not True:
        raise fail(f"expected a boolean, got {type_name(is_error)}", ".is_error")
    if len(block) > 2 + ("content" in block) + ("is_error" in block):
        ns["fields"] = _fields(block, _TOOL_RESULT)
    return ToolResult(call_id=call_id, content=content, is_error=is_error, extras={NAME: ns} if ns else {})


def _block(raw: Any) -> Part:
    """One content block; errors carry a path relative to the block."""
    if not is_object(raw):
        raise fail(f"expected a content block object, got {type_name(raw)}")
    block = raw
    kind = block.get("type")
    match kind:
        case "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise _not_str(block, "text")
            return Text(text=text, extras={NAME: {"fields": _fields(block, _TEXT)}} if len(block) > 2 else {})
        case "tool_result":
            return _tool_result(block)
        case "tool_use":
            call_id, name, args = block.get("id"), block.get("name"), block.get("input")
            if not isinstance(call_id, str):
                raise _not_str(block, "id")
            if not isinstance(name, str):
                raise _not_str(block, "name")
            if not isinstance(args, dict):
                raise fail(f"expected an object, got {type_name(args)}", ".input")
            try:
                arguments = _to_json(args)
            except (TypeError, ValueError, RecursionError) as e:  # only for Python objects no JSON text gives
                raise fail(f"not JSON-serializable: {e}", ".input") from None
            extras = {NAME: {"fields": _fields(block, _TOOL_USE)}} if len(block) > 4 else {}
            return ToolCall(id=call_id, name=name, arguments=arguments, extras=extras)
        case "thinking":
            text, signature = block.get("thinking"), block.get("signature")
            if not isinstance(text, str):
                raise _not_str(block, "thinking")
            ns: dict[str, Any] = {}
            if signature is None:
                if "signature" in block:
                    raise fail("expected a string, got null", ".signature")
                ns["unsigned"] = True
            elif not isinstance(signature, str):
                raise fail(f"expected a string, got {type_name(signature)}", ".signature")
            if len(block) > 2 + (signature is not None):
                ns["fields"] = _fields(block, _THINKING)
            return Reasoning(text=text, signature=signature, extras={NAME: ns} if ns else {})
        case "redacted_thinking":
            data = block.get("data")
            if not isinstance(data, str):
                raise _not_str(block, "data")
            ns = {"redacted": True}
            if len(block) > 2:
                ns["fields"] = _fields(block, _REDACTED)
            return Reasoning(data=data, extras={NAME: ns})
        case "image" | "document":
            return _media(block, document=kind == "document")
        case str():
            return Opaque(format=NAME, data=block)
        case _:
            raise fail("missing block type" if kind is None else f"expected a string, got {type_name(kind)}", ".type")


def read_blocks(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [Text(text=content)]
    if not is_list(content):
        raise fail(f"expected a string or a list of blocks, got {type_name(content)}")
    return _read_each(_block, content, "")


def read_content(content: Any, where: str, fmt: str = NAME) -> list[Part]:
    """The parts of a message's ``content`` (a string or a list of blocks) found at path `where`.

    Shared with the Claude Code reader, whose session logs hold the same blocks (errors then name `fmt`)."""
    try:
        return read_blocks(content)
    except FormatError as e:
        raise at(where, e, fmt) from None
