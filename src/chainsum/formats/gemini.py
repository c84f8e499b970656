"""Gemini ``generateContent`` contents: a bare ``contents`` list, or a request ``{"contents": [...], ...}``.

Mapping (the REST ``Content``/``Part`` objects; the Python SDK's snake_case spelling is read too):

- ``systemInstruction`` (or ``system_instruction``; a Content, or a plain string as the SDK accepts) → a
  ``system`` message first. Roles ``user`` → user, ``model`` → assistant, the legacy ``function`` → user side.
- A user turn holding ``functionResponse`` parts splits into ``tool`` + ``user`` messages (`_split`).
- Parts: ``text`` → `Text`; ``thought: true`` text → `Reasoning`; ``thoughtSignature`` rides on the part as a
  `Reasoning` (``ToolCall.reasoning``, ``Text.reasoning``; a part holding only a signature → `Reasoning`);
  ``functionCall`` → `ToolCall` (arguments = compact JSON of ``args``, parsed back on dump, so the object comes
  back equal); ``functionResponse`` → `ToolResult` (content = compact JSON of ``response``, parsed back on
  dump, except that a response holding only ``output``, ``result`` or ``error`` text is that text: the common
  case is then neither re-serialized nor escaped, and reads as the tool's output in any format; ``is_error``
  when the response holds ``error`` and no ``output``, Gemini's convention); ``inlineData`` →
  `Image` for ``image/*``, else `File`; ``fileData`` → the same with a URL; ``executableCode``,
  ``codeExecutionResult``, ``toolCall``, ``toolResponse`` and parts with no known data → `Opaque`.
  ``videoMetadata``, ``partMetadata`` and ``mediaResolution`` describe the part they sit on, so they stay on it as
  unknown fields (not an `Opaque`: the file is still a file the model reads).

Layout hints in ``extras["gemini"]`` (besides the turn hints of `_split` and ``fields``, the unknown keys
verbatim, nested under their container's key): ``snake`` (the part was written in snake_case), ``nulls`` (keys
present with a null value, as the SDK's ``model_dump()`` writes them; ``container.key`` for inner ones),
``thought`` (an explicit ``thought: false``), ``form: "signature"`` (a part holding only a signature),
``empty_id`` (an ``id: ""`` that was written), ``absent`` (``args``/``response`` left out), ``key`` (the
response key of a text result when not ``output``/``error``), ``b64`` (base64 text that re-encoding would not
reproduce), ``file`` (a ``fileData`` whose URI is a data URL); on messages ``role``/``no_role``/``shape`` (a
role other than the usual one, a role left out, a system instruction given as a string).

Writing a history from another format: consecutive tool/user messages become one user turn, results first, and
later system messages user text (`_split`); a result with no tool name takes its call's (Gemini matches by name);
text results go out as ``{"output": text}`` (``{"error": text}`` when ``is_error``), JSON-object text as the
object; unsigned reasoning as ``thought`` parts. Encrypted reasoning data, media inside tool results, participant
names and other formats' opaque blocks cannot be written and are reported in ``dropped``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, assert_never, cast

from ..errors import FormatError
from ..messages import File, Image, Message, Opaque, Part, Reasoning, Text, ToolCall, ToolResult
from ._base import Conversation, Dropped, drop, native, report_foreign, require_list
from ._gemini_parts import NAME, fail, read_parts, wire_key, wrap_key
from ._split import (
    INVALID_JSON,
    Plan,
    Turn,
    encode_b64,
    merge_fields,
    parse_data_url,
    parse_json,
    plan_turns,
    split_turn,
    wrap_document,
)

__all__ = ["NAME", "dump", "load", "sniff"]

_USER_SIDE = ("user", "function")


def sniff(data: Any) -> int:
    """2 for a ``{"contents": [...]}`` request or contents with ``parts`` lists, 0 on any other shape."""
    if isinstance(data, dict):
        contents = cast(dict[str, Any], data).get("contents")
        return 2 if isinstance(contents, list) and _contents_score(cast(list[Any], contents)) else 0
    if isinstance(data, list):
        return _contents_score(cast(list[Any], data))
    return 0


def _contents_score(items: list[Any]) -> int:
    score = 1
    for item in items:
        if not isinstance(item, dict) or "parts" not in item:
            return 0
        content = cast(dict[str, Any], item)
        if not content.keys().isdisjoint(("content", "type", "kind")):
            return 0
        if content.get("role") not in (None, "user", "model", "function"):
            return 0
        parts = content["parts"]
        if parts is None:
            continue
        if not isinstance(parts, list):
            return 0
        first = cast(list[Any], parts)[:1]
        if first and (not isinstance(first[0], dict) or "type" in first[0] or "part_kind" in first[0]):
            return 0
        score = 2
    return score


# --- load -------------------------------------------------------------------------------------------------------
#
# Contents and the system instruction are read here; their parts in `_gemini_parts`.


def load(data: Any) -> Conversation:
    """Read a contents list or a request object; the request's other keys become the envelope."""
    messages: list[Message] = []
    if isinstance(data, list):
        envelope: dict[str, Any] = {"shape": "list"}
        contents = cast(list[Any], data)
    elif isinstance(data, dict):
        doc = cast(dict[str, Any], data)
        if "contents" not in doc:
            raise fail("missing contents (a request holds its turns there)", "contents")
        contents = require_list(doc["contents"], "contents", NAME)
        key = next((k for k in ("systemInstruction", "system_instruction") if k in doc), None)
        system = doc.get(key) if key else None
        if key and system is not None:
            messages.append(_system(system, key))
        fields = {k: v for k, v in doc.items() if k != "contents" and (k != key or system is None)}
        envelope = {"shape": "object", "keys": list(doc), "fields": fields}
        if key:
            envelope["system_key"] = key
    else:
        raise FormatError(f"expected a contents list or a request object, got {type(data).__name__}", format=NAME)
    user_side = False
    for i, raw in enumerate(contents):
        user_side = _content(raw, i, user_side, messages)
    return Conversation(tuple(messages), NAME, envelope)


