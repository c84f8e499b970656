"""The session directory and the event log: what a service keeps about its sessions beside their archives.

An HTTP service lists its sessions (a name, when each was created and last used, its tokens against its window,
its compactions) and streams ``context_summarized`` events to every subscriber, on whichever instance the event
was raised. Both live in the store, so that several processes and hosts on one database see the same: the
``sessions`` table is the directory, and the ``events`` table is the log every instance reads after the sequence
number it last saw. PostgreSQL also sends a ``NOTIFY`` on each event, so that listeners wake at once instead of
polling; with SQLite (one host) the file is the channel and readers poll it.

Schema version 2 adds both tables (`chainsum.store._migrations`).
"""

from __future__ import annotations

import json
import time
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ._base import Tx

__all__ = [
    "EVENTS_CHANNEL",
    "LEGACY_SESSIONS_DDL",
    "POSTGRES_DIRECTORY_DDL",
    "SQLITE_DIRECTORY_DDL",
    "SessionDirectory",
    "SessionInfo",
    "StoredEvent",
]

T = TypeVar("T")

EVENTS_CHANNEL = "chainsum_events"
"""The PostgreSQL ``NOTIFY`` channel of the event log; the payload is the new event's sequence number."""

SQLITE_DIRECTORY_DDL = """
CREATE TABLE IF NOT EXISTS sessions (
    session TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    active_ms INTEGER NOT NULL,
    info TEXT NOT NULL,
    context TEXT,
    compact_requested INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_session ON events (session, seq);
"""

POSTGRES_DIRECTORY_DDL = """
CREATE TABLE IF NOT EXISTS sessions (
    session TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    active_ms BIGINT NOT NULL,
    info TEXT NOT NULL,
    context TEXT,
    compact_requested INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS events (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_session ON events (session, seq);
"""


