"""pydantic-ai messages: ``ModelRequest`` and ``ModelResponse`` with their parts, as pydantic-ai stores them.

The document is what ``ModelMessagesTypeAdapter.dump_python(messages, mode="json")`` (or
``to_jsonable_python(result.all_messages())``) writes: a list of ``{"kind": "request" | "response", "parts": [...],
...}``. Reading and writing that JSON needs no pydantic-ai. `load_messages` and `dump_messages` convert the objects
themselves through the same JSON (pydantic-ai imported then: ``pip install "chainsum[pydantic-ai]"``), so they are
exactly as faithful as pydantic-ai's own persistence of a history.

Each wire message becomes one or more canonical messages, in order:

- ``request``: each ``system-prompt`` part a ``system`` message of one `Text`; each ``user-prompt`` part a ``user``
  message (a string content is one `Text`; a list content one part per item: text, ``image-url`` and image
  ``binary`` → `Image`, ``document-url`` and other ``binary`` → `File`, any other item `Opaque`); each run of tool
  returns (``tool-return``, the typed ``tool-search-return`` / ``capability-load-return``, a legacy ``retry-prompt``
  naming a tool) one ``tool`` message of `ToolResult`s, ``is_error`` unless ``outcome`` is ``success`` (or absent);
  ``retry-feedback`` and a tool-less ``retry-prompt`` a ``user`` message of one `Text`; any other part (instruction
  and tool-availability deltas, compaction, speech, ...) a ``user`` message of one `Opaque`.
- ``response``: one ``assistant`` message: ``text`` → `Text`; ``thinking`` → `Reasoning` with its signature;
  ``tool-call`` and the typed calls → `ToolCall` (its ``tool_call_id`` and ``tool_name``); what the provider ran
  itself (``builtin-tool-*``), ``file``, ``compaction`` and ``speech`` → `Opaque`.

Tool-return content and tool-call ``args`` that are not strings become compact JSON text and are parsed back on
dump (text that no longer parses, such as a masked result, goes back as a string).

What chainsum has no field for rides along in ``extras["pydantic-ai"]``: ``request`` / ``response`` on the first
canonical message of each wire message (the message's own keys: timestamps, usage, model and provider names, run
and conversation ids, instructions, state...), ``fields`` on each part (on a user message: its user-prompt part's
keys), and layout hints: ``kind`` (the wire part kind where the canonical part does not imply it), ``json`` (content
or args to parse back), ``args: null``, ``list`` (a user prompt whose content was a list), ``item`` (an `Opaque`
that is a prompt content item, not a part), ``absent`` (modeled keys the wire part left out), ``b64`` (base64 text
that encoding again would not reproduce).

Dumping joins consecutive non-assistant messages into one ``request``, and starts a new one at a message that
carries ``request`` (it was a wire request of its own); pydantic-ai itself merges consecutive requests before
sending, so a history from another format, or one chainsum edited, is written the way pydantic-ai would send it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from ..errors import FormatError, MissingDependencyError
from ..messages import File, Image, Message, Opaque, Part, Reasoning, Text, ToolCall, ToolResult
from ._base import Conversation, Dropped, drop, native, report_foreign, require_list, require_mapping
from ._split import INVALID_JSON, compact_json, decode_b64, encode_b64, parse_json

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["NAME", "dump", "dump_messages", "load", "load_messages", "sniff"]

NAME: Final = "pydantic-ai"

_RETURNS: Final = frozenset({"tool-return", "tool-search-return", "capability-load-return"})
_CALLS: Final = frozenset({"tool-call", "tool-search-call", "capability-load-call"})
_FEEDBACK: Final = frozenset({"retry-feedback", "retry-prompt"})
_SYS: Final = ("content", "part_kind")


def sniff(data: Any) -> int:
    """2 for a non-empty list whose every item is a ``{"kind": "request" | "response", "parts": [...]}``."""
    if not isinstance(data, list) or not data:
        return 0
    for item in cast(list[Any], data):
        if not isinstance(item, dict):
            return 0
        message = cast(dict[str, Any], item)
        if message.get("kind") not in ("request", "response") or not isinstance(message.get("parts"), list):
            return 0
    return 2


# --- load -------------------------------------------------------------------------------------------------------


def _fail(detail: str, where: str) -> FormatError:
    return FormatError(detail, where=where, format=NAME)


def _hints(**hints: Any) -> dict[str, Any]:
    """``{NAME: hints}`` without the empty ones, or no extras at all."""
    kept = {k: v for k, v in hints.items() if v not in (None, {}, [], False)}
    return {NAME: kept} if kept else {}


def _rest(part: Mapping[str, Any], modeled: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in part.items() if k not in modeled}


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(f"expected a string, got {type(value).__name__}", where)
    return value


def load(data: Any) -> Conversation:
    """Read a list of pydantic-ai message dicts."""
    items = require_list(data, "", NAME)
    messages: list[Message] = []
    for i, raw in enumerate(items):
        where = f"[{i}]"
        message = require_mapping(raw, where, NAME)
        kind = message.get("kind")
        parts = require_list(message.get("parts"), f"{where}.parts", NAME)
        own = _rest(message, ("parts", "kind"))
        if kind == "response":
            out = tuple(_response_part(p, f"{where}.parts[{j}]") for j, p in enumerate(parts))
            messages.append(Message(role="assistant", parts=out, extras=_hints(response=own)))
        elif kind == "request":
            messages.extend(_request(parts, own, where))
        else:
            raise _fail("missing kind" if kind is None else f"unknown kind {kind!r} (request or response)", where)
    return Conversation(tuple(messages), NAME, {})


def _request(parts: list[Any], own: dict[str, Any], where: str) -> list[Message]:
    """The canonical messages of one wire request; the first one carries the request's own keys."""
    out: list[Message] = []
    results: list[Part] = []
    for j, raw in enumerate(parts):
        at = f"{where}.parts[{j}]"
        part = require_mapping(raw, at, NAME)
        kind = _kind(part, at)
        if kind in _RETURNS or (kind == "retry-prompt" and part.get("tool_name") is not None):
            results.append(_tool_result(part, kind, at))
            continue
        if results:
            out.append(Message(role="tool", parts=tuple(results)))
            results = []
        out.append(_request_message(part, kind, at))
    if results:
        out.append(Message(role="tool", parts=tuple(results)))
    if not out:  # an empty request (pydantic-ai keeps one at the end of a history): kept, so it comes back
        return [Message(role="user", extras={NAME: {"request": own}})]
    first = out[0]
    out[0] = Message(role=first.role, parts=first.parts, extras={NAME: {**native(first.extras, NAME), "request": own}})
    return out


