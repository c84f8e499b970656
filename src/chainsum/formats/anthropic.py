"""Anthropic Messages: a request ``{"system": ..., "messages": [...], ...}`` or a bare list of messages.

Wire to canonical:

- ``system`` (a string or text blocks) becomes one leading ``system`` message.
- A ``{"role": "system", "content": ...}`` message inside ``messages`` (the ``mid-conversation-system`` beta that
  Claude Code sends) becomes a ``system`` message in its place, marked ``inline``: it is written back there, as it
  came, never lifted into ``system`` nor turned into user text. Its content must be text (a string or text blocks);
  anything else is a `FormatError`, so a proxy passes the request through untouched rather than guess.
- Blocks: ``text`` → `Text`; ``thinking`` → `Reasoning` (text, signature); ``redacted_thinking`` → `Reasoning` with
  only ``data``; ``tool_use`` → `ToolCall` (``input`` serialized to compact JSON text, parsed back on dump);
  ``tool_result`` → `ToolResult`; ``image`` and ``document`` with a base64, url (or, for documents, plain text)
  source → `Image` / `File` (``title`` is the file name). Everything else (server-tool blocks, MCP blocks,
  file-id or content sources, blocks of types newer than this module) → `Opaque`, written back verbatim.
- A user message holding ``tool_result`` blocks is split: each run of results becomes a ``tool`` message, each run
  of other blocks a ``user`` message, so the chain layer sees the canonical shape every format shares.

Wire keys with no canonical field go to ``extras["anthropic"]["fields"]`` (``cache_control``, ``citations``,
``caller``, a message's ``id``, ...). Layout hints, also in ``extras["anthropic"]``, make ``dump(load(x)) == x``:

========== ============== =================================================================================
where      key            meaning
========== ============== =================================================================================
message    blocks         a list of one plain text block (one plain text is otherwise written as a string)
message    continues      a later piece of the previous wire message (a split user turn): rejoined in order
message    separate       a wire user message that followed another user message: not merged into it
message    inline         a system message read from inside ``messages``: written back there (`INLINE`)
Reasoning  redacted       came from ``redacted_thinking`` (``data`` holds the payload)
Reasoning  unsigned       a ``thinking`` block without ``signature``
ToolResult is_error_false ``is_error: false`` was written out explicitly
ToolResult no_content     the block had no ``content`` key
File       text_source    a document with a ``text`` source; ``data`` is its UTF-8 encoding
Text       json_block     inside a tool result: the JSON of a block that `ToolResult` content cannot hold
========== ============== =================================================================================

Dumping messages from other formats: consecutive ``user``/``tool`` messages merge into one wire user message,
tool results first (Anthropic wants the results at the start of the user turn after the calls); a ``system``
message after the start that was not read from Anthropic's ``messages`` (no ``inline`` hint: the beta is the
client's choice, not chainsum's) becomes a ``[system] `` user text block (reported); reasoning without an Anthropic
signature, reasoning bound to text or calls, other formats' opaque blocks and message names are dropped and
reported. The output shares nested values (tool inputs, opaque blocks, fields) with the messages: copy it before
mutating.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, assert_never

from ..errors import FormatError
from ..messages import File, Image, Message, Opaque, Part, Reasoning, ResultPart, Text, ToolCall, ToolResult
from ._anthropic_blocks import NAME, at, fail, read_blocks, read_content, type_name
from ._base import Conversation, Dropped, drop, native, report_foreign, require_list
from ._wire import (
    AnthropicBase64Source,
    AnthropicBlock,
    AnthropicDocumentBlock,
    AnthropicImageBlock,
    AnthropicMessage,
    AnthropicRedactedThinkingBlock,
    AnthropicTextBlock,
    AnthropicTextSource,
    AnthropicThinkingBlock,
    AnthropicToolResultBlock,
    AnthropicToolUseBlock,
    AnthropicURLSource,
    is_list,
    is_object,
    with_fields,
)

__all__ = ["INLINE", "NAME", "dump", "is_inline_system", "load", "read_content", "sniff"]

INLINE: Final = "inline"
"""The hint (in ``extras["anthropic"]``) on a system message read from inside ``messages``."""

_DISTINCTIVE: Final = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document", "server_tool_use", "search_result"}
)
_FOREIGN_TYPES: Final = frozenset(
    {"image_url", "input_audio", "file", "refusal", "input_text", "output_text", "input_image", "input_file"}
)
_FOREIGN_KEYS: Final = ("tool_calls", "tool_call_id", "function_call", "name", "parts", "refusal", "audio")
_IMAGE_MAGIC: Final = ((b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


# ---------------------------------------------------------------------------------------------- reading
#
# Blocks are read in `_anthropic_blocks`; here they are grouped into canonical messages.


def _split(parts: list[Part]) -> list[tuple[int, int]]:
    """The runs of a user turn that alternate between tool results and other blocks; empty when it has no
    results (the common case, decided without building anything)."""
    results = [p.__class__ is ToolResult for p in parts]
    if True not in results:
        return []
    runs: list[tuple[int, int]] = []
    start = 0
    for end in range(1, len(parts)):
        if results[end] != results[start]:
            runs.append((start, end))
            start = end
    runs.append((start, len(parts)))
    return runs


def is_inline_system(message: Message) -> bool:
    """True for a system message read from inside Anthropic's ``messages`` (the ``mid-conversation-system`` beta):
    the client's instruction at that point of the conversation, written back where and as it came."""
    return message.role == "system" and native(message.extras, NAME).get(INLINE) is True


