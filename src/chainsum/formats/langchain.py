"""LangChain messages: ``langchain_core`` message objects, or their dict form ``[{"type": "human", "data": {...}}]``.

The dict form is what ``langchain_core.messages.messages_to_dict`` writes and ``messages_from_dict`` reads (a
message's ``type`` and its ``model_dump()``), so it is a document like the others: detected, loaded, converted and
written by the CLI. A list of message objects (an agent's ``state["messages"]``) loads too; a conversation loaded
from objects dumps back to objects (``dump(..., objects=True)`` asks for them; that needs ``langchain-core``, the
``chainsum[langchain]`` extra). Reading objects does not import LangChain: a message's fields are its ``__dict__``.

Mapping (wire → canonical):

- ``system`` → ``system``; ``human`` → ``user``; ``ai`` → ``assistant``; ``tool`` → a ``tool`` message holding one
  `ToolResult` (``tool_call_id``, the tool ``name``, ``content``, ``status == "error"`` as ``is_error``);
  ``function`` → the same with call id ``""``; ``chat`` (``ChatMessage(role=...)``) → its role when it is a
  canonical one (``human``/``ai`` too), else ``user``; the ``*MessageChunk`` types like their messages.
- ``content``: a string, or a list of strings and blocks (see `_langchain_blocks`).
- ``AIMessage.tool_calls`` → `ToolCall` parts (``args`` as compact JSON text), after the content unless a
  ``tool_use`` / ``tool_call`` content block copies the call (then the call stands where the block is);
  ``invalid_tool_calls`` → `ToolCall` parts too (their raw ``args`` text), marked, so that the error
  ``ToolMessage`` LangChain answers them with is never an orphan.
- ``id`` → `Message.id`; ``name`` → `Message.name` (the tool's name on a result).

Everything else (``additional_kwargs``, ``response_metadata``, ``usage_metadata``, ``artifact``, a chat message's
``role``, a chunk's ``tool_call_chunks``, keys of subclasses) rides along in ``extras["langchain"]["fields"]`` when it
differs from the default, so ``dump(load(x)) == x``. Layout hints in ``extras["langchain"]``: on a message, ``type``
(the wire type when it is not the role's default), ``content`` (``"list"``: a list that would default to a string),
``absent`` (keys a dict lacked), ``unjsonable`` (fields whose value was not JSON: a tool's ``artifact`` object is
carried as ``{"repr": ..., "class": ...}`` so that the archive can store it, and left out on dump, reported); on a
call, ``block`` (its content block), ``at`` (its index in ``tool_calls``), ``invalid`` (the ``invalid_tool_calls``
entry), ``id`` (``None`` for a call without id), ``absent``; on parts, see `_langchain_blocks`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from ..errors import FormatError, MissingDependencyError
from ..messages import Message, Part, Role, ToolCall, ToolResult
from ._base import Conversation, Dropped, drop, native, report_foreign
from ._langchain_blocks import (
    NAME,
    default_is_string,
    dump_content,
    dump_result_content,
    load_content,
    load_result_content,
    plain_json,
)
from ._openai_common import document, envelope_of
from ._wire import is_list, is_object

__all__ = ["NAME", "dump", "from_object", "from_objects", "load", "sniff", "to_objects"]

_BASE: Final = ("content", "additional_kwargs", "response_metadata", "type", "name", "id")
_AI: Final = (*_BASE, "tool_calls", "invalid_tool_calls", "usage_metadata")
_TOOL: Final = (*_BASE, "tool_call_id", "artifact", "status")
_CHAT: Final = (*_BASE, "role")
_KEYS: Final[dict[str, tuple[str, ...]]] = {
    "system": _BASE,
    "human": _BASE,
    "ai": _AI,
    "tool": _TOOL,
    "chat": _CHAT,
    "function": _BASE,
    "SystemMessageChunk": _BASE,
    "HumanMessageChunk": _BASE,
    "AIMessageChunk": (*_AI, "tool_call_chunks", "chunk_position"),
    "ToolMessageChunk": _TOOL,
    "ChatMessageChunk": _CHAT,
    "FunctionMessageChunk": _BASE,
}
"""Each message type's fields, in ``model_dump()`` order (the dict form writes them all)."""
_DEFAULTS: Final[dict[str, Any]] = {
    "additional_kwargs": {},
    "response_metadata": {},
    "name": None,
    "id": None,
    "tool_calls": [],
    "invalid_tool_calls": [],
    "usage_metadata": None,
    "artifact": None,
    "status": "success",
    "tool_call_chunks": [],
    "chunk_position": None,
}
_MAPPED: Final = frozenset(
    {"content", "type", "name", "id", "tool_calls", "invalid_tool_calls", "tool_call_id", "status"}
)
"""Fields with a canonical place; the others go to ``fields`` when they differ from the default."""
_ROLE: Final[dict[str, Role]] = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
_TYPE_OF: Final[dict[Role, str]] = {"system": "system", "user": "human", "assistant": "ai", "tool": "tool"}
_CHAT_ROLES: Final[dict[str, Role]] = {
    "system": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
}
_CALL_KEYS: Final = frozenset({"name", "args", "id", "type"})
_CLASSES: Final[dict[str, str]] = {
    "system": "SystemMessage",
    "human": "HumanMessage",
    "ai": "AIMessage",
    "tool": "ToolMessage",
    "chat": "ChatMessage",
    "function": "FunctionMessage",
}


