"""`SessionView`: one session's conversation as chainsum holds it between calls, extended by new messages only.

Every request of a session is mostly the previous one again. What was read, converted, counted and fingerprinted
stays here, by object identity and by content (`_codec.Codec`, `_view.Fingerprints`), with the mapping of the
caller's history onto what the model sees after a compaction (`_view.View`): a call reads, converts and counts only
what is new, and writes back only what it must. `ContextManager` asks this object what the model sees and how large
it is; it never looks at the codec or the mapping itself.

What lives elsewhere: the stored session state (`_state_cell.StateCell`, which tells this view when the stored mapping
is newer than the one it holds), the recall blocks and cache breakpoints of a request (`_request`), and compacting
(`_step`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import Message
from ..tokens import HeuristicCounter, TiktokenCounter, TokenCounter
from ._codec import Codec
from ._policy import SessionState
from ._view import Cover, Entry, Fingerprints, View

__all__ = ["Frame", "SessionView"]


@dataclass(slots=True)
class Frame:
    """One call's input, mapped: what the model would see, and its size."""

    items: Sequence[Any]
    system_tokens: int
    reserved: int
    tokens: int
    """Messages the model sees (recall blocks left out), plus the system prompt and the reserve."""
    recall_tokens: int = 0
    """The pinned recall blocks that still stand (`_request.RequestWriter.standing`): part of the request, not of
    the history."""
    outside_marks: int = 0
    """Anthropic ``cache_control`` blocks of the request outside its messages (system prompt, tools)."""
    recall_need: int = 0
    """The room a new recall block would take (`_request.RequestWriter.recall_need`): nonzero only where the
    request's newest message is a question that may get one and blocks pinned earlier stand, so that the trigger
    comes before they leave it no room (`_policy.decide`)."""

    @property
    def outside(self) -> int:
        """Tokens outside the message list: the system prompt and the reserve."""
        return self.system_tokens + self.reserved

    @property
    def request_tokens(self) -> int:
        """The request as it would go: `tokens` and the recall blocks."""
        return self.tokens + self.recall_tokens