def _read_message(out: list[Message], raw: Any) -> None:
    """Append the canonical message(s) of one wire message to `out`."""
    if not is_object(raw):
        raise fail(f"expected an object, got {type_name(raw)}")
    msg = raw
    role = msg.get("role")
    if role != "user" and role != "assistant" and role != "system":
        raise fail(f"expected role 'user', 'assistant' or 'system', got {role!r}", ".role")
    if "content" not in msg:
        raise fail("missing required content", ".content")
    content = msg["content"]
    try:
        parts = read_blocks(content)
    except FormatError as e:
        raise at(".content", e) from None
    first: dict[str, Any] = {}
    if role == "system":
        for j, part in enumerate(parts):
            if part.__class__ is not Text:
                where = f".content[{j}]" if content.__class__ is list else ".content"
                raise fail(f"a system message holds text only, got {part.kind}", where)
        first[INLINE] = True
    msg_id = None
    if len(msg) > 2:
        first["fields"] = fields = {k: v for k, v in msg.items() if k != "role" and k != "content"}
        msg_id = fields.get("id")
        msg_id = msg_id if isinstance(msg_id, str) else None
    if len(parts) == 1 and content.__class__ is list and parts[0].__class__ is Text and not parts[0].extras:
        first["blocks"] = True
    runs: list[tuple[int, int]] = []
    if role == "user":
        if out and out[-1].role in ("user", "tool"):
            first["separate"] = True
        if len(parts) != 1:
            runs = _split(parts)
        elif parts[0].__class__ is ToolResult:
            role = "tool"  # one result: nothing to split
    if not runs:
        out.append(Message(role=role, parts=tuple(parts), id=msg_id, extras={NAME: first} if first else {}))
        return
    for start, end in runs:
        hints = first if start == 0 else {"continues": True}
        out.append(
            Message(
                role="tool" if parts[start].__class__ is ToolResult else "user",
                parts=tuple(parts[start:end]),
                id=msg_id if start == 0 else None,
                extras={NAME: hints} if hints else {},
            )
        )


def load(data: Any) -> Conversation:
    """Read a request object or a bare message list."""
    envelope: dict[str, Any] = {}
    out: list[Message] = []
    if is_object(data):
        doc = data
        if "messages" not in doc:
            raise fail("missing required list", "messages")
        wire = require_list(doc["messages"], "messages", NAME)
        prefix = "messages"
        envelope = {"keys": list(doc), "fields": {k: v for k, v in doc.items() if k not in ("system", "messages")}}
        if "system" in doc:
            system = doc["system"]
            parts = read_content(system, "system")
            plain = len(parts) == 1 and isinstance(system, list) and isinstance(parts[0], Text) and not parts[0].extras
            out.append(Message(role="system", parts=tuple(parts), extras={NAME: {"blocks": True}} if plain else {}))
    elif is_list(data):
        wire, prefix = data, ""
    else:
        raise fail(f"expected a message list or a request object, got {type_name(data)}")
    i = 0
    try:
        for raw in wire:
            _read_message(out, raw)
            i += 1
    except FormatError as e:
        raise at(f"{prefix}[{i}]", e) from None
    return Conversation(tuple(out), NAME, envelope)