def _base_type(kind: str) -> str:
    """``AIMessageChunk`` → ``ai``: the message type a chunk type stands for."""
    if kind.endswith("MessageChunk"):
        return {"System": "system", "Human": "human", "AI": "ai", "Tool": "tool", "Chat": "chat"}.get(
            kind[: -len("MessageChunk")], "function"
        )
    return kind


def _is_object_message(item: object) -> bool:
    """A ``langchain_core`` message object (a pydantic model with a string ``type``), without importing it."""
    return not isinstance(item, dict) and isinstance(getattr(item, "type", None), str) and hasattr(item, "__dict__")


# --- detection ---------------------------------------------------------------------------------------------------


def sniff(data: Any) -> int:
    """2 for a non-empty list (or ``{"messages": [...]}``) of ``{"type", "data"}`` message dicts or message objects,
    0 otherwise: no other format has this shape."""
    items = data.get("messages") if is_object(data) else data
    if not is_list(items) or not items:
        return 0
    for item in items:
        if is_object(item):
            if item.keys() != {"type", "data"} or item["type"] not in _KEYS or not is_object(item["data"]):
                return 0
        elif not (_is_object_message(item) and getattr(item, "type", None) in _KEYS):
            return 0
    return 2


# --- load ------------------------------------------------------------------------------------------------------


def load(data: Any) -> Conversation:
    """Read a list of message dicts or objects, or ``{"messages": [...], ...}`` (the rest is the envelope)."""
    if is_object(data):
        items = data.get("messages")
        if not is_list(items):
            raise FormatError("expected a list of messages", where="messages", format=NAME)
        envelope: dict[str, Any] = envelope_of(data, "messages")
        prefix = "messages"
    elif isinstance(data, list):
        items, envelope, prefix = cast(list[Any], data), {}, ""
    else:
        raise FormatError(f"expected a list of LangChain messages, got {type(data).__name__}", format=NAME)
    messages = tuple([_load_item(item, f"{prefix}[{i}]") for i, item in enumerate(items)])
    if any(_is_object_message(item) for item in items):
        envelope = {**envelope, "objects": True}
    return Conversation(messages, NAME, envelope)


def from_objects(items: Sequence[Any]) -> list[Message]:
    """Canonical messages of LangChain message objects (or their dicts), one for one."""
    return [_load_item(item, f"[{i}]") for i, item in enumerate(items)]


def from_object(item: Any) -> Message:
    """The canonical message of one LangChain message object (or its dict)."""
    return _load_item(item, "")


def _load_item(item: Any, where: str) -> Message:
    if is_object(item):
        kind = item.get("type")
        data = item.get("data")
        if not isinstance(kind, str) or kind not in _KEYS:
            raise FormatError(f"unknown message type {kind!r}", where=f"{where}.type", format=NAME)
        if not is_object(data):
            raise FormatError("expected an object", where=f"{where}.data", format=NAME)
        return load_fields(kind, data, where + ".data", dict_form=True)
    if _is_object_message(item):
        kind = item.type
        if kind not in _KEYS:
            raise FormatError(f"unknown message type {kind!r}", where=f"{where}.type", format=NAME)
        fields: dict[str, Any] = item.__dict__
        extra = getattr(item, "__pydantic_extra__", None)
        if extra:
            fields = {**fields, **extra}
        return load_fields(kind, fields, where, dict_form=False)
    raise FormatError(f"expected a LangChain message, got {type(item).__name__}", where=where, format=NAME)


