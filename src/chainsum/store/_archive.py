"""`Archive`: what the context manager needs from a store, and `MemoryArchive`, the in-process one.

The store layer owns it (it imports nothing above `chainsum.messages`), and the manager, above, calls only these
methods, so any object that has them will do: `SQLiteStore` and `PostgresStore` satisfy `Archive` structurally.
`MemoryArchive` keeps everything in dictionaries: the default when a user wants no persistence, and the double the
tests use (it can be told to fail, to check that a failed archive write leaves the caller's history untouched).
"""

from __future__ import annotations

import heapq
import math
import threading
from collections import defaultdict
from collections.abc import Generator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from ..messages import Message
from ._records import SummaryRecord, message_sha256
from ._schema import indexed_words, query_words, searchable_text

__all__ = ["Archive", "ArchiveState", "MemoryArchive", "SearchHit", "StateSnapshot"]


class StateSnapshot(Protocol):
    """A session's manager state and the version a compare-and-set checks (`chainsum.store.StoredState` is one)."""

    @property
    def version(self) -> int: ...

    @property
    def data(self) -> Mapping[str, Any]: ...


@runtime_checkable
class Archive(Protocol):
    """The part of a store the manager uses. Everything that leaves the context goes through `archive_and_record`
    before the manager returns the shorter history, so the originals and the record that replaced them are written
    together or not at all."""

    def archive_and_record(
        self,
        session: str,
        messages: Sequence[tuple[str, Message]],
        record: SummaryRecord | None,
        *,
        expected_version: int | None = None,
        new_state: Mapping[str, Any] | None = None,
    ) -> bool:
        """Archive `messages` (id, message) and store `record` in one transaction; with `expected_version`, also
        write `new_state` if the state is still at that version, else write nothing and return False."""
        ...

    def get_state(self, session: str) -> StateSnapshot: ...

    def compare_and_set_state(self, session: str, expected_version: int, new_state: Mapping[str, Any]) -> bool:
        """Write `new_state` as version ``expected_version + 1`` if the stored version is still `expected_version`;
        False when another writer got there first."""
        ...

    def try_lock(self, session: str, *, wait_s: float = 0.0) -> AbstractContextManager[bool]:
        """The per-session summarization lock for a ``with`` block; yields False when someone else holds it (after
        polling for up to `wait_s` seconds). A holder that dies loses it within seconds."""
        ...

    def search(
        self, session: str | None, query: str, limit: int = 20, *, any_word: bool = False, snippets: bool = True
    ) -> list[SearchHit]:
        """Archived messages matching `query`, best first (all words must match, or any with `any_word`). With
        `snippets` False the hits' snippets are empty: a caller that reads the originals (recall) saves making them."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchHit:
    """One archived message matching a full-text query. Higher `rank` is a better match (within one search)."""

    session: str
    message_id: str
    position: int
    role: str
    snippet: str
    """A short excerpt with the matched terms between ``[`` and ``]``."""
    rank: float


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class ArchiveState:
    """`MemoryArchive`'s `StateSnapshot`: version 0 and no data until the first write."""

    version: int = 0
    data: Mapping[str, Any] = field(default_factory=_empty)


@dataclass(frozen=True, slots=True)
class ArchivedEntry:
    """One archived original, with the SHA-256 it had when archived."""

    session: str
    message_id: str
    sha256: str
    message: Message


