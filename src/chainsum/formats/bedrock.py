"""Bedrock Converse messages, which is also what Strands Agents keeps as ``agent.messages`` and in its sessions.

A bare ``messages`` list or a request ``{"messages": [...], "system": [...], ...}``. Each content block is a
union object with one member: ``text`` → `Text`; ``image`` → `Image` (``image/<format>``; bytes or an S3 URI as
the URL); ``document`` → `File` (its ``name`` kept); ``toolUse`` → `ToolCall` (arguments = compact JSON of
``input``, parsed back on dump); ``toolResult`` → `ToolResult` (``is_error`` = ``status == "error"``; a content
of exactly one text block is the plain string, anything else a tuple: ``json`` blocks become `Text` of compact
JSON marked to go back as ``json``, and blocks a tool result part cannot hold are kept as `Text` of their JSON,
marked ``raw``); ``reasoningContent`` → `Reasoning` (``reasoningText`` text and signature, ``redactedContent``
as ``data``, its base64 text untouched); ``video``, ``audio``, ``cachePoint``, ``guardContent``,
``citationsContent``, ``searchResult`` and unknown blocks → `Opaque`. The ``system`` blocks → a ``system``
message first. A user message holding ``toolResult`` blocks splits into ``tool`` + ``user`` messages
(`_split`). Tool results get the name of their call (Bedrock leaves it out; Gemini needs it).

Bytes are base64 text in JSON. Strands' session files wrap them as ``{"__bytes_encoded__": true, "data": ...}``;
both are read, and hint ``bytes: "strands"`` writes the wrapper back.

Layout hints in ``extras["bedrock"]`` besides ``fields`` (unknown keys verbatim, nested as on the wire) and the
turn hints of `_split`: ``json``/``raw`` (above), ``absent`` (``input``, ``content`` or ``status`` left out),
``b64`` (base64 text that re-encoding would not reproduce), ``format`` (a document format with no known media
type), ``source: "text"`` (a document given as text), ``s3`` (an S3 URI that looks like another kind of URL).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, assert_never, cast

from ..errors import FormatError
from ..messages import File, Image, Message, Opaque, Part, Reasoning, ResultPart, Text, ToolCall, ToolResult
from ._base import Conversation, Dropped, drop, native, report_foreign, require_list, require_mapping
from ._split import (
    INVALID_JSON,
    Turn,
    compact_json,
    decode_b64,
    encode_b64,
    merge_fields,
    parse_data_url,
    parse_json,
    plan_turns,
    split_turn,
    with_extras,
    wrap_document,
)

__all__ = ["NAME", "dump", "load", "sniff"]

NAME: Final = "bedrock"

_MODELED = ("text", "image", "document", "toolUse", "toolResult", "reasoningContent")
_OPAQUE = ("video", "audio", "cachePoint", "guardContent", "citationsContent", "searchResult")
_MEMBERS: Final = frozenset((*_MODELED, *_OPAQUE))
_DOCUMENT_TYPES: Final = {
    "pdf": "application/pdf",
    "csv": "text/csv",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "html": "text/html",
    "txt": "text/plain",
    "md": "text/markdown",
}
_DOCUMENT_FORMATS: Final = {v: k for k, v in _DOCUMENT_TYPES.items()}
_STRANDS_BYTES = "__bytes_encoded__"


def sniff(data: Any) -> int:
    """2 when blocks are Bedrock's single-key unions (``{"text": ...}``, ``toolUse``, ...) with no ``type``."""
    if isinstance(data, dict):
        doc = cast(dict[str, Any], data)
        messages = doc.get("messages")
        if not isinstance(messages, list):
            return 0
        score = _messages_score(cast(list[Any], messages))
        system = doc.get("system")
        if score and isinstance(system, list) and system:
            first = cast(list[Any], system)[0]
            return 2 if isinstance(first, dict) and "type" not in first else 0
        return 0 if "system" in doc and not isinstance(system, list) else score
    if isinstance(data, list):
        return _messages_score(cast(list[Any], data))
    return 0


def _messages_score(items: list[Any]) -> int:
    score = 1
    for item in items:
        if not isinstance(item, dict):
            return 0
        message = cast(dict[str, Any], item)
        content = message.get("content")
        if message.get("role") not in ("user", "assistant") or not isinstance(content, list):
            return 0
        for block in cast(list[Any], content):
            if not isinstance(block, dict) or "type" in block:
                return 0
            keys = cast(dict[str, Any], block).keys()
            if score < 2 and len(keys) == 1 and next(iter(keys)) in _MEMBERS:
                score = 2
    return score


