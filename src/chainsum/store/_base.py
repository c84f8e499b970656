"""What both SQL backends share: the archive, record, state and verification logic, written once.

Backends supply one transaction attempt (`_attempt`), reconnection (`_reconnect`), the archive row insert (SQLite
also fills its FTS table), a per-session write serialization, search and the summarization lock. SQL here uses
``?`` placeholders; the PostgreSQL transaction object rewrites them, so no statement may contain a literal ``?`` or
``%``.

Every transaction is a function of a `Tx` run by `SqlStore._transact`, never a ``with`` block in the caller: a
function can be run again, which is how a transaction cut off by a lost connection is retried, in this one place.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, Self, TypeVar

from ..messages import Message, message_from_dict
from ._directory import SessionDirectory, now_ms
from ._errors import ArchiveConflictError, ArchiveIntegrityError, StoreConnectionError, UnknownSummaryError
from ._protocol import ArchivedMessage, SearchHit, StoredState
from ._records import SummaryRecord, canonical_json
from ._schema import searchable_text

__all__ = ["ConnectionLost", "Row", "SqlStore", "Tx"]

logger = logging.getLogger("chainsum.store")

Row = tuple[Any, ...]
T = TypeVar("T")


class Tx(Protocol):
    """The few cursor operations the shared logic needs, the same on both backends."""

    def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        """Run one statement; returns the number of rows it changed."""
        ...

    def one(self, sql: str, params: Sequence[object] = ()) -> Row | None: ...

    def all(self, sql: str, params: Sequence[object] = ()) -> list[Row]: ...

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        """Run one statement once per row, batched (``executemany``: one call into SQLite, a pipeline of
        statements on PostgreSQL rather than a round trip each)."""
        ...


_ID_CHUNK = 500
"""Ids per ``IN (...)`` list when reading many rows by id: under SQLite's oldest limit of 999 parameters, and a
20,000-message compaction reads its hashes in 40 statements, not 20,000."""


class ConnectionLost(Exception):
    """Raised by a backend's `_attempt` (chained from the driver's error) when the connection died under it.

    Internal: `SqlStore._transact` turns it into a retry or a `StoreConnectionError`; callers never see it."""

    def __init__(self, *, commit_sent: bool) -> None:
        self.commit_sent = commit_sent
        """True when the body had finished and COMMIT was (or was being) sent: the server may have committed."""
        super().__init__("database connection lost" + (" during COMMIT" if commit_sent else ""))


def _hashes(tx: Tx, session: str, message_ids: Sequence[str]) -> dict[str, str]:
    """The SHA-256 of each of `message_ids` already archived in `session` (ids not archived are left out), read in
    chunks of `_ID_CHUNK` ids."""
    ids = list(dict.fromkeys(message_ids))
    found: dict[str, str] = {}
    for start in range(0, len(ids), _ID_CHUNK):
        chunk = ids[start : start + _ID_CHUNK]
        marks = ", ".join("?" * len(chunk))
        rows = tx.all(
            f"SELECT message_id, sha256 FROM archive WHERE session = ? AND message_id IN ({marks})", (session, *chunk)
        )
        found.update((str(r[0]), str(r[1])) for r in rows)
    return found


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _verified(message_id: str, text: str | None, stored_sha: str | None, expected_sha: str | None) -> Message:
    """Parse an archived message after checking its bytes against the archive's hash and the record's hash."""
    if text is None or stored_sha is None:
        raise ArchiveIntegrityError(message_id, "is missing from the archive")
    actual = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if actual != stored_sha:
        raise ArchiveIntegrityError(
            message_id, f"content does not match its SHA-256 (stored {stored_sha}, now {actual})"
        )
    if expected_sha is not None and expected_sha != stored_sha:
        raise ArchiveIntegrityError(
            message_id, f"SHA-256 {stored_sha} differs from the summary record's {expected_sha}"
        )
    try:
        return message_from_dict(json.loads(text), where=message_id)
    except (ValueError, TypeError) as exc:  # pragma: no cover - only reachable if the hash was forged as well
        raise ArchiveIntegrityError(message_id, f"cannot be read back: {exc}") from exc


class SqlStore(SessionDirectory, ABC):
    """Shared implementation of `chainsum.store.Store` over a DB-API connection.

    One store object is safe to share between threads (a mutex serializes each of its connections: the main one,
    and the reader where there is one); processes coordinate through the database itself."""

    def __init__(self) -> None:
        self._mutex = threading.RLock()
        """Guards the main connection: every write, the summarization locks, and the reads when there is no reader."""
        self._read_mutex = threading.Lock()
        """Guards the reader connection, where a backend has one (`_has_reader`)."""
        self._has_reader = False
        """Whether reads run on a connection of their own (set by the backend once it is open).

        Why: a compaction's write transaction holds the main connection for as long as it archives (a 20,000-message
        history: 0.6 s on SQLite, 1.7 s on PostgreSQL, at load 5), and every other session's read (its
        state when it is taken up, its records, a search, the session API) waited behind it (issue 20). On the
        reader they go on meanwhile: SQLite in WAL mode and PostgreSQL both let a reader see the last commit while
        a writer works. A read sees every write this object committed before it began, as on one connection."""
        self._held: set[str] = set()
        """Sessions whose summarization lock this object holds, so that a second holder in the same process (which
        a connection-scoped lock would let in) is refused as another process would be."""

    # -- backend hooks -------------------------------------------------------------------------------------------

    @abstractmethod
    def _attempt(self, fn: Callable[[Tx], T], *, write: bool, reader: bool) -> T:
        """Run `fn` once in one transaction (a write transaction when `write`), on the reader connection when
        `reader` (only ever with `write` False, and only when `_has_reader`): committed when it returns, rolled back
        when it raises. Raises `ConnectionLost` instead of the driver's error when the connection died."""

    def _reconnect(self, *, reader: bool) -> None:
        """Replace a dead connection (the reader when `reader`, else the main one) with a fresh one, set up the same
        way; raise `StoreConnectionError` if the database cannot be reached. Only backends whose `_attempt` raises
        `ConnectionLost` need it (not SQLite)."""
        raise StoreConnectionError(f"{type(self).__name__} lost its connection and cannot reconnect")

    @abstractmethod
    def _lock_session_writes(self, tx: Tx, session: str) -> None:
        """Serialize writers of one session until the transaction ends (positions are `max + 1`)."""

    @abstractmethod
    def _insert_archive_rows(self, tx: Tx, rows: Sequence[tuple[str, str, int, str, str, str, int, str]]) -> None:
        """Insert (session, message_id, position, role, json, sha256, created_ms, text) rows in one batch, and index
        each `text` for search. One batch, not a statement per row: a compaction archives thousands of messages
        (20,000 took a minute on PostgreSQL a round trip each), and it holds the session's write lock meanwhile."""

    @abstractmethod
    def search(
        self, session: str | None, query: str, limit: int = 20, *, any_word: bool = False, snippets: bool = True
    ) -> list[SearchHit]: ...

    @abstractmethod
    def try_lock(self, session: str, *, wait_s: float = 0.0) -> AbstractContextManager[bool]: ...

    @abstractmethod
    def close(self) -> None: ...

    def _transact(self, fn: Callable[[Tx], T], *, write: bool, main: bool = False) -> T:
        """Run `fn` in a transaction, reconnecting and running it once more if the connection was lost. A read runs
        on the reader connection where there is one (`_has_reader`), unless `main` asks for the main connection
        (what must happen on the connection that holds the summarization locks).

        Why once, and when: a transaction cut off before its COMMIT was rolled back by the server (a dead
        connection's transaction never commits), so running the whole function again on a new connection is the
        same as running it the first time. A *write* whose connection died after COMMIT was sent is not retried: it
        may have committed, and its outcome is unknown (`StoreConnectionError.outcome_unknown`). A read can always
        be retried. A second loss in a row is not retried again: the database is not there to talk to."""
        reader = self._has_reader and not write and not main
        with self._read_mutex if reader else self._mutex:
            try:
                return self._attempt(fn, write=write, reader=reader)
            except ConnectionLost as lost:
                if write and lost.commit_sent:
                    raise StoreConnectionError(
                        "the database connection was lost while committing a write: it may or may not have been "
                        "applied (outcome unknown); re-read the state before deciding what to do",
                        outcome_unknown=True,
                    ) from lost.__cause__
                logger.warning(
                    "write=<%s>, error=<%s> | database connection lost, reconnecting to retry once",
                    write,
                    lost.__cause__,
                )
            self._reconnect(reader=reader)
            try:
                return self._attempt(fn, write=write, reader=reader)
            except ConnectionLost as lost:
                unknown = write and lost.commit_sent
                raise StoreConnectionError(
                    "the database connection was lost again right after reconnecting"
                    + (" while committing a write (outcome unknown)" if unknown else ""),
                    outcome_unknown=unknown,
                ) from lost.__cause__

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writes ---------------------------------------------------------------------------------------------------

    def archive_and_record(
        self,
        session: str,
        messages: Sequence[tuple[str, Message]],
        record: SummaryRecord | None,
        *,
        expected_version: int | None = None,
        new_state: Mapping[str, Any] | None = None,
    ) -> bool:
        if (expected_version is None) != (new_state is None):
            raise ValueError("expected_version and new_state go together")
        prepared: list[tuple[str, Message, str, str]] = []
        seen: dict[str, str] = {}
        for message_id, message in messages:
            text = canonical_json(message)
            sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
            if seen.setdefault(message_id, sha) != sha:
                raise ArchiveConflictError(message_id, "appears twice in one batch with different content")
            prepared.append((message_id, message, text, sha))
        state_json = _dumps(dict(new_state)) if new_state is not None else None

        def write(tx: Tx) -> int | None:
            self._lock_session_writes(tx, session)
            if expected_version is not None and state_json is not None:
                if not self._cas(tx, session, expected_version, state_json):
                    return None
            archived, hashes = self._archive(tx, session, prepared)
            if record is not None:
                self._insert_record(tx, session, record, hashes)
            return archived

        archived = self._transact(write, write=True)
        if archived is None:
            logger.debug(
                "session=<%s>, expected_version=<%s> | state moved on, nothing written", session, expected_version
            )
            return False
        logger.debug(
            "session=<%s>, archived=<%d>, record=<%s> | archived and recorded",
            session,
            archived,
            record.id if record is not None else None,
        )
        return True

    def _archive(
        self, tx: Tx, session: str, prepared: Sequence[tuple[str, Message, str, str]]
    ) -> tuple[int, dict[str, str]]:
        """Archive what is not archived yet; returns how many rows were added, and the stored SHA-256 of every
        message of the batch (what `_insert_record` checks the record against, without reading it back)."""
        row = tx.one("SELECT COALESCE(MAX(position) + 1, 0) FROM archive WHERE session = ?", (session,))
        position = int(row[0]) if row is not None else 0
        created = now_ms()
        existing = _hashes(tx, session, [p[0] for p in prepared])
        rows: list[tuple[str, str, int, str, str, str, int, str]] = []
        for message_id, message, text, sha in prepared:
            known = existing.get(message_id)
            if known is not None:
                if known != sha:
                    raise ArchiveConflictError(message_id, "already archived with different content")
                continue
            existing[message_id] = sha  # the batch itself repeats an id only with the same content (checked above)
            rows.append((session, message_id, position, message.role, text, sha, created, searchable_text(message)))
            position += 1
        if rows:
            self._insert_archive_rows(tx, rows)
        return len(rows), existing

    def _insert_record(self, tx: Tx, session: str, record: SummaryRecord, known: Mapping[str, str]) -> None:
        """Store `record` after checking that every original it names is archived with its hash; `known` holds the
        hashes of this transaction's own batch, so only the originals archived earlier are read."""
        payload = _dumps(record.to_dict())
        existing = tx.one("SELECT session, record_json FROM summaries WHERE id = ?", (record.id,))
        if existing is not None:
            if (existing[0], existing[1]) != (session, payload):
                raise ArchiveConflictError(record.id, "a different summary record is stored under this id")
            return
        archived = dict(known)
        archived.update(_hashes(tx, session, [m for m in record.original_message_ids if m not in known]))
        for message_id, expected in zip(record.original_message_ids, record.original_sha256, strict=True):
            stored = archived.get(message_id)
            if stored is None:
                raise ArchiveConflictError(message_id, f"summary {record.id!r} replaces it but it is not archived")
            if stored != expected:
                raise ArchiveConflictError(message_id, f"summary {record.id!r} has a SHA-256 the archive does not")
        tx.execute(
            "INSERT INTO summaries (id, session, parent_id, depth, timestamp_ms, record_json) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (record.id, session, record.parent_id, record.depth, record.timestamp_ms, payload),
        )
        tx.many(
            "INSERT INTO summary_messages (summary_id, ordinal, session, message_id) VALUES (?, ?, ?, ?)",
            [(record.id, ordinal, session, mid) for ordinal, mid in enumerate(record.original_message_ids)],
        )

    def _cas(self, tx: Tx, session: str, expected_version: int, state_json: str) -> bool:
        if expected_version < 0:
            raise ValueError(f"expected_version must be >= 0, got {expected_version}")
        if expected_version == 0:
            changed = tx.execute(
                "INSERT INTO session_state (session, version, data, updated_ms) VALUES (?, 1, ?, ?) "
                "ON CONFLICT (session) DO NOTHING",
                (session, state_json, now_ms()),
            )
        else:
            changed = tx.execute(
                "UPDATE session_state SET version = ?, data = ?, updated_ms = ? WHERE session = ? AND version = ?",
                (expected_version + 1, state_json, now_ms(), session, expected_version),
            )
        return changed == 1

    def compare_and_set_state(self, session: str, expected_version: int, new_state: Mapping[str, Any]) -> bool:
        state_json = _dumps(dict(new_state))
        return self._transact(lambda tx: self._cas(tx, session, expected_version, state_json), write=True)

    # -- reads ----------------------------------------------------------------------------------------------------

    def get_state(self, session: str) -> StoredState:
        row = self._transact(
            lambda tx: tx.one("SELECT version, data FROM session_state WHERE session = ?", (session,)), write=False
        )
        if row is None:
            return StoredState()
        return StoredState(version=int(row[0]), data=json.loads(row[1]))

    def records(self, session: str) -> list[SummaryRecord]:
        rows = self._transact(
            lambda tx: tx.all("SELECT record_json FROM summaries WHERE session = ? ORDER BY seq", (session,)),
            write=False,
        )
        return [SummaryRecord.from_dict(json.loads(r[0])) for r in rows]

    def expand(self, summary_id: str) -> list[Message]:

        def read(tx: Tx) -> tuple[Row, list[Row]]:
            row = tx.one("SELECT record_json FROM summaries WHERE id = ?", (summary_id,))
            if row is None:
                raise UnknownSummaryError(summary_id)
            rows = tx.all(
                "SELECT l.message_id, a.json, a.sha256 FROM summary_messages l "
                "LEFT JOIN archive a ON a.session = l.session AND a.message_id = l.message_id "
                "WHERE l.summary_id = ? ORDER BY l.ordinal",
                (summary_id,),
            )
            return row, rows

        row, rows = self._transact(read, write=False)
        record = SummaryRecord.from_dict(json.loads(row[0]))
        expected = dict(zip(record.original_message_ids, record.original_sha256, strict=True))
        if [r[0] for r in rows] != list(record.original_message_ids):
            raise ArchiveIntegrityError(summary_id, "the summary's links to its originals were altered")
        return [_verified(r[0], r[1], r[2], expected.get(r[0])) for r in rows]

    def originals(self, session: str, message_ids: Sequence[str]) -> dict[str, Message]:
        """The archived messages of `session` with these ids (those that exist), each verified."""
        ids = list(dict.fromkeys(message_ids))[:1000]
        if not ids:
            return {}
        marks = ", ".join("?" * len(ids))
        rows = self._transact(
            lambda tx: tx.all(
                f"SELECT message_id, json, sha256 FROM archive WHERE session = ? AND message_id IN ({marks})",
                (session, *ids),
            ),
            write=False,
        )
        return {r[0]: _verified(r[0], r[1], r[2], None) for r in rows}

    def archived(self, session: str) -> list[ArchivedMessage]:
        rows = self._transact(
            lambda tx: tx.all(
                "SELECT message_id, position, role, json, sha256, created_ms FROM archive "
                "WHERE session = ? ORDER BY position",
                (session,),
            ),
            write=False,
        )
        return [
            ArchivedMessage(
                session=session,
                message_id=r[0],
                position=int(r[1]),
                role=r[2],
                sha256=r[4],
                created_ms=int(r[5]),
                message=_verified(r[0], r[3], r[4], None),
            )
            for r in rows
        ]