def _sniff_messages(messages: list[Any], *, inline_system: bool = False) -> int:
    """The score of a message list. A ``system`` message in it reads as Anthropic's (the mid-conversation beta)
    only where something else already says Anthropic (`inline_system`: a top-level ``system`` beside it, or an
    Anthropic-only block), since a plain list with a system message is OpenAI Chat's."""
    distinctive = False
    system = False
    for m in messages:
        if not is_object(m):
            return 0
        msg = m
        role = msg.get("role")
        system = system or role == "system"
        if role not in ("user", "assistant", "system") or any(k in msg for k in _FOREIGN_KEYS):
            return 0
        if msg.get("type", "message") != "message":
            return 0
        content = msg.get("content")
        if is_list(content):
            for b in content:
                kind = b.get("type") if is_object(b) else None
                if not isinstance(kind, str) or kind in _FOREIGN_TYPES:
                    return 0
                if kind in _DISTINCTIVE or (kind == "image" and "source" in b):
                    distinctive = True
        elif not isinstance(content, str):
            return 0
    if system and not (distinctive or inline_system):
        return 0
    return 2 if distinctive else 1


def sniff(data: Any) -> int:
    """2 with Anthropic-only blocks or a top-level ``system`` beside ``messages``; 0 on anything another format
    has and Anthropic rejects (``tool_calls``, ``tool`` roles, ``system`` roles without anything else Anthropic's,
    Gemini ``parts``, Bedrock blocks without ``type``); else 1."""
    if is_list(data):
        return _sniff_messages(data)
    if not is_object(data):
        return 0
    messages = data.get("messages")
    if not is_list(messages):
        return 0
    score = _sniff_messages(messages, inline_system="system" in data)
    return 2 if score and "system" in data else score


# ---------------------------------------------------------------------------------------------- writing


