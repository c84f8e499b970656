"""The view: how the caller's history maps onto the history the model sees, across calls, processes and edits.

After a compaction the model sees a shorter history than the caller holds. A caller that keeps its full history and
sends it again (a chat app reading its database, a client of the HTTP proxy) must get "what was sent last time plus
the new messages", and a caller that adopted the shorter history and sends it back must get it unchanged. The view
holds the mapping: a list of entries, each standing for a contiguous range of the caller's (canonical) messages,
either verbatim (the caller's own message) or replaced (a summary record, a masked tool result, nothing at all).
The view covers the input's first `n_in` messages; whatever follows is sent as it is.

The mapping must survive the process (several workers serve one session; a worker restarts) and must never be
applied to a history it was not made for. So it is stored with the session state, and each entry carries the
*chain hash* of the input up to its end: ``h(k+1) = sha256(h(k) + sha256(message k))``. A fresh process, or an
input that does not extend the last one (an edited, retried or branched conversation), is matched entry by entry:
the longest run of entries whose hashes match the new input is kept, the rest of the input is sent as it is (and
compacted again if it must be). A changed message inside a summarized range therefore drops that summary from the
mapping: the model never sees a summary of a history the caller no longer has.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..messages import Message, message_from_dict, message_to_dict
from ..store import message_sha256

__all__ = ["Cover", "Entry", "Fingerprints", "View"]

_HASH_CHARS = 32

Cover = tuple[int, int, bool]
"""(start, end, verbatim): the caller messages ``[start:end]`` one message the model sees stands for, and whether it
is the caller's own message unchanged."""


class Fingerprints:
    """Chain hashes of a canonical message list, computed lazily and kept while the list only grows."""

    def __init__(self, digest: Callable[[Message], str] = message_sha256) -> None:
        self._digest = digest
        """The hash of one message (`message_sha256`: all of it, provider data included)."""
        self._hashes: list[str] = [""]
        self._messages: list[Message] = []

    def sync(self, messages: Sequence[Message], unchanged: int) -> None:
        """`messages` is the new list, of which the first `unchanged` are the ones fingerprinted before."""
        keep = min(unchanged, len(self._messages))
        del self._messages[keep:]
        del self._hashes[keep + 1 :]
        self._messages.extend(messages[keep:])

    def upto(self, messages: Sequence[Message], k: int) -> str:
        """The chain hash of ``messages[:k]``, for a list rebuilt on every call (what the model sees: the mapped
        part and the caller's messages after it) rather than followed by `sync`: the leading messages that are the
        very objects fingerprinted before keep their hashes, so only the others are hashed."""
        known = self._messages
        n = min(len(known), k)
        # The common case, every leading message the very object hashed before, is checked in C (map over
        # `operator.is_`: half the time of a Python loop, which this runs on every request for each pinned block);
        # the loop then finds where they part only when they do.
        if all(map(operator.is_, known[:n], messages[:n])):
            same = n
        else:
            same = 0
            while known[same] is messages[same]:
                same += 1
        if same < n or len(known) < k:
            self.sync(messages, same)
        return self.at(k)

    def at(self, k: int) -> str:
        """The chain hash of the first `k` messages."""
        while len(self._hashes) <= k:
            i = len(self._hashes) - 1
            digest = hashlib.sha256((self._hashes[i] + self._digest(self._messages[i])).encode("ascii"))
            self._hashes.append(digest.hexdigest()[:_HASH_CHARS])
        return self._hashes[k]