# --- load -------------------------------------------------------------------------------------------------------


def load(data: Any) -> Conversation:
    """Read a message list or a request object; the request's other keys become the envelope."""
    messages: list[Message] = []
    if isinstance(data, list):
        envelope: dict[str, Any] = {"shape": "list"}
        items = cast(list[Any], data)
    elif isinstance(data, dict):
        doc = cast(dict[str, Any], data)
        if "messages" not in doc:
            raise _fail("missing messages (a request holds its turns there)", "messages")
        items = require_list(doc["messages"], "messages", NAME)
        system = doc.get("system")
        if system is not None and require_list(system, "system", NAME):
            parts = tuple(_block(b, f"system[{j}]", {}) for j, b in enumerate(cast(list[Any], system)))
            messages.append(Message(role="system", parts=parts))
        fields = {k: v for k, v in doc.items() if k != "messages" and (k != "system" or not system)}
        envelope = {"shape": "object", "keys": list(doc), "fields": fields}
    else:
        raise FormatError(f"expected a message list or a request object, got {type(data).__name__}", format=NAME)
    names: dict[str, str] = {}
    user_side = False
    for i, raw in enumerate(items):
        user_side = _message(raw, i, user_side, names, messages)
    return Conversation(tuple(messages), NAME, envelope)


def _fail(detail: str, where: str) -> FormatError:
    return FormatError(detail, where=where, format=NAME)


def _message(raw: Any, i: int, after_user: bool, names: dict[str, str], out: list[Message]) -> bool:
    """Append the canonical messages of ``messages[i]``; whether it was a user message."""
    where = f"messages[{i}]"
    message = require_mapping(raw, where, NAME)
    role = message.get("role")
    content = message.get("content")
    hints: dict[str, Any] | None = None
    if len(message) != 2:
        fields = {k: v for k, v in message.items() if k not in ("role", "content")}
        hints = {"fields": fields} if fields else None
    if role not in ("user", "assistant"):
        raise _fail("missing role" if role is None else f"unknown role {role!r} (expected user or assistant)",
                    f"{where}.role")  # fmt: skip
    if not isinstance(content, list):
        raise _fail("missing content" if content is None else "expected a list", f"{where}.content")
    parts: list[Part] = []
    for j, block in enumerate(cast(list[Any], content)):
        if type(block) is dict and len(cast(dict[str, Any], block)) == 1:  # the common case, kept cheap
            text = cast(dict[str, Any], block).get("text")
            if type(text) is str:
                parts.append(Text(text=text))
                continue
        parts.append(_block(block, f"{where}.content[{j}]", names))
    if role == "assistant":
        out.append(Message(role="assistant", parts=tuple(parts), extras={NAME: hints} if hints else {}))
        return False
    if after_user:
        hints = {**(hints or {}), "turn": "new"}
    out.extend(split_turn(parts, hints, NAME))
    return True


def _put(fields: dict[str, Any], path: tuple[str, ...], extra: dict[str, Any]) -> None:
    """Record unknown keys `extra` found at `path` inside a block, nested as on the wire."""
    if not extra:
        return
    for key in path:
        fields = fields.setdefault(key, {})
    fields.update(extra)


def _known(obj: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in keys}


