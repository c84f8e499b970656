"""What the Gemini and Bedrock formats share: tool results inside user turns, and the codecs both need.

Gemini ``contents`` and Bedrock ``messages`` know two roles. The user side answers the model's tool calls inside
an ordinary user turn, next to whatever the user says. The canonical model keeps answers in ``tool`` messages, so
that the chain can pair an assistant message with the results of its calls (`Message` docstring). Loading
therefore *splits* a wire user turn holding tool results into a ``tool`` message (the results, in wire order)
followed by a ``user`` message (everything else, in wire order); dumping *joins* them again.

Two layout hints, stored in ``extras[<format>]`` of the canonical message that starts a wire turn, make the join
exact. They are hints, not data, and only the format that wrote them reads them:

- ``"turn": "new"``: this message starts a new wire turn although the message before it is also on the user side
  (two user turns in a row on the wire). Without it, dumping merges every run of consecutive ``tool``/``user``
  messages into one user turn, results first, which is what a history from another format needs (OpenAI sends
  one tool message per result; Bedrock rejects two user turns in a row).
- ``"layout"``: on the ``tool`` message of a split turn whose results did not all come first: one letter per wire
  part in wire order, ``t`` for a tool result and ``u`` for anything else. Used only while the counts still match,
  so an edited chain falls back to results first.

System messages: a provider takes one system instruction, before the conversation. Leading system messages are
joined into it; a system message further down cannot be expressed there, so it is sent as user text prefixed
``[system] `` and reported in `dropped`.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, assert_never, cast

from ..errors import FormatError
from ..messages import File, Image, Message, Opaque, Part, Reasoning, Text, ToolCall, ToolResult
from ._base import Dropped, drop, native

__all__ = [
    "INVALID_JSON",
    "Plan",
    "Turn",
    "compact_json",
    "decode_b64",
    "encode_b64",
    "merge_fields",
    "parse_data_url",
    "parse_json",
    "plan_turns",
    "split_turn",
    "with_extras",
    "wrap_document",
]

SYSTEM_PREFIX = "[system] "


def split_turn(parts: list[Part], hints: dict[str, Any] | None, fmt: str) -> list[Message]:
    """The canonical messages of one wire user turn: its tool results, then the rest.

    `hints` are the turn's own extras (unknown wire keys, role spelling, ``turn``); they go on the first message.
    """
    results: list[Part] = []
    others: list[Part] = []
    results_first = True
    for p in parts:
        if isinstance(p, ToolResult):
            results.append(p)
            if others:
                results_first = False
        else:
            others.append(p)
    if not results:
        return [Message(role="user", parts=tuple(parts), extras={fmt: hints} if hints else {})]
    if not results_first:
        hints = dict(hints or {})
        hints["layout"] = "".join("t" if isinstance(p, ToolResult) else "u" for p in parts)
    first = Message(role="tool", parts=tuple(results), extras={fmt: hints} if hints else {})
    if not others:
        return [first]
    return [first, Message(role="user", parts=tuple(others))]


@dataclass(frozen=True, slots=True)
class Turn:
    """One wire turn to write: a single assistant message, or a run of user-side messages joined."""

    role: Literal["user", "assistant"]
    messages: tuple[tuple[int, Message], ...]
    """The canonical messages with their indexes (for `Dropped`); the first one holds the turn's hints."""

    @property
    def index(self) -> int:
        return self.messages[0][0]

    @property
    def first(self) -> Message:
        return self.messages[0][1]

    def parts(self, fmt: str) -> list[tuple[int, Part]]:
        """The wire parts in order, each with the index of the message it came from.

        An assistant turn keeps its order. A user turn puts tool results first (providers that check want them
        first), unless the first message's ``layout`` hint says how a loaded turn interleaved them and the counts
        still match.
        """
        if self.role == "assistant":
            return [(i, p) for i, m in self.messages for p in m.parts]
        results: list[tuple[int, Part]] = []
        others: list[tuple[int, Part]] = []
        for i, m in self.messages:
            for p in m.parts:
                (results if isinstance(p, ToolResult) else others).append((i, p))
        layout = native(self.first.extras, fmt).get("layout")
        if (
            isinstance(layout, str)
            and len(layout) == len(results) + len(others)
            and layout.count("t") == len(results)
            and layout.count("u") == len(others)
        ):
            rs, us = iter(results), iter(others)
            return [next(rs) if c == "t" else next(us) for c in layout]
        return results + others


@dataclass(frozen=True, slots=True)
class Plan:
    """How canonical messages map onto wire turns."""

    system: tuple[tuple[int, Message], ...]
    """The leading system messages, joined into the system instruction."""
    turns: tuple[Turn, ...]


def plan_turns(messages: Sequence[Message], fmt: str, dropped: list[Dropped] | None) -> Plan:
    """Group `messages` into wire turns (see the module docstring); later system messages become user text."""
    start = 0
    while start < len(messages) and messages[start].role == "system":
        start += 1
    turns: list[Turn] = []
    run: list[tuple[int, Message]] = []

    def flush() -> None:
        if run:
            turns.append(Turn("user", tuple(run)))
            run.clear()

    for i in range(start, len(messages)):
        m = messages[i]
        match m.role:
            case "assistant":
                flush()
                turns.append(Turn("assistant", ((i, m),)))
            case "system":
                drop(dropped, i, "system message after the first turn sent as user text")
                if any(not isinstance(p, Text) for p in m.parts):
                    drop(dropped, i, "non-text parts of a system message")
                run.append((i, Message(role="user", parts=(Text(text=SYSTEM_PREFIX + m.text),))))
            case "user" | "tool":
                if run and native(m.extras, fmt).get("turn") == "new":
                    flush()
                run.append((i, m))
    flush()
    return Plan(tuple((i, messages[i]) for i in range(start)), tuple(turns))


