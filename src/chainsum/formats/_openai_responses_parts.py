"""Content parts of OpenAI Responses message items, both ways (`openai_responses` holds the item-level logic).

A part is what sits in a message item's ``content`` or a tool output's ``output`` list: ``input_text`` /
``output_text`` / ``refusal`` → `Text`, ``input_image`` → `Image`, ``input_file`` → `File`, anything else →
`Opaque` marked ``content_part``. The layout hints they carry are documented in `openai_responses`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from ..messages import File, Image, Opaque, Part, Reasoning, ResultPart, Text, ToolCall, ToolResult
from ._base import Dropped, drop, native
from ._openai_common import (
    RESPONSES,
    apply_layout,
    data_url,
    fail,
    guess_media_type,
    pack,
    parse_data_url,
    plain_text,
    unknown_keys,
    want_mapping,
    want_opt_str,
    want_str,
    wrong_type,
)

__all__ = ["content_value", "default_shape", "dump_part", "load_content", "load_result_part"]

NAME = RESPONSES

_PART_ONLY = ("fields", "type", "keep")
"""Hints only a part object can carry: a `Text` with any of them is never written as a bare string."""

_TEXT_KEYS = frozenset({"type", "text"})
_REFUSAL_KEYS = frozenset({"type", "refusal"})
_IMAGE_KEYS = frozenset({"type", "image_url"})
_FILE_KEYS = frozenset({"type", "file_data", "file_url", "filename"})


# --- load ------------------------------------------------------------------------------------------------------


def load_content(
    item: dict[str, Any], where: str, *, output: bool, lead: dict[str, Any] | None = None
) -> tuple[str, list[Part]]:
    """The shape and parts of a message's content; `lead` hints go on the first part."""
    content = item.get("content")
    if isinstance(content, str):
        return "string", ([Text(text=content, extras={NAME: lead} if lead else {})] if content else [])
    if not isinstance(content, list):
        wrong_type(content, "a string or a list of parts", f"{where}.content", NAME)
    items = cast("list[Any]", content)
    where = f"{where}.content"
    return "list", [_load_part(p, where, j, output, lead if j == 0 else None) for j, p in enumerate(items)]


def _load_part(raw: Any, parent: str, j: int, output: bool = False, lead: dict[str, Any] | None = None) -> Part:
    """One content part. In an assistant message item only text and refusals have a canonical form (output
    messages hold no images), so anything else there is kept as an opaque content part."""
    d = cast("dict[str, Any]", raw)
    if isinstance(raw, dict):  # the common case first: a text part of the role's own type
        text = d.get("text")
        if d.get("type") == ("output_text" if output else "input_text") and isinstance(text, str):
            fields = None if d.keys() <= _TEXT_KEYS else {k: v for k, v in d.items() if k not in _TEXT_KEYS}
            return Text(text=text, extras=pack(NAME, fields, lead))
    where = f"{parent}[{j}]"
    part = want_mapping(d, where, NAME)
    kind = want_str(part.get("type"), where, NAME, "type")
    text_type = "output_text" if output else "input_text"
    if output and kind not in ("input_text", "output_text", "refusal"):
        kind = ""
    lead = lead or {}  # only the first part of an output message item has any
    match kind:
        case "input_text" | "output_text":
            text = want_str(part.get("text"), where, NAME, "text")
            hints = {"type": kind, **lead} if kind != text_type else lead
            return Text(text=text, extras=pack(NAME, unknown_keys(part, _TEXT_KEYS), hints))
        case "refusal":
            text = want_str(part.get("refusal"), where, NAME, "refusal")
            hints = {"type": "refusal", **lead}
            return Text(text=text, extras=pack(NAME, unknown_keys(part, _REFUSAL_KEYS), hints))
        case "input_image":
            fields = unknown_keys(part, _IMAGE_KEYS)
            url = want_opt_str(part.get("image_url"), where, NAME, "image_url")
            image_hints: dict[str, Any] = {}
            if url is None and "image_url" in part:
                image_hints["keep"] = {"image_url": None}
            elif url is None and not fields:
                image_hints["empty"] = True  # an image part with nothing in it, written back as such
            extras = pack(NAME, fields, image_hints)
            decoded = parse_data_url(url) if url is not None else None
            if decoded is not None:
                return Image(data=decoded[0], media_type=decoded[1], extras=extras)
            return Image(url=url, extras=extras)
        case "input_file":
            return _load_file(part, where)
        case _:
            return Opaque(format=NAME, data=part, extras={NAME: {"content_part": True, **lead}})