def _str_or_none(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise FormatError(f"expected a string or null, got {type(value).__name__}", where=where, format=NAME)
    return value


def load_fields(kind: str, d: Mapping[str, Any], where: str, *, dict_form: bool) -> Message:
    """One message from its type and fields (a dict's ``data``, or an object's ``__dict__``)."""
    base = _base_type(kind)
    hints: dict[str, Any] = {}
    fields = {k: v for k, v in d.items() if k not in _MAPPED and (k not in _DEFAULTS or v != _DEFAULTS[k])}
    if d.get("type", kind) != kind:
        fields["type"] = d["type"]
    if dict_form:
        absent = [k for k in _KEYS[kind] if k not in d]
        if absent:
            hints["absent"] = absent
    if fields:
        odd = [k for k, v in fields.items() if not plain_json(v)]
        if odd:
            for k in odd:
                fields[k] = {"repr": repr(fields[k])[:2000], "class": type(fields[k]).__qualname__}
            hints["unjsonable"] = odd
        hints["fields"] = fields
    if kind != _TYPE_OF.get(_ROLE.get(kind, "user"), ""):
        hints["type"] = kind
    msg_id = _str_or_none(d.get("id"), f"{where}.id")
    name = _str_or_none(d.get("name"), f"{where}.name")
    content = d.get("content", "")
    if base in ("tool", "function"):
        return _load_result(base, d, content, name, msg_id, hints, where)
    role: Role
    if base == "chat":
        wire_role = d.get("role")
        role = _CHAT_ROLES.get(wire_role, "user") if isinstance(wire_role, str) else "user"
    else:
        role = _ROLE[base]
    calls = _load_calls(d, where) if base == "ai" else []
    by_id = {c.id: c for c in calls if c.id and not native(c.extras, NAME).get("invalid")} if calls else None
    parts, was_list, placed = load_content(content, f"{where}.content", by_id)
    if was_list and default_is_string(parts):
        hints["content"] = "list"
    if placed:
        parts = _place_calls(parts, calls, placed)
    else:
        parts.extend(calls)
    return Message(role=role, parts=tuple(parts), id=msg_id, name=name, extras={NAME: hints} if hints else {})


def _load_result(
    base: str,
    d: Mapping[str, Any],
    content: Any,
    name: str | None,
    msg_id: str | None,
    hints: dict[str, Any],
    where: str,
) -> Message:
    if base == "tool":
        call_id = d.get("tool_call_id")
        if not isinstance(call_id, str):
            raise FormatError("expected a string tool_call_id", where=f"{where}.tool_call_id", format=NAME)
        status = d.get("status", "success")
        if status not in ("success", "error"):
            raise FormatError(f"unknown status {status!r}", where=f"{where}.status", format=NAME)
    else:
        call_id, status = "", "success"
    result = ToolResult(
        call_id=call_id,
        name=name,
        content=load_result_content(content, f"{where}.content"),
        is_error=status == "error",
    )
    return Message(role="tool", parts=(result,), id=msg_id, extras={NAME: hints} if hints else {})


def _load_calls(d: Mapping[str, Any], where: str) -> list[ToolCall]:
    calls: list[ToolCall] = []
    raw_calls: Any = d.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise FormatError("expected a list", where=f"{where}.tool_calls", format=NAME)
    for j, raw in enumerate(cast(list[Any], raw_calls)):
        if not is_object(raw) or not isinstance(raw.get("name"), str) or not is_object(raw.get("args")):
            raise FormatError("expected {name, args, id}", where=f"{where}.tool_calls[{j}]", format=NAME)
        call_id = _str_or_none(raw.get("id"), f"{where}.tool_calls[{j}].id")
        hints: dict[str, Any] = {}
        if call_id is None:
            hints["id"] = None
        if "type" not in raw:
            hints["absent"] = ["type"]
        extra = {k: v for k, v in raw.items() if k not in _CALL_KEYS}
        if raw.get("type", "tool_call") != "tool_call":
            extra["type"] = raw["type"]
        if extra:
            hints["fields"] = extra
        args = json.dumps(raw["args"], ensure_ascii=False, separators=(",", ":"), default=repr)
        calls.append(
            ToolCall(id=call_id or "", name=raw["name"], arguments=args, extras={NAME: hints} if hints else {})
        )
    raw_invalid: Any = d.get("invalid_tool_calls") or []
    if not isinstance(raw_invalid, list):
        raise FormatError("expected a list", where=f"{where}.invalid_tool_calls", format=NAME)
    for j, raw in enumerate(cast(list[Any], raw_invalid)):
        if not is_object(raw) or not plain_json(raw):
            raise FormatError("expected an object", where=f"{where}.invalid_tool_calls[{j}]", format=NAME)
        call_id, name, args = raw.get("id"), raw.get("name"), raw.get("args")
        calls.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) else "",
                name=name if isinstance(name, str) else "",
                arguments=args if isinstance(args, str) else "",
                extras={NAME: {"invalid": raw}},
            )
        )
    return calls