def _str(obj: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = obj.get(key)
    if isinstance(value, str):
        return value
    if key not in obj:
        if required:
            raise _fail("missing required string", f"{where}.{key}")
        return None
    raise _fail(f"expected a string, got {type(value).__name__}", f"{where}.{key}")


def _block(raw: Any, where: str, names: dict[str, str]) -> Part:
    block = require_mapping(raw, where, NAME)
    members = [k for k in block if k in _MEMBERS]
    if len(members) > 1:
        raise _fail("a content block holds exactly one member; found " + ", ".join(members), where)
    if not members or members[0] in _OPAQUE:
        return Opaque(format=NAME, data=block)
    kind = members[0]
    value = block[kind]
    hints: dict[str, Any] = {}
    fields = _known(block, (kind,))
    where = f"{where}.{kind}"
    part: Part
    match kind:
        case "text":
            if not isinstance(value, str):
                raise _fail(f"expected a string, got {type(value).__name__}", where)
            part = Text(text=value)
        case "image" | "document":
            media = _media(kind, value, where, hints, fields)
            if media is None:
                return Opaque(format=NAME, data=block)
            part = media
        case "toolUse":
            part = _tool_use(value, where, hints, fields)
            names[part.id] = part.name
        case "toolResult":
            part = _tool_result(value, where, hints, fields, names)
        case "reasoningContent":
            reasoning = _reasoning(value, where, hints, fields)
            if reasoning is None:
                return Opaque(format=NAME, data=block)
            part = reasoning
        case _:  # pragma: no cover
            raise AssertionError(kind)
    if fields:
        hints["fields"] = fields
    return with_extras(part, {NAME: hints}) if hints else part


def _unwrap(value: Any, where: str, hints: dict[str, Any]) -> tuple[Any, str]:
    """The base64 text of a bytes field, out of Strands' wrapper when it is in one."""
    if not isinstance(value, dict):
        return value, where
    wrapper = cast(dict[str, Any], value)
    if wrapper.keys() != {_STRANDS_BYTES, "data"} or wrapper[_STRANDS_BYTES] is not True:
        raise _fail(f'expected base64 text or {{"{_STRANDS_BYTES}": true, "data": ...}}', where)
    hints["bytes"] = "strands"
    return wrapper["data"], f"{where}.data"


def _bytes(value: Any, where: str, hints: dict[str, Any]) -> bytes:
    value, where = _unwrap(value, where, hints)
    data, original = decode_b64(value, where, NAME)
    if original is not None:
        hints["b64"] = original
    return data


def _media(kind: str, raw: Any, where: str, hints: dict[str, Any], fields: dict[str, Any]) -> Image | File | None:
    """An ``image`` or ``document`` block; None for a source kind chainsum has no model for (kept opaque)."""
    obj = require_mapping(raw, where, NAME)
    fmt = _str(obj, "format", where)
    name = _str(obj, "name", where) if kind == "document" else None
    source = require_mapping(obj.get("source"), f"{where}.source", NAME)
    _put(fields, (kind,), _known(obj, ("format", "name", "source") if kind == "document" else ("format", "source")))
    data: bytes | None = None
    url: str | None = None
    if len(source) != 1:
        return None
    if "bytes" in source:
        data = _bytes(source["bytes"], f"{where}.source.bytes", hints)
    elif "s3Location" in source:
        location = require_mapping(source["s3Location"], f"{where}.source.s3Location", NAME)
        url = _str(location, "uri", f"{where}.source.s3Location", required=True)
        _put(fields, (kind, "source", "s3Location"), _known(location, ("uri",)))
        if url and (url.startswith(("http://", "https://")) or parse_data_url(url) is not None):
            hints["s3"] = True
    elif "text" in source and kind == "document":
        text = _str(source, "text", f"{where}.source", required=True)
        data = cast(str, text).encode("utf-8", "surrogatepass")
        hints["source"] = "text"
    else:
        return None
    if kind == "image":
        return Image(url=url, data=data, media_type=None if fmt is None else f"image/{fmt}")
    media_type = _DOCUMENT_TYPES.get(fmt) if fmt is not None else None
    if fmt is not None and media_type is None:
        hints["format"] = fmt
    return File(url=url, data=data, media_type=media_type, name=name)


def _tool_use(raw: Any, where: str, hints: dict[str, Any], fields: dict[str, Any]) -> ToolCall:
    obj = require_mapping(raw, where, NAME)
    _put(fields, ("toolUse",), _known(obj, ("toolUseId", "name", "input")))
    call_id = cast(str, _str(obj, "toolUseId", where, required=True))
    name = cast(str, _str(obj, "name", where, required=True))
    if "input" not in obj:
        hints["absent"] = ["input"]
    return ToolCall(id=call_id, name=name, arguments=compact_json(obj["input"]) if "input" in obj else "{}")


def _tool_result(
    raw: Any, where: str, hints: dict[str, Any], fields: dict[str, Any], names: Mapping[str, str]
) -> ToolResult:
    obj = require_mapping(raw, where, NAME)
    _put(fields, ("toolResult",), _known(obj, ("toolUseId", "content", "status")))
    call_id = cast(str, _str(obj, "toolUseId", where, required=True))
    absent: list[str] = []
    status = obj.get("status")
    if "status" not in obj:
        absent.append("status")
    elif status not in ("success", "error"):
        raise _fail(f"expected success or error, got {status!r}", f"{where}.status")
    content: str | tuple[ResultPart, ...] = ()
    if "content" not in obj:
        absent.append("content")
    else:
        items = require_list(obj["content"], f"{where}.content", NAME)
        only = cast(dict[str, Any], items[0]) if len(items) == 1 and type(items[0]) is dict else None
        if only is not None and len(only) == 1 and type(only.get("text")) is str:
            content = cast(str, only["text"])
        else:
            content = tuple(_result_item(item, f"{where}.content[{j}]") for j, item in enumerate(items))
    if absent:
        hints["absent"] = absent
    return ToolResult(call_id=call_id, name=names.get(call_id), content=content, is_error=status == "error")


def _result_item(raw: Any, where: str) -> ResultPart:
    item = require_mapping(raw, where, NAME)
    if len(item) == 1:
        key, value = next(iter(item.items()))
        if key == "text" and isinstance(value, str):
            return Text(text=value)
        if key == "json":
            return Text(text=compact_json(value), extras={NAME: {"json": True}})
        if key in ("image", "document"):
            hints: dict[str, Any] = {}
            fields: dict[str, Any] = {}
            media = _media(key, value, f"{where}.{key}", hints, fields)
            if media is not None:
                if fields:
                    hints["fields"] = fields
                return cast(ResultPart, with_extras(media, {NAME: hints})) if hints else media
    return Text(text=compact_json(item), extras={NAME: {"raw": True}})


def _reasoning(raw: Any, where: str, hints: dict[str, Any], fields: dict[str, Any]) -> Reasoning | None:
    obj = require_mapping(raw, where, NAME)
    if "reasoningText" not in obj and "redactedContent" not in obj:
        return None
    _put(fields, ("reasoningContent",), _known(obj, ("reasoningText", "redactedContent")))
    text, signature, data = "", None, None
    if "reasoningText" in obj:
        body = require_mapping(obj["reasoningText"], f"{where}.reasoningText", NAME)
        _put(fields, ("reasoningContent", "reasoningText"), _known(body, ("text", "signature")))
        text = cast(str, _str(body, "text", f"{where}.reasoningText", required=True))
        signature = _str(body, "signature", f"{where}.reasoningText")
    if "redactedContent" in obj:
        value, at = _unwrap(obj["redactedContent"], f"{where}.redactedContent", hints)
        if not isinstance(value, str):
            raise _fail(f"expected base64 text, got {type(value).__name__}", at)
        data = value
    return Reasoning(text=text, signature=signature, data=data)


# --- dump -------------------------------------------------------------------------------------------------------


def dump(
    messages: Sequence[Message],
    envelope: Mapping[str, Any] | None = None,
    dropped: list[Dropped] | None = None,
) -> Any:
    """Write messages (and ``system`` blocks); the envelope of a loaded request rebuilds that request."""
    report_foreign(messages, NAME, dropped)
    plan = plan_turns(messages, NAME, dropped)
    writer = _Writer(dropped)
    system: list[Any] | None = None
    if plan.system:
        system = []
        for i, m in plan.system:
            writer.message_name(i, m)
            for p in m.parts:
                if isinstance(p, Text | Opaque):
                    writer.part(i, p, system)
                else:
                    drop(dropped, i, f"{p.kind} part in a system message")
    out = [writer.turn(t) for t in plan.turns]
    return wrap_document(out, system, envelope or {}, "messages", "system")


class _Writer:
    def __init__(self, dropped: list[Dropped] | None) -> None:
        self.dropped = dropped

    def message_name(self, i: int, m: Message) -> None:
        if m.name is not None:
            drop(self.dropped, i, "participant name")

    def turn(self, turn: Turn) -> dict[str, Any]:
        content: list[Any] = []
        for i, m in turn.messages:
            self.message_name(i, m)
        for i, p in turn.parts(NAME):
            self.part(i, p, content)
        out: dict[str, Any] = {"role": turn.role, "content": content}
        fields = native(turn.first.extras, NAME).get("fields")
        if isinstance(fields, dict):
            merge_fields(out, cast(dict[str, Any], fields))
        return out

    def attached(self, i: int, reasoning: Reasoning | None, what: str) -> None:
        if reasoning is not None and (reasoning.text or reasoning.signature is not None or reasoning.data is not None):
            drop(self.dropped, i, f"reasoning attached to a {what}")

    def part(self, i: int, p: Part, out: list[Any]) -> None:
        """Append the wire block(s) of `p` to `out` (a reasoning part with text and data takes two)."""
        hints = native(p.extras, NAME)
        block: dict[str, Any]
        match p:
            case Text():
                self.attached(i, p.reasoning, "text part")
                block = {"text": p.text}
            case Reasoning():
                if p.data is not None and (p.text or p.signature is not None):
                    out.append({"reasoningContent": {"reasoningText": self.reasoning_text(p)}})
                    block = {"reasoningContent": {"redactedContent": self.redacted(p.data, hints)}}
                elif p.data is not None:
                    block = {"reasoningContent": {"redactedContent": self.redacted(p.data, hints)}}
                else:
                    block = {"reasoningContent": {"reasoningText": self.reasoning_text(p)}}
            case ToolCall():
                self.attached(i, p.reasoning, "tool call")
                use: dict[str, Any] = {"toolUseId": p.id, "name": p.name}
                if "input" not in hints.get("absent", ()):
                    value: Any = parse_json(p.arguments) if p.arguments.strip() else {}
                    if value is INVALID_JSON:
                        drop(self.dropped, i, f"arguments of tool call {p.id} (not JSON)")
                        value = {}
                    use["input"] = value
                block = {"toolUse": use}
            case ToolResult():
                block = {"toolResult": self.tool_result(i, p, hints)}
            case Image() | File():
                media = self.media(i, p, hints)
                if media is None:
                    return
                block = media
            case Opaque():
                if p.format == NAME:
                    out.append(p.data)
                else:
                    drop(self.dropped, i, f"{p.format} block")
                return
            case _:  # pragma: no cover
                assert_never(p)
        fields = hints.get("fields")
        if isinstance(fields, dict):
            merge_fields(block, cast(dict[str, Any], fields))
        out.append(block)

    @staticmethod
    def reasoning_text(p: Reasoning) -> dict[str, Any]:
        body: dict[str, Any] = {"text": p.text}
        if p.signature is not None:
            body["signature"] = p.signature
        return body

    @staticmethod
    def redacted(data: str, hints: Mapping[str, Any]) -> Any:
        return {_STRANDS_BYTES: True, "data": data} if hints.get("bytes") == "strands" else data

    def tool_result(self, i: int, p: ToolResult, hints: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"toolUseId": p.call_id}
        absent = hints.get("absent", ())
        if "content" not in absent:
            if isinstance(p.content, str):
                out["content"] = [{"text": p.content}]
            else:
                content: list[Any] = []
                for c in p.content:
                    own = native(c.extras, NAME)
                    if isinstance(c, Text) and (own.get("json") or own.get("raw")):
                        value = parse_json(c.text)
                        if value is not INVALID_JSON and (own.get("json") or isinstance(value, dict)):
                            content.append({"json": value} if own.get("json") else value)
                            continue
                    self.part(i, c, content)
                out["content"] = content
        if "status" not in absent:
            out["status"] = "error" if p.is_error else "success"
        return out

    def media(self, i: int, p: Image | File, hints: Mapping[str, Any]) -> dict[str, Any] | None:
        body: dict[str, Any] = {}
        fmt = hints.get("format")
        if not isinstance(fmt, str) and p.media_type is not None:
            fmt = p.media_type.partition("/")[2] if isinstance(p, Image) else _DOCUMENT_FORMATS.get(p.media_type)
            fmt = fmt or p.media_type.partition("/")[2]
        if isinstance(fmt, str):
            body["format"] = fmt
        if isinstance(p, File) and p.name is not None:
            body["name"] = p.name
        data, url = p.data, p.url
        if data is None and url is not None and not hints.get("s3"):
            inline = parse_data_url(url)
            if inline is not None:
                data = inline[1]
                if "format" not in body and inline[0]:
                    body["format"] = inline[0].partition("/")[2]
            elif url.startswith(("http://", "https://")):
                drop(self.dropped, i, f"{p.kind} by URL (Bedrock reads bytes or S3 only)")
                return None
        if data is not None and hints.get("source") == "text":
            body["source"] = {"text": data.decode("utf-8", "surrogatepass")}
        elif data is not None:
            b64 = encode_b64(data, hints.get("b64"))
            body["source"] = {"bytes": {_STRANDS_BYTES: True, "data": b64} if hints.get("bytes") == "strands" else b64}
        elif url is not None:
            body["source"] = {"s3Location": {"uri": url}}
        else:
            drop(self.dropped, i, f"{p.kind} with neither data nor URL")
            return None
        return {"image" if isinstance(p, Image) else "document": body}