@dataclass(frozen=True, slots=True)
class Entry:
    start: int
    end: int
    """The caller's messages ``[start:end]`` this entry stands for."""
    messages: tuple[Message, ...] | None
    """What the model sees instead; None: the caller's own message (``end == start + 1``), verbatim."""
    hash: str = ""
    """Chain hash of the caller's messages up to `end` (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class View:
    entries: tuple[Entry, ...] = ()

    @property
    def n_in(self) -> int:
        return self.entries[-1].end if self.entries else 0

    @property
    def empty(self) -> bool:
        """True when the view changes nothing: the model sees the caller's own messages."""
        return all(e.messages is None for e in self.entries)

    def base(self, inputs: Sequence[Message]) -> list[Message]:
        """What the model sees for ``inputs[:n_in]``."""
        out: list[Message] = []
        for e in self.entries:
            if e.messages is None:
                out.append(inputs[e.start])
            else:
                out.extend(e.messages)
        return out

    def covers(self) -> list[Cover]:
        """For each message of `base`, the range of caller messages it stands for, and whether it is the caller's own
        message."""
        out: list[Cover] = []
        for e in self.entries:
            if e.messages is None:
                out.append((e.start, e.end, True))
            else:
                out.extend([(e.start, e.end, False)] * len(e.messages))
        return out

    def matching(self, prints: Fingerprints, n: int) -> View:
        """The longest run of entries whose chain hashes match an input of `n` messages (fingerprinted by `prints`)."""
        kept: list[Entry] = []
        for e in self.entries:
            if e.end > n or prints.at(e.end) != e.hash:
                break
            kept.append(e)
        return View(tuple(kept))

    @classmethod
    def aligned(
        cls, old: Sequence[Message], old_covers: Sequence[Cover], new: Sequence[Message], prints: Fingerprints
    ) -> View:
        """The view after a compaction turned `old` (the history the model saw, each message standing for the caller
        range in `old_covers`) into `new`. Messages of `new` that are the very objects of `old` keep their entry;
        each run of new messages between two kept ones stands for the old messages between them (an empty run for
        old messages removed outright)."""
        at = {id(m): i for i, m in enumerate(old)}
        raw: list[tuple[int, int, tuple[Message, ...] | None]] = []
        i = 0  # the next old message not yet accounted for
        pending: list[Message] = []

        for m in new:
            j = at.get(id(m))
            if j is None or j < i:
                pending.append(m)
                continue
            start, end, verbatim = old_covers[j]
            if j > i:  # the old messages between the last anchor and this one: replaced by the pending ones
                raw.append((old_covers[i][0], old_covers[j - 1][1], tuple(pending)))
                pending = []
            if pending:  # new messages with nothing old between: they go with this anchor (never a zero-width
                # entry, which would match any input at its position)
                raw.append((start, end, (*pending, m)))
                pending = []
            else:
                raw.append((start, end, None if verbatim else (m,)))
            i = j + 1
        if i < len(old):
            raw.append((old_covers[i][0], old_covers[-1][1], tuple(pending)))
        elif pending and raw:
            s0, e0, ms = raw[-1]
            raw[-1] = (s0, e0, (*(ms if ms is not None else old[-1:]), *pending))
        merged: list[tuple[int, int, tuple[Message, ...] | None]] = []
        for start, end, messages in raw:
            if merged and start < merged[-1][1]:  # two pieces of one earlier entry: one entry again
                p_start, p_end, p_messages = merged[-1]
                merged[-1] = (p_start, max(p_end, end), (p_messages or ()) + (messages or ()))
            elif end > start or messages:
                merged.append((start, end, messages))
        return cls(tuple(Entry(s, e, ms, prints.at(e)) for s, e, ms in merged))

    # storage ------------------------------------------------------------------------------------------------------
    def to_data(self) -> dict[str, Any]:
        """JSON for the session state: verbatim entries by reference only (the caller holds them)."""
        return {
            "entries": [
                [e.start, e.end, e.hash, None if e.messages is None else [message_to_dict(m) for m in e.messages]]
                for e in self.entries
            ]
        }

    @classmethod
    def from_data(cls, data: object) -> View:
        if not isinstance(data, Mapping):
            return cls()
        raw = cast(Mapping[str, Any], data).get("entries")
        if not isinstance(raw, list):
            return cls()
        entries: list[Entry] = []
        for item in cast(list[Any], raw):
            start, end, digest, messages = cast(list[Any], item)
            msgs = None if messages is None else tuple(message_from_dict(m) for m in cast(list[Any], messages))
            entries.append(Entry(int(start), int(end), msgs, str(digest)))
        return cls(tuple(entries))
