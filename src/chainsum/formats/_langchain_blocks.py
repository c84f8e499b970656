"""LangChain message content (a string, or a list of strings and content blocks) ↔ canonical parts.

`langchain` holds the message-level mapping and documents the layout hints; this module reads and writes what sits
in ``content``. LangChain keeps two generations of blocks side by side, and provider-native blocks besides:

- v1 standard blocks (``langchain_core.messages.content``): ``text`` (with ``annotations``, ``id``, ``extras``),
  ``reasoning`` (``reasoning`` text), ``image`` / ``file`` by ``url`` or ``base64`` with ``mime_type``,
  ``tool_call`` (a copy of an entry of ``AIMessage.tool_calls``);
- v0 multimodal blocks: ``image`` with ``source_type`` (``url`` / ``base64`` + ``data``), OpenAI's ``image_url``;
- provider-native blocks passed through by the chat model integrations: Anthropic's ``thinking`` /
  ``redacted_thinking`` (with their signatures) and ``tool_use`` (a copy of a tool call again).

Text, reasoning, images and files become `Text`, `Reasoning`, `Image` and `File`; a ``tool_use`` / ``tool_call``
block that copies one of the message's ``tool_calls`` (same id) becomes that `ToolCall`'s position (the block rides
on the call, so the call is counted once and written back in both places); anything else is carried as an
`Opaque` block of this format. Inline base64 is decoded only when encoding the bytes again gives the very same text,
so that writing back is exact.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from ..errors import FormatError
from ..messages import File, Image, Opaque, Part, Reasoning, ResultPart, Text, ToolCall
from ._openai_common import data_url, parse_data_url
from ._wire import is_object

__all__ = [
    "NAME",
    "default_is_string",
    "dump_content",
    "dump_part",
    "dump_result_content",
    "load_content",
    "load_result_content",
    "plain_json",
]

NAME: Final = "langchain"

_TEXT_KEYS: Final = frozenset({"type", "text"})
_REASONING_KEYS: Final = frozenset({"type", "reasoning"})
_THINKING_KEYS: Final = frozenset({"type", "thinking", "signature"})
_REDACTED_KEYS: Final = frozenset({"type", "data"})
_CALL_BLOCKS: Final = frozenset({"tool_use", "tool_call"})


def plain_json(value: object) -> bool:
    """Whether `value` survives JSON exactly (dicts with string keys, lists, strings, numbers, booleans, None).

    LangChain objects may hold any Python value (a tool's ``artifact``, metadata set by callbacks); chainsum's
    archive stores canonical JSON, so such values are carried as a stand-in (see `langchain`)."""
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list):
        return all(plain_json(v) for v in cast(list[Any], value))
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain_json(v) for k, v in cast(dict[Any, Any], value).items())
    return False


def _ns(fields: Mapping[str, Any] | None = None, **hints: Any) -> dict[str, Any]:
    """Extras for a part: ``{"langchain": {"fields": ..., **hints}}`` or ``{}``."""
    ns: dict[str, Any] = {k: v for k, v in hints.items() if v is not None}
    if fields:
        ns["fields"] = dict(fields)
    return {NAME: ns} if ns else {}


def _hints(part: Part) -> Mapping[str, Any]:
    value = part.extras.get(NAME)
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _decode(text: str) -> bytes | None:
    """`text` as bytes, only when encoding them again gives `text` back (so a dump is exact)."""
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return data if base64.b64encode(data).decode("ascii") == text else None


def _opaque(block: Any, where: str) -> Opaque:
    if not plain_json(block):
        raise FormatError("a content block that is not JSON", where=where, format=NAME)
    return Opaque(format=NAME, data=block)


# --- reading -----------------------------------------------------------------------------------------------------


def _image(block: dict[str, Any], where: str) -> Part:
    kind = block["type"]
    if kind == "image_url":
        return _image_url(block, where)
    raw_mime = block.get("mime_type")
    mime = raw_mime if isinstance(raw_mime, str) else None
    if raw_mime is not None and mime is None:
        return _opaque(block, where)
    known = {"type", "mime_type"} if mime is not None else {"type"}
    key = "base64" if "base64" in block else "data" if block.get("source_type") == "base64" else None
    if key is not None:
        raw = block.get(key)
        data = _decode(raw) if isinstance(raw, str) else None
        if data is None:
            return _opaque(block, where)
        extras = _ns(
            {k: v for k, v in block.items() if k not in known and k != key}, b64=None if key == "base64" else key
        )
        if kind == "image":
            return Image(data=data, media_type=mime, extras=extras)
        return File(data=data, media_type=mime, extras=extras)
    url = block.get("url")
    if not isinstance(url, str):
        return _opaque(block, where)
    extras = _ns({k: v for k, v in block.items() if k not in known and k != "url"})
    if kind == "image":
        return Image(url=url, media_type=mime, extras=extras)
    return File(url=url, media_type=mime, extras=extras)


def _image_url(block: dict[str, Any], where: str) -> Part:
    """OpenAI's ``image_url`` part (a URL string, or ``{"url": ..., "detail": ...}``); a ``data:`` URL is read as
    inline bytes when it can be written back exactly."""
    inner = block.get("image_url")
    if isinstance(inner, str):
        url, nested, shape = inner, None, "string"
    elif is_object(inner) and isinstance(inner.get("url"), str):
        url, shape = inner["url"], None
        nested = {k: v for k, v in inner.items() if k != "url"} or None
    else:
        return _opaque(block, where)
    extras = _ns(
        {k: v for k, v in block.items() if k not in ("type", "image_url")}, type="image_url", url=shape, inner=nested
    )
    decoded = parse_data_url(url)
    if decoded is not None:
        return Image(data=decoded[0], media_type=decoded[1], extras=extras)
    return Image(url=url, extras=extras)


def _block(item: Any, where: str, calls: Mapping[str, ToolCall] | None) -> Part:
    if isinstance(item, str):
        return Text(text=item, extras={NAME: {"bare": True}})
    if not is_object(item):
        raise FormatError(f"expected a string or a content block, got {type(item).__name__}", where=where, format=NAME)
    kind = item.get("type")
    if kind == "text":
        text = item.get("text")
        if not isinstance(text, str):
            return _opaque(item, where)
        if item.keys() <= _TEXT_KEYS:
            return Text(text=text)
        return Text(text=text, extras=_ns({k: v for k, v in item.items() if k not in _TEXT_KEYS}))
    if kind == "reasoning" and isinstance(item.get("reasoning"), str):
        fields = {k: v for k, v in item.items() if k not in _REASONING_KEYS}
        return Reasoning(text=item["reasoning"], extras=_ns(fields))
    if kind == "thinking" and isinstance(item.get("thinking"), str):
        signature = item.get("signature")
        fields = {k: v for k, v in item.items() if k not in _THINKING_KEYS or (k == "signature" and signature is None)}
        sig = signature if isinstance(signature, str) else None
        if signature is not None and sig is None:
            return _opaque(item, where)
        return Reasoning(text=item["thinking"], signature=sig, extras=_ns(fields, type="thinking"))
    if kind == "redacted_thinking" and isinstance(item.get("data"), str):
        fields = {k: v for k, v in item.items() if k not in _REDACTED_KEYS}
        return Reasoning(data=item["data"], extras=_ns(fields, type="redacted_thinking"))
    if kind in ("image", "image_url", "file"):
        return _image(item, where)
    if kind in _CALL_BLOCKS and calls is not None:
        call = calls.get(item.get("id"))  # pyright: ignore[reportArgumentType]
        if call is not None and plain_json(item):
            return call  # the caller puts the block on it
    return _opaque(item, where)


def load_content(
    content: Any, where: str, calls: Mapping[str, ToolCall] | None = None
) -> tuple[list[Part], bool, set[str]]:
    """(parts, was a list, ids of the `calls` placed by a block) for a message's ``content``. `calls` are the
    message's tool calls by id (AI messages): a ``tool_use`` / ``tool_call`` block with one of these ids puts that
    call here, carrying the block."""
    if isinstance(content, str):
        return ([Text(text=content)] if content else []), False, set()
    if not isinstance(content, list):
        got = type(content).__name__
        raise FormatError(f"expected a string or a list of content blocks, got {got}", where=where, format=NAME)
    parts: list[Part] = []
    placed: set[str] = set()
    for j, item in enumerate(content):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        part = _block(item, f"{where}[{j}]", calls)
        if isinstance(part, ToolCall):
            if part.id in placed:
                part = _opaque(item, f"{where}[{j}]")  # a second copy of the same call stays a block
            else:
                placed.add(part.id)
                hints: dict[str, Any] = {**_hints(part), "block": item}
                part = ToolCall(id=part.id, name=part.name, arguments=part.arguments, extras={NAME: hints})
        parts.append(part)
    return parts, True, placed


def load_result_content(content: Any, where: str) -> str | tuple[ResultPart, ...]:
    """A ToolMessage's ``content``: the string itself, or result parts. A block a tool result cannot hold as a
    part (anything but text, images and files) becomes a `Text` of its JSON, the block riding along."""
    if isinstance(content, str):
        return content
    parts, _, _ = load_content(content, where)
    out: list[ResultPart] = []
    for j, part in enumerate(parts):
        if isinstance(part, Text | Image | File):
            out.append(part)
            continue
        raw: Any = content[j]
        out.append(Text(text=json.dumps(raw, ensure_ascii=False), extras={NAME: {"raw": raw}}))
    return tuple(out)


# --- writing -----------------------------------------------------------------------------------------------------


def _with(out: dict[str, Any], hints: Mapping[str, Any]) -> dict[str, Any]:
    fields = hints.get("fields")
    if is_object(fields):
        out.update(fields)
    return out


def _dump_image(p: Image | File, hints: Mapping[str, Any], lost: list[str]) -> dict[str, Any] | None:
    kind = hints.get("type") or ("file" if isinstance(p, File) else "image")
    if kind == "image_url" and isinstance(p, Image):
        url = p.url if p.data is None else data_url(p.data, p.media_type or "image/png")
        if url is None:
            lost.append("an image with neither URL nor data")
            return None
        inner = hints.get("inner")
        value: Any = url if hints.get("url") == "string" else {"url": url, **(inner if is_object(inner) else {})}
        return _with({"type": "image_url", "image_url": value}, hints)
    out: dict[str, Any] = {"type": kind}
    if p.data is not None:
        out[hints.get("b64") or "base64"] = base64.b64encode(p.data).decode("ascii")
    elif p.url is not None:
        out["url"] = p.url
    else:
        lost.append(f"{'a file' if isinstance(p, File) else 'an image'} with neither URL nor data")
        return None
    if p.media_type is not None:
        out["mime_type"] = p.media_type
    if isinstance(p, File) and p.name is not None and not hints:
        out["extras"] = {"filename": p.name}
    return _with(out, hints)


def dump_part(p: Part, lost: list[str]) -> Any | None:
    """One content block (or a bare string) for a part; None for a part that has no block here (a `ToolCall` not
    placed by a block, an `Opaque` of another format: the latter is named in `lost`)."""
    hints = _hints(p)
    match p:
        case Text():
            if p.reasoning is not None:
                lost.append("reasoning attached to text")
            if hints.get("bare"):
                return p.text
            raw = hints.get("raw")
            if raw is not None and p.text == json.dumps(raw, ensure_ascii=False):
                return raw
            return _with({"type": "text", "text": p.text}, hints)
        case Reasoning():
            return _dump_reasoning(p, hints, lost)
        case Image() | File():
            return _dump_image(p, hints, lost)
        case ToolCall():
            return hints.get("block")
        case Opaque():
            if p.format == NAME:
                return p.data
            lost.append(f"{p.format} block with no LangChain equivalent")
            return None
        case _:
            return None


def _dump_reasoning(p: Reasoning, hints: Mapping[str, Any], lost: list[str]) -> dict[str, Any]:
    """Reasoning read from LangChain goes back as it came; from another format: Anthropic's ``thinking`` /
    ``redacted_thinking`` when it is signed or redacted (what ``ChatAnthropic`` sends back), else a v1
    ``reasoning`` block (whose encrypted payload, if any, has no standard place: reported)."""
    kind = hints.get("type")
    if kind == "redacted_thinking" or (kind is None and p.data is not None and not p.text):
        return _with({"type": "redacted_thinking", "data": p.data or ""}, hints)
    if kind == "thinking" or (kind is None and p.signature is not None):
        block: dict[str, Any] = {"type": "thinking", "thinking": p.text}
        if p.signature is not None:
            block["signature"] = p.signature
        return _with(block, hints)
    if p.data is not None or p.signature is not None:
        lost.append("the encrypted payload of reasoning")
    return _with({"type": "reasoning", "reasoning": p.text}, hints)


def default_is_string(parts: Sequence[Part]) -> bool:
    """Whether `dump_content` writes these content parts as a plain string when nothing says otherwise."""
    return not parts or (len(parts) == 1 and isinstance(parts[0], Text) and not parts[0].extras.get(NAME))


def dump_content(parts: Sequence[Part], as_list: bool, lost: list[str]) -> str | list[Any]:
    """``content`` for content parts: a plain string for none or one plain `Text` (unless `as_list`), else blocks."""
    if not as_list and default_is_string(parts):
        first = parts[0] if parts else None
        return first.text if isinstance(first, Text) else ""
    blocks = [dump_part(p, lost) for p in parts]
    return [b for b in blocks if b is not None]


def dump_result_content(content: str | tuple[ResultPart, ...], lost: list[str]) -> str | list[Any]:
    if isinstance(content, str):
        return content
    return dump_content(content, True, lost)