class SessionView:
    """The caller's history as read so far, its mapping onto what the model sees, and their token counts."""

    def __init__(self, counter: TokenCounter, format: str | None, prefer: str) -> None:
        self.counter = counter
        self.codec = Codec(format, prefer=prefer)
        self.prints = Fingerprints()
        self.view = View()
        self.version = -1
        """The stored state version whose mapping `view` is (-1: none yet): a newer stored state means another
        process (or this one) wrote a mapping that `read` takes before anything else."""
        self.reads = 0
        """Bumped whenever what the model sees may have changed (`read`, `set_view`): a key for what is computed
        from it (the recall blocks that still stand)."""
        self.additive = isinstance(counter, HeuristicCounter | TiktokenCounter)
        """The counter counts a list as the sum of its messages (and a fixed priming): counts are kept per message
        and summed, instead of counting the whole history again on every call."""
        self._base: list[Message] = []
        self._covers: list[Cover] = []
        self._written: list[list[Any] | None] | None = None
        self._base_tokens = 0
        self._tail_tokens = 0
        self._tail_counted = 0
        self._tail_sizes: list[int] = []
        """Token count of each input message after the mapped part (`_tail_counted` of them so far)."""
        self._priming: int | None = None
        self._system: tuple[object, int] | None = None

    # reading ------------------------------------------------------------------------------------------------------
    def read(self, items: Sequence[Any], state: SessionState) -> list[Entry]:
        """Read `items` and bring the mapping up to date: the stored one when `state` is newer than the one held,
        kept only as far as the new input still matches it. Returns the entries that no longer match (their
        summaries no longer stand for the caller's history: the caller retracts their originals from recall)."""
        self.reads += 1
        codec = self.codec
        unchanged = codec.read(items)
        messages = codec.messages
        self.prints.sync(messages, unchanged)
        stored = self.version != state.version
        dropped: list[Entry] = []
        if stored or unchanged == 0 or self.view.n_in > min(unchanged, len(messages)):
            source = View.from_data(state.view) if stored else self.view
            self.version = state.version
            kept = source.matching(self.prints, len(messages)) if source.entries else View()
            dropped = list(source.entries[len(kept.entries) :])
            self.set_view(kept)
        if self.additive and self._tail_counted > unchanged >= self.view.n_in:
            # messages converted again (a restarting format's last turn): their old counts go
            gone = self._tail_sizes[unchanged - self.view.n_in :]
            self._tail_tokens -= sum(gone)
            del self._tail_sizes[unchanged - self.view.n_in :]
            self._tail_counted = unchanged
        if self.additive and self._tail_counted < len(messages):
            count = self.counter.count_message
            sizes = [count(m) for m in messages[self._tail_counted :]]
            self._tail_sizes.extend(sizes)
            self._tail_tokens += sum(sizes)
            self._tail_counted = len(messages)
        return dropped

    def set_view(self, view: View) -> None:
        """Take `view` as the mapping (after a compaction, or the stored one)."""
        self.reads += 1
        self.view = view
        self._base = view.base(self.codec.messages)
        self._covers = view.covers()
        self._written = None
        self._base_tokens = sum(self.counter.count_message(m) for m in self._base) if self.additive else 0
        self._tail_tokens = 0
        self._tail_counted = view.n_in
        self._tail_sizes = []

    def changed_in_place(self, items: Sequence[Any]) -> bool:
        """Whether an item after the mapped part changed in place since it was read (same object, new content: the
        identity fast path does not see it). Then everything read is forgotten, the stored mapping included, and
        the caller reads `items` again. Asked before anything is archived: what is summarized must be what was
        sent. (The mapped part itself is not summarized again, and is checked by value on every call.)"""
        codec = self.codec
        start = codec.aligned(self.view.n_in)
        end = min(codec.fresh_from, len(items))  # what this call converted is what was sent
        if start is None or start >= end:
            return False
        fresh = Codec(codec.format, codec.prefer)
        fresh.read(items[start:end])
        src = codec.src
        first = src.index(start) if start in src else len(codec.messages)
        last = next((k for k in range(first, len(src)) if src[k] >= end), len(src))
        if fresh.messages == codec.messages[first:last]:
            return False
        self.codec = Codec(codec.format, codec.prefer)
        self.prints = Fingerprints()
        self.version = -1
        return True

    # what the model sees ------------------------------------------------------------------------------------------
    def messages(self) -> list[Message]:
        """What the model sees now (without the recall blocks)."""
        return self._base + self.codec.messages[self.view.n_in :]

    def n_out(self) -> int:
        """Messages the model sees now: the counts of the trigger's rules (cooldown, minimum, refresh) are of these,
        so a caller that sends back what it got and one that keeps its full history are counted alike."""
        return len(self._base) + len(self.codec.messages) - self.view.n_in

    def covers(self) -> list[Cover]:
        """What each message the model sees stands for in the caller's history (`View.aligned` maps a compaction's
        result back with it): the mapped part's covers, then the caller's own messages after it."""
        n_in = self.view.n_in
        return self._covers + [(i, i + 1, True) for i in range(n_in, len(self.codec.messages))]

    def items(self, items: Sequence[Any]) -> tuple[Sequence[Any], dict[int, int]]:
        """The history to send in the caller's kind (`items` itself when nothing is mapped), and where each output
        message starts its own item (output message index -> item index; only messages that begin an item are
        listed). The mapped part is written once per mapping; the caller's items after it are sent as they are."""
        codec = self.codec
        if self.view.empty:
            out: Sequence[Any] = codec.without_recall(items)
            if codec.format in (None, "messages") or len(out) == len(codec.messages):
                return out, {}  # one item per message: the indexes are the same
            return out, {k: codec.src[k] for k in range(len(codec.messages)) if codec.aligned(k) is not None}
        n_in = self.view.n_in
        at = codec.aligned(n_in)
        if at is None or codec.recall_items:
            return self._written_with_starts(self.messages())
        built: list[Any] = []
        starts: dict[int, int] = {}
        if self._written is None:
            self._written = [None if e.messages is None else codec.write(e.messages) for e in self.view.entries]
        pending: list[Message] = []
        index = 0  # output message index

        def flush() -> None:
            nonlocal pending
            if pending:
                written, where = self._written_with_starts(pending)
                starts.update({index - len(pending) + k: len(built) + v for k, v in where.items()})
                built.extend(written)
                pending = []

        for entry, written in zip(self.view.entries, self._written, strict=True):
            if written is not None:
                flush()
                assert entry.messages is not None
                if len(written) == len(entry.messages):
                    starts.update({index + k: len(built) + k for k in range(len(written))})
                elif written:
                    starts[index] = len(built)
                built.extend(written)
                index += len(entry.messages)
            elif codec.alone(entry.start):
                flush()
                starts[index] = len(built)
                built.append(items[codec.src[entry.start]])
                index += 1
            else:
                pending.append(codec.messages[entry.start])
                index += 1
        flush()
        base_items = len(built)
        for k in range(n_in, len(codec.messages)):
            item = codec.aligned(k)
            if item is not None:
                starts[index + k - n_in] = base_items + item - at
        built.extend(items[at:])
        return built, starts

    def _written_with_starts(self, messages: Sequence[Message]) -> tuple[list[Any], dict[int, int]]:
        written = self.codec.write(messages)
        if self.codec.format in (None, "messages") or len(written) == len(messages):
            return written, {k: k for k in range(len(messages))}
        return written, {0: 0} if written else {}

    # sizes --------------------------------------------------------------------------------------------------------
    def tokens(self) -> int:
        """Tokens of what the model sees (recall blocks aside): per-message counts kept and summed where the counter
        allows it, the whole list counted otherwise."""
        if not self.additive:
            return self.counter.count_messages(self.messages())
        if not self._base and not self.codec.messages:
            return 0
        if self._priming is None:
            first = (self._base or self.codec.messages)[0]
            self._priming = self.counter.count_messages([first]) - self.counter.count_message(first)
        return self._base_tokens + self._tail_tokens + self._priming

    def system_tokens(self, system: object) -> int:
        """Tokens of a system prompt kept outside the list; the last one's count is kept (the same prompt comes on
        every request)."""
        if system is None:
            return 0
        if self._system is not None and (self._system[0] is system or self._system[0] == system):
            return self._system[1]
        tokens = self._count_system(system)
        self._system = (system, tokens)
        return tokens

    def _count_system(self, system: object) -> int:
        if isinstance(system, str):
            return self.counter.count_text(system) if system else 0
        if isinstance(system, Message):
            return self.counter.count_message(system)
        if isinstance(system, Sequence) and all(isinstance(m, Message) for m in system):  # pyright: ignore
            return sum(self.counter.count_message(m) for m in system)  # pyright: ignore
        return self.counter.count_text(json.dumps(system, ensure_ascii=False, default=str))