def _kind(part: dict[str, Any], where: str) -> str:
    kind = part.get("part_kind")
    if not isinstance(kind, str):
        raise _fail("missing part_kind" if kind is None else "expected a string", f"{where}.part_kind")
    return kind


def _request_message(part: dict[str, Any], kind: str, where: str) -> Message:
    if kind == "system-prompt":
        text = Text(text=_text(part.get("content"), f"{where}.content"), extras=_hints(fields=_rest(part, _SYS)))
        return Message(role="system", parts=(text,))
    if kind == "user-prompt":
        content = part.get("content")
        fields = _rest(part, ("content", "part_kind"))
        if isinstance(content, str):
            return Message(role="user", parts=(Text(text=content),), extras=_hints(fields=fields))
        items = require_list(content, f"{where}.content", NAME)
        parts = tuple(_item(x, f"{where}.content[{k}]") for k, x in enumerate(items))
        return Message(role="user", parts=parts, extras=_hints(fields=fields, list=True))
    if kind in _FEEDBACK:
        content = part.get("content")
        is_text = isinstance(content, str)
        text = content if isinstance(content, str) else compact_json(content)
        fields = _rest(part, ("content", "part_kind"))
        return Message(role="user", parts=(Text(text=text, extras=_hints(kind=kind, fields=fields, json=not is_text)),))
    return Message(role="user", parts=(Opaque(format=NAME, data=part),))


