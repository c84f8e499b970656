"""tau2-bench simulation messages: ``simulations[].messages`` of a tau2 results file (or one simulation object).

tau2's messages are close to OpenAI's but not the same: a tool call is ``{id, name, arguments: <object>,
requestor}``, a tool result ``{role: "tool", id, content, requestor, error}``, and the simulated *user* can call
tools too (the telecom domain: the customer runs checks on their phone). Mapping:

- ``system``/``user``/``assistant`` → the same role; ``content`` (a string or null) → one `Text` (none when null);
- ``tool_calls`` → `ToolCall` parts of that message, whoever made them: a user's calls stay on the user message
  (lossless; the chain and rules layers decide what to do with them). ``arguments`` becomes compact JSON text
  (``ensure_ascii=False``) and is parsed back on dump, so the object round-trips;
- ``tool`` → a ``tool`` message with one `ToolResult` (``id`` → call id, ``error`` → ``is_error``); a
  ``MultiToolMessage`` (``{role: "tool", tool_messages: [...]}``) → one ``tool`` message with several results;
- everything else (``turn_idx``, ``timestamp``, ``cost``, ``usage``, ``raw_data``, ``errors``, ...) is kept as
  fields, by reference.

Layout hints in ``extras["tau2"]`` besides the shared ``fields``/``keep``/``absent``: ``content`` (``"string"``
when an empty string was sent, ``"null"`` for a null tool output), ``requestor`` (on a call or result, when it is
not the default: the message's role for a call, ``assistant`` for a result), ``multi`` (a ``MultiToolMessage``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..messages import File, Image, Message, Opaque, Part, Reasoning, Role, Text, ToolCall, ToolResult
from ._base import Conversation, Dropped, drop, native, report_foreign
from ._openai_common import (
    apply_layout,
    document,
    fail,
    message_list,
    pack,
    unknown_keys,
    want_list,
    want_mapping,
    want_opt_str,
    want_str,
    wrong_type,
)

__all__ = ["NAME", "dump", "load", "sniff"]

NAME = "tau2"

_ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")
_PARTICIPANT_KEYS = frozenset({"role", "content", "tool_calls"})
_SYSTEM_KEYS = frozenset({"role", "content"})
_TOOL_KEYS = frozenset({"role", "id", "content", "requestor", "error"})
_MULTI_KEYS = frozenset({"role", "tool_messages"})
_CALL_KEYS = frozenset({"id", "name", "arguments", "requestor"})
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""Built once: `json.dumps` with options builds a new encoder per call, and every tool call is encoded."""


# --- detection -------------------------------------------------------------------------------------------------


def sniff(data: Any) -> int:
    """2 when tau2's own keys (``turn_idx``, ``requestor``) appear and nothing contradicts them, else 0."""
    items = cast(dict[str, Any], data).get("messages") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return 0
    score = 0
    for message in cast(list[Any], items):
        if not isinstance(message, dict):
            return 0
        m = cast(dict[str, Any], message)
        if m.get("role") not in _ROLES or "tool_call_id" in m or "parts" in m or "type" in m:
            return 0
        if "turn_idx" in m or "requestor" in m or "tool_messages" in m:
            score = 2
        calls = m.get("tool_calls")
        if isinstance(calls, list):
            for call in cast(list[Any], calls):
                if not isinstance(call, dict) or "function" in call:
                    return 0
                if "requestor" in call:
                    score = 2
    return score


# --- load ------------------------------------------------------------------------------------------------------
#
# On the hot path: a path string such as ``messages[3].tool_calls[0].id`` is only built for an error, and the
# common shapes (a tool message with every key, a call made by its message's role) take a few type checks.

_ABSENT: Any = object()


def load(data: Any) -> Conversation:
    """Read a message list or a simulation object (its other keys are kept in the envelope)."""
    items, envelope, prefix = message_list(data, NAME, "a simulation object")
    messages = tuple([_load_message(m, prefix, i) for i, m in enumerate(items)])
    return Conversation(messages, NAME, envelope)