class MemoryArchive:
    """An `Archive` in memory (lost with the process), thread-safe.

    `fail_writes` makes every `archive_and_record` raise `OSError`: a stand-in for a full disk or a dropped
    database connection, to test that the manager then returns the original history."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, ArchiveState] = {}
        self._entries: dict[str, list[ArchivedEntry]] = {}
        self._positions: dict[str, dict[str, int]] = {}
        """session -> message id -> position of its (latest) entry: `originals` without a scan."""
        self._records: dict[str, list[SummaryRecord]] = {}
        self._held: set[str] = set()
        self._index: defaultdict[str, list[tuple[str, int]]] = defaultdict(list)
        """word -> (session, position) of every indexed entry holding it: search reads posting lists, not every
        entry."""
        self._unindexed: list[tuple[str, int]] = []
        """Entries archived since the last search: indexed by the next search, so that archiving thousands of
        messages in a compaction does not pay for reading their words (most archives are searched rarely)."""
        self.fail_writes = False
        self.writes = 0
        """Successful `archive_and_record` calls (a test counts summarizations by it)."""

    def archive_and_record(
        self,
        session: str,
        messages: Sequence[tuple[str, Message]],
        record: SummaryRecord | None,
        *,
        expected_version: int | None = None,
        new_state: Mapping[str, Any] | None = None,
    ) -> bool:
        if self.fail_writes:
            raise OSError("archive unavailable (MemoryArchive.fail_writes)")
        entries = [ArchivedEntry(session, mid, message_sha256(m), m) for mid, m in messages]
        with self._lock:
            if expected_version is not None:
                if self._states.get(session, ArchiveState()).version != expected_version:
                    return False
                if new_state is not None:
                    self._states[session] = ArchiveState(expected_version + 1, MappingProxyType(dict(new_state)))
            bucket = self._entries.setdefault(session, [])
            positions = self._positions.setdefault(session, {})
            for entry in entries:
                self._unindexed.append((session, len(bucket)))
                positions[entry.message_id] = len(bucket)
                bucket.append(entry)
            if record is not None:
                self._records.setdefault(session, []).append(record)
            self.writes += 1
        return True

    def get_state(self, session: str) -> ArchiveState:
        with self._lock:
            return self._states.get(session, ArchiveState())

    def compare_and_set_state(self, session: str, expected_version: int, new_state: Mapping[str, Any]) -> bool:
        with self._lock:
            if self._states.get(session, ArchiveState()).version != expected_version:
                return False
            self._states[session] = ArchiveState(expected_version + 1, MappingProxyType(dict(new_state)))
            return True

    @contextmanager
    def _locked(self, session: str) -> Generator[bool, None, None]:
        with self._lock:
            acquired = session not in self._held
            if acquired:
                self._held.add(session)
        try:
            yield acquired
        finally:
            if acquired:
                with self._lock:
                    self._held.discard(session)

    def try_lock(self, session: str, *, wait_s: float = 0.0) -> AbstractContextManager[bool]:
        """Non-blocking in this process (`wait_s` is accepted for the protocol; one process never needs to wait
        for itself: the manager serializes its own calls)."""
        del wait_s
        return self._locked(session)

    def search(
        self, session: str | None, query: str, limit: int = 20, *, any_word: bool = False, snippets: bool = True
    ) -> list[SearchHit]:
        """Word search over the archived messages (case-insensitive), ranked by how many of the query's words a
        message holds, rarer words weighing more; the newest first among equals."""
        words = {w.lower() for w in query_words(query)}
        if not words or limit <= 0:
            return []
        with self._lock:
            index = self._index  # a defaultdict: no empty list built per word already indexed (setdefault did)
            for where in self._unindexed:
                for word in indexed_words(self._entries[where[0]][where[1]].message):
                    index[word].append(where)
            self._unindexed.clear()
            total = sum(len(es) for s, es in self._entries.items() if session in (None, s)) or 1
            if any_word:
                # A word in many messages ranks little (its weight is a fraction of a rare word's) but costs a pass
                # over them all; when rarer words are asked for too, it is left out, so a search costs what its rare
                # words cost. (At one in 16 messages, a long chat's recall search grew with the chat: its everyday
                # words each came back a few hundred times, and the per-request time doubled over 16,000 messages.)
                common = {w for w in words if len(self._index.get(w, ())) > max(64, total // 64)}
                if common != words:
                    words -= common
            single = session is None or self._entries.keys() <= {session}
            postings = {
                w: self._index.get(w, []) if single else [p for p in self._index.get(w, ()) if p[0] == session]
                for w in words
            }
            scores: dict[tuple[str, int], tuple[float, int]] = {}
            for hits_of in postings.values():
                weight = math.log(1 + total / max(1, len(hits_of)))
                for key in hits_of:
                    score, n = scores.get(key, (0.0, 0))
                    scores[key] = (score + weight, n + 1)
            ranked = heapq.nsmallest(  # sorted(...)[:limit], without sorting every match
                limit,
                ((score, key) for key, (score, n) in scores.items() if any_word or n == len(words)),
                key=lambda x: (-x[0], -x[1][1]),
            )
            chosen = [(key, score, self._entries[key[0]][key[1]]) for score, key in ranked]
        return [
            SearchHit(
                session=key[0],
                message_id=e.message_id,
                position=key[1],
                role=e.message.role,
                snippet=searchable_text(e.message)[:160] if snippets else "",
                rank=score,
            )
            for key, score, e in chosen
        ]

    def originals(self, session: str, message_ids: Sequence[str]) -> dict[str, Message]:
        """The archived messages of `session` with these ids (those that exist), verified against their SHA-256."""
        with self._lock:
            bucket = self._entries.get(session, [])
            where = self._positions.get(session, {})
            entries = [bucket[where[m]] for m in dict.fromkeys(message_ids) if m in where]
        out: dict[str, Message] = {}
        for e in entries:
            if message_sha256(e.message, verify=True) != e.sha256:
                raise ValueError(f"archived message {e.message_id!r} does not match its sha256")
            out[e.message_id] = e.message
        return out

    def records(self, session: str) -> list[SummaryRecord]:
        """The session's summary chain, oldest first."""
        with self._lock:
            return list(self._records.get(session, ()))

    def archived(self, session: str) -> list[ArchivedEntry]:
        """Every archived original of the session, in archiving order."""
        with self._lock:
            return list(self._entries.get(session, ()))

    def expand(self, summary_id: str) -> list[Message]:
        """The originals a record replaced, in its order, each checked against the SHA-256 the record holds.

        Raises KeyError for an unknown record id and ValueError when an original no longer matches its hash."""
        with self._lock:
            record = next((r for rs in self._records.values() for r in rs if r.id == summary_id), None)
            if record is None:
                raise KeyError(summary_id)
            by_id = {e.message_id: e for es in self._entries.values() for e in es}
        out: list[Message] = []
        for mid, sha in zip(record.original_message_ids, record.original_sha256, strict=True):
            entry = by_id[mid]
            if message_sha256(entry.message, verify=True) != sha:
                raise ValueError(f"archived message {mid!r} does not match its sha256")
            out.append(entry.message)
        return out