class _Writer:
    """Builds wire blocks from parts, recording what the target cannot express."""

    def __init__(self, dropped: list[Dropped] | None) -> None:
        self.dropped = dropped

    def drop(self, index: int, what: str) -> None:
        drop(self.dropped, index, what)

    def block(self, part: Part, i: int) -> AnthropicBlock | None:
        ns = native(part.extras, NAME)
        fields = _fields_of(ns)
        match part:
            case Text():
                if part.reasoning is not None:
                    self.drop(i, "reasoning attached to a text part")
                text: AnthropicTextBlock = {"type": "text", "text": part.text}
                return with_fields(text, fields)
            case Reasoning():
                return self._reasoning(part, ns, fields, i)
            case ToolCall():
                if part.reasoning is not None:
                    self.drop(i, f"reasoning attached to tool call {part.id}")
                call: AnthropicToolUseBlock = {
                    "type": "tool_use",
                    "id": part.id,
                    "name": part.name,
                    "input": self._input(part, i),
                }
                return with_fields(call, fields)
            case ToolResult():
                out: AnthropicToolResultBlock = {"type": "tool_result", "tool_use_id": part.call_id}
                if isinstance(part.content, str):
                    if part.content or not ns.get("no_content"):
                        out["content"] = part.content
                else:
                    out["content"] = [b for b in (self._result_item(p, i) for p in part.content) if b is not None]
                if part.is_error or ns.get("is_error_false"):
                    out["is_error"] = part.is_error
                return with_fields(out, fields)
            case Image():
                return self._image(part, fields, i)
            case File():
                return self._file(part, ns, fields, i)
            case Opaque():
                data = part.data
                if part.format != NAME:
                    self.drop(i, f"{part.format} block with no Anthropic equivalent")
                elif is_object(data) and isinstance(data.get("type"), str):
                    return data  # verbatim
                else:
                    self.drop(i, "malformed anthropic block (not an object with a type)")
                return None
            case _:  # pragma: no cover - exhaustiveness
                assert_never(part)

    def _reasoning(
        self, part: Reasoning, ns: dict[str, Any], fields: dict[str, Any], i: int
    ) -> AnthropicThinkingBlock | AnthropicRedactedThinkingBlock | None:
        if ns.get("redacted") and part.data is not None:
            redacted: AnthropicRedactedThinkingBlock = {"type": "redacted_thinking", "data": part.data}
            return with_fields(redacted, fields)
        if part.signature is None and not ns.get("unsigned"):
            self.drop(i, "reasoning without an Anthropic signature (cannot be sent as thinking)")
            return None
        if part.data is not None:
            self.drop(i, "opaque reasoning data beside signed thinking")
        out: AnthropicThinkingBlock = {"type": "thinking", "thinking": part.text}
        if part.signature is not None:
            out["signature"] = part.signature
        return with_fields(out, fields)

    def _input(self, part: ToolCall, i: int) -> dict[str, Any]:
        if not part.arguments.strip():
            return {}
        try:
            value: Any = json.loads(part.arguments)
        except ValueError:
            value = None
        if is_object(value):
            return value
        self.drop(i, f"arguments of tool call {part.id} are not a JSON object (sent as {{}})")
        return {}

    def _image(self, part: Image, fields: dict[str, Any], i: int) -> AnthropicImageBlock | None:
        data, media_type = part.data, part.media_type
        source: AnthropicBase64Source | AnthropicURLSource
        if data is None and part.url is not None and part.url.startswith("data:") and ";base64," in part.url:
            head, _, encoded = part.url.partition(";base64,")
            media_type = media_type or head[5:] or None
            source = {"type": "base64", "media_type": media_type, "data": encoded}
        elif data is not None:
            if media_type is None:
                media_type = next((t for magic, t in _IMAGE_MAGIC if data.startswith(magic)), None)
                if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
                    media_type = "image/webp"
                if media_type is None:
                    self.drop(i, "media type of an image (unknown; sent as image/png)")
                    media_type = "image/png"
            source = {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode("ascii")}
        elif part.url is not None:
            source = {"type": "url", "url": part.url}
        else:
            self.drop(i, "image with neither data nor URL")
            return None
        out: AnthropicImageBlock = {"type": "image", "source": source}
        return with_fields(out, fields)

    def _file(self, part: File, ns: dict[str, Any], fields: dict[str, Any], i: int) -> AnthropicDocumentBlock | None:
        source: AnthropicBase64Source | AnthropicURLSource | AnthropicTextSource | None = None
        if part.data is not None:
            if ns.get("text_source") or (not ns and (part.media_type or "").startswith("text/")):
                try:
                    text = part.data.decode("utf-8", "surrogatepass")
                    source = {"type": "text", "media_type": part.media_type or "text/plain", "data": text}
                except UnicodeDecodeError:  # not text after all: send the bytes
                    pass
            if source is None:
                encoded = base64.b64encode(part.data).decode("ascii")
                source = {"type": "base64", "media_type": part.media_type or "application/pdf", "data": encoded}
        elif part.url is not None:
            source = {"type": "url", "url": part.url}
        else:
            self.drop(i, "file with neither data nor URL")
            return None
        out: AnthropicDocumentBlock = {"type": "document", "source": source}
        if part.name is not None:
            out["title"] = part.name
        return with_fields(out, fields)

    def _result_item(self, part: ResultPart, i: int) -> AnthropicBlock | None:
        if isinstance(part, Text) and native(part.extras, NAME).get("json_block"):
            try:
                value = json.loads(part.text)
            except ValueError:
                value = None
            if is_object(value):
                return value  # the block, verbatim
            text: AnthropicTextBlock = {"type": "text", "text": part.text}
            return text
        return self.block(part, i)

    def blocks(self, message: Message, i: int, *, in_turn: bool) -> list[AnthropicBlock]:
        out = [b for b in (self.block(p, i) for p in message.parts) if b is not None]
        if in_turn and message.role == "system" and out:
            out[0] = _system_tagged(out[0])
        return out

    def content(self, group: Sequence[tuple[int, Message]], *, in_turn: bool = True) -> str | list[AnthropicBlock]:
        """One wire message's content from the canonical message(s) that make it. `in_turn` is false for the
        leading system messages, which go to ``system`` as they are."""
        for i, m in group:
            if m.name is not None:
                self.drop(i, "message name")
        if len(group) == 1:
            i, m = group[0]
            if len(m.parts) == 1 and not native(m.extras, NAME).get("blocks") and not (in_turn and m.role == "system"):
                only = m.parts[0]
                if isinstance(only, Text) and only.reasoning is None and not only.extras:
                    return only.text  # one plain text: a string, as people write it
        blocks: list[AnthropicBlock] = []
        for i, m in group:
            blocks += self.blocks(m, i, in_turn=in_turn)
        if all(native(m.extras, NAME).get("continues") for _, m in group[1:]):
            return blocks  # pieces of one wire message, in their original order
        results = [b for b in blocks if b.get("type") == "tool_result"]  # other formats' order: results first
        return results + [b for b in blocks if b.get("type") != "tool_result"] if results else blocks


