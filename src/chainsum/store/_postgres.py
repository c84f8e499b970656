"""`PostgresStore`: the store for several processes or machines, on psycopg 3 (``pip install "chainsum[postgres]"``).

Writers of one session are serialized by a transaction-scoped advisory lock (positions are ``max + 1``); the
summarization lock is a session-scoped advisory lock, so a process that dies frees it with its connection, with no
lease to tune. Search uses a stored ``tsvector`` column (``simple`` configuration: no stemming, the same words match
as in SQLite's FTS5) with a GIN index, and ``plainto_tsquery`` so that no query text is ever parsed as syntax.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, LiteralString, cast

from ..errors import MissingDependencyError
from ._base import Row, SqlStore, Tx
from ._protocol import SearchHit
from ._schema import POSTGRES_DDL, lock_key, query_words

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresStore"]

logger = logging.getLogger("chainsum.store")

_POLL_S = 0.02


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


class PostgresStore(SqlStore):
    """A store in a PostgreSQL database, in `schema` when given (created if missing) or the connection's default.

    One connection per object; share the object between threads or open one per process."""

    def __init__(self, url: str, *, schema: str | None = None, connect_timeout_s: int = 10) -> None:
        super().__init__()
        try:
            import psycopg
            from psycopg import sql
        except ImportError as exc:  # pragma: no cover - psycopg is in the dev group
            raise MissingDependencyError("psycopg", "postgres") from exc
        self.schema = schema
        self._conn: psycopg.Connection[Row] = psycopg.connect(url, autocommit=True, connect_timeout=connect_timeout_s)
        try:
            with self._conn.transaction(), self._conn.cursor() as cur:
                # Two processes creating the tables at once would collide in the catalog: serialize them.
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("ddl", schema or ""),))
                if schema is not None:
                    cur.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
                    cur.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
                cur.execute(cast(LiteralString, POSTGRES_DDL))
        except BaseException:
            self._conn.close()
            raise
        logger.debug("schema=<%s> | postgres store opened", schema)

    @contextmanager
    def _write(self) -> Generator[Tx, None, None]:
        with self._mutex, self._conn.transaction(), self._conn.cursor() as cur:
            yield _PgTx(cur)

    @contextmanager
    def _read(self) -> Generator[Tx, None, None]:
        with self._mutex, self._conn.transaction(), self._conn.cursor() as cur:
            yield _PgTx(cur)

    def _lock_session_writes(self, tx: Tx, session: str) -> None:
        tx.one("SELECT pg_advisory_xact_lock(?)", (lock_key("write", session),))

    def _insert_archive_row(self, tx: Tx, row: tuple[str, str, int, str, str, str, int], text: str) -> None:
        tx.execute(
            "INSERT INTO archive (session, message_id, position, role, json, sha256, created_ms, search_text) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (*row, text),
        )

    def search(self, session: str | None, query: str, limit: int = 20) -> list[SearchHit]:
        words = query_words(query)
        if not words or limit <= 0:
            return []
        with self._read() as tx:
            rows = tx.all(
                "SELECT a.session, a.message_id, a.position, a.role, "
                "ts_headline('simple', a.search_text, q, 'StartSel=\"[\", StopSel=\"]\", MaxWords=16, MinWords=4'), "
                "ts_rank(a.tsv, q) AS rank "
                "FROM archive a, plainto_tsquery('simple', ?) AS q "
                "WHERE a.tsv @@ q AND (CAST(? AS text) IS NULL OR a.session = ?) "
                "ORDER BY rank DESC, a.seq LIMIT ?",
                (" ".join(words), session, session, min(limit, 1000)),
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
            row: Any = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            acquired = bool(row[0])
            if acquired:
                self._held.add(session)
                logger.debug("session=<%s> | summarization lock acquired", session)
            return acquired

    def _release(self, session: str, key: int) -> None:
        with self._mutex:
            self._held.discard(session)
            try:
                self._conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except Exception:
                # A lost connection has already dropped its advisory locks; do not hide the caller's own error.
                logger.warning("session=<%s> | could not release the summarization lock", session, exc_info=True)
                return
            logger.debug("session=<%s> | summarization lock released", session)

    def close(self) -> None:
        with self._mutex:
            self._conn.close()
