"""`SQLiteStore`: the default store, standard library only, for one machine (one or several processes).

Files run in WAL mode (readers never block the writer), every write is a ``BEGIN IMMEDIATE`` transaction (the write
lock is taken up front, so two writers never deadlock upgrading a read lock) and ``busy_timeout`` makes a writer wait
for another process instead of failing. The summarization lock is a lease row, not a held transaction: an LLM call
can take a minute and must not block every other session's writes meanwhile; a crashed holder's lease expires.

Opening checks the schema version (`chainsum.store._migrations`) and migrates an older file inside one
``BEGIN IMMEDIATE`` transaction: a second process opening at the same time waits for it, then finds the new version.
There is no connection to lose (the file is local), so transactions are never retried here.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from typing import ClassVar, TypeVar

from ._base import Row, SqlStore, Tx
from ._migrations import SQLITE_MIGRATIONS, Migration, migrate
from ._protocol import SearchHit
from ._schema import query_words

__all__ = ["SQLiteStore"]

logger = logging.getLogger("chainsum.store")

_POLL_S = 0.02

T = TypeVar("T")


class _SqliteTx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        return self._conn.execute(sql, tuple(params)).rowcount

    def one(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        row: Row | None = self._conn.execute(sql, tuple(params)).fetchone()
        return row

    def all(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        rows: list[Row] = self._conn.execute(sql, tuple(params)).fetchall()
        return rows


class SQLiteStore(SqlStore):
    """A store in one SQLite file (or ``":memory:"``, private to this object).

    `lock_lease_s` bounds how long a crashed process can keep a session's summarization lock; a live holder that
    outlasts it is still safe, because its final write is a compare-and-set on the session's state version."""

    _migrations: ClassVar[Sequence[Migration]] = SQLITE_MIGRATIONS
    """The steps `__init__` runs on an older file (a class attribute so that tests can add one)."""

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        busy_timeout_ms: int = 30_000,
        lock_lease_s: float = 600.0,
    ) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self._lease_ms = int(lock_lease_s * 1000)
        self._conn = sqlite3.connect(
            self.path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
        )
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if self.path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
        try:
            with self._write() as tx:
                version = migrate(tx, self._migrations, _table_exists)
        except BaseException:
            self._conn.close()
            raise
        logger.debug("path=<%s>, schema_version=<%d> | sqlite store opened", self.path, version)

    def _attempt(self, fn: Callable[[Tx], T], *, write: bool) -> T:
        with self._write() if write else self._read() as tx:
            return fn(tx)

    @contextmanager
    def _write(self) -> Generator[_SqliteTx, None, None]:
        with self._mutex:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield _SqliteTx(self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @contextmanager
    def _read(self) -> Generator[_SqliteTx, None, None]:
        with self._mutex:
            self._conn.execute("BEGIN")
            try:
                yield _SqliteTx(self._conn)
            finally:
                self._conn.execute("COMMIT")

    def _lock_session_writes(self, tx: Tx, session: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already serializes every writer of the file."""

    def _insert_archive_row(self, tx: Tx, row: tuple[str, str, int, str, str, str, int], text: str) -> None:
        inserted = tx.one(
            "INSERT INTO archive (session, message_id, position, role, json, sha256, created_ms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            row,
        )
        assert inserted is not None
        tx.execute("INSERT INTO archive_fts (rowid, text) VALUES (?, ?)", (inserted[0], text))

    def search(self, session: str | None, query: str, limit: int = 20) -> list[SearchHit]:
        words = query_words(query)
        if not words or limit <= 0:
            return []
        match = " ".join(f'"{w}"' for w in words)
        rows = self._transact(
            lambda tx: tx.all(
                "SELECT a.session, a.message_id, a.position, a.role, "
                "snippet(archive_fts, 0, '[', ']', '…', 16), bm25(archive_fts) "
                "FROM archive_fts JOIN archive a ON a.seq = archive_fts.rowid "
                "WHERE archive_fts MATCH ? AND (? IS NULL OR a.session = ?) "
                "ORDER BY bm25(archive_fts), a.seq LIMIT ?",
                (match, session, session, min(limit, 1000)),
            ),
            write=False,
        )
        return [
            SearchHit(session=r[0], message_id=r[1], position=int(r[2]), role=r[3], snippet=r[4], rank=-float(r[5]))
            for r in rows
        ]

    @contextmanager
    def try_lock(self, session: str, *, wait_s: float = 0.0) -> Generator[bool, None, None]:
        owner = uuid.uuid4().hex
        deadline = time.monotonic() + wait_s
        acquired = self._acquire(session, owner)
        while not acquired and time.monotonic() < deadline:
            time.sleep(_POLL_S)
            acquired = self._acquire(session, owner)
        try:
            yield acquired
        finally:
            if acquired:
                self._release(session, owner)

    def _acquire(self, session: str, owner: str) -> bool:
        with self._mutex:
            if session in self._held:
                return False
            with self._write() as tx:
                now = int(time.time() * 1000)
                changed = tx.execute(
                    "INSERT INTO session_locks (session, owner, expires_ms) VALUES (?, ?, ?) "
                    "ON CONFLICT (session) DO UPDATE SET owner = excluded.owner, expires_ms = excluded.expires_ms "
                    "WHERE session_locks.expires_ms < ?",
                    (session, owner, now + self._lease_ms, now),
                )
            if changed == 1:
                self._held.add(session)
                logger.debug("session=<%s> | summarization lock acquired", session)
            return changed == 1

    def _release(self, session: str, owner: str) -> None:
        with self._mutex:
            self._held.discard(session)
            try:
                with self._write() as tx:
                    tx.execute("DELETE FROM session_locks WHERE session = ? AND owner = ?", (session, owner))
            except sqlite3.Error:
                # The lease runs out on its own; do not hide the caller's own error behind this one.
                logger.warning("session=<%s> | could not release the summarization lock", session, exc_info=True)
                return
            logger.debug("session=<%s> | summarization lock released", session)

    def close(self) -> None:
        with self._mutex:
            self._conn.close()


def _table_exists(tx: Tx, name: str) -> bool:
    return tx.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)) is not None
