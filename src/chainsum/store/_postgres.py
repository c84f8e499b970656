"""`PostgresStore`: the store for several processes or machines, on psycopg 3 (``pip install "chainsum[postgres]"``).

Writers of one session are serialized by a transaction-scoped advisory lock (positions are ``max + 1``); the
summarization lock is a session-scoped advisory lock, so a process that dies frees it with its connection, with no
lease to tune. Search uses a stored ``tsvector`` column (``simple`` configuration: no stemming, the same words match
as in SQLite's FTS5) with a GIN index, and ``plainto_tsquery`` so that no query text is ever parsed as syntax.

Two connections: the writes and the summarization locks on one, the reads on the other, so that a read never waits
for a long write of this process (a compaction archiving thousands of messages; `SqlStore._has_reader`).

Reconnection: a server restart or a killed backend (``pg_terminate_backend``) leaves a connection dead. The next
transaction on it notices (the driver marks the connection broken), reconnects with the same url and search path,
and runs the whole transaction function once more (`SqlStore._transact`) — safe, because the server rolled the cut
transaction back — except a write that lost its connection after COMMIT was sent, whose fate cannot be known:
that raises `StoreConnectionError` with ``outcome_unknown``. The summarization lock dies with its connection (the
server frees it, and another process may take it): the store logs a warning when it reconnects while holding one,
does not take it back behind the holder's back, and releasing it later is a logged no-op. The holder stays safe
because its final write is a compare-and-set on the state version, which fails if the other process wrote first.

Opening takes a transaction-scoped advisory lock on the schema before creating or migrating it
(`chainsum.store._migrations`), so two processes opening at once migrate once.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, ClassVar, LiteralString, TypeVar, cast

from ..errors import MissingDependencyError
from ._archive import SearchHit
from ._base import ConnectionLost, Row, SqlStore, Tx
from ._directory import EVENTS_CHANNEL
from ._errors import StoreConnectionError
from ._migrations import POSTGRES_MIGRATIONS, Migration, migrate
from ._schema import lock_key, query_words

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresStore"]

logger = logging.getLogger("chainsum.store")

_POLL_S = 0.02

T = TypeVar("T")

_LOST_SQLSTATES = ("57P01", "57P02", "57P03")
"""admin_shutdown (``pg_terminate_backend``, a fast shutdown), crash_shutdown, cannot_connect_now: the server is
ending this connection even if the driver has not yet seen the socket close. Class ``08`` (connection exception)
counts too."""


def _q(sql: str) -> LiteralString:
    """Our SQL uses ``?``; psycopg wants ``%s``. Every statement is a constant of this package, never user text."""
    return cast(LiteralString, sql.replace("?", "%s"))


class _PgTx:
    def __init__(self, cursor: psycopg.Cursor[Row]) -> None:
        self._cur = cursor

    def execute(self, sql: str, params: Sequence[object] = ()) -> int:
        self._cur.execute(_q(sql), tuple(params))
        return self._cur.rowcount

    def one(self, sql: str, params: Sequence[object] = ()) -> Row | None:
        self._cur.execute(_q(sql), tuple(params))
        return self._cur.fetchone()

    def all(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        self._cur.execute(_q(sql), tuple(params))
        return self._cur.fetchall()

    def many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        self._cur.executemany(_q(sql), [tuple(r) for r in rows])

    def copy(self, table: LiteralString, columns: Sequence[LiteralString], rows: Sequence[Sequence[object]]) -> None:
        """``COPY table (columns) FROM STDIN``: the fastest way in for many rows (one statement, streamed)."""
        with self._cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


class PostgresStore(SqlStore):
    """A store in a PostgreSQL database, in `schema` when given (created if missing) or the connection's default.

    Two connections per object, each replaced when it dies (see the module docstring): one for the writes and the
    summarization locks, one for the reads, so that no read waits for a long write of this process (a compaction's
    archive); share the object between threads or open one per process."""

    _migrations: ClassVar[Sequence[Migration]] = POSTGRES_MIGRATIONS
    """The steps `__init__` runs on an older schema (a class attribute so that tests can add one)."""

    def __init__(self, url: str, *, schema: str | None = None, connect_timeout_s: int = 10) -> None:
        super().__init__()
        try:
            from psycopg import sql
        except ImportError as exc:  # pragma: no cover - psycopg is in the dev group
            raise MissingDependencyError("psycopg", "postgres") from exc

        self.schema = schema
        self._url = url
        self._connect_timeout_s = connect_timeout_s
        self._closed = False
        """Set by `close`: a connection closed on purpose is never reopened."""
        self._generation = 0
        """How many times the connection was replaced; a summarization lock belongs to the one it was taken on."""
        self._lock_generation: dict[str, int] = {}
        self._conn = self._connect()
        try:
            with self._conn.transaction(), self._conn.cursor() as cur:
                # Two processes creating or migrating the tables at once would collide: serialize them.
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("ddl", schema or ""),))
                if schema is not None:
                    cur.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
                version = migrate(_PgTx(cur), self._migrations, _table_exists)
            # reads run on a connection of their own (`SqlStore._has_reader`); writes and the locks stay on `_conn`
            self._reader = self._connect()
        except BaseException:
            self._conn.close()
            raise
        self._has_reader = True
        logger.debug("schema=<%s>, schema_version=<%d> | postgres store opened", schema, version)

    def _connect(self) -> psycopg.Connection[Row]:
        """A new autocommit connection whose search path is the store's schema (when it has one)."""
        import psycopg
        from psycopg import sql

        conn = psycopg.connect(self._url, autocommit=True, connect_timeout=self._connect_timeout_s)
        try:
            if self.schema is not None:
                # A session setting: it outlives transactions, and must be set again on every new connection.
                conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        except BaseException:
            conn.close()
            raise
        return conn

    def _attempt(self, fn: Callable[[Tx], T], *, write: bool, reader: bool) -> T:
        import psycopg

        conn = self._reader if reader else self._conn
        committing = False
        try:
            with conn.transaction(), conn.cursor() as cur:
                result = fn(_PgTx(cur))
                committing = True  # from here on, leaving the block sends COMMIT
            return result
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            if not self._lost(conn, exc):
                raise
            raise ConnectionLost(commit_sent=committing) from exc

    def _lost(self, conn: psycopg.Connection[Row], exc: Exception) -> bool:
        """Whether `exc` means the connection is gone (not a deadlock, a lock timeout or our own `close`)."""
        if self._closed:
            return False
        sqlstate = getattr(exc, "sqlstate", None)
        return conn.closed or (isinstance(sqlstate, str) and (sqlstate.startswith("08") or sqlstate in _LOST_SQLSTATES))

    def _reconnect(self, *, reader: bool) -> None:
        import psycopg

        with contextlib.suppress(psycopg.Error):
            (self._reader if reader else self._conn).close()
        try:
            fresh = self._connect()
        except psycopg.Error as exc:
            raise StoreConnectionError(f"lost the connection to PostgreSQL and could not reconnect: {exc}") from exc
        if reader:  # no lock lives there
            self._reader = fresh
            logger.warning("schema=<%s> | reconnected to PostgreSQL (the reader)", self.schema)
            return
        self._conn = fresh
        for session, generation in sorted(self._lock_generation.items()):
            if generation == self._generation:
                logger.warning(
                    "session=<%s> | summarization lock lost with the dead connection; another process may take it, "
                    "the holder's final compare-and-set still guards its write",
                    session,
                )
        self._generation += 1
        logger.warning("schema=<%s>, reconnects=<%d> | reconnected to PostgreSQL", self.schema, self._generation)

    def _lock_session_writes(self, tx: Tx, session: str) -> None:
        tx.one("SELECT pg_advisory_xact_lock(?)", (lock_key("write", session),))

    def _insert_archive_rows(self, tx: Tx, rows: Sequence[tuple[str, str, int, str, str, str, int, str]]) -> None:
        assert isinstance(tx, _PgTx)  # this backend's `_attempt` made it
        columns: list[LiteralString] = [
            "session",
            "message_id",
            "position",
            "role",
            "json",
            "sha256",
            "created_ms",
            "search_text",
        ]
        tx.copy("archive", columns, rows)

    def _notify_event(self, tx: Tx, seq: int) -> None:
        # Delivered at commit, to every listening connection of the database (the channel name is one constant, so
        # stores in different schemas of one database wake each other; a woken reader finds nothing new and waits).
        tx.execute("SELECT pg_notify(?, ?)", (EVENTS_CHANNEL, str(seq)))

    @property
    def url(self) -> str:
        """The connection URL, for a listener of its own (`chainsum.server` listens for event notifications)."""
        return self._url

    def search(
        self, session: str | None, query: str, limit: int = 20, *, any_word: bool = False, snippets: bool = True
    ) -> list[SearchHit]:
        words = query_words(query)
        if not words or limit <= 0:
            return []
        # Any word: one plainto_tsquery per word, OR-ed with ||, so each word stays plain text (never tsquery syntax).
        terms = (
            " || ".join(["plainto_tsquery('simple', ?)"] * len(words)) if any_word else "plainto_tsquery('simple', ?)"
        )
        params: tuple[object, ...] = tuple(words) if any_word else (" ".join(words),)
        headline = (
            "ts_headline('simple', a.search_text, t.q, 'StartSel=\"[\", StopSel=\"]\", MaxWords=16, MinWords=4')"
            if snippets
            else "''"
        )
        rows = self._transact(
            lambda tx: tx.all(
                f"SELECT a.session, a.message_id, a.position, a.role, {headline}, "
                "ts_rank(a.tsv, t.q) AS rank "
                f"FROM archive a, (SELECT {terms} AS q) AS t "
                "WHERE a.tsv @@ t.q AND (CAST(? AS text) IS NULL OR a.session = ?) "
                "ORDER BY rank DESC, a.seq LIMIT ?",
                (*params, session, session, min(limit, 1000)),
            ),
            write=False,
        )
        return [
            SearchHit(session=r[0], message_id=r[1], position=int(r[2]), role=r[3], snippet=r[4], rank=float(r[5]))
            for r in rows
        ]

    @contextmanager
    def try_lock(self, session: str, *, wait_s: float = 0.0) -> Generator[bool, None, None]:
        key = lock_key("summarize", session)
        deadline = time.monotonic() + wait_s
        acquired = self._acquire(session, key)
        while not acquired and time.monotonic() < deadline:
            time.sleep(_POLL_S)
            acquired = self._acquire(session, key)
        try:
            yield acquired
        finally:
            if acquired:
                self._release(session, key)

    def _acquire(self, session: str, key: int) -> bool:
        with self._mutex:
            if session in self._held:
                return False
            # A session-level advisory lock outlives the transaction it was taken in (even a rolled-back one);
            # going through `_transact` means a connection that died while idle is replaced first.
            row = self._transact(lambda tx: tx.one("SELECT pg_try_advisory_lock(?)", (key,)), write=False, main=True)
            acquired = row is not None and bool(row[0])
            if acquired:
                self._held.add(session)
                self._lock_generation[session] = self._generation
                logger.debug("session=<%s> | summarization lock acquired", session)
            return acquired

    def _release(self, session: str, key: int) -> None:
        with self._mutex:
            self._held.discard(session)
            if self._lock_generation.pop(session, None) != self._generation:
                # Taken on a connection that has since been replaced: the server freed it when that one died, and
                # unlocking on the new connection could only fail (or, had we taken it again, free someone else's).
                logger.warning(
                    "session=<%s> | summarization lock was lost with an earlier connection, nothing to release",
                    session,
                )
                return
            try:
                self._conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except Exception:
                # A lost connection has already dropped its advisory locks; do not hide the caller's own error.
                logger.warning("session=<%s> | could not release the summarization lock", session, exc_info=True)
                return
            logger.debug("session=<%s> | summarization lock released", session)

    def close(self) -> None:
        with self._mutex:
            self._closed = True
            self._conn.close()
        with self._read_mutex:
            self._reader.close()


def _table_exists(tx: Tx, name: str) -> bool:
    """Whether `name` resolves to a table on the search path, that is in the store's schema."""
    row = tx.one("SELECT to_regclass(CAST(? AS text)) IS NOT NULL", (name,))
    return row is not None and bool(row[0])
