"""Helpers shared by the OpenAI-shaped formats (Chat Completions, Responses, tau2).

They are small and mechanical on purpose: typed field readers that raise `FormatError` with the path of the
offending value, exact ``data:`` URL handling, and the extras layout every one of these modules uses:

``extras[NAME] = {"fields": {...}, <hint>: ..., ...}``

- ``fields``: wire keys with no canonical field, verbatim. A known wire key whose value is an object (OpenAI's
  ``image_url``, ``function``, ``file``) has its own unknown keys stored as a nested object under the same name;
  `merge_fields` puts them back. Values are never copied deeply: the dicts hold the caller's objects.
- ``keep``: known keys that were present with an empty value (``null``, ``[]``) the default dump would not write
  (or would write as ``null``), such as the ``"tool_calls": null`` that SDK ``model_dump()`` output is full of.
  Not data, so never reported.
- ``absent``: known keys the default dump writes but the input lacked.
- format-specific hints (``content`` shape, wire ``role``, ``slot``...), each documented in its module.

A hint is only stored when the input differs from what the default dump writes, so most loaded values carry no
extras at all and loading stays cheap.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any, NoReturn, TypeVar, cast

from ..errors import FormatError
from ..messages import Extras, Part, Text
from ._base import native
from ._wire import is_list, is_object

__all__ = [
    "apply_layout",
    "data_url",
    "document",
    "envelope_of",
    "fail",
    "guess_media_type",
    "is_custom",
    "kind_of",
    "merge_fields",
    "pack",
    "parse_data_url",
    "plain_text",
    "unknown_keys",
    "want_list",
    "want_mapping",
    "want_opt_str",
    "want_str",
    "wrong_type",
]

_MEDIA_TYPE = re.compile(r"[A-Za-z0-9][\w.+-]*/[\w.+-]+")
_W = TypeVar("_W", bound=Mapping[str, Any])


def fail(detail: str, where: str, fmt: str) -> NoReturn:
    raise FormatError(detail, where=where, format=fmt)


def kind_of(value: object) -> str:
    """The JSON name of a value's type, for error messages."""
    return "null" if value is None else type(value).__name__


def wrong_type(value: object, expected: str, where: str, fmt: str) -> NoReturn:
    """Fail for a value of the wrong type, e.g. ``wrong_type(x, "a string", "messages[2].content", NAME)``."""
    fail(f"expected {expected}, got {kind_of(value)}", where, fmt)


# The readers take the path of the enclosing object and the key apart, so that the path string is only built
# when there is an error to report: these run for every field of every message.


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if key else where


def want_str(value: object, where: str, fmt: str, key: str = "") -> str:
    if not isinstance(value, str):
        wrong_type(value, "a string", _at(where, key), fmt)
    return value


def want_opt_str(value: object, where: str, fmt: str, key: str = "") -> str | None:
    if value is not None and not isinstance(value, str):
        wrong_type(value, "a string or null", _at(where, key), fmt)
    return value


def want_mapping(value: object, where: str, fmt: str, key: str = "") -> dict[str, Any]:
    if not is_object(value):
        wrong_type(value, "an object", _at(where, key), fmt)
    return value


def want_list(value: object, where: str, fmt: str, key: str = "") -> list[Any]:
    if not is_list(value):
        wrong_type(value, "a list", _at(where, key), fmt)
    return value


def unknown_keys(obj: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any] | None:
    """The keys of `obj` outside `known` (a shallow copy), or None when there are none (the common case, tested
    with one C-level set comparison)."""
    if obj.keys() <= known:
        return None
    return {k: v for k, v in obj.items() if k not in known}


def pack(name: str, fields: Mapping[str, Any] | None, hints: dict[str, Any] | None = None) -> Extras:
    """The extras of one loaded value: ``{name: {"fields": ..., **hints}}``, or ``{}`` when there is nothing."""
    ns: dict[str, Any] = {}
    if fields:
        ns["fields"] = fields
    if hints:
        ns.update(hints)
    return {name: ns} if ns else {}


def merge_fields(out: dict[str, Any], fields: object) -> None:
    """Put stored unknown keys back into the wire object `out`; nested objects are merged one level deep."""
    if not is_object(fields):
        return
    for key, value in fields.items():
        current = out.get(key)
        if is_object(current) and is_object(value):
            out[key] = {**current, **value}
        else:
            out[key] = value


