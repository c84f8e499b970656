"""OpenAI Chat Completions messages: ``[{"role": ..., "content": ...}, ...]`` or a request ``{"messages": [...]}``.

Mapping (wire → canonical):

- roles ``system``/``developer`` → ``system``; ``user``, ``assistant``; ``tool`` → a ``tool`` message holding one
  `ToolResult` (``tool_call_id``, ``name``, ``content``); the legacy ``function`` role → the same, with call id
  ``""`` since it had none.
- ``content`` as a string (one `Text`; ``""`` is no part at all), ``null``, absent, or a list of parts: ``text``,
  ``image_url`` (a ``data:`` URL becomes inline bytes, rebuilt byte for byte), ``file``, ``refusal``; anything
  else (``input_audio``, future part types) is carried as `Opaque`.
- the assistant's ``refusal`` becomes a `Text`, its ``tool_calls`` `ToolCall` parts (``custom`` calls too: their
  free-form ``input`` is kept verbatim as the arguments), the legacy ``function_call`` a `ToolCall` with id ``""``.

Chat Completions has no way to send reasoning back, so `Reasoning` parts (and reasoning bound to text or calls)
are reported as dropped on dump. Provider fields such as ``reasoning_content`` or ``audio`` stay unknown fields.

Layout hints in ``extras["openai"]`` besides the shared ``fields``/``keep``/``absent`` (see `_openai_common`):

- on a message: ``role`` (``"developer"`` or ``"function"``: the wire role when it is not the canonical one),
  ``content`` (``"string"``, ``"list"``, ``"null"`` or ``"absent"``: the shape of ``content`` when it is not the
  default: a string for no parts or a single plain `Text`, ``null`` for an assistant with no content, else a list);
- on a part: ``slot`` (``"refusal"``: the assistant's ``refusal`` field; ``"function_call"``: the legacy field;
  ``"tool_calls"``: an `Opaque` tool call of an unknown type), ``type`` (``"refusal"`` for a refusal content
  part, ``"custom"`` for a custom tool call), ``image_url`` (``"string"`` when the URL was given bare), ``empty``
  (a ``file`` part with nothing in it, written back as such; a `File` from elsewhere with no data is dropped).

Messages are never paired by tool-call id here (tau-bench reuses ids inside one trajectory): ids are kept as read.
``dump(load(x)) == x`` for every document; the keys of a request keep their order, those inside a message follow
the API reference's order (JSON objects are unordered, and remembering every object's order would cost a hint on
almost every message).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..messages import File, Image, Message, Opaque, Part, Reasoning, ResultPart, Role, Text, ToolCall, ToolResult
from ._base import Conversation, Dropped, drop, native, report_foreign
from ._openai_common import (
    apply_layout,
    data_url,
    document,
    fail,
    guess_media_type,
    is_custom,
    kind_of,
    message_list,
    pack,
    parse_data_url,
    plain_text,
    unknown_keys,
    want_list,
    want_mapping,
    want_opt_str,
    want_str,
    wrong_type,
)
from ._wire import (
    ChatContentPart,
    ChatFileData,
    ChatFilePart,
    ChatFunction,
    ChatImagePart,
    ChatImageURL,
    ChatMessage,
    ChatRefusalPart,
    ChatTextPart,
    ChatToolCall,
    is_list,
    is_object,
)

__all__ = ["NAME", "dump", "load", "sniff"]

NAME = "openai"

_CANONICAL_ROLE: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
_KNOWN: dict[str, frozenset[str]] = {
    "system": frozenset({"role", "content", "name"}),
    "developer": frozenset({"role", "content", "name"}),
    "user": frozenset({"role", "content", "name"}),
    "assistant": frozenset({"role", "content", "name", "refusal", "tool_calls", "function_call"}),
    "tool": frozenset({"role", "content", "tool_call_id", "name"}),
    "function": frozenset({"role", "content", "name"}),
}
_TEXT_KEYS = frozenset({"type", "text"})
_REFUSAL_KEYS = frozenset({"type", "refusal"})
_IMAGE_KEYS = frozenset({"type", "image_url"})
_URL_KEYS = frozenset({"url"})
_FILE_KEYS = frozenset({"type", "file"})
_FILE_INNER_KEYS = frozenset({"file_data", "filename"})
_CALL_KEYS = frozenset({"id", "type", "function", "custom"})
_FUNCTION_CALL_KEYS = frozenset({"id", "type", "function"})
_PLAIN_KEYS = frozenset({"role", "content"})
_PLAIN_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "system": "system"}
_FUNCTION_KEYS = frozenset({"name", "arguments"})
_CUSTOM_KEYS = frozenset({"name", "input"})
_PART_TYPES = frozenset({"text", "image_url", "input_audio", "file", "refusal"})
_PART_ONLY = ("fields", "type")
"""Hints only a part object can carry: a `Text` with any of them is never written as a bare string."""


# --- detection -------------------------------------------------------------------------------------------------


def sniff(data: Any) -> int:
    """2 when an OpenAI-only feature appears, 1 for plain ``{role, content}`` messages, 0 on any contradiction."""
    if is_object(data):
        if "system" in data or "input" in data or "contents" in data:
            return 0
        items = data.get("messages")
    else:
        items = data
    if not is_list(items):
        return 0
    score = 1
    for message in items:
        s = _sniff_message(message)
        if s == 0:
            return 0
        score = max(score, s)
    return score


def _sniff_message(message: Any) -> int:
    if not is_object(message):
        return 0
    m = message
    role = m.get("role")
    if not isinstance(role, str) or role not in _CANONICAL_ROLE or "type" in m or "parts" in m:
        return 0
    score = 2 if role in ("developer", "function") or "function_call" in m or "refusal" in m else 1
    if role == "tool":
        if not isinstance(m.get("tool_call_id"), str):
            return 0
        score = 2
    calls = m.get("tool_calls")
    if is_list(calls):
        for call in calls:
            if not is_object(call):
                return 0
            kind = call.get("type", "function")
            if not isinstance(kind, str) or not isinstance(call.get(kind), dict):
                return 0
            score = 2
    elif calls is not None:
        return 0
    content = m.get("content")
    if is_list(content):
        for part in content:
            kind = part.get("type") if is_object(part) else None
            if kind not in _PART_TYPES:
                return 0
            if kind != "text":
                score = 2
    elif content is not None and not isinstance(content, str):
        return 0
    return score


# --- load ------------------------------------------------------------------------------------------------------
#
# The loaders are on the hot path (a long agent history is re-read before every model call), so the common shapes
# take a few type checks and no path strings; a path like ``messages[3].content[1].type`` is only built for an
# error.

_ABSENT: Any = object()


def load(data: Any) -> Conversation:
    """Read a message list or a request object; the rest of the request is kept in the envelope."""
    items, envelope, prefix = message_list(data, NAME, "an object")
    messages = tuple([_load_message(m, prefix, i) for i, m in enumerate(items)])
    return Conversation(messages, NAME, envelope)


def _load_message(raw: Any, prefix: str, i: int) -> Message:
    m: dict[str, Any] = raw
    if not isinstance(raw, dict):
        wrong_type(raw, "an object", f"{prefix}[{i}]", NAME)
    role = m.get("role")
    if not isinstance(role, str) or role not in _KNOWN:
        what = "missing role" if "role" not in m else f"unknown role {role!r}"
        fail(f"{what} (expected one of {', '.join(_KNOWN)})", f"{prefix}[{i}].role", NAME)
    known = _KNOWN[role]
    content = m.get("content", _ABSENT)
    if isinstance(content, str) and content and m.keys() <= _PLAIN_KEYS and role in _PLAIN_ROLES:
        return Message(role=_PLAIN_ROLES[role], parts=(Text(text=content),))  # the common case
    name = m.get("name")
    if name is not None and not isinstance(name, str):
        wrong_type(name, "a string or null", f"{prefix}[{i}].name", NAME)
    hints: dict[str, Any] = {}
    if name is None and "name" in m:
        hints["keep"] = {"name": None}
    if role == "tool" or role == "function":
        return _load_tool_message(m, role, name, prefix, i, hints)
    parts: list[Part]
    if isinstance(content, str):
        parts = [Text(text=content)] if content else []
        if not content and role == "assistant":
            hints["content"] = "string"
    elif content is None:
        parts = []
        if role != "assistant":
            hints["content"] = "null"
    elif content is _ABSENT:
        parts = []
        hints["content"] = "absent"
    elif is_list(content):
        where = f"{prefix}[{i}].content"
        parts = [_load_part(p, where, j) for j, p in enumerate(content)]
        if _default_shape(role, parts) != "list":
            hints["content"] = "list"
    else:
        fail(f"expected a string, a list of parts or null, got {kind_of(content)}", f"{prefix}[{i}].content", NAME)
    if role == "assistant":
        if not m.keys() <= _PLAIN_KEYS:
            _load_assistant_extras(m, f"{prefix}[{i}]", parts, hints)
    elif role == "developer":
        hints["role"] = "developer"
    if not m.keys() <= known:
        hints["fields"] = {k: v for k, v in m.items() if k not in known}
    return Message(role=_CANONICAL_ROLE[role], parts=tuple(parts), name=name, extras={NAME: hints} if hints else {})


def _load_part(raw: Any, where: str, j: int) -> Part:
    if not is_object(raw):
        wrong_type(raw, "an object", f"{where}[{j}]", NAME)
    part = raw
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        if not isinstance(text, str):
            wrong_type(text, "a string", f"{where}[{j}].text", NAME)
        if part.keys() <= _TEXT_KEYS:
            return Text(text=text)
        return Text(text=text, extras=pack(NAME, unknown_keys(part, _TEXT_KEYS)))
    if not isinstance(kind, str):
        wrong_type(kind, "a string", f"{where}[{j}].type", NAME)
    match kind:
        case "refusal":
            text = want_str(part.get("refusal"), f"{where}[{j}].refusal", NAME)
            return Text(text=text, extras=pack(NAME, unknown_keys(part, _REFUSAL_KEYS), {"type": "refusal"}))
        case "image_url":
            return _load_image(part, f"{where}[{j}]")
        case "file":
            return _load_file(part, f"{where}[{j}]")
        case _:
            return Opaque(format=NAME, data=part)


def _load_image(part: dict[str, Any], where: str) -> Image:
    fields = unknown_keys(part, _IMAGE_KEYS) or {}
    hints: dict[str, Any] = {}
    inner = part.get("image_url")
    if isinstance(inner, str):
        url = inner
        hints["image_url"] = "string"
    else:
        obj = want_mapping(inner, where, NAME, "image_url")
        url = want_str(obj.get("url"), where, NAME, "image_url.url")
        nested = unknown_keys(obj, _URL_KEYS)
        if nested:
            fields["image_url"] = nested
    extras = pack(NAME, fields, hints)
    decoded = parse_data_url(url)
    if decoded is None:
        return Image(url=url, extras=extras)
    return Image(data=decoded[0], media_type=decoded[1], extras=extras)


def _load_file(part: dict[str, Any], where: str) -> File:
    fields = unknown_keys(part, _FILE_KEYS) or {}
    inner = want_mapping(part.get("file"), where, NAME, "file")
    nested = unknown_keys(inner, _FILE_INNER_KEYS) or {}
    name = want_opt_str(inner.get("filename"), where, NAME, "file.filename")
    if name is None and "filename" in inner:
        nested["filename"] = None
    data: bytes | None = None
    media_type: str | None = None
    raw = inner.get("file_data")
    decoded = parse_data_url(raw) if isinstance(raw, str) else None
    if decoded is not None:
        data, media_type = decoded
    elif "file_data" in inner:
        nested["file_data"] = raw  # raw base64 or anything else is kept exactly as sent
    if nested:
        fields["file"] = nested
    hints = {"empty": True} if data is None and not fields else None  # a file part with nothing in it
    return File(data=data, media_type=media_type, name=name, extras=pack(NAME, fields, hints))


def _load_assistant_extras(m: dict[str, Any], where: str, parts: list[Part], hints: dict[str, Any]) -> None:
    """Append the refusal, tool calls and legacy function call of an assistant message, in that order."""
    keep: dict[str, Any] = hints.get("keep") or {}
    if "refusal" in m:
        refusal = want_opt_str(m["refusal"], where, NAME, "refusal")
        if refusal is None:
            keep["refusal"] = None
        else:
            parts.append(Text(text=refusal, extras={NAME: {"slot": "refusal"}}))
    calls = m.get("tool_calls", _ABSENT)
    if is_list(calls) and calls:
        parts.extend([_load_tool_call(c, where, j) for j, c in enumerate(calls)])
    elif calls is None or isinstance(calls, list):
        keep["tool_calls"] = calls
    elif calls is not _ABSENT:
        want_list(calls, where, NAME, "tool_calls")
    if "function_call" in m:
        call = m["function_call"]
        if call is None:
            keep["function_call"] = None
        else:
            fc = want_mapping(call, where, NAME, "function_call")
            name = want_str(fc.get("name"), where, NAME, "function_call.name")
            arguments = want_str(fc.get("arguments"), where, NAME, "function_call.arguments")
            extras = pack(NAME, unknown_keys(fc, _FUNCTION_KEYS), {"slot": "function_call"})
            parts.append(ToolCall(id="", name=name, arguments=arguments, extras=extras))
    if keep:
        hints["keep"] = keep


def _load_tool_call(raw: Any, prefix: str, j: int) -> Part:
    c: dict[str, Any] = raw
    if isinstance(raw, dict) and c.keys() <= _FUNCTION_CALL_KEYS and c.get("type") == "function":
        function = c.get("function")
        call_id = c.get("id")
        if is_object(function) and isinstance(call_id, str) and function.keys() <= _FUNCTION_KEYS:
            name = function.get("name")
            arguments = function.get("arguments")
            if isinstance(name, str) and isinstance(arguments, str):
                return ToolCall(id=call_id, name=name, arguments=arguments)  # the common case, no extras
    where = f"{prefix}.tool_calls[{j}]"
    call = want_mapping(c, where, NAME)
    kind = call.get("type", "function")
    if kind != "function" and kind != "custom":
        want_str(kind, where, NAME, "type")
        return Opaque(format=NAME, data=call, extras={NAME: {"slot": "tool_calls"}})
    call_id = want_str(call.get("id"), where, NAME, "id")
    fields = unknown_keys(call, _CALL_KEYS) or {}
    hints: dict[str, Any] = {}
    if "type" not in call:
        hints["absent"] = ["type"]
    if kind == "custom":
        hints["type"] = "custom"
        inner = want_mapping(call.get("custom"), where, NAME, "custom")
        arguments = want_str(inner.get("input"), where, NAME, "custom.input")
        nested = unknown_keys(inner, _CUSTOM_KEYS)
        if "function" in call:
            fields["function"] = call["function"]
    else:
        inner = want_mapping(call.get("function"), where, NAME, "function")
        arguments = want_str(inner.get("arguments"), where, NAME, "function.arguments")
        nested = unknown_keys(inner, _FUNCTION_KEYS)
        if "custom" in call:
            fields["custom"] = call["custom"]
    if nested:
        fields[kind] = nested
    name = want_str(inner.get("name"), f"{where}.{kind}.name", NAME)
    return ToolCall(id=call_id, name=name, arguments=arguments, extras=pack(NAME, fields, hints))


def _load_tool_message(
    m: dict[str, Any], role: str, name: str | None, prefix: str, i: int, hints: dict[str, Any]
) -> Message:
    if role == "tool":
        call_id = m.get("tool_call_id")
        if not isinstance(call_id, str):
            where = f"{prefix}[{i}]"
            wrong_type(call_id, "a string", f"{where}.tool_call_id", NAME)
    else:
        call_id = ""
        hints["role"] = "function"
    content: str | tuple[ResultPart, ...]
    raw = m.get("content")
    if isinstance(raw, str):
        content = raw
    elif is_list(raw):
        where = f"{prefix}[{i}].content"
        content = tuple([_load_result_part(p, where, j) for j, p in enumerate(raw)])
    elif raw is None:
        content = ""
        hints["content"] = "null" if "content" in m else "absent"
    else:
        wrong_type(raw, "a string, a list of parts or null", f"{prefix}[{i}].content", NAME)
    known = _KNOWN[role]
    if not m.keys() <= known:
        hints["fields"] = {k: v for k, v in m.items() if k not in known}
    result = ToolResult(call_id=call_id, name=name, content=content)
    return Message(role="tool", parts=(result,), extras={NAME: hints} if hints else {})


def _load_result_part(raw: Any, where: str, j: int) -> ResultPart:
    part = _load_part(raw, where, j)
    if isinstance(part, Text | Image | File):
        return part
    kind = raw.get("type") if is_object(raw) else None  # an object: `_load_part` read it
    fail(f"a tool message cannot hold a {kind!r} part (only text, image_url and file)", f"{where}[{j}].type", NAME)


# --- dump ------------------------------------------------------------------------------------------------------


def _default_shape(role: str, content: Sequence[Part]) -> str:
    """The ``content`` shape dump writes when no hint says otherwise (and load compares against)."""
    if not content:
        return "null" if role == "assistant" else "string"
    return "string" if len(content) == 1 and plain_text(content[0], NAME, _PART_ONLY) else "list"


def dump(
    messages: Sequence[Message],
    envelope: Mapping[str, Any] | None = None,
    dropped: list[Dropped] | None = None,
) -> Any:
    """Write Chat Completions messages; with this format's envelope, the original request object around them."""
    out: list[ChatMessage] = []
    for i, message in enumerate(messages):
        _dump_message(message, i, out, dropped)
    report_foreign(messages, NAME, dropped)
    return document(envelope, "messages", out)


