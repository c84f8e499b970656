"""`Archive`: what the context manager needs from a store, and `MemoryArchive`, the in-process one.

The manager layer must not import `chainsum.store` (data flows down the layers; the store imports the manager's
`SummaryRecord`), so the manager states the few methods it calls here and any store that has them will do:
`chainsum.store.SQLiteStore` and `PostgresStore` satisfy `Archive` structurally. `MemoryArchive` keeps everything
in dictionaries: the default when a user wants no persistence, and the double the tests use (it can be told to
fail, to check that a failed archive write leaves the caller's history untouched).
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from ..messages import Message
from ._records import SummaryRecord, message_sha256

__all__ = ["Archive", "ArchiveState", "MemoryArchive", "StateSnapshot"]


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
        polling for up to `wait_s` seconds)."""
        ...


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
        self._records: dict[str, list[SummaryRecord]] = {}
        self._held: set[str] = set()
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
            self._entries.setdefault(session, []).extend(entries)
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
            if message_sha256(entry.message) != sha:
                raise ValueError(f"archived message {mid!r} does not match its sha256")
            out.append(entry.message)
        return out