LEGACY_SESSIONS_DDL = """
CREATE TABLE IF NOT EXISTS legacy_sessions (
    session TEXT PRIMARY KEY,
    claimed_by TEXT
);
INSERT INTO legacy_sessions (session)
    SELECT session FROM session_state
    UNION SELECT session FROM sessions
    UNION SELECT session FROM summaries
    UNION SELECT session FROM archive
"""
"""Schema version 3, the same on both backends: every session id stored before session names were kept exactly
(a service named a session by a lossy, shortened form of its name, under a shorter credential scope). Such a session
is taken up by the first name whose old id it is (`claim_legacy_session`), and by that name alone from then on; a
session made since can never be mistaken for one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    """One session of the directory."""

    session: str
    """The session's id (the key of its archive, records and state)."""
    label: str
    """The name its client gave it (or how it was recognised), for people."""
    created_ms: int
    active_ms: int
    """Unix milliseconds of the last request."""
    info: dict[str, Any] = field(default_factory=dict[str, Any])
    """What the service keeps about it (tokens now, window, compactions, model...): a small JSON object."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredEvent:
    """One event of the log."""

    seq: int
    """Increasing over the whole log: a reader asks for the events after the last one it saw."""
    session: str
    created_ms: int
    data: dict[str, Any]


def now_ms() -> int:
    """Unix milliseconds: every time column of the store (this module's and `_base`'s)."""
    return time.time_ns() // 1_000_000


def _event(row: tuple[Any, ...]) -> StoredEvent:
    return StoredEvent(seq=int(row[0]), session=str(row[1]), created_ms=int(row[2]), data=json.loads(row[3]))


def _info(row: tuple[Any, ...]) -> SessionInfo:
    return SessionInfo(
        session=str(row[0]), label=str(row[1]), created_ms=int(row[2]), active_ms=int(row[3]), info=json.loads(row[4])
    )


class SessionDirectory:
    """The directory and event-log methods of `chainsum.store.SqlStore` (a mixin over its transactions)."""

    @abstractmethod
    def _transact(self, fn: Callable[[Tx], T], *, write: bool) -> T: ...

    def _notify_event(self, tx: Tx, seq: int) -> None:
        """Wake other instances' listeners (PostgreSQL ``NOTIFY``); SQLite readers poll, so nothing to do."""

    def _delete_archive(self, tx: Tx, session: str) -> None:
        """Delete the session's archived messages and their search index (the index is backend-specific)."""
        tx.execute("DELETE FROM archive WHERE session = ?", (session,))

    def touch_session(self, session: str, label: str, info: Mapping[str, Any], context: str | None = None) -> bool:
        """Create the session's entry, or update its label, last activity, `info` (replaced whole) and, when given,
        its `context` snapshot (what the model saw last, as JSON). Returns whether a compaction was requested for
        it (`request_compact`) since the last touch, and clears that request."""
        now = now_ms()
        text = json.dumps(dict(info), sort_keys=True)

        def touch(tx: Tx) -> bool:
            row = tx.one("SELECT compact_requested FROM sessions WHERE session = ?", (session,))
            tx.execute(
                "INSERT INTO sessions (session, label, created_ms, active_ms, info, context) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (session) DO UPDATE SET label = excluded.label, active_ms = excluded.active_ms, "
                "info = excluded.info, context = COALESCE(excluded.context, sessions.context), compact_requested = 0",
                (session, label, now, now, text, context),
            )
            return row is not None and bool(row[0])

        return self._transact(touch, write=True)

    def request_compact(self, session: str) -> bool:
        """Ask whichever instance serves the session to compact it at its next request; False if it is unknown."""
        changed = self._transact(
            lambda tx: tx.execute("UPDATE sessions SET compact_requested = 1 WHERE session = ?", (session,)),
            write=True,
        )
        return changed > 0

    def session_context(self, session: str) -> str | None:
        """The session's last context snapshot (JSON), if one was written."""
        row = self._transact(
            lambda tx: tx.one("SELECT context FROM sessions WHERE session = ?", (session,)), write=False
        )
        return None if row is None or row[0] is None else str(row[0])

    def sessions(self, limit: int = 1000) -> list[SessionInfo]:
        """The directory, most recently active first."""
        rows = self._transact(
            lambda tx: tx.all(
                "SELECT session, label, created_ms, active_ms, info FROM sessions ORDER BY active_ms DESC, session "
                "LIMIT ?",
                (limit,),
            ),
            write=False,
        )
        return [_info(r) for r in rows]

    def session_info(self, session: str) -> SessionInfo | None:
        row = self._transact(
            lambda tx: tx.one(
                "SELECT session, label, created_ms, active_ms, info FROM sessions WHERE session = ?", (session,)
            ),
            write=False,
        )
        return None if row is None else _info(row)

    def claim_legacy_session(self, legacy: str, name: str) -> bool:
        """Whether the session stored as `legacy` before schema version 3 (`LEGACY_SESSIONS_DDL`) is `name`'s to
        continue: True for the first name to ask for it (atomically, across processes) and for that name ever
        after; False for any other name, and for an id that was not stored before version 3."""

        def read(tx: Tx) -> tuple[Any, ...] | None:
            return tx.one("SELECT claimed_by FROM legacy_sessions WHERE session = ?", (legacy,))

        row = self._transact(read, write=False)  # most ids were never stored before: no write lock for them
        if row is None:
            return False
        if row[0] is not None:
            return row[0] == name

        def claim(tx: Tx) -> bool:
            tx.execute(
                "UPDATE legacy_sessions SET claimed_by = ? WHERE session = ? AND claimed_by IS NULL", (name, legacy)
            )
            now = read(tx)
            return now is not None and now[0] == name

        return self._transact(claim, write=True)

    def delete_session(self, session: str) -> bool:
        """Forget a session: its directory entry, events, state, summary records and archived originals. True when
        there was anything to delete."""

        def delete(tx: Tx) -> bool:
            found = tx.one("SELECT 1 FROM sessions WHERE session = ?", (session,)) is not None
            found = found or tx.one("SELECT 1 FROM session_state WHERE session = ?", (session,)) is not None
            self._delete_archive(tx, session)
            for table in ("summary_messages", "summaries", "session_state", "events", "sessions", "legacy_sessions"):
                tx.execute(f"DELETE FROM {table} WHERE session = ?", (session,))
            return found

        return self._transact(delete, write=True)

    def add_event(self, session: str, data: Mapping[str, Any]) -> int:
        """Append an event to the log; returns its sequence number."""
        text = json.dumps(dict(data))

        def add(tx: Tx) -> int:
            row = tx.one(
                "INSERT INTO events (session, created_ms, json) VALUES (?, ?, ?) RETURNING seq",
                (session, now_ms(), text),
            )
            assert row is not None
            seq = int(row[0])
            self._notify_event(tx, seq)
            return seq

        return self._transact(add, write=True)

    def events(self, after: int = 0, *, session: str | None = None, limit: int = 100) -> list[StoredEvent]:
        """Events with a sequence number above `after`, oldest first (of one session when given)."""
        if session is None:
            sql, params = (
                "SELECT seq, session, created_ms, json FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                (
                    after,
                    limit,
                ),
            )
        else:
            sql = "SELECT seq, session, created_ms, json FROM events WHERE seq > ? AND session = ? ORDER BY seq LIMIT ?"
            params = (after, session, limit)
        rows = self._transact(lambda tx: tx.all(sql, params), write=False)
        return [_event(r) for r in rows]

    def recent_events(self, session: str, limit: int = 20) -> list[StoredEvent]:
        """The session's last `limit` events, oldest first."""
        rows = self._transact(
            lambda tx: tx.all(
                "SELECT seq, session, created_ms, json FROM events WHERE session = ? ORDER BY seq DESC LIMIT ?",
                (session, limit),
            ),
            write=False,
        )
        return [_event(r) for r in reversed(rows)]

    def last_event_seq(self) -> int:
        """The sequence number of the newest event (0 when the log is empty): where a new reader starts."""
        row = self._transact(lambda tx: tx.one("SELECT MAX(seq) FROM events"), write=False)
        return int(row[0]) if row is not None and row[0] is not None else 0
