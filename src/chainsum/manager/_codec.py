"""The caller's history, read incrementally: wire items of one format (or `Message`s) to canonical messages and back.

A chat product rebuilds its message list from its database on every request, and an HTTP proxy parses a new body
every time: the list is new, its items are new objects, but all of it except the last message or two is what came
last time. So the previous call's items are kept, and a new list that starts with equal items (compared by value,
the very same objects compared first, all in C) costs only the conversion of what is new.

Per-item conversion is exact for formats whose wire items map to messages on their own (OpenAI chat, Anthropic,
Gemini, chainsum's JSON). OpenAI Responses groups consecutive items into one assistant message and Bedrock names a
tool result after the call it answers, so for those the conversion restarts at the last *turn start* (a user
message item that is not a tool result): items from a turn start on convert the same alone as in the whole list.

`src[i]` is the index of the item canonical message ``i`` came from (for the restarting formats, the first item of
its segment), so that output can reuse the caller's own items after a compacted part.

A recall block (`_recall`) is part of what the model sees, not of the caller's history; a caller that stores what it
was sent (an agent framework that replaces its state) sends it back. It is dropped on reading, and its items are
listed in `recall_items`: the manager puts each block it still holds back where it was sent (`_pins`), once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from ..errors import FormatError
from ..formats import detect_format, dump, load
from ..messages import Message
from ._reader import equal_head
from ._recall import is_recall_message

__all__ = ["LIVE_FORMATS", "Codec", "alternating"]

LIVE_FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "bedrock", "chainsum")
"""Wire formats the manager takes (besides `Message` objects): the ones a live request is written in."""

_LOCAL = frozenset({"openai", "anthropic", "gemini", "chainsum"})
_RESPONSES_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})


def _is_turn_start(fmt: str) -> Callable[[object], bool]:
    if fmt in _LOCAL:
        return lambda item: True
    if fmt == "bedrock":

        def bedrock(item: object) -> bool:
            if not isinstance(item, Mapping) or cast(Mapping[str, Any], item).get("role") != "user":
                return False
            content = cast(Mapping[str, Any], item).get("content")
            blocks = cast(list[Any], content) if isinstance(content, list) else []
            return not any(isinstance(b, Mapping) and "toolResult" in b for b in blocks)

        return bedrock

    def responses(item: object) -> bool:
        # a user message, or a tool call's output: either ends the run of output items that reads as one
        # assistant message, so what follows converts alone (an agent's whole loop is one user turn: restarting
        # at the user message converted every step again on every request)
        if not isinstance(item, Mapping):
            return False
        m = cast(Mapping[str, Any], item)
        kind = m.get("type", "message")
        return kind in _RESPONSES_OUTPUTS or (m.get("role") == "user" and kind == "message")

    return responses


_DETECT_ITEMS = 64
"""Items read to detect a live format."""


_ALTERNATING = frozenset({"bedrock"})
"""Wire formats whose provider refuses two messages of one role in a row (Bedrock Converse), where the record or
recall block written before a kept user message must join that message's item instead of preceding it."""


def alternating(items: Sequence[Any], fmt: str | None) -> Sequence[Any]:
    """`items` with consecutive items of one role merged (their content blocks in order) in a format that
    requires alternation; the very same sequence when nothing needed merging or the format does not."""
    if fmt not in _ALTERNATING or len(items) < 2:
        return items
    roles = [cast(Mapping[str, Any], i).get("role") if isinstance(i, Mapping) else None for i in items]
    if all(a != b or a is None for a, b in itertools.pairwise(roles)):
        return items
    out: list[Any] = []
    for item, role in zip(items, roles, strict=True):
        previous = out[-1] if out else None
        if (
            role is not None
            and isinstance(previous, Mapping)
            and cast(Mapping[str, Any], previous).get("role") == role
            and isinstance(cast(Mapping[str, Any], previous).get("content"), list)
            and isinstance(cast(Mapping[str, Any], item).get("content"), list)
        ):
            before = cast(dict[str, Any], previous)
            out[-1] = {**before, "content": [*before["content"], *cast(Mapping[str, Any], item)["content"]]}
        else:
            out.append(item)
    return out