def _load_message(raw: Any, prefix: str, i: int) -> Message:
    m: dict[str, Any] = raw
    if not isinstance(raw, dict):
        wrong_type(raw, "an object", f"{prefix}[{i}]", NAME)
    role = m.get("role")
    if role == "tool":
        return _load_tool_message(m, prefix, i)
    if role != "assistant" and role != "user" and role != "system":
        fail(f"unknown role {role!r} (expected one of {', '.join(_ROLES)})", f"{prefix}[{i}].role", NAME)
    hints: dict[str, Any] = {}
    absent: list[str] = []
    parts: list[Part]
    content = m.get("content", _ABSENT)
    if isinstance(content, str):
        parts = [Text(text=content)] if content else []
        if not content:
            hints["content"] = "string"
    elif content is None:
        parts = []
    elif content is _ABSENT:
        parts = []
        absent.append("content")
    else:
        wrong_type(content, "a string or null", f"{prefix}[{i}].content", NAME)
    known = _SYSTEM_KEYS
    if role != "system":
        known = _PARTICIPANT_KEYS
        calls = m.get("tool_calls", _ABSENT)
        if isinstance(calls, list) and calls:
            where = f"{prefix}[{i}].tool_calls"
            parts.extend([_load_call(c, role, where, j) for j, c in enumerate(cast("list[Any]", calls))])
        elif calls == []:
            hints["keep"] = {"tool_calls": []}
        elif calls is _ABSENT:
            absent.append("tool_calls")
        elif calls is not None:
            wrong_type(m["tool_calls"], "a list or null", f"{prefix}[{i}].tool_calls", NAME)
    if absent:
        hints["absent"] = absent
    if not m.keys() <= known:
        hints["fields"] = {k: v for k, v in m.items() if k not in known}
    return Message(role=role, parts=tuple(parts), extras={NAME: hints} if hints else {})


def _load_call(raw: Any, role: str, prefix: str, j: int) -> ToolCall:
    call: dict[str, Any] = raw
    if isinstance(raw, dict) and call.keys() == _CALL_KEYS:  # the common case: every key, no unknown one
        call_id, name, arguments = call["id"], call["name"], call["arguments"]
        if isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, dict):
            if call["requestor"] == role:
                text = _encode(cast("dict[str, Any]", arguments), prefix, j)
                return ToolCall(id=call_id, name=name, arguments=text)
    where = f"{prefix}[{j}]"
    call = want_mapping(cast(object, raw), where, NAME)
    hints: dict[str, Any] = {}
    absent = [k for k in ("id", "requestor") if k not in call]
    if absent:
        hints["absent"] = absent
    call_id = want_str(call.get("id", ""), where, NAME, "id")
    name = want_str(call.get("name"), where, NAME, "name")
    requestor = call.get("requestor", role)
    if requestor != role:
        hints["requestor"] = want_str(requestor, where, NAME, "requestor")
    text = _encode(want_mapping(call.get("arguments"), where, NAME, "arguments"), prefix, j)
    return ToolCall(id=call_id, name=name, arguments=text, extras=pack(NAME, unknown_keys(call, _CALL_KEYS), hints))


def _encode(arguments: dict[str, Any], prefix: str, j: int) -> str:
    try:
        return _ENCODER.encode(arguments)
    except (TypeError, ValueError, RecursionError) as exc:
        where = f"{prefix}[{j}].arguments"
        fail(f"arguments are not serializable as JSON ({type(exc).__name__}: {exc})", where, NAME)


def _load_tool_message(m: dict[str, Any], prefix: str, i: int) -> Message:
    if "tool_messages" in m:
        return _load_multi(m, f"{prefix}[{i}]")
    call_id, content, error = m.get("id"), m.get("content"), m.get("error")
    if (
        isinstance(call_id, str)
        and isinstance(content, str)
        and m.get("requestor") == "assistant"
        and (error is True or error is False)
    ):
        result = ToolResult(call_id=call_id, content=content, is_error=error is True)  # the common case
        hints: dict[str, Any] = {}
    else:
        result, hints = _load_result(m, f"{prefix}[{i}]")
    if not m.keys() <= _TOOL_KEYS:
        hints["fields"] = {k: v for k, v in m.items() if k not in _TOOL_KEYS}
    return Message(role="tool", parts=(result,), extras={NAME: hints} if hints else {})


def _load_result(m: dict[str, Any], where: str) -> tuple[ToolResult, dict[str, Any]]:
    """A tool message's result and the message-level hints."""
    hints: dict[str, Any] = {}
    call_id = want_str(m.get("id"), where, NAME, "id")
    content = want_opt_str(m.get("content"), where, NAME, "content")
    if content is None:
        hints["content"] = "null"
    requestor = m.get("requestor", "assistant")
    if requestor != "assistant":
        hints["requestor"] = want_str(requestor, where, NAME, "requestor")
    error = m.get("error", False)
    if not isinstance(error, bool):
        fail(f"expected a boolean, got {type(error).__name__}", f"{where}.error", NAME)
    absent = [k for k in ("content", "requestor", "error") if k not in m]
    if absent:
        hints["absent"] = absent
    return ToolResult(call_id=call_id, content=content or "", is_error=error), hints