def _place_calls(parts: list[Part], calls: list[ToolCall], placed: set[str]) -> list[Part]:
    """The content parts with each placed call given its index in ``tool_calls`` (and its own hints), then the
    calls no block placed, in order."""
    index = {c.id: k for k, c in enumerate(calls) if not native(c.extras, NAME).get("invalid")}
    out: list[Part] = []
    for p in parts:
        if isinstance(p, ToolCall) and p.id in placed:
            own = calls[index[p.id]]
            hints = {**native(own.extras, NAME), **native(p.extras, NAME), "at": index[p.id]}
            p = ToolCall(id=own.id, name=own.name, arguments=own.arguments, extras={NAME: hints})
        out.append(p)
    out.extend(c for c in calls if native(c.extras, NAME).get("invalid") or c.id not in placed)
    return out


# --- dump ------------------------------------------------------------------------------------------------------


def dump(
    messages: Sequence[Message],
    envelope: Mapping[str, Any] | None = None,
    dropped: list[Dropped] | None = None,
    *,
    objects: bool | None = None,
) -> Any:
    """Write the dict form (``messages_from_dict`` reads it), or message objects with ``objects=True``; by default
    the form the conversation was loaded in (the dict form for one from another format)."""
    as_objects = bool(envelope and envelope.get("objects")) if objects is None else objects
    out: list[Any] = []
    make = _factory() if as_objects else None
    for i, m in enumerate(messages):
        for kind, data in _dump_message(m, i, dropped):
            out.append(make(kind, data) if make is not None else {"type": kind, "data": data})
    report_foreign(messages, NAME, dropped)
    wrapped = {k: v for k, v in envelope.items() if k != "objects"} if envelope else None
    return document(wrapped, "messages", out)


def to_objects(messages: Sequence[Message], dropped: list[Dropped] | None = None) -> list[Any]:
    """``langchain_core`` message objects for canonical messages (``dump(..., objects=True)`` as a list)."""
    return cast(list[Any], dump(messages, None, dropped, objects=True))


def _factory() -> Any:
    try:
        from langchain_core import messages as lc
    except ImportError as exc:
        raise MissingDependencyError("langchain-core", "langchain") from exc

    classes: dict[str, Any] = {k: getattr(lc, v) for k, v in _CLASSES.items()}

    def make(kind: str, data: dict[str, Any]) -> Any:
        cls = classes.get(kind) or getattr(lc, kind)
        return cls(**{k: v for k, v in data.items() if k != "type"})

    return make


def _fill(kind: str, data: dict[str, Any], hints: Mapping[str, Any]) -> dict[str, Any]:
    """`data` in the type's field order with defaults, the stored fields, and without the keys the input lacked."""
    out: dict[str, Any] = {}
    for key in _KEYS.get(kind, _BASE):
        out[key] = data[key] if key in data else kind if key == "type" else _DEFAULTS.get(key)
    fields = hints.get("fields")
    if is_object(fields):
        odd = hints.get("unjsonable") or ()
        out.update({k: v for k, v in fields.items() if k not in odd})
    for key in hints.get("absent") or ():
        out.pop(key, None)
    return out