def _detect(items: Sequence[object], prefer: str | None) -> str:
    """The live format of wire `items` (a list of message dicts): detected like any document; when the detected
    format is OpenAI chat but `prefer` reads the items too (plain text messages), `prefer`; OpenAI chat when none
    is certain (reading the items then names their first problem)."""
    sample = list(items[:_DETECT_ITEMS])  # a format shows in its first items; loading thousands thrice would not do
    try:
        name = detect_format(sample)
    except FormatError:
        return prefer if prefer in LIVE_FORMATS else "openai"
    if name == "openai" and prefer in LIVE_FORMATS and prefer != "openai":
        try:
            load(sample, format=prefer)
        except FormatError:
            return name
        return cast(str, prefer)
    return name if name in LIVE_FORMATS else "openai"


class Codec:
    """Conversion state for one caller: the items last seen and their canonical messages."""

    def __init__(self, format: str | None, prefer: str | None = None) -> None:
        if format is not None and format != "messages" and format not in LIVE_FORMATS:
            raise FormatError(f"unknown live format {format!r}; formats: {', '.join(LIVE_FORMATS)}")
        self.format: str | None = format
        self.prefer = prefer
        """The format to read items in when detection finds several that read them the same (plain text messages
        are both OpenAI chat and Anthropic): the provider's own, so that its tool blocks later are understood."""
        """The wire format, "messages" for `Message` objects; None until the first non-empty input decides."""
        self.items: list[object] = []
        self.messages: list[Message] = []
        self.src: list[int] = []
        self.recall_items: list[int] = []
        """Items that held only a recall block (dropped from `messages`)."""
        self._restart = (0, 0)
        """(item index, message index) of the last turn start: items from it on convert alone."""
        self.fresh_from = 0
        """Items from this index on were converted by the latest `read` (those before it were known already)."""
        self._vouched: object = None
        """The input `rereads_little` found to extend the items read, all but the last unchanged: the `read` right
        after it (`ContextManager.prepare_quiet`) need not compare them again. Any `read` clears it."""

    # reading ------------------------------------------------------------------------------------------------------
    def _kind(self, items: Sequence[object]) -> str:
        if self.format is None:
            self.format = "messages" if isinstance(items[0], Message) else _detect(items, self.prefer)
        return self.format

    def _convert(self, items: Sequence[object], offset: int) -> tuple[list[Message], list[int]]:
        """Canonical messages of `items` (the caller's items from index `offset`) and their source indexes."""
        kind = self._kind(items)
        if kind == "messages":
            for i, item in enumerate(items):
                if not isinstance(item, Message):
                    raise FormatError(
                        f"expected chainsum Message objects like the first one, got {type(item).__name__}",
                        where=f"message {offset + i}",
                    )
            pairs = [(m, offset + i) for i, m in enumerate(cast(list[Message], items)) if not is_recall_message(m)]
            if len(pairs) < len(items):
                self.recall_items.extend(offset + i for i, m in enumerate(items) if is_recall_message(cast(Message, m)))
            return [m for m, _ in pairs], [i for _, i in pairs]
        starts = _is_turn_start(kind)
        out: list[Message] = []
        src: list[int] = []
        segment_start = 0
        for i in range(1, len(items) + 1):
            if i < len(items) and not (kind in _LOCAL or starts(items[i])):
                continue
            segment = list(items[segment_start:i])
            try:
                document: object = {"format": "chainsum", "messages": segment} if kind == "chainsum" else segment
                converted = load(document, format=kind).messages
            except FormatError as exc:
                where = f"message {offset + segment_start}" + (f", {exc.where}" if exc.where else "")
                raise FormatError(exc.detail, where=where, format=kind) from None
            kept = [m for m in converted if not is_recall_message(m)]
            if converted and not kept and i - segment_start == 1:
                self.recall_items.append(offset + segment_start)
            out.extend(kept)
            src.extend([offset + segment_start] * len(kept))
            segment_start = i
        return out, src

    def read(self, items: Sequence[object]) -> int:
        """Make `items` the current input; returns how many leading canonical messages are as they were (0 when the
        input does not start like the previous one, which is then dropped). When it extends a changed copy of the
        previous one (an earlier item edited), the items before the first change are kept and the rest converted
        again, from the start of that item's turn in the formats that need it.

        For the restarting formats the last turn is converted again on every call, even when no item was added, and
        for the others the last item: an item edited in place (the very object the previous call saw) compares
        equal to itself, and a stale copy of the question being retried must never be sent or counted."""
        n_old = len(self.items)
        self.fresh_from = len(items)
        vouched, self._vouched = self._vouched, None
        if items and self.items and self._kind(items) == self.format:
            prefix = items[:n_old] if isinstance(items, list) else list(items[:n_old])
            # All but the last item compared once, in C (or not at all: `rereads_little` compared them just now),
            # then the last: a client that moves a marker onto its newest message (Claude Code's cache_control)
            # changes only that one, and its first change is found without walking the history again.
            head = n_old <= len(items) and (vouched is items or prefix[: n_old - 1] == self.items[: n_old - 1])
            if head and prefix[n_old - 1] == self.items[n_old - 1]:
                if len(items) > n_old or self.format not in _LOCAL | {"messages"}:
                    return self._extend(items, n_old)
                if self.format != "messages":  # the last item again: a retried question is often edited in place
                    return self._extend(items, n_old - 1)
                return len(self.messages)
            common = n_old - 1 if head else equal_head(prefix, self.items)
            if common > 0:  # an earlier item changed (Claude Code moves its cache_control marker every request)
                return self._extend(items, self._restart_at(items, common))
        self.items, self.messages, self.src, self._restart = [], [], [], (0, 0)
        self.recall_items = []
        if items:
            self._extend(items, 0)
        return 0

    def _restart_at(self, items: Sequence[object], common: int) -> int:
        """Where to convert again from when only ``items[:common]`` are as they were: `common` where items convert
        alone, else the start of the turn holding item `common` (set as the restart point `_extend` uses)."""
        if self.format in _LOCAL or self.format == "messages":
            return common
        starts = _is_turn_start(cast(str, self.format))
        item_at = next((i for i in range(min(common, len(items) - 1), 0, -1) if starts(items[i])), 0)
        self._restart = (item_at, next((k for k, i in enumerate(self.src) if i >= item_at), len(self.messages)))
        return item_at

    def _extend(self, items: Sequence[object], n_old: int) -> int:
        """Convert `items` from the last turn start (or from `n_old`, where items convert alone); returns how many
        leading messages were kept as they were."""
        item_at, message_at = self._restart
        if self._kind(items) in _LOCAL or self.format == "messages":
            item_at = n_old
            src = self.src
            if not src or src[-1] < n_old:  # the common case, the list grown: every message read is kept
                message_at = len(src)
            else:
                message_at = next((k for k in range(len(src) - 1, -1, -1) if src[k] < n_old), -1) + 1
        self.recall_items = [i for i in self.recall_items if i < item_at]
        converted, src = self._convert(items[item_at:], item_at)
        self.fresh_from = item_at
        # Items converted again (the last one, or a restarting format's last turn) mostly read as before: those
        # messages keep their old objects, so their token counts (cached by identity) and fingerprints stand, and
        # only what really changed is counted again.
        same = 0
        old = self.messages
        while (
            same < len(converted)
            and message_at + same < len(old)
            and self.src[message_at + same] == src[same]
            and converted[same] == old[message_at + same]
        ):
            converted[same] = old[message_at + same]
            same += 1
        del self.messages[message_at:]
        del self.src[message_at:]
        self.messages.extend(converted)
        self.src.extend(src)
        # `items[:item_at]` equal what is kept (the caller checked): only the rest is copied, not the whole history
        del self.items[item_at:]
        self.items.extend(items[item_at:])
        if self.format not in _LOCAL and self.format != "messages":
            starts = _is_turn_start(cast(str, self.format))
            for i in range(len(items) - 1, item_at - 1, -1):
                if starts(items[i]):
                    at = next((k for k in range(message_at, len(self.src)) if self.src[k] == i), len(self.messages))
                    self._restart = (i, at)
                    break
        return message_at + same

    def rereads_little(self, items: Sequence[object], *, max_items: int, max_chars: int) -> bool:
        """Whether `read(items)` provably converts at most `max_items` items of at most `max_chars` characters (of
        their strings and keys, a node counting one): `items` extend the wire items last read, all of those but the
        last unchanged (compared by value, in C), and little follows the first item `read` may convert again (the
        last one read, or in the restarting formats the last turn start before it). False for anything else (no
        items read yet, `Message` objects, a shorter or edited history), whose reading may cost up to the whole
        history. What a caller asks before reading where only bounded work may run (`ContextManager.prepare_quiet`);
        it changes nothing."""
        n_old = len(self.items)
        fmt = self.format
        if not n_old or len(items) < n_old or fmt is None or fmt == "messages":
            return False
        self._vouched = None
        head = items[: n_old - 1] if isinstance(items, list) else list(items[: n_old - 1])
        if head != self.items[: n_old - 1]:
            return False
        start = n_old - 1
        if fmt not in _LOCAL:  # the conversion may restart at the last turn start before the item last read
            starts = _is_turn_start(fmt)
            floor = max(0, len(items) - max_items)
            while start > 0 and not starts(items[start - 1]):
                start -= 1
                if start < floor:
                    return False
            start = max(0, start - 1)
        if len(items) - start > max_items:
            return False
        budget = max_chars
        for item in items[start:]:
            budget = _chars_within(item, budget)
            if budget < 0:
                return False
        self._vouched = items
        return True

    def forget_vouched(self) -> None:
        """Drop what `rereads_little` found, when no `read` of that input follows (the caller changed its mind)."""
        self._vouched = None

    # writing ------------------------------------------------------------------------------------------------------
    def write(self, messages: Sequence[Message]) -> list[Any]:
        """`messages` in the caller's kind (wire dicts, or the messages themselves)."""
        if self.format in (None, "messages"):
            return list(messages)
        if not messages:
            return []
        wire = dump(list(messages), to=self.format)
        if isinstance(wire, Mapping):
            doc = cast(Mapping[str, Any], wire)
            for key in ("messages", "contents", "input"):
                if isinstance(doc.get(key), list):
                    return list(cast(list[Any], doc[key]))
            raise FormatError(f"cannot write these messages as a plain {self.format} list")  # pragma: no cover
        return list(cast(list[Any], wire))

    def without_recall(self, items: Sequence[Any]) -> Sequence[Any]:
        """`items` less the ones that held only a recall block (`items` itself when there were none)."""
        if not self.recall_items:
            return items
        stale = set(self.recall_items)
        return [item for i, item in enumerate(items) if i not in stale]

    def alone(self, message_index: int) -> bool:
        """True when canonical message `message_index` is the only message its item holds (so the item stands for
        exactly that message)."""
        here = self.src[message_index]
        before = message_index > 0 and self.src[message_index - 1] == here
        after = message_index + 1 < len(self.src) and self.src[message_index + 1] == here
        return not before and not after and self.format in _LOCAL | {"messages"}

    def aligned(self, message_index: int) -> int | None:
        """The item index where canonical message `message_index` starts an item of its own (so the caller's items
        from there on can be returned as they are); None when it is in the middle of an item."""
        if message_index >= len(self.messages):
            return len(self.items)
        here = self.src[message_index]
        if message_index == 0 or self.src[message_index - 1] != here:
            return here
        return None


def _chars_within(value: object, budget: int) -> int:
    """`budget` less the characters of `value`'s strings and keys (a node counts one), stopping as soon as it is
    spent (negative): the walk is bounded by `budget`, however large `value` is."""
    if isinstance(value, str):
        return budget - len(value) - 1
    budget -= 1
    if isinstance(value, Mapping):
        for key, inner in cast(Mapping[object, object], value).items():
            if budget < 0:
                return budget
            budget = _chars_within(inner, budget - (len(key) if isinstance(key, str) else 1))
    elif isinstance(value, list | tuple):
        for inner in cast(Sequence[object], value):
            if budget < 0:
                return budget
            budget = _chars_within(inner, budget)
    return budget