def _content(raw: Any, i: int, after_user: bool, out: list[Message]) -> bool:
    """Append the canonical messages of ``contents[i]``; whether it was a user-side turn."""
    if not isinstance(raw, dict):
        raise fail(f"expected an object, got {type(raw).__name__}", f"contents[{i}]")
    content = cast(dict[str, Any], raw)
    hints: dict[str, Any] | None = None
    role = content.get("role")
    raw_parts = content.get("parts")
    if len(content) != 2 or role is None or raw_parts is None:
        hints = _content_hints(content, f"contents[{i}]")
        if role is None:
            role = "user"
    if not isinstance(raw_parts, list):
        if raw_parts is not None or "parts" not in content:
            where = f"contents[{i}].parts"
            raise fail("missing parts" if "parts" not in content else "expected a list", where)
        raw_parts = []
    parts = read_parts(cast(list[Any], raw_parts), f"contents[{i}]")
    if role == "model":
        out.append(Message(role="assistant", parts=tuple(parts), extras={NAME: hints} if hints else {}))
        return False
    if role not in _USER_SIDE:
        raise fail(f"unknown role {role!r} (expected user, model or function)", f"contents[{i}].role")
    if role != "user":
        hints = {**(hints or {}), "role": role}
    if after_user:
        hints = {**(hints or {}), "turn": "new"}
    out.extend(split_turn(parts, hints, NAME))
    return True


def _content_hints(content: dict[str, Any], where: str) -> dict[str, Any]:
    """Hints of a Content that is not the plain ``{"role", "parts"}``: unknown keys, nulls, missing role."""
    hints: dict[str, Any] = {}
    fields = {k: v for k, v in content.items() if k not in ("role", "parts") and v is not None}
    if fields:
        hints["fields"] = fields
    nulls = [k for k, v in content.items() if v is None]
    if nulls:
        hints["nulls"] = nulls
    if "role" not in content:
        hints["no_role"] = True
    elif content["role"] is not None and not isinstance(content["role"], str):
        raise fail(f"expected a string, got {type(content['role']).__name__}", f"{where}.role")
    return hints