def _tool_result(part: dict[str, Any], kind: str, where: str) -> ToolResult:
    call_id = _text(part.get("tool_call_id"), f"{where}.tool_call_id")
    name = part.get("tool_name")
    if name is not None and not isinstance(name, str):
        raise _fail(f"expected a string, got {type(name).__name__}", f"{where}.tool_name")
    if "content" not in part:
        raise _fail("missing content", f"{where}.content")
    content = part["content"]
    is_text = isinstance(content, str)
    outcome = part.get("outcome", "success")
    is_error = kind == "retry-prompt" or outcome not in ("success", None)
    modeled = ("tool_call_id", "content", "part_kind", *(("tool_name",) if name is not None else ()))
    fields = _rest(part, modeled)  # a null tool name stays a field: canonical None means "not given"
    absent = [] if "tool_name" in part else ["tool_name"]
    return ToolResult(
        call_id=call_id,
        name=name,
        content=content if isinstance(content, str) else compact_json(content),
        is_error=is_error,
        extras=_hints(fields=fields, json=not is_text, kind=None if kind == "tool-return" else kind, absent=absent),
    )


def _item(raw: Any, where: str) -> Part:
    """One item of a list user-prompt content."""
    if isinstance(raw, str):
        return Text(text=raw)
    item = require_mapping(raw, where, NAME)
    kind = item.get("kind")
    media = item.get("media_type")
    if media is not None and not isinstance(media, str):
        raise _fail(f"expected a string, got {type(media).__name__}", f"{where}.media_type")
    absent = [] if "media_type" in item else ["media_type"]
    if kind in ("image-url", "document-url"):
        url = _text(item.get("url"), f"{where}.url")
        extras = _hints(fields=_rest(item, ("url", "kind", "media_type")), absent=absent)
        if kind == "image-url":
            return Image(url=url, media_type=media, extras=extras)
        return File(url=url, media_type=media, extras=extras)
    if kind == "binary":
        data, original = decode_b64(item.get("data"), f"{where}.data", NAME)
        extras = _hints(fields=_rest(item, ("data", "kind", "media_type")), absent=absent, b64=original)
        if media is not None and media.startswith("image/"):
            return Image(data=data, media_type=media, extras=extras)
        return File(data=data, media_type=media, extras=extras)
    return Opaque(format=NAME, data=item, extras={NAME: {"item": True}})


def _response_part(raw: Any, where: str) -> Part:
    part = require_mapping(raw, where, NAME)
    kind = _kind(part, where)
    if kind == "text":
        text = _text(part.get("content"), f"{where}.content")
        return Text(text=text, extras=_hints(fields=_rest(part, ("content", "part_kind"))))
    if kind == "thinking":
        text = _text(part.get("content"), f"{where}.content")
        signature = part.get("signature")
        if signature is not None and not isinstance(signature, str):
            raise _fail(f"expected a string, got {type(signature).__name__}", f"{where}.signature")
        fields = _rest(part, ("content", "signature", "part_kind"))
        absent = [] if "signature" in part else ["signature"]
        return Reasoning(text=text, signature=signature, extras=_hints(fields=fields, absent=absent))
    if kind in _CALLS:
        name = _text(part.get("tool_name"), f"{where}.tool_name")
        call_id = _text(part.get("tool_call_id"), f"{where}.tool_call_id")
        args = part.get("args")
        hints: dict[str, Any] = {"absent": [] if "args" in part else ["args"]}
        if isinstance(args, str):
            arguments = args
        elif args is None:
            arguments, hints["args"] = "{}", "null"
        elif isinstance(args, dict):
            arguments, hints["json"] = compact_json(args), True
        else:
            raise _fail(f"expected an object or a string, got {type(args).__name__}", f"{where}.args")
        fields = _rest(part, ("tool_name", "tool_call_id", "args", "part_kind"))
        extras = _hints(fields=fields, kind=None if kind == "tool-call" else kind, **hints)
        return ToolCall(id=call_id, name=name, arguments=arguments, extras=extras)
    return Opaque(format=NAME, data=part)