def _dump_message(m: Message, i: int, out: list[ChatMessage], dropped: list[Dropped] | None) -> None:
    """One canonical message becomes one wire message, or several: each `ToolResult` is its own tool message
    (Anthropic and Gemini put parallel results in one turn), written first as the API requires."""
    hints = native(m.extras, NAME)
    results = [p for p in m.parts if isinstance(p, ToolResult)]
    rest = [p for p in m.parts if not isinstance(p, ToolResult)]
    tool_hints = hints if m.role == "tool" else {}
    for n, result in enumerate(results):
        out.append(_dump_tool_message(result, tool_hints if n == 0 else {}, i, dropped))
    if m.role == "tool":
        if m.name is not None:
            drop(dropped, i, f"participant name {m.name!r} of a tool message (results carry their own name)")
        if not rest:
            if not results:
                drop(dropped, i, "an empty tool message")
            return
        drop(dropped, i, "non-result parts of a tool message (written as a user message after the results)")
        out.append(_dump_plain("user", Message(role="user", parts=tuple(rest)), {}, i, dropped))
        return
    if rest or not results:
        out.append(_dump_plain(m.role, m, hints, i, dropped, rest))


def _dump_plain(
    role: str,
    m: Message,
    hints: Mapping[str, Any],
    i: int,
    dropped: list[Dropped] | None,
    parts: Sequence[Part] | None = None,
) -> ChatMessage:
    assistant = role == "assistant"
    content: list[Part] = []
    refusal: str | None = None
    calls: list[ChatToolCall | dict[str, Any]] = []
    function_call: ChatFunction | None = None
    for p in m.parts if parts is None else parts:
        ph = native(p.extras, NAME)
        match p:
            case Text():
                if p.reasoning is not None:
                    drop(dropped, i, "reasoning attached to text")
                if assistant and refusal is None and ph.get("slot") == "refusal":
                    refusal = p.text
                else:
                    content.append(p)
            case ToolCall():
                if not assistant:
                    drop(dropped, i, f"tool call {p.name!r} made by the {role} role")
                    continue
                if p.reasoning is not None:
                    drop(dropped, i, f"reasoning bound to tool call {p.name!r}")
                if function_call is None and ph.get("slot") == "function_call":
                    function_call = apply_layout({"name": p.name, "arguments": p.arguments}, ph)
                else:
                    calls.append(_dump_tool_call(p, ph))
            case Reasoning():
                drop(dropped, i, "reasoning (Chat Completions accepts no reasoning input)")
            case Opaque():
                if p.format != NAME:
                    drop(dropped, i, f"{p.format} block with no Chat Completions equivalent")
                elif ph.get("slot") == "tool_calls" and assistant:
                    calls.append(p.data)
                else:
                    content.append(p)
            case Image() | File():
                content.append(p)
            case ToolResult():  # pragma: no cover - split off by the caller
                raise AssertionError("tool results are written as tool messages")
    wire_role = hints.get("role") if role == "system" else None  # ``developer``
    out: ChatMessage = {"role": wire_role or role}
    _put_content(out, role, content, hints.get("content"), i, dropped)
    if m.name is not None:
        out["name"] = m.name
    if refusal is not None:
        out["refusal"] = refusal
    if calls:
        out["tool_calls"] = calls
    if function_call is not None:
        out["function_call"] = function_call
    return apply_layout(out, hints)