def _system(raw: Any, key: str) -> Message:
    if isinstance(raw, str):
        return Message(role="system", parts=(Text(text=raw),), extras={NAME: {"shape": "text"}})
    if not isinstance(raw, dict):
        raise fail(f"expected a Content object or a string, got {type(raw).__name__}", key)
    content = cast(dict[str, Any], raw)
    hints: dict[str, Any] = {}
    fields = {k: v for k, v in content.items() if k not in ("role", "parts")}
    if fields:
        hints["fields"] = fields
    if "role" in content:
        hints["role"] = content["role"]
    if "parts" not in content:
        raise fail("missing parts", f"{key}.parts")
    raw_parts = content["parts"]
    if raw_parts is None:
        hints["nulls"] = ["parts"]
        raw_parts = []
    parts = read_parts(require_list(raw_parts, f"{key}.parts", NAME), key)
    return Message(role="system", parts=tuple(parts), extras={NAME: hints} if hints else {})


# --- dump -------------------------------------------------------------------------------------------------------


def dump(
    messages: Sequence[Message],
    envelope: Mapping[str, Any] | None = None,
    dropped: list[Dropped] | None = None,
) -> Any:
    """Write contents (and the system instruction); the envelope of a loaded request rebuilds that request."""
    report_foreign(messages, NAME, dropped)
    plan = plan_turns(messages, NAME, dropped)
    writer = _Writer(dropped)
    system = writer.system(plan) if plan.system else None
    contents = [writer.turn(t) for t in plan.turns]
    return wrap_document(contents, system, envelope or {}, "contents", "systemInstruction")