# --- dump -------------------------------------------------------------------------------------------------------


def dump(
    messages: Sequence[Message],
    envelope: Mapping[str, Any] | None = None,
    dropped: list[Dropped] | None = None,
) -> list[dict[str, Any]]:
    """The pydantic-ai JSON message list (``ModelMessagesTypeAdapter.validate_python`` reads it back)."""
    del envelope  # the document is a bare list
    report_foreign(messages, NAME, dropped)
    out: list[dict[str, Any]] = []
    request: dict[str, Any] | None = None
    names: dict[str, str] = {}
    for i, message in enumerate(messages):
        hints = native(message.extras, NAME)
        if message.name:
            drop(dropped, i, "participant name")
        if message.role == "assistant":
            request = None
            parts = [w for p in message.parts if (w := _response_wire(p, i, dropped, names)) is not None]
            out.append({"parts": parts, **cast(dict[str, Any], hints.get("response") or {}), "kind": "response"})
            continue
        own = hints.get("request")
        if request is None or own is not None:
            request = {"parts": [], **cast(dict[str, Any], own or {}), "kind": "request"}
            out.append(request)
        request["parts"].extend(_request_wires(message, i, dropped, names))
    return out


def _put(wire: dict[str, Any], key: str, value: Any, hints: Mapping[str, Any], default: Any = None) -> None:
    """Set `key` unless the loaded part left it out and the value is still the default."""
    if value == default and key in cast(list[str], hints.get("absent", [])):
        return
    wire[key] = value


def _json_back(text: str, hints: Mapping[str, Any]) -> Any:
    if hints.get("json"):
        value = parse_json(text)
        if value is not INVALID_JSON:
            return value
    return text


def _request_wires(message: Message, i: int, dropped: list[Dropped] | None, names: dict[str, str]) -> list[Any]:
    """The wire parts of one non-assistant message, in order."""
    out: list[Any] = []
    prompt: list[Any] = []
    hints = native(message.extras, NAME)
    used_fields = False

    def flush() -> None:
        nonlocal prompt, used_fields
        if not prompt:
            return
        single = len(prompt) == 1 and isinstance(prompt[0], str) and not hints.get("list")
        fields = {} if used_fields else cast(dict[str, Any], hints.get("fields") or {})
        out.append({"content": prompt[0] if single else prompt, **fields, "part_kind": "user-prompt"})
        used_fields = True
        prompt = []

    for part in message.parts:
        own = native(part.extras, NAME)
        match part:
            case Text() if message.role == "system":
                out.append({"content": part.text, **own.get("fields", {}), "part_kind": "system-prompt"})
            case Text() if own.get("kind") in _FEEDBACK:
                flush()
                fields = cast(dict[str, Any], own.get("fields") or {})
                out.append({"content": _json_back(part.text, own), **fields, "part_kind": own["kind"]})
            case Text():
                if part.reasoning is not None:
                    drop(dropped, i, "reasoning on text")
                prompt.append(part.text)
            case ToolResult():
                flush()
                out.append(_return_wire(part, i, dropped, names))
            case Image() | File():
                if message.role == "system":
                    drop(dropped, i, f"{part.kind} in a system prompt")
                    continue
                prompt.append(_item_wire(part, i, dropped))
            case Opaque(format="pydantic-ai") if own.get("item"):
                prompt.append(part.data)
            case Opaque(format="pydantic-ai"):
                flush()
                out.append(part.data)
            case _:
                drop(dropped, i, f"{part.kind} in a {message.role} message")
    flush()
    if hints.get("list") and not used_fields:  # a prompt whose content was an empty list
        out.append({"content": [], **cast(dict[str, Any], hints.get("fields") or {}), "part_kind": "user-prompt"})
    return out


