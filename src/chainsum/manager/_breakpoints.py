"""Anthropic prompt-cache breakpoints the manager adds to a request (``cache_control`` blocks), and takes back.

Anthropic caches a request's prefix up to each block marked ``cache_control`` (at most 4 marked blocks a request,
system prompt and tool definitions included); a later request reads from the cache the longest prefix that an
earlier request wrote at one of its marks (looking back about 20 blocks from each of its own). A request with no
mark is never cached. A compaction rewrites the prefix, so the cache the client had built is gone; on the requests
chainsum rewrites (a session it compacted: its view of the history is no longer the client's), it adds two marks
to make the new prefix cacheable. A request of a session never compacted goes as the client wrote it, byte for
byte, marks and all (the proxy's transparency).

- **After the summary record**: the record's last block. The system prompt and the record are what a compacted
  request keeps the same until the next compaction, whatever the client does with its own marks, so that prefix is
  read from the cache on every request of the cycle, however far the conversation has grown since. The mark is
  written the same way on every request (it never moves), so between compactions a request is still the previous
  one plus the new messages, byte for byte (DESIGN invariant 10).
- **On the last block of the request** (of its last message that is not a system message: those go verbatim),
  only when the client marked none of its messages. This is the mark that moves, as Anthropic's documentation has
  a multi-turn client do: each request writes the cache up to its end, and the next one, which extends it, reads
  that prefix back. It is on the last block only, so the previous request is still a prefix of the next one but
  for that one marker (and, for a message whose content was a string, the one text block the string stands for):
  what Anthropic caches, a prefix up to a breakpoint, is the same. A client that marks its own messages (Claude
  Code moves its marker to its newest message on every request) keeps doing that alone.

A client's own marks stay where it put them and count first: chainsum adds only what fits under the limit with the
marks of the system prompt and the tool definitions (the record's first, then the moving one). A mark never leaves
its content: it is written on a copy of the very item and block it belongs to, never on a block that cannot carry
one (thinking, an empty text). A caller that sends back what it got (an agent framework holding the manager's
output) sends the marks back too; `Breakpoints.unmark` turns those items back into what the manager had before
marking them, so marks neither pile up nor make the history read as changed.

Works on Anthropic wire messages (dicts) and on `Message` objects bound for Anthropic (the mark then rides in
``extras["anthropic"]["fields"]``, where `chainsum.formats.anthropic` writes it from).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final, cast

from ..chain import RECORD_INTRO, is_record_message
from ..messages import File, Image, Message, Part, Text, ToolCall, ToolResult

__all__ = ["EPHEMERAL", "LIMIT", "Breakpoints", "count_marks"]

LIMIT: Final = 4
"""Anthropic: "A maximum of 4 blocks with cache_control may be provided"."""
EPHEMERAL: Final[Mapping[str, str]] = {"type": "ephemeral"}
_NAME: Final = "anthropic"
_DRIFT: Final = 8
"""How far from where it went a marked item sent back is looked for (`Breakpoints.unmark`)."""
_MARKABLE: Final = frozenset({"text", "image", "document", "tool_use", "tool_result", "search_result"})
"""Wire blocks that may carry ``cache_control`` (thinking blocks may not: Anthropic caches them with the turn)."""


# ---------------------------------------------------------------------------------------------- counting


def _block_marks(block: object) -> int:
    if not isinstance(block, Mapping):
        return 0
    b = cast(Mapping[str, Any], block)
    n = 1 if "cache_control" in b else 0
    inner = b.get("content")
    if isinstance(inner, list):  # a tool result's own blocks
        n += sum(1 for x in cast(list[Any], inner) if isinstance(x, Mapping) and "cache_control" in x)
    return n


def _part_marks(part: Part) -> int:
    n = 1 if "cache_control" in _fields(part.extras) else 0
    if isinstance(part, ToolResult) and not isinstance(part.content, str):
        n += sum(1 for p in part.content if "cache_control" in _fields(p.extras))
    return n


def count_marks(value: object) -> int:
    """Blocks carrying ``cache_control`` in `value`: a system prompt (a string or blocks), tool definitions, wire
    messages, or `Message` objects. Anthropic takes at most 4 a request, so a caller that sends marks outside the
    messages it gives `ContextManager.prepare` (the proxy: the request's tool definitions) counts them with this and
    passes the count as ``outside_cache_marks``, and the manager adds only what still fits."""
    if isinstance(value, Message):
        return sum(_part_marks(p) for p in value.parts)
    if isinstance(value, Mapping):
        item = cast(Mapping[str, Any], value)
        content = item.get("content")
        if "role" in item and isinstance(content, list):
            return sum(_block_marks(b) for b in cast(list[Any], content))
        return _block_marks(item)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return sum(count_marks(x) for x in cast(Sequence[Any], value))
    return 0


def _fields(extras: Mapping[str, Any]) -> Mapping[str, Any]:
    ns = extras.get(_NAME)
    fields = cast(Mapping[str, Any], ns).get("fields") if isinstance(ns, Mapping) else None
    return cast(Mapping[str, Any], fields) if isinstance(fields, Mapping) else {}


# ---------------------------------------------------------------------------------------------- marking


def _wire_marked(item: object, record: bool) -> object | None:
    """A copy of wire message `item` with a mark on its last block (`record`: on the record's own text block), or
    None when that block cannot carry one or carries one already."""
    if not isinstance(item, Mapping):
        return None
    msg = cast(Mapping[str, Any], item)
    content = msg.get("content")
    if isinstance(content, str):
        if not content or (record and not content.startswith(RECORD_INTRO)):
            return None
        return {**msg, "content": [{"type": "text", "text": content, "cache_control": dict(EPHEMERAL)}]}
    if not isinstance(content, list) or not content:
        return None
    blocks = cast(list[Any], content)
    at = len(blocks) - 1
    if record:
        found = [j for j, b in enumerate(blocks) if _is_record_block(b)]
        if not found:
            return None
        at = found[-1]
    block = blocks[at]
    if not isinstance(block, Mapping) or "cache_control" in block:
        return None
    b = cast(Mapping[str, Any], block)
    if b.get("type") not in _MARKABLE or (b.get("type") == "text" and not b.get("text")):
        return None
    return {**msg, "content": [*blocks[:at], {**b, "cache_control": dict(EPHEMERAL)}, *blocks[at + 1 :]]}


def _is_record_block(block: object) -> bool:
    if not isinstance(block, Mapping):
        return False
    b = cast(Mapping[str, Any], block)
    text = b.get("text")
    return b.get("type") == "text" and isinstance(text, str) and text.startswith(RECORD_INTRO)


def _is_record_item(item: object) -> bool:
    if isinstance(item, Message):
        return is_record_message(item)
    if not isinstance(item, Mapping):
        return False
    content = cast(Mapping[str, Any], item).get("content")
    if isinstance(content, str):
        return content.startswith(RECORD_INTRO)
    return isinstance(content, list) and any(_is_record_block(b) for b in cast(list[Any], content))


def _leading_record(items: Sequence[Any]) -> int | None:
    """The last record of the run of system messages and records that opens `items` (where chainsum writes its
    record: at the cut, before what it kept), or None. Only that run is read, not the whole history: this runs on
    every request, and a history of thousands of items would cost a scan of all of them each time."""
    record: int | None = None
    for k in range(len(items) - 1):
        item = items[k]
        if _is_record_item(item):
            record = k
        elif not _is_system(item):
            break
    return record


def _is_system(item: object) -> bool:
    if isinstance(item, Message):
        return item.role == "system"
    return isinstance(item, Mapping) and cast(Mapping[str, Any], item).get("role") == "system"


def _markable_part(part: Part) -> bool:
    match part:
        case Text():
            return bool(part.text) and part.reasoning is None
        case ToolCall() | ToolResult() | Image() | File():
            return True
        case _:  # reasoning, and other formats' blocks
            return False


def _message_marked(message: Message, record: bool) -> Message | None:
    """`message` with a mark on its last part (`record`: its first text part, the record's), or None."""
    if not message.parts:
        return None
    at = len(message.parts) - 1
    if record:
        at = next((j for j, p in enumerate(message.parts) if isinstance(p, Text)), -1)
        if at < 0:
            return None
    part = message.parts[at]
    if not _markable_part(part) or "cache_control" in _fields(part.extras):
        return None
    ns = dict(cast(Mapping[str, Any], part.extras.get(_NAME) or {}))
    ns["fields"] = {**_fields(part.extras), "cache_control": dict(EPHEMERAL)}
    marked = replace(part, extras={**part.extras, _NAME: ns})
    return replace(message, parts=(*message.parts[:at], marked, *message.parts[at + 1 :]))


def _marked(item: object, record: bool) -> object | None:
    if isinstance(item, Message):
        return _message_marked(item, record)
    return _wire_marked(item, record)


class Breakpoints:
    """One manager's breakpoints: where it put them in the last request, so that a caller sending that request
    back gets them taken off (`unmark`) before its history is read."""

    def __init__(self) -> None:
        self._sent: list[tuple[int, object, object]] = []
        """(index, item as sent with a mark, item as it was) of the last request."""

    def unmark(self, items: Sequence[Any]) -> Sequence[Any]:
        """`items` with every item the last request marked, sent back as it went, replaced by the item as it was
        before the mark; `items` itself when there is none (a caller keeping its own history)."""
        out: list[Any] | None = None
        for k, sent, before in self._sent:
            # where it went, or a few items off (a caller that left out what it took for chainsum's, a recall block)
            for j in sorted(range(max(0, k - _DRIFT), min(len(items), k + _DRIFT + 1)), key=lambda j: abs(j - k)):
                if items[j] is not before and items[j] == sent:
                    if out is None:
                        out = list(items)
                    out[j] = before
                    break
        return items if out is None else out

    def place(self, items: Sequence[Any], *, outside: int, rewritten: bool) -> Sequence[Any]:
        """`items` (the request's messages, Anthropic wire dicts or `Message` objects) with the manager's marks
        (see the module docstring); `outside` counts the marks elsewhere in the request (system prompt, tools);
        `rewritten`: the manager's view of the history is not the caller's (it compacted); a request that neither
        is rewritten nor holds a record goes as it came."""
        self._sent = []
        record = _leading_record(items)
        if record is None and rewritten:  # a record behind other messages (not where chainsum writes it): look further
            record = next((k for k in range(len(items) - 2, -1, -1) if _is_record_item(items[k])), None)
        if not rewritten and record is None:
            return items
        client = count_marks(items)
        room = LIMIT - outside - client
        if room <= 0:
            return items
        out: list[Any] | None = None
        if record is not None:
            marked = _marked(items[record], record=True)
            if marked is not None:
                out = list(items)
                self._sent.append((record, marked, items[record]))
                out[record] = marked
                room -= 1
        last = next((k for k in range(len(items) - 1, -1, -1) if not _is_system(items[k])), None)
        if room > 0 and client == 0 and last is not None and last != record:
            marked = _marked(items[last], record=False)
            if marked is not None:
                out = list(items) if out is None else out
                self._sent.append((last, marked, items[last]))
                out[last] = marked
        return items if out is None else out