class _Writer:
    """Writes wire parts, remembering tool-call names for results that lack one (OpenAI tool messages)."""

    def __init__(self, dropped: list[Dropped] | None) -> None:
        self.dropped = dropped
        self.names: dict[str, str] = {}

    def system(self, plan: Plan) -> Any:
        first = plan.system[0][1]
        hints = native(first.extras, NAME)
        parts = [(i, p) for i, m in plan.system for p in m.parts]
        for i, m in plan.system:
            if m.name is not None:
                drop(self.dropped, i, "participant name")
        if hints.get("shape") == "text" and len(parts) == 1:
            only = parts[0][1]
            if isinstance(only, Text) and only.reasoning is None and not only.extras:
                return only.text
        out: dict[str, Any] = {}
        if "role" in hints:
            out["role"] = hints["role"]
        out["parts"] = self.parts(parts)
        _finish(out, hints)
        return out

    def turn(self, turn: Turn) -> dict[str, Any]:
        hints = native(turn.first.extras, NAME)
        for i, m in turn.messages:
            if m.name is not None:
                drop(self.dropped, i, "participant name")
        out: dict[str, Any] = {}
        if not hints.get("no_role"):
            out["role"] = "model" if turn.role == "assistant" else hints.get("role", "user")
        out["parts"] = self.parts(turn.parts(NAME))
        _finish(out, hints)
        return out

    def parts(self, parts: list[tuple[int, Part]]) -> list[Any]:
        out: list[Any] = []
        for i, p in parts:
            wire = self.part(i, p)
            if wire is not None:
                out.append(wire)
        return out

    def signature(self, index: int, reasoning: Reasoning | None, what: str) -> str | None:
        if reasoning is None:
            return None
        if reasoning.text or reasoning.data is not None:
            drop(self.dropped, index, f"reasoning text or data attached to a {what}")
        return reasoning.signature

    def part(self, i: int, p: Part) -> Any:
        hints = native(p.extras, NAME)
        snake = bool(hints.get("snake"))
        out: dict[str, Any]
        match p:
            case Text():
                out = {"text": p.text}
                if "thought" in hints:
                    out["thought"] = hints["thought"]
                sig = self.signature(i, p.reasoning, "text part")
                if sig is not None:
                    out[wire_key("thoughtSignature", snake)] = sig
            case Reasoning():
                if p.data is not None:
                    drop(self.dropped, i, "encrypted reasoning data")
                if hints.get("form") == "signature" and not p.text and p.signature is not None:
                    out = {}
                elif p.text or p.signature is not None or p.data is None:
                    out = {"text": p.text, "thought": True}
                else:
                    return None
                if p.signature is not None:
                    out[wire_key("thoughtSignature", snake)] = p.signature
            case ToolCall():
                out = {wire_key("functionCall", snake): self.function_call(i, p, hints)}
                self.names[p.id] = p.name
                sig = self.signature(i, p.reasoning, "tool call")
                if sig is not None:
                    out[wire_key("thoughtSignature", snake)] = sig
            case ToolResult():
                out = {wire_key("functionResponse", snake): self.function_response(i, p, hints)}
            case Image() | File():
                media = self.media(i, p, hints, snake)
                if media is None:
                    return None
                out = media
            case Opaque():
                if p.format != NAME:
                    drop(self.dropped, i, f"{p.format} block")
                    return None
                return p.data
            case _:  # pragma: no cover
                assert_never(p)
        _finish(out, hints)
        return out

    def function_call(self, i: int, p: ToolCall, hints: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"id": p.id} if p.id or hints.get("empty_id") else {}
        out["name"] = p.name
        if "args" not in hints.get("absent", ()):
            args: Any = parse_json(p.arguments) if p.arguments.strip() else {}
            if not isinstance(args, dict):
                drop(self.dropped, i, f"arguments of tool call {p.id or p.name} (not a JSON object)")
                args = {}
            out["args"] = args
        return out

    def function_response(self, i: int, p: ToolResult, hints: Mapping[str, Any]) -> dict[str, Any]:
        name = p.name if p.name is not None else self.names.get(p.call_id)
        if name is None:
            drop(self.dropped, i, f"tool result {p.call_id}: no tool name (Gemini needs one)")
            name = ""
        out: dict[str, Any] = {"id": p.call_id} if p.call_id or hints.get("empty_id") else {}
        out["name"] = name
        if "response" in hints.get("absent", ()):
            return out
        if isinstance(p.content, str):
            text = p.content
        else:
            if any(not isinstance(c, Text) for c in p.content):
                drop(self.dropped, i, f"images or files in tool result {p.call_id}")
            text = p.text
        response = parse_json(text) if text.lstrip().startswith("{") else INVALID_JSON
        if not isinstance(response, dict):
            key = hints.get("key")
            response = {key if isinstance(key, str) else wrap_key(p.is_error): text}
        out["response"] = response
        return out

    def media(self, i: int, p: Image | File, hints: Mapping[str, Any], snake: bool) -> dict[str, Any] | None:
        inner: dict[str, Any] = {}
        if p.media_type is not None:
            inner[wire_key("mimeType", snake)] = p.media_type
        data = p.data
        if data is None and p.url is not None and not hints.get("file"):
            inline = parse_data_url(p.url)
            if inline is not None:
                inner.setdefault(wire_key("mimeType", snake), inline[0] or "application/octet-stream")
                data = inline[1]
        if data is not None:
            inner["data"] = encode_b64(data, hints.get("b64"))
            container = "inlineData"
        elif p.url is not None:
            inner[wire_key("fileUri", snake)] = p.url
            container = "fileData"
        else:
            drop(self.dropped, i, f"{p.kind} with neither data nor URL")
            return None
        if isinstance(p, File) and p.name is not None:
            inner[wire_key("displayName", snake)] = p.name
        return {wire_key(container, snake): inner}


def _finish(out: dict[str, Any], hints: Mapping[str, Any]) -> None:
    """Put back the unknown keys and the null-valued keys a part or content was read with."""
    fields = hints.get("fields")
    if isinstance(fields, dict):
        merge_fields(out, cast(dict[str, Any], fields))
    nulls = hints.get("nulls")
    if isinstance(nulls, list):
        for path in cast(list[Any], nulls):
            if not isinstance(path, str):
                continue
            container, dot, key = path.partition(".")
            if not dot:
                out[path] = None
            elif isinstance(out.get(container), dict):
                out[container][key] = None