def _load_file(part: dict[str, Any], where: str) -> File:
    fields = unknown_keys(part, _FILE_KEYS) or {}
    keep: dict[str, Any] = {}
    for key in ("file_url", "filename"):
        if part.get(key, 0) is None:
            keep[key] = None
    url = want_opt_str(part.get("file_url"), where, NAME, "file_url")
    name = want_opt_str(part.get("filename"), where, NAME, "filename")
    raw = part.get("file_data")
    decoded = parse_data_url(raw) if isinstance(raw, str) else None
    if decoded is None and "file_data" in part:
        fields["file_data"] = raw  # raw base64 or anything else is kept exactly as sent
    data, media_type = decoded if decoded is not None else (None, None)
    hints: dict[str, Any] = {"keep": keep} if keep else {}
    if data is None and url is None and not fields and not keep:
        hints["empty"] = True  # a file part with nothing in it, written back as such
    return File(data=data, url=url, media_type=media_type, name=name, extras=pack(NAME, fields, hints))


def load_result_part(raw: Any, where: str, j: int) -> ResultPart:
    part = _load_part(raw, where, j)
    if isinstance(part, Text | Image | File):
        return part
    kind = cast("dict[str, Any]", raw).get("type")
    fail(f"a tool output cannot hold a {kind!r} part (only text, images and files)", f"{where}[{j}]", NAME)


# --- dump ------------------------------------------------------------------------------------------------------


def default_shape(content: Sequence[Part]) -> str:
    """A string for no parts or one plain `Text` (the easy form), else a list."""
    return "string" if not content or (len(content) == 1 and plain_text(content[0], NAME, _PART_ONLY)) else "list"


def content_value(
    content: Sequence[Part], shape: object, text_type: str, i: int, dropped: list[Dropped] | None
) -> str | list[Any]:
    default = default_shape(content)
    if shape == "string" and default == "list":
        shape = default
    if (shape or default) == "string":
        return cast(Text, content[0]).text if content else ""
    wire = (dump_part(p, text_type, i, dropped) for p in content)
    return [w for w in wire if w is not None]


def dump_part(p: Part, text_type: str, i: int, dropped: list[Dropped] | None) -> dict[str, Any] | None:
    ph = native(p.extras, NAME)
    match p:
        case Text():
            if p.reasoning is not None:
                drop(dropped, i, "reasoning attached to text")
            kind = ph.get("type") or text_type
            if kind == "refusal":
                return apply_layout({"type": "refusal", "refusal": p.text}, ph)
            return apply_layout({"type": kind, "text": p.text}, ph)
        case Image():
            out: dict[str, Any] = {"type": "input_image"}
            if p.data is not None:
                out["image_url"] = data_url(p.data, p.media_type or guess_media_type(p.data, "image/png"))
            elif p.url is not None:
                out["image_url"] = p.url
            elif not ph:
                drop(dropped, i, "image with neither URL nor data")
                return None
            return apply_layout(out, ph)
        case File():
            if p.data is None and p.url is None and not ph:
                drop(dropped, i, "file with neither URL nor data")
                return None
            out = {"type": "input_file"}
            if p.data is not None:
                out["file_data"] = data_url(p.data, p.media_type or guess_media_type(p.data))
            if p.url is not None:
                out["file_url"] = p.url
            if p.name is not None:
                out["filename"] = p.name
            return apply_layout(out, ph)
        case Opaque():
            return cast(dict[str, Any], p.data)
        case Reasoning() | ToolCall() | ToolResult():  # pragma: no cover - never placed in content
            raise AssertionError(f"{p.kind} is not a content part")