def wrap_document(items: list[Any], system: Any, envelope: Mapping[str, Any], key: str, system_key: str) -> Any:
    """The document around the written turns, as the envelope of a loaded one describes it.

    The envelope is ``{"shape": "list"}`` for a bare list, else ``{"shape": "object", "keys": [...], "fields":
    {...}}``: every top-level key in order, and the values of those that are not the turns or the system
    (``system_key`` names the system's key as read, when it was not `system_key`). A bare list with a system
    to write becomes a request; no envelope gives ``{key: items}`` plus the system.
    """
    keys = envelope.get("keys")
    if envelope.get("shape") == "list" and system is None:
        return items
    if envelope.get("shape") != "object" or not isinstance(keys, list):
        return {key: items, system_key: system} if system is not None else {key: items}
    fields = native(envelope, "fields")
    read_key = envelope.get("system_key", system_key)
    out: dict[str, Any] = {}
    for name in cast(list[Any], keys):
        if name == key:
            out[name] = items
        elif name == read_key and system is not None:
            out[name] = system
        elif name in fields:
            out[name] = fields[name]
    if system is not None and read_key not in out:
        out[system_key] = system
    return out


def merge_fields(wire: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """Put unknown wire keys (``extras[fmt]["fields"]``) back, nested objects merged into what was built."""
    for key, value in fields.items():
        have = wire.get(key)
        if isinstance(have, dict) and isinstance(value, dict):
            merge_fields(cast(dict[str, Any], have), cast(dict[str, Any], value))
        else:
            wire[key] = value


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: Any) -> str:
    """JSON text of a parsed value (tool arguments), as small as possible and not ASCII-escaped."""
    return _COMPACT.encode(value)


INVALID_JSON: Any = object()
"""What `parse_json` returns for text that is not JSON."""


def parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return INVALID_JSON


def decode_b64(text: object, where: str, fmt: str) -> tuple[bytes, str | None]:
    """Bytes of base64 `text`, and `text` itself when encoding the bytes again would not give it back.

    The common case (standard alphabet, padded, canonical trailing bits) is checked without encoding the whole
    payload again: a length check proves no character was skipped and only the last quantum can differ.
    Anything else the providers accept (URL-safe alphabet, no padding, line breaks) is decoded too, and the
    original string is returned to be kept as a hint.
    """
    if not isinstance(text, str):
        raise FormatError(f"expected a base64 string, got {type(text).__name__}", where=where, format=fmt)
    n = len(text)
    pad = 2 if text.endswith("==") else 1 if text.endswith("=") else 0
    if n % 4 == 0 and text.isascii() and text.find("=", 0, n - pad) == -1:
        try:
            raw = base64.b64decode(text)
        except binascii.Error:
            raw = b""
        if len(raw) == n // 4 * 3 - pad and (pad == 0 or base64.b64encode(raw[pad - 3 :]) == text[-4:].encode()):
            return raw, None
    cleaned = "".join(text.split()).replace("-", "+").replace("_", "/").rstrip("=")
    try:
        raw = base64.b64decode(cleaned + "=" * (-len(cleaned) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise FormatError("invalid base64 data", where=where, format=fmt) from None
    return raw, text


def encode_b64(data: bytes, original: object) -> str:
    """Base64 of `data`; the `original` string kept at load when it still decodes to `data`."""
    if isinstance(original, str):
        try:
            if decode_b64(original, "", "")[0] == data:
                return original
        except FormatError:
            pass
    return base64.b64encode(data).decode("ascii")


def parse_data_url(url: str) -> tuple[str | None, bytes] | None:
    """Media type and bytes of a base64 ``data:`` URL (how OpenAI carries inline images), else None."""
    if not url.startswith("data:"):
        return None
    head, sep, payload = url[5:].partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    try:
        raw, _ = decode_b64(payload, "", "")
    except FormatError:
        return None
    return (head[: -len(";base64")] or None), raw


def with_extras(part: Part, extras: dict[str, Any]) -> Part:
    """`part` with other extras (parts are built first, their hints known only at the end)."""
    match part:
        case Text():
            return Text(text=part.text, reasoning=part.reasoning, extras=extras)
        case Reasoning():
            return Reasoning(text=part.text, signature=part.signature, data=part.data, extras=extras)
        case ToolCall():
            return ToolCall(
                id=part.id, name=part.name, arguments=part.arguments, reasoning=part.reasoning, extras=extras
            )
        case ToolResult():
            return ToolResult(
                call_id=part.call_id, name=part.name, content=part.content, is_error=part.is_error, extras=extras
            )
        case Image():
            return Image(url=part.url, data=part.data, media_type=part.media_type, extras=extras)
        case File():
            return File(url=part.url, data=part.data, media_type=part.media_type, name=part.name, extras=extras)
        case Opaque():
            return Opaque(format=part.format, data=part.data, extras=extras)
        case _:  # pragma: no cover
            assert_never(part)