def _system_tagged(block: AnthropicBlock) -> AnthropicBlock:
    """A text block with ``[system] `` before its text (a system message inside the conversation, sent as user
    text); any other block as it is."""
    match block:
        case {"type": "text"}:
            return {**block, "text": "[system] " + block["text"]}
        case _:
            return block


def _fields_of(ns: Mapping[str, Any]) -> dict[str, Any]:
    fields = ns.get("fields")
    return fields if is_object(fields) else {}


def _message_fields(group: Sequence[tuple[int, Message]]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for _, m in group:
        fields.update(_fields_of(native(m.extras, NAME)))
    return fields


def _document(envelope: Mapping[str, Any] | None, system: Any, wire: list[AnthropicMessage]) -> Any:
    """The request object in its original key order (a system prompt it did not have goes before the messages),
    or a bare list when there is neither envelope nor system prompt."""
    keys: Any = envelope.get("keys") if envelope else None
    fields: Any = envelope.get("fields") if envelope else None
    if not is_list(keys) or not is_object(fields):
        return wire if system is None else {"system": system, "messages": wire}
    doc: dict[str, Any] = {}
    for key in [*keys, "messages"]:
        if key == "messages" and system is not None:
            doc.setdefault("system", system)
        if key == "messages" or (key == "system" and system is not None):
            doc[key] = wire if key == "messages" else system
        elif key in fields:
            doc[key] = fields[key]
    return doc


def dump(
    messages: Sequence[Message],
    envelope: Mapping[str, Any] | None = None,
    dropped: list[Dropped] | None = None,
) -> Any:
    """The wire document: a request object when there is a system prompt or an envelope, else a bare list."""
    report_foreign(messages, NAME, dropped)
    writer = _Writer(dropped)
    lead = 0
    while lead < len(messages) and messages[lead].role == "system" and not is_inline_system(messages[lead]):
        lead += 1
    system = writer.content([(i, messages[i]) for i in range(lead)], in_turn=False) if lead else None
    wire: list[AnthropicMessage] = []
    group: list[tuple[int, Message]] = []

    def flush() -> None:
        if group:
            turn: AnthropicMessage = {"role": "user", "content": writer.content(group)}
            wire.append(with_fields(turn, _message_fields(group)))
            group.clear()

    for i in range(lead, len(messages)):
        m = messages[i]
        if m.role == "assistant":
            flush()
            turn: AnthropicMessage = {"role": "assistant", "content": writer.content([(i, m)])}
            wire.append(with_fields(turn, _message_fields([(i, m)])))
            continue
        if is_inline_system(m):
            flush()
            inline: AnthropicMessage = {"role": "system", "content": writer.content([(i, m)], in_turn=False)}
            wire.append(with_fields(inline, _message_fields([(i, m)])))
            continue
        if m.role == "system":
            writer.drop(i, "system message after the start (sent as a user text block prefixed [system])")
        elif group and native(m.extras, NAME).get("separate"):
            flush()
        group.append((i, m))
    flush()
    return _document(envelope, system, wire)