def _put_content(
    out: ChatMessage, role: str, content: list[Part], shape: object, i: int, dropped: list[Dropped] | None
) -> None:
    default = _default_shape(role, content)
    if shape in ("null", "absent") and content:
        shape = default
    elif shape == "string" and default == "list":
        shape = default
    elif shape not in ("string", "list", "null", "absent"):
        shape = default
    match shape:
        case "absent":
            return
        case "null":
            out["content"] = None
        case "string":
            out["content"] = cast(Text, content[0]).text if content else ""
        case _:
            wire = (_dump_part(p, i, dropped) for p in content)
            out["content"] = [w for w in wire if w is not None]


def _dump_tool_call(p: ToolCall, ph: Mapping[str, Any]) -> ChatToolCall:
    out: ChatToolCall
    if is_custom(p.extras):
        out = {"id": p.id, "type": "custom", "custom": {"name": p.name, "input": p.arguments}}
    else:
        out = {"id": p.id, "type": "function", "function": {"name": p.name, "arguments": p.arguments}}
    return apply_layout(out, ph)


def _dump_part(p: Part, i: int, dropped: list[Dropped] | None) -> ChatContentPart | None:
    ph = native(p.extras, NAME)
    match p:
        case Text():
            if ph.get("type") == "refusal":
                refusal: ChatRefusalPart = {"type": "refusal", "refusal": p.text}
                return apply_layout(refusal, ph)
            text: ChatTextPart = {"type": "text", "text": p.text}
            return apply_layout(text, ph)
        case Image():
            if p.data is not None:
                url = data_url(p.data, p.media_type or guess_media_type(p.data, "image/png"))
            elif p.url is not None:
                url = p.url
            else:
                drop(dropped, i, "image with neither URL nor data (an uploaded file id is not an image URL)")
                return None
            image: ChatImageURL | str = url if ph.get("image_url") == "string" else {"url": url}
            image_part: ChatImagePart = {"type": "image_url", "image_url": image}
            return apply_layout(image_part, ph)
        case File():
            inner: ChatFileData = {}
            if p.data is not None:
                inner["file_data"] = data_url(p.data, p.media_type or guess_media_type(p.data))
            elif not ph:
                where = f"by URL ({p.url[:80]})" if p.url is not None else "without data"
                drop(dropped, i, f"file {where}: Chat Completions files are inline or uploaded")
                return None
            if p.name is not None:
                inner["filename"] = p.name
            file_part: ChatFilePart = {"type": "file", "file": inner}
            return apply_layout(file_part, ph)
        case Opaque():
            return p.data  # carried verbatim
        case Reasoning() | ToolCall() | ToolResult():  # pragma: no cover - never placed in content
            raise AssertionError(f"{p.kind} is not a content part")


def _dump_tool_message(r: ToolResult, hints: Mapping[str, Any], i: int, dropped: list[Dropped] | None) -> ChatMessage:
    out: ChatMessage
    if hints.get("role") == "function":
        out = {"role": "function"}
    else:
        out = {"role": "tool", "tool_call_id": r.call_id}
    if r.name is not None:
        out["name"] = r.name
    if r.is_error:
        drop(dropped, i, f"error flag of the result of call {r.call_id!r}")
    if isinstance(r.content, str):
        shape = hints.get("content")
        if r.content or shape not in ("null", "absent"):
            out["content"] = r.content
        elif shape == "null":
            out["content"] = None
    else:
        wire = (_dump_part(p, i, dropped) for p in r.content)
        out["content"] = [w for w in wire if w is not None]
    return apply_layout(out, hints)
