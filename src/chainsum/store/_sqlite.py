"""`SQLiteStore`: the default store, standard library only, for one machine (one or several processes).

Files run in WAL mode (readers never block the writer), every write is a ``BEGIN IMMEDIATE`` transaction (the write
lock is taken up front, so two writers never deadlock upgrading a read lock) and ``busy_timeout`` makes a writer wait
for another process instead of failing. A file store reads on a second connection of its own (``query_only``), so
that a long write, a compaction archiving thousands of messages, holds up no read meanwhile
(`SqlStore._has_reader`). The summarization lock is a lease row, not a held transaction: an LLM call
can take a minute and must not block every other session's writes meanwhile; a crashed holder's lease expires.

Opening checks the schema version (`chainsum.store._migrations`) and migrates an older file inside one
``BEGIN IMMEDIATE`` transaction: a second process opening at the same time waits for it, then finds the new version.
There is no connection to lose (the file is local), so transactions are never retried here.
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from typing import ClassVar, TypeVar

from ._archive import SearchHit
from ._base import Row, SqlStore, Tx
from ._errors import StoreError
from ._migrations import SQLITE_MIGRATIONS, Migration, migrate
from ._schema import query_words, snippet_of

__all__ = ["SQLiteStore"]

logger = logging.getLogger("chainsum.store")

_POLL_S = 0.02
_HOST = socket.gethostname()


def _holder_gone(owner: str) -> bool:
    """True when `owner` (``host:pid:token``) names a process of this machine that no longer exists."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != _HOST or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, owned by another user
        return False
    try:  # a killed process its parent has not reaped yet is a zombie: gone too (Linux)
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[0] == "Z"
    except (OSError, IndexError):
        return False


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

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        self._conn.executemany(sql, [tuple(r) for r in rows])


