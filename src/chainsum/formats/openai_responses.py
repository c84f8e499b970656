"""OpenAI Responses input items: ``[item, ...]`` or a request ``{"input": [...] | "text", ...}``.

The Responses API has no assistant *message*: a model turn is a run of output items (reasoning, message,
function call, web search call, ...). chainsum's chain needs one assistant message per turn, so consecutive
assistant-side items are grouped into one canonical assistant `Message`, each part remembering its item so the
dump writes the same items back:

- an assistant ``message`` item → one part per content part: ``output_text`` (annotations and logprobs kept as
  fields) and ``refusal`` → `Text`, any other content part → `Opaque`; an item with no content at all → `Opaque`;
- ``function_call`` → `ToolCall`; ``custom_tool_call`` → `ToolCall` whose arguments are the free-form ``input``;
- ``reasoning`` → `Reasoning`: the summary texts joined by a blank line as its text, ``encrypted_content`` as its
  data (the raw ``content`` stays a field);
- any other item (``web_search_call``, ``computer_call`` and its output, ``item_reference``, MCP items, ...) →
  `Opaque`, verbatim, in the assistant turn beside the call it belongs to; such an item with a ``system`` or
  ``developer`` role (Codex's ``additional_tools``) → a system message holding it (hint ``opaque``), since it
  instructs the model and is kept like the system prompt.

``function_call_output`` / ``custom_tool_call_output`` items become ``tool`` messages with one `ToolResult`;
``user``, ``system`` and ``developer`` message items (typed or the "easy" ``{role, content}`` form) one message
each, with the item id as `Message.id`.

Layout hints in ``extras["openai-responses"]`` besides the shared ``fields``/``keep``/``absent``:

- ``item`` on the first part of an assistant-side item (its presence starts a new item on dump): the item's
  keys that are neither canonical nor a content part's (``type``, ``id``, ``status``, and for message items any
  unknown key), verbatim. Left out where the default dump writes the item as it was (an easy
  ``{"role": "assistant", "content": "..."}`` that follows no other message item, a call with no id or status);
  always on reasoning, where it also marks the reasoning as OpenAI's own. On user/system/tool messages: ``type``
  and ``status`` only (the id is `Message.id`, unknown keys are ``fields``).
- ``content``: ``"string"`` or ``"list"``, the shape of a message's content when it is not the default (a string
  for a single plain `Text`, else a list); on an assistant part it is the shape of its item's content.
- ``content_part``: on an `Opaque`, that it is a content part of a message item rather than an item;
- ``empty``: an ``input_image``/``input_file`` part with nothing in it (one from elsewhere is dropped instead);
- ``type``: a `Text`'s part type when it is not the role's default (``input_text`` for input roles,
  ``output_text`` for the assistant), a call's ``"custom"``; ``role``: ``"developer"``; ``summary``: the
  character lengths of the summary entries of a reasoning item with more than one.

Reasoning, `Opaque` items and item ids only mean something to OpenAI, so `Reasoning` from another format is
reported as dropped rather than sent as an item it could never verify.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..messages import File, Image, Message, Opaque, Part, Reasoning, ResultPart, Role, Text, ToolCall, ToolResult
from ._base import Conversation, Dropped, drop, native, report_foreign
from ._openai_common import (
    RESPONSES,
    apply_layout,
    document,
    envelope_of,
    fail,
    is_custom,
    pack,
    unknown_keys,
    want_list,
    want_opt_str,
    want_str,
    wrong_type,
)
from ._openai_responses_parts import content_value, default_shape, dump_part, load_content, load_result_part

__all__ = ["NAME", "dump", "load", "sniff"]

NAME = RESPONSES

_INPUT_ROLES: dict[str, Role] = {"user": "user", "system": "system", "developer": "system"}
_MESSAGE_KEYS = frozenset({"type", "role", "content", "id", "status"})
_INSTRUCTION_ROLES = frozenset({"system", "developer"})
_CALL_KEYS = frozenset({"type", "call_id", "name", "arguments", "input", "id", "status"})
_OUTPUT_KEYS = frozenset({"type", "call_id", "output", "id", "status"})
_REASONING_KEYS = frozenset({"type", "id", "status", "summary", "encrypted_content"})
_SUMMARY_KEYS = frozenset({"type", "text"})
_SUMMARY_SEP = "\n\n"
_EASY_KEYS = frozenset({"role", "content"})
_EASY_ROLES: dict[str, Role] = {"user": "user", "system": "system"}
_BARE_OUTPUT_KEYS = frozenset({"type", "call_id", "output"})
_PLAIN_CALL_KEYS = frozenset({"type", "call_id", "name", "arguments", "id", "status"})
_ABSENT: Any = object()
_FOREIGN_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call", "refusal", "name", "parts", "turn_idx"})
_PART_TYPES = frozenset({"input_text", "output_text", "input_image", "input_file", "input_audio", "refusal"})
_ITEM_TYPES = frozenset(
    "message function_call function_call_output custom_tool_call custom_tool_call_output reasoning item_reference"
    " computer_call_output local_shell_call_output shell_call_output apply_patch_call_output mcp_approval_response"
    " mcp_list_tools compaction".split()
)
"""Item types besides the ``*_call`` and ``mcp_*`` families, for detection (loading takes any type)."""


# --- detection -------------------------------------------------------------------------------------------------


def sniff(data: Any) -> int:
    """2 when Responses item types or part types appear (or a request's ``input``), 1 for easy messages only,
    0 on any contradiction (Chat Completions keys, a ``tool`` role, another format's part types)."""
    score = 1
    if isinstance(data, dict):
        doc = cast(dict[str, Any], data)
        if "messages" in doc or "contents" in doc or "input" not in doc:
            return 0
        items = doc["input"]
        if isinstance(items, str):
            return 2
        score = 2
    else:
        items = data
    if not isinstance(items, list):
        return 0
    for item in cast(list[Any], items):
        s = _sniff_item(item)
        if s == 0:
            return 0
        score = max(score, s)
    return score


def _sniff_item(item: Any) -> int:
    if not isinstance(item, dict):
        return 0
    it = cast(dict[str, Any], item)
    kind = it.get("type", "message")
    if kind != "message":
        if not isinstance(kind, str):
            return 0
        known = kind in _ITEM_TYPES or kind.endswith("_call") or kind.startswith("mcp_")
        return 2 if known else 0
    if it.get("role") not in ("user", "assistant", "system", "developer") or not it.keys().isdisjoint(_FOREIGN_KEYS):
        return 0
    score = 2 if "type" in it else 1
    content = it.get("content")
    if isinstance(content, list):
        for part in cast(list[Any], content):
            kind = cast(dict[str, Any], part).get("type") if isinstance(part, dict) else None
            if kind not in _PART_TYPES:
                return 0
            if kind != "refusal":
                score = 2
    elif not isinstance(content, str):
        return 0
    return score


# --- load ------------------------------------------------------------------------------------------------------
#
# On the hot path: the common item shapes (easy messages with string content, bare function calls and their
# string outputs) take a few type checks and carry no hints at all; everything else goes through the general
# readers below (content parts: `_openai_responses_parts`).


def load(data: Any) -> Conversation:
    """Read an item list or a request object (``input`` as items or a string); the rest is the envelope."""
    if isinstance(data, dict):
        doc = cast("dict[str, Any]", data)
        envelope = envelope_of(doc, "input")
        raw = doc.get("input")
        if isinstance(raw, str):
            envelope["input"] = "string"
            return Conversation((Message(role="user", parts=(Text(text=raw),)),), NAME, envelope)
        items, prefix = want_list(raw, "input", NAME), "input"
    elif isinstance(data, list):
        items, envelope, prefix = cast("list[Any]", data), {}, ""
    else:
        fail(f"expected a list of items or an object with input, got {type(data).__name__}", "", NAME)
    messages: list[Message] = []
    turn: list[Part] = []
    for j, raw_item in enumerate(items):
        item: dict[str, Any] = raw_item
        if not isinstance(raw_item, dict):
            wrong_type(raw_item, "an object", f"{prefix}[{j}]", NAME)
        kind = item.get("type", "message")
        message: Message
        if kind == "message":
            role = item.get("role")
            content = item.get("content")
            easy = isinstance(content, str) and content != "" and item.keys() <= _EASY_KEYS
            if role == "assistant":
                if easy and (not turn or not _in_message_item(turn)):
                    turn.append(Text(text=cast(str, content)))  # the default form needs no hint
                else:
                    turn.extend(_load_output_message(item, f"{prefix}[{j}]"))
                continue
            if easy and isinstance(role, str) and role in _EASY_ROLES:
                message = Message(role=_EASY_ROLES[role], parts=(Text(text=cast(str, content)),))
            else:
                message = _load_input_message(item, f"{prefix}[{j}]")
        elif kind == "function_call" or kind == "custom_tool_call":
            call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
            plain = kind == "function_call" and item.keys() <= _PLAIN_CALL_KEYS
            if plain and isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, str):
                if len(item) == 4:
                    turn.append(ToolCall(id=call_id, name=name, arguments=arguments))
                else:
                    extras = {NAME: {"item": _item_hint(item)}}
                    turn.append(ToolCall(id=call_id, name=name, arguments=arguments, extras=extras))
            else:
                turn.append(_load_call(item, f"{prefix}[{j}]", kind))
            continue
        elif kind == "reasoning":
            turn.append(_load_reasoning(item, f"{prefix}[{j}]"))
            continue
        elif kind == "function_call_output" or kind == "custom_tool_call_output":
            call_id, output = item.get("call_id"), item.get("output")
            bare = kind == "function_call_output" and item.keys() <= _BARE_OUTPUT_KEYS
            if bare and isinstance(call_id, str) and isinstance(output, str):
                message = Message(role="tool", parts=(ToolResult(call_id=call_id, content=output),))
            else:
                message = _load_call_output(item, f"{prefix}[{j}]", kind)
        elif isinstance(kind, str) and item.get("role") in _INSTRUCTION_ROLES:
            # an item of a kind chainsum does not know, given with the role of instructions (Codex's
            # ``additional_tools``: tool definitions as the first input item): a system message that holds it
            # verbatim, so it is kept as the system prompt is, never summarized nor moved
            message = Message(role="system", parts=(Opaque(format=NAME, data=item),), extras={NAME: {"opaque": True}})
        elif isinstance(kind, str):
            turn.append(Opaque(format=NAME, data=item))
            continue
        else:
            wrong_type(kind, "a string", f"{prefix}[{j}].type", NAME)
        if turn:
            messages.append(Message(role="assistant", parts=tuple(turn)))
            turn = []
        messages.append(message)
    if turn:
        messages.append(Message(role="assistant", parts=tuple(turn)))
    return Conversation(tuple(messages), NAME, envelope)


def _in_message_item(turn: list[Part]) -> bool:
    """Whether the turn so far ends inside a message item: a following hint-less part would be merged into it."""
    if not turn:
        return False
    last = turn[-1]
    return type(last) is Text or (type(last) is Opaque and bool(native(last.extras, NAME).get("content_part")))


def _item_hint(item: dict[str, Any]) -> dict[str, Any]:
    """The ``id`` and ``status`` of an item, those it has."""
    hint: dict[str, Any] = {}
    if "id" in item:
        hint["id"] = item["id"]
    if "status" in item:
        hint["status"] = item["status"]
    return hint


def _load_input_message(item: dict[str, Any], where: str) -> Message:
    role = item.get("role")
    if not isinstance(role, str) or role not in _INPUT_ROLES:
        fail(f"unknown role {role!r} (expected user, assistant, system or developer)", f"{where}.role", NAME)
    hints: dict[str, Any] = {}
    shape, parts = load_content(item, where, output=False)
    if shape != default_shape(parts):
        hints["content"] = shape
    if item.get("id", 0) is None:
        hints["keep"] = {"id": None}
    if role == "developer":
        hints["role"] = "developer"
    envelope = {k: item[k] for k in ("type", "status") if k in item}
    if envelope:
        hints["item"] = envelope
    return Message(
        role=_INPUT_ROLES[role],
        parts=tuple(parts),
        id=want_opt_str(item.get("id"), where, NAME, "id"),
        extras=pack(NAME, unknown_keys(item, _MESSAGE_KEYS), hints),
    )


def _load_output_message(item: dict[str, Any], where: str) -> list[Part]:
    """The parts of an assistant message item; the first carries the item's own keys so dump can rebuild it
    (and, by being there, starts a new item rather than continuing the one before)."""
    lead: dict[str, Any] = {"item": {k: v for k, v in item.items() if k != "role" and k != "content"}}
    if isinstance(item.get("content"), str):
        lead["content"] = "string"
    parts = load_content(item, where, output=True, lead=lead)[1]
    return parts or [Opaque(format=NAME, data=item)]


def _load_call(item: dict[str, Any], where: str, kind: str) -> ToolCall:
    call_id = want_str(item.get("call_id"), where, NAME, "call_id")
    name = want_str(item.get("name"), where, NAME, "name")
    hints: dict[str, Any] = {}
    envelope = _item_hint(item)
    if envelope:
        hints["item"] = envelope
    fields = unknown_keys(item, _CALL_KEYS) or {}
    if kind == "custom_tool_call":
        hints["type"] = "custom"
        arguments = want_str(item.get("input"), where, NAME, "input")
        if "arguments" in item:
            fields["arguments"] = item["arguments"]
    else:
        arguments = want_str(item.get("arguments"), where, NAME, "arguments")
        if "input" in item:
            fields["input"] = item["input"]
    if not hints and not fields:
        return ToolCall(id=call_id, name=name, arguments=arguments)
    return ToolCall(id=call_id, name=name, arguments=arguments, extras=pack(NAME, fields, hints))


def _load_reasoning(item: dict[str, Any], where: str) -> Reasoning:
    hints: dict[str, Any] = {"item": _item_hint(item)}  # always there: it marks the reasoning as OpenAI's own
    fields = {k: v for k, v in item.items() if k not in _REASONING_KEYS} if not item.keys() <= _REASONING_KEYS else {}
    summary = item.get("summary", _ABSENT)
    texts: list[str] = []
    if isinstance(summary, list):
        for entry in cast("list[Any]", summary):
            e = cast("dict[str, Any]", entry)
            if isinstance(entry, dict) and e.keys() == _SUMMARY_KEYS and e["type"] == "summary_text":
                text = e["text"]
                if isinstance(text, str):
                    texts.append(text)
                    continue
            texts = []
            fields["summary"] = summary  # an unusual summary is kept whole; the text then stays empty
            break
    elif summary is _ABSENT:
        hints["absent"] = ["summary"]
    else:
        wrong_type(summary, "a list", f"{where}.summary", NAME)
    if len(texts) > 1 or texts == [""]:
        hints["summary"] = [len(t) for t in texts]
    encrypted = item.get("encrypted_content")
    if encrypted is None and "encrypted_content" in item:
        hints["keep"] = {"encrypted_content": None}
    elif encrypted is not None and not isinstance(encrypted, str):
        wrong_type(encrypted, "a string or null", f"{where}.encrypted_content", NAME)
    if fields:
        hints["fields"] = fields
    return Reasoning(text=_SUMMARY_SEP.join(texts), data=encrypted, extras={NAME: hints})


def _load_call_output(item: dict[str, Any], where: str, kind: str) -> Message:
    call_id = want_str(item.get("call_id"), where, NAME, "call_id")
    output = item.get("output")
    content: str | tuple[ResultPart, ...]
    if isinstance(output, str):
        content = output
    else:
        parts = want_list(output, where, NAME, "output")
        content = tuple([load_result_part(p, f"{where}.output", j) for j, p in enumerate(parts)])
    hints: dict[str, Any] = {}
    if "status" in item:
        hints["item"] = {"status": item["status"]}
    if item.get("id", 0) is None:
        hints["keep"] = {"id": None}
    if kind == "custom_tool_call_output":
        hints["type"] = "custom"
    return Message(
        role="tool",
        parts=(ToolResult(call_id=call_id, content=content),),
        id=want_opt_str(item.get("id"), where, NAME, "id"),
        extras=pack(NAME, unknown_keys(item, _OUTPUT_KEYS), hints),
    )


# --- dump ------------------------------------------------------------------------------------------------------


def dump(
    messages: Sequence[Message],
    envelope: Mapping[str, Any] | None = None,
    dropped: list[Dropped] | None = None,
) -> Any:
    """Write Responses input items; with this format's envelope, the original request object around them."""
    items: list[Any] = []
    for i, m in enumerate(messages):
        _dump_message(m, i, items, dropped)
    report_foreign(messages, NAME, dropped)
    value: Any = items
    only = items[0] if len(items) == 1 else None
    if envelope and envelope.get("input") == "string" and isinstance(only, dict):
        item = cast("dict[str, Any]", only)
        if item.keys() == {"role", "content"} and item["role"] == "user" and isinstance(item["content"], str):
            value = item["content"]  # the request's ``input`` was a bare string; it still is one user text
    return document(envelope, "input", value)


def _dump_message(m: Message, i: int, items: list[Any], dropped: list[Dropped] | None) -> None:
    hints = native(m.extras, NAME)
    results = [p for p in m.parts if isinstance(p, ToolResult)]
    rest = [p for p in m.parts if not isinstance(p, ToolResult)]
    for n, r in enumerate(results):
        first = n == 0 and m.role == "tool"
        items.append(_dump_call_output(r, hints if first else {}, m.id if first else None, i, dropped))
    if m.role == "tool":
        if rest:
            drop(dropped, i, "non-result parts of a tool message (written as a user message after the outputs)")
            items.append(_dump_input_message("user", rest, None, {}, i, dropped))
        elif not results:
            drop(dropped, i, "an empty tool message")
        return
    if m.name is not None:
        drop(dropped, i, f"participant name {m.name!r}")
    if hints.get("opaque") and all(isinstance(p, Opaque) and p.format == NAME for p in rest):
        items.extend(cast(Opaque, p).data for p in rest)  # an item of an unknown kind, as it came
    elif m.role == "assistant":
        _dump_turn(rest, i, items, dropped)
    elif rest or not results:
        items.append(_dump_input_message(m.role, rest, m.id, hints, i, dropped))


def _dump_input_message(
    role: str,
    parts: Sequence[Part],
    msg_id: str | None,
    hints: Mapping[str, Any],
    i: int,
    dropped: list[Dropped] | None,
) -> dict[str, Any]:
    content: list[Part] = []
    for p in parts:
        match p:
            case Text() | Image() | File():
                content.append(p)
            case Opaque() if p.format == NAME:
                content.append(p)
            case Opaque():
                drop(dropped, i, f"{p.format} block with no Responses equivalent")
            case ToolCall():
                drop(dropped, i, f"tool call {p.name!r} made by the {role} role")
            case Reasoning():
                drop(dropped, i, f"reasoning on a {role} message")
            case ToolResult():  # pragma: no cover - split off by the caller
                raise AssertionError("tool results are written as output items")
    envelope = hints.get("item")
    out: dict[str, Any] = dict(cast(dict[str, Any], envelope)) if isinstance(envelope, dict) else {}
    out["role"] = "developer" if role == "system" and hints.get("role") == "developer" else role
    out["content"] = content_value(content, hints.get("content"), "input_text", i, dropped)
    if msg_id is not None:
        out["id"] = msg_id
    return apply_layout(out, hints)


def _dump_turn(parts: Sequence[Part], i: int, items: list[Any], dropped: list[Dropped] | None) -> None:
    """Write an assistant message's parts as output items, regrouping content parts into message items."""
    current: list[Part] = []
    current_hints: dict[str, Any] = {}

    def close() -> None:
        if current:
            items.append(_dump_output_message(current, current_hints, i, dropped))
            current.clear()

    for p in parts:
        ph = native(p.extras, NAME)
        starts = isinstance(ph.get("item"), dict)
        match p:
            case Image() | File():
                drop(dropped, i, f"{p.kind} in an assistant message (Responses output messages hold text)")
            case Opaque() if not ph.get("content_part"):
                close()
                if p.format == NAME:
                    items.append(p.data)
                else:
                    drop(dropped, i, f"{p.format} block with no Responses equivalent")
            case Text() | Opaque():
                if starts or not current:
                    close()
                    current_hints = ph
                current.append(p)
            case ToolCall():
                close()
                if p.reasoning is not None:
                    drop(dropped, i, f"reasoning bound to tool call {p.name!r}")
                items.append(_dump_call(p, ph))
            case Reasoning():
                close()
                if NAME in p.extras:
                    items.append(_dump_reasoning(p, ph))
                else:
                    drop(dropped, i, "reasoning from another provider (Responses only takes back its own)")
            case ToolResult():  # pragma: no cover - split off by the caller
                raise AssertionError("tool results are written as output items")
    close()


def _dump_output_message(
    parts: Sequence[Part], hints: Mapping[str, Any], i: int, dropped: list[Dropped] | None
) -> dict[str, Any]:
    envelope = hints.get("item")
    if isinstance(envelope, dict):
        out: dict[str, Any] = dict(cast(dict[str, Any], envelope))
        shape = hints.get("content", "list")
    else:
        out = {}
        shape = None if default_shape(parts) == "string" else "list"
        if shape == "list":
            out["type"] = "message"
    out["role"] = "assistant"
    out["content"] = content_value(parts, shape, "output_text", i, dropped)
    return out


def _dump_call(p: ToolCall, ph: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any]
    if is_custom(p.extras):
        out = {"type": "custom_tool_call", "call_id": p.id, "name": p.name, "input": p.arguments}
    else:
        out = {"type": "function_call", "call_id": p.id, "name": p.name, "arguments": p.arguments}
    envelope = ph.get("item")
    if isinstance(envelope, dict):
        out.update(cast(dict[str, Any], envelope))
    return apply_layout(out, ph)


def _dump_reasoning(p: Reasoning, ph: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "reasoning"}
    envelope = ph.get("item")
    if isinstance(envelope, dict):
        out.update(cast(dict[str, Any], envelope))
    out["summary"] = _summary(p.text, ph.get("summary"))
    if p.data is not None:
        out["encrypted_content"] = p.data
    return apply_layout(out, ph)


def _summary(text: str, lengths: object) -> list[dict[str, Any]]:
    """Split the joined summary text back into entries, by the stored lengths when they still fit."""
    if isinstance(lengths, list):
        sizes = [n for n in cast(list[Any], lengths) if isinstance(n, int) and n >= 0]
        total = sum(sizes) + len(_SUMMARY_SEP) * (len(sizes) - 1)
        if len(sizes) == len(cast(list[Any], lengths)) and total == len(text):
            texts: list[str] = []
            at = 0
            for n in sizes:
                texts.append(text[at : at + n])
                at += n + len(_SUMMARY_SEP)
            return [{"type": "summary_text", "text": t} for t in texts]
    return [{"type": "summary_text", "text": text}] if text else []


def _dump_call_output(
    r: ToolResult, hints: Mapping[str, Any], msg_id: str | None, i: int, dropped: list[Dropped] | None
) -> dict[str, Any]:
    custom = hints.get("type") == "custom"
    out: dict[str, Any] = {"type": "custom_tool_call_output" if custom else "function_call_output"}
    if r.name is not None:
        drop(dropped, i, f"tool name {r.name!r} on the output of call {r.call_id!r} (outputs carry only the id)")
    out["call_id"] = r.call_id
    if isinstance(r.content, str):
        out["output"] = r.content
    else:
        wire = (dump_part(p, "input_text", i, dropped) for p in r.content)
        out["output"] = [w for w in wire if w is not None]
    if r.is_error:
        drop(dropped, i, f"error flag of the output of call {r.call_id!r}")
    if msg_id is not None:
        out["id"] = msg_id
    envelope = hints.get("item")
    if isinstance(envelope, dict):
        out.update(cast(dict[str, Any], envelope))
    return apply_layout(out, hints)