def _dump_message(m: Message, i: int, dropped: list[Dropped] | None) -> list[tuple[str, dict[str, Any]]]:
    """One canonical message as one LangChain message, or several: each `ToolResult` is a ToolMessage of its own,
    written first (Anthropic and Gemini keep parallel results in one user turn)."""
    hints = native(m.extras, NAME)
    for key in hints.get("unjsonable") or ():
        drop(dropped, i, f"LangChain field {key!r} (not JSON: only its repr was kept)")
    lost: list[str] = []
    out: list[tuple[str, dict[str, Any]]] = []
    results = [p for p in m.parts if isinstance(p, ToolResult)]
    rest = [p for p in m.parts if not isinstance(p, ToolResult)]
    for n, r in enumerate(results):
        own = hints if m.role == "tool" and n == 0 else {}
        out.append(_dump_result(r, m.id if n == 0 else None, own, lost))
    if m.role == "tool" and not m.parts:
        drop(dropped, i, "an empty tool message")
    if m.role == "tool" and rest:
        drop(dropped, i, "non-result parts of a tool message (written as a human message after the results)")
        m, hints = Message(role="user", parts=tuple(rest)), {}
    if m.role != "tool" and (rest or not results):
        out.append(_dump_plain(m, rest, hints, lost, i, dropped))
    for what in lost:
        drop(dropped, i, what)
    return out


def _dump_result(
    r: ToolResult, msg_id: str | None, hints: Mapping[str, Any], lost: list[str]
) -> tuple[str, dict[str, Any]]:
    kind = hints.get("type") or "tool"
    data: dict[str, Any] = {"content": dump_result_content(r.content, lost), "name": r.name, "id": msg_id}
    if _base_type(kind) == "function":
        if r.is_error:
            lost.append(f"error flag of the result of call {r.call_id!r}")
    else:
        data["tool_call_id"] = r.call_id
        data["status"] = "error" if r.is_error else "success"
    return kind, _fill(kind, data, hints)


def _dump_plain(
    m: Message, parts: Sequence[Part], hints: Mapping[str, Any], lost: list[str], i: int, dropped: list[Dropped] | None
) -> tuple[str, dict[str, Any]]:
    kind = hints.get("type") or _TYPE_OF[m.role]
    base = _base_type(kind)
    calls = [p for p in parts if isinstance(p, ToolCall)]
    if calls and base != "ai":
        drop(dropped, i, f"tool calls made by the {m.role} role")
    content_parts = [p for p in parts if not isinstance(p, ToolCall) or native(p.extras, NAME).get("block") is not None]
    if base != "ai":
        content_parts = [p for p in content_parts if not isinstance(p, ToolCall)]
    as_list = hints.get("content") == "list" or not default_is_string(content_parts)
    data: dict[str, Any] = {"content": dump_content(content_parts, as_list, lost), "name": m.name, "id": m.id}
    if base == "chat" and "role" not in (hints.get("fields") or {}):
        data["role"] = m.role
    if base == "ai":
        data["tool_calls"], data["invalid_tool_calls"] = _dump_calls(calls, lost)
    return kind, _fill(kind, data, hints)


def _dump_calls(calls: list[ToolCall], lost: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    valid: list[tuple[int | None, dict[str, Any]]] = []
    invalid: list[dict[str, Any]] = []
    for c in calls:
        h = native(c.extras, NAME)
        if c.reasoning is not None:
            lost.append(f"reasoning bound to tool call {c.name!r}")
        raw_invalid = h.get("invalid")
        if is_object(raw_invalid):
            invalid.append(raw_invalid)
            continue
        try:
            args: Any = json.loads(c.arguments) if c.arguments.strip() else {}
        except ValueError:
            args = None
        if not isinstance(args, dict):  # LangChain's own answer to arguments that are not a JSON object
            invalid.append(
                {"name": c.name, "args": c.arguments, "id": c.id, "error": None, "type": "invalid_tool_call"}
            )
            continue
        call: dict[str, Any] = {"name": c.name, "args": args, "id": None if "id" in h else c.id, "type": "tool_call"}
        fields = h.get("fields")
        if is_object(fields):
            call.update(fields)
        for key in h.get("absent") or ():
            call.pop(key, None)
        at = h.get("at")
        valid.append((at if isinstance(at, int) else None, call))
    return _ordered(valid), invalid


def _ordered(calls: list[tuple[int | None, dict[str, Any]]]) -> list[dict[str, Any]]:
    """``tool_calls`` in their original order: calls placed by a content block go back to their index, the others
    fill the remaining places in order (parts order when the indexes do not fit)."""
    fixed = {at: call for at, call in calls if at is not None}
    if not fixed:
        return [call for _, call in calls]
    if len(fixed) != sum(at is not None for at, _ in calls) or max(fixed) >= len(calls):
        return [call for _, call in calls]
    free = iter(call for at, call in calls if at is None)
    return [fixed[k] if k in fixed else next(free) for k in range(len(calls))]