def _load_multi(m: dict[str, Any], where: str) -> Message:
    items = want_list(m["tool_messages"], where, NAME, "tool_messages")
    results: list[ToolResult] = []
    for j, raw in enumerate(items):
        sub_where = f"{where}.tool_messages[{j}]"
        sub = want_mapping(raw, sub_where, NAME)
        result, hints = _load_result(sub, sub_where)
        extras = pack(NAME, unknown_keys(sub, _TOOL_KEYS), hints)
        if "role" not in sub:
            extras = pack(NAME, unknown_keys(sub, _TOOL_KEYS), {**hints, "absent": [*hints.get("absent", []), "role"]})
        results.append(
            ToolResult(call_id=result.call_id, content=result.content, is_error=result.is_error, extras=extras)
        )
    return Message(role="tool", parts=tuple(results), extras=pack(NAME, unknown_keys(m, _MULTI_KEYS), {"multi": True}))


# --- dump ------------------------------------------------------------------------------------------------------


def dump(
    messages: Sequence[Message],
    envelope: Mapping[str, Any] | None = None,
    dropped: list[Dropped] | None = None,
) -> Any:
    """Write tau2 messages; with this format's envelope, the original simulation object around them."""
    out: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        _dump_message(m, i, out, dropped)
    report_foreign(messages, NAME, dropped)
    return document(envelope, "messages", out)


def _dump_message(m: Message, i: int, out: list[dict[str, Any]], dropped: list[Dropped] | None) -> None:
    hints = native(m.extras, NAME)
    results = [p for p in m.parts if isinstance(p, ToolResult)]
    rest = [p for p in m.parts if not isinstance(p, ToolResult)]
    if m.name is not None:
        drop(dropped, i, f"participant name {m.name!r}")
    if m.role == "tool":
        if hints.get("multi"):
            subs = [_dump_result(r, native(r.extras, NAME), i, dropped) for r in results]
            out.append(apply_layout({"role": "tool", "tool_messages": subs}, hints))
        else:
            out.extend(_dump_result(r, hints if n == 0 else {}, i, dropped) for n, r in enumerate(results))
        if rest:
            drop(dropped, i, "non-result parts of a tool message (written as a user message after the results)")
            out.append(_dump_plain("user", rest, {}, i, dropped))
        elif not results and not hints.get("multi"):
            drop(dropped, i, "an empty tool message")
        return
    out.extend(_dump_result(r, {}, i, dropped) for r in results)
    if rest or not results:
        out.append(_dump_plain(m.role, rest, hints, i, dropped))


def _dump_plain(
    role: str, parts: Sequence[Part], hints: Mapping[str, Any], i: int, dropped: list[Dropped] | None
) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for p in parts:
        match p:
            case Text():
                texts.append(p.text)
                if p.reasoning is not None:
                    drop(dropped, i, "reasoning attached to text")
            case ToolCall():
                if role == "system":
                    drop(dropped, i, f"tool call {p.name!r} on a system message")
                else:
                    calls.append(_dump_call(p, role, i, dropped))
            case Reasoning():
                drop(dropped, i, "reasoning (tau2 messages have no reasoning input)")
            case Image() | File():
                drop(dropped, i, f"{p.kind} (tau2 messages are text only)")
            case Opaque():
                drop(dropped, i, f"{p.format} block with no tau2 equivalent")
            case ToolResult():  # pragma: no cover - split off by the caller
                raise AssertionError("tool results are written as tool messages")
    content: str | None = "".join(texts) if texts else ("" if hints.get("content") == "string" else None)
    out: dict[str, Any] = {"role": role, "content": content}
    if role != "system":
        out["tool_calls"] = calls or None
    return apply_layout(out, hints)


def _dump_call(p: ToolCall, role: str, i: int, dropped: list[Dropped] | None) -> dict[str, Any]:
    ph = native(p.extras, NAME)
    try:
        arguments = json.loads(p.arguments)
    except (ValueError, RecursionError):
        arguments = None
    if not isinstance(arguments, dict):
        drop(dropped, i, f"arguments of tool call {p.name!r} (not a JSON object; written as {{}})")
        arguments = {}
    if p.reasoning is not None:
        drop(dropped, i, f"reasoning bound to tool call {p.name!r}")
    out: dict[str, Any] = {"id": p.id, "name": p.name, "arguments": arguments, "requestor": ph.get("requestor") or role}
    return apply_layout(out, ph)


def _dump_result(r: ToolResult, hints: Mapping[str, Any], i: int, dropped: list[Dropped] | None) -> dict[str, Any]:
    if isinstance(r.content, str):
        content: str | None = r.content
    else:
        if any(not isinstance(p, Text) for p in r.content):
            drop(dropped, i, f"non-text content of the result of call {r.call_id!r}")
        content = r.text
    if hints.get("content") == "null" and not content:
        content = None
    out: dict[str, Any] = {
        "id": r.call_id,
        "role": "tool",
        "content": content,
        "requestor": hints.get("requestor") or "assistant",
        "error": r.is_error,
    }
    return apply_layout(out, hints)