class SQLiteStore(SqlStore):
    """A store in one SQLite file (or ``":memory:"``, private to this object).

    The summarization lock is a lease of `lock_lease_s` seconds that its holder renews (a heartbeat every third of
    it) for as long as it holds the lock: a holder that dies stops renewing and loses the lock within `lock_lease_s`
    seconds; on the same machine, a waiter that sees the holder's process gone takes the lock at once. A live holder
    whose lease ran out anyway (a stalled machine) is still safe, because its final write is a compare-and-set on
    the session's state version."""

    _migrations: ClassVar[Sequence[Migration]] = SQLITE_MIGRATIONS
    """The steps `__init__` runs on an older file (a class attribute so that tests can add one)."""

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        busy_timeout_ms: int = 30_000,
        lock_lease_s: float = 10.0,
    ) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self._lease_ms = int(lock_lease_s * 1000)
        self._owners: dict[str, str] = {}
        """The owner of each lock this store holds (under `_mutex`), renewed by `_renew`."""
        self._renewer: threading.Thread | None = None
        self._closing = threading.Event()
        if os.path.isdir(self.path):
            raise StoreError(f"{self.path}: is a directory, not a database file")
        if self.path not in ("", ":memory:") and not os.path.isdir(os.path.dirname(os.path.abspath(self.path))):
            raise StoreError(f"{self.path}: cannot open database: its directory does not exist")
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open database: {exc}") from exc
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
                # In WAL mode NORMAL syncs at checkpoints, not at each commit: a commit survives any crash of the
                # process (the WAL is in the OS's hands) and may be lost only with the machine's power, never
                # corrupting the file (SQLite's own advice for WAL). FULL cost a disk flush per commit, four a
                # compaction (lock, archive, state, unlock): most of a compacting request's time in the proxy.
                self._conn.execute("PRAGMA synchronous = NORMAL")
            with self._write() as tx:
                version = migrate(tx, self._migrations, _table_exists)
        except sqlite3.Error as exc:  # a file that is not a database, a directory that cannot be written, ...
            self._conn.close()
            raise StoreError(f"{self.path}: cannot open database: {exc}") from exc
        except BaseException:
            self._conn.close()
            raise
        self._reader: sqlite3.Connection | None = None
        """A second connection for reads (`SqlStore._has_reader`), on a file only: each connection to
        ``":memory:"`` is a database of its own."""
        if self.path not in ("", ":memory:"):
            try:
                self._reader = sqlite3.connect(
                    self.path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False
                )
                self._reader.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
                self._reader.execute("PRAGMA query_only = ON")
            except sqlite3.Error as exc:
                self._conn.close()
                if self._reader is not None:
                    self._reader.close()
                raise StoreError(f"{self.path}: cannot open database: {exc}") from exc
            self._has_reader = True
        logger.debug("path=<%s>, schema_version=<%d> | sqlite store opened", self.path, version)

    def _attempt(self, fn: Callable[[Tx], T], *, write: bool, reader: bool) -> T:
        if reader and self._reader is not None:
            with self._read_on(self._reader) as tx:  # `_transact` holds `_read_mutex`
                return fn(tx)
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
        with self._mutex, self._read_on(self._conn) as tx:
            yield tx

    @contextmanager
    def _read_on(self, conn: sqlite3.Connection) -> Generator[_SqliteTx, None, None]:
        """A read transaction on `conn` (the caller holds the mutex that guards it)."""
        conn.execute("BEGIN")
        try:
            yield _SqliteTx(conn)
        finally:
            conn.execute("COMMIT")

    def _lock_session_writes(self, tx: Tx, session: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already serializes every writer of the file."""

    def _insert_archive_rows(self, tx: Tx, rows: Sequence[tuple[str, str, int, str, str, str, int, str]]) -> None:
        tx.many(
            "INSERT INTO archive (session, message_id, position, role, json, sha256, created_ms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [r[:7] for r in rows],
        )
        # The search index is keyed by the rows' seq, which SQLite chose: read them back by position (unique in a
        # session, and this write transaction is the file's only writer).
        session, first, last = rows[0][0], rows[0][2], rows[-1][2]
        seqs = tx.all(
            "SELECT position, seq FROM archive WHERE session = ? AND position BETWEEN ? AND ?", (session, first, last)
        )
        seq_of = {int(r[0]): int(r[1]) for r in seqs}
        tx.many("INSERT INTO archive_fts (rowid, text) VALUES (?, ?)", [(seq_of[r[2]], r[7]) for r in rows])

    def _delete_archive(self, tx: Tx, session: str) -> None:
        tx.execute("DELETE FROM archive_fts WHERE rowid IN (SELECT seq FROM archive WHERE session = ?)", (session,))
        tx.execute("DELETE FROM archive WHERE session = ?", (session,))

    def search(
        self, session: str | None, query: str, limit: int = 20, *, any_word: bool = False, snippets: bool = True
    ) -> list[SearchHit]:
        words = query_words(query)
        if not words or limit <= 0:
            return []
        match = (" OR " if any_word else " ").join(f'"{w}"' for w in words)

        def read(tx: Tx) -> tuple[list[Row], dict[int, str]]:
            # snippet() is left out of the ranking query: SQLite would compute it for every matching row, not only
            # for the few returned; the snippets are made from the returned rows' text instead.
            rows = tx.all(
                "SELECT a.session, a.message_id, a.position, a.role, a.seq, bm25(archive_fts) "
                "FROM archive_fts JOIN archive a ON a.seq = archive_fts.rowid "
                "WHERE archive_fts MATCH ? AND (? IS NULL OR a.session = ?) "
                "ORDER BY bm25(archive_fts), a.seq LIMIT ?",
                (match, session, session, min(limit, 1000)),
            )
            if not rows or not snippets:
                return rows, {}
            seqs = [r[4] for r in rows]
            marks = ", ".join("?" * len(seqs))
            texts = tx.all(f"SELECT rowid, text FROM archive_fts WHERE rowid IN ({marks})", tuple(seqs))
            return rows, {int(t[0]): str(t[1]) for t in texts}

        rows, texts = self._transact(read, write=False)
        return [
            SearchHit(
                session=r[0],
                message_id=r[1],
                position=int(r[2]),
                role=r[3],
                snippet=snippet_of(texts[int(r[4])], words) if snippets else "",
                rank=-float(r[5]),
            )
            for r in rows
        ]

    @contextmanager
    def try_lock(self, session: str, *, wait_s: float = 0.0) -> Generator[bool, None, None]:
        owner = f"{_HOST}:{os.getpid()}:{uuid.uuid4().hex}"
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

    def _renew(self) -> None:
        """Renew the lease of every lock this store holds, every third of the lease, while it holds any: one
        thread for all of them, started by the first and ending with the last (a thread per lock cost a
        compacting request a millisecond or more to start). A failed renewal is logged and tried again."""
        while not self._closing.wait(self._lease_ms / 3000):
            with self._mutex:
                held = dict(self._owners)
                if not held:
                    self._renewer = None
                    return
                expires = int(time.time() * 1000) + self._lease_ms
                for session, owner in held.items():
                    try:
                        with self._write() as tx:
                            tx.execute(
                                "UPDATE session_locks SET expires_ms = ? WHERE session = ? AND owner = ?",
                                (expires, session, owner),
                            )
                    except sqlite3.Error:
                        logger.warning("session=<%s> | could not renew the summarization lease", session, exc_info=True)

    def _acquire(self, session: str, owner: str) -> bool:
        with self._mutex:
            if session in self._held:
                return False
            with self._write() as tx:
                now = int(time.time() * 1000)
                row = tx.one("SELECT owner, expires_ms FROM session_locks WHERE session = ?", (session,))
                if row is not None and row[1] >= now and _holder_gone(str(row[0])):
                    logger.info("session=<%s>, holder=<%s> | lock holder is gone; taking the lock", session, row[0])
                    tx.execute("DELETE FROM session_locks WHERE session = ? AND owner = ?", (session, row[0]))
                changed = tx.execute(
                    "INSERT INTO session_locks (session, owner, expires_ms) VALUES (?, ?, ?) "
                    "ON CONFLICT (session) DO UPDATE SET owner = excluded.owner, expires_ms = excluded.expires_ms "
                    "WHERE session_locks.expires_ms < ?",
                    (session, owner, now + self._lease_ms, now),
                )
            if changed == 1:
                self._held.add(session)
                self._owners[session] = owner
                if self._renewer is None:
                    self._renewer = threading.Thread(target=self._renew, name="chainsum-lease", daemon=True)
                    self._renewer.start()
                logger.debug("session=<%s> | summarization lock acquired", session)
            return changed == 1

    def _release(self, session: str, owner: str) -> None:
        with self._mutex:
            self._held.discard(session)
            self._owners.pop(session, None)
            try:
                with self._write() as tx:
                    tx.execute("DELETE FROM session_locks WHERE session = ? AND owner = ?", (session, owner))
            except sqlite3.Error:
                # The lease runs out on its own; do not hide the caller's own error behind this one.
                logger.warning("session=<%s> | could not release the summarization lock", session, exc_info=True)
                return
            logger.debug("session=<%s> | summarization lock released", session)

    def close(self) -> None:
        self._closing.set()
        with self._mutex:
            self._conn.close()
        if self._reader is not None:
            with self._read_mutex:
                self._reader.close()


def _table_exists(tx: Tx, name: str) -> bool:
    return tx.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)) is not None