def apply_layout(wire: _W, hints: Mapping[str, Any]) -> _W:
    """Finish a dumped wire object (a `_wire` TypedDict, or a plain dict), in place: unknown fields back in,
    ``keep`` keys restored, ``absent`` keys removed. The keys it adds or removes are the input's own, so the object
    no longer has to match its TypedDict exactly: this is where the layout hints widen it."""
    if not hints:
        return wire
    out = cast("dict[str, Any]", wire)
    merge_fields(out, hints.get("fields"))
    keep = hints.get("keep")
    if is_object(keep):
        for key, value in keep.items():
            if out.get(key) is None:
                out[key] = value
    absent = hints.get("absent")
    if is_list(absent):
        for key in absent:
            if isinstance(key, str):
                out.pop(key, None)
    return wire


def plain_text(p: Part, fmt: str, part_only: tuple[str, ...]) -> bool:
    """Whether `p` is a `Text` that a bare string ``content`` can hold: no reasoning bound to it, and none of the
    hints of format `fmt` named in `part_only` (those only a part object can carry: unknown fields, a part type
    other than the default, ...). Chat Completions and Responses both write one such text as a string."""
    if type(p) is not Text or p.reasoning is not None:
        return False
    ns = native(p.extras, fmt)
    return not any(ns.get(key) for key in part_only)


CHAT = "openai"
RESPONSES = "openai-responses"


def is_custom(extras: Mapping[str, Any]) -> bool:
    """Whether a `ToolCall` (or the `ToolResult` answering it) came from a *custom* tool, whose arguments are
    free-form text rather than JSON. Chat Completions and Responses both have custom tools, so each reads the
    other's hint: the one place where a format looks at a sibling's layout hints."""
    for ns in (CHAT, RESPONSES):
        value = extras.get(ns)
        if is_object(value) and value.get("type") == "custom":
            return True
    return False


def envelope_of(doc: Mapping[str, Any], payload: str) -> dict[str, Any]:
    """The envelope of a request-shaped document: its key order and every key but `payload` (by reference), the
    same layout the other formats use."""
    return {"keys": list(doc), "fields": {k: v for k, v in doc.items() if k != payload}}


def message_list(data: Any, fmt: str, what: str) -> tuple[list[Any], dict[str, Any], str]:
    """The items of a bare message list, or of the ``messages`` key of an object (whose other keys become the
    envelope), with the path prefix for errors. `what` names the object form in the error ("a request object")."""
    if is_object(data):
        return want_list(data.get("messages"), "messages", fmt), envelope_of(data, "messages"), "messages"
    if is_list(data):
        return data, {}, ""
    fail(f"expected a list of messages or {what} with messages, got {type(data).__name__}", "", fmt)


def document(envelope: Mapping[str, Any] | None, payload: str, value: Any) -> Any:
    """Rebuild the document `envelope_of` described around a new `value`; the bare `value` without one."""
    keys = envelope.get("keys") if envelope else None
    fields = envelope.get("fields") if envelope else None
    if not is_list(keys) or not is_object(fields):
        return value
    out: dict[str, Any] = {}
    for key in keys:
        if key == payload:
            out[payload] = value
        elif key in fields:
            out[key] = fields[key]
    out.setdefault(payload, value)
    return out


def parse_data_url(url: str) -> tuple[bytes, str] | None:
    """``data:<media type>;base64,<payload>`` as (bytes, media type), only when `data_url` gives the very same
    string back; anything else (percent-encoded data, parameters, non-canonical base64) returns None and the
    caller keeps the URL as it is.

    Exactness without re-encoding the whole payload: strict base64 maps every full 4-character group to exactly
    3 bytes, so only the padded last group can hide non-zero unused bits; it alone is re-encoded and compared.
    """
    if not url.startswith("data:"):
        return None
    head, sep, payload = url.partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    media_type = head[5:-7]
    if not _MEDIA_TYPE.fullmatch(media_type):
        return None
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(payload) != 4 * ((len(data) + 2) // 3):
        return None
    tail = len(data) % 3
    if tail and base64.b64encode(data[-tail:]).decode("ascii") != payload[-4:]:
        return None
    return data, media_type


def data_url(data: bytes, media_type: str) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
)


def guess_media_type(data: bytes, default: str = "application/octet-stream") -> str:
    """The media type of inline bytes that came without one (from a format that does not require it)."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return default