def _return_wire(part: ToolResult, i: int, dropped: list[Dropped] | None, names: dict[str, str]) -> dict[str, Any]:
    own = native(part.extras, NAME)
    kind = cast(str, own.get("kind") or "tool-return")
    if isinstance(part.content, str):
        content: Any = _json_back(part.content, own)
    else:
        if any(not isinstance(p, Text) for p in part.content):
            drop(dropped, i, "non-text content of a tool result")
        content = part.text
    wire: dict[str, Any] = {}
    if part.name is not None or "tool_name" not in cast(list[str], own.get("absent", [])):
        wire["tool_name"] = part.name if part.name is not None else names.get(part.call_id, "")
    wire["content"] = content
    wire["tool_call_id"] = part.call_id
    fields = cast(dict[str, Any], own.get("fields") or {})
    wire.update(fields)
    if kind != "retry-prompt":
        outcome = fields.get("outcome", "success")
        if part.is_error == (outcome in ("success", None)):  # the canonical flag changed: it decides
            wire["outcome"] = "failed" if part.is_error else "success"
    wire["part_kind"] = kind
    return wire


def _item_wire(part: Image | File, i: int, dropped: list[Dropped] | None) -> dict[str, Any]:
    own = native(part.extras, NAME)
    wire: dict[str, Any] = {}
    if part.data is not None:
        wire["data"] = encode_b64(part.data, own.get("b64"))
        wire.update(own.get("fields", {}))
        wire["kind"] = "binary"
    else:
        wire["url"] = part.url or ""
        wire.update(own.get("fields", {}))
        wire["kind"] = "image-url" if isinstance(part, Image) else "document-url"
    _put(wire, "media_type", part.media_type, own)
    if isinstance(part, File) and part.name:
        drop(dropped, i, "file name")
    return wire


def _response_wire(part: Part, i: int, dropped: list[Dropped] | None, names: dict[str, str]) -> Any:
    own = native(part.extras, NAME)
    fields = cast(dict[str, Any], own.get("fields") or {})
    match part:
        case Text():
            if part.reasoning is not None:
                drop(dropped, i, "reasoning on text")
            return {"content": part.text, **fields, "part_kind": "text"}
        case Reasoning():
            if part.data is not None:
                drop(dropped, i, "encrypted reasoning data")
            wire: dict[str, Any] = {"content": part.text}
            _put(wire, "signature", part.signature, own)
            return {**wire, **fields, "part_kind": "thinking"}
        case ToolCall():
            if part.reasoning is not None:
                drop(dropped, i, "reasoning on a tool call")
            names[part.id] = part.name
            wire = {"tool_name": part.name}
            args = None if own.get("args") == "null" and part.arguments == "{}" else _json_back(part.arguments, own)
            _put(wire, "args", args, own)
            return {**wire, "tool_call_id": part.id, **fields, "part_kind": own.get("kind") or "tool-call"}
        case Opaque(format="pydantic-ai"):
            return part.data
        case _:
            drop(dropped, i, f"{part.kind} in an assistant message")
            return None


# --- pydantic-ai objects ------------------------------------------------------------------------------------------


def _adapter() -> Any:
    """pydantic-ai's own (de)serializer of a message list, imported on first use."""
    try:
        from pydantic_ai.messages import ModelMessagesTypeAdapter
    except ImportError as exc:
        raise MissingDependencyError("pydantic-ai-slim", "pydantic-ai") from exc
    return ModelMessagesTypeAdapter


def load_messages(messages: Sequence[ModelMessage]) -> tuple[Message, ...]:
    """Canonical messages of pydantic-ai `ModelRequest` / `ModelResponse` objects (through their JSON)."""
    return load(_adapter().dump_python(list(messages), mode="json")).messages


def dump_messages(messages: Sequence[Message], dropped: list[Dropped] | None = None) -> list[ModelMessage]:
    """pydantic-ai message objects of canonical messages (what pydantic-ai cannot express goes to `dropped`)."""
    return cast("list[ModelMessage]", _adapter().validate_python(dump(messages, None, dropped)))
