"""Shared by the store tests and their worker processes: how to open a backend's store again."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from chainsum.store import PostgresStore, SQLiteStore, SqlStore, Store
from chainsum.store._base import Tx

POSTGRES_URL = os.environ.get("CHAINSUM_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")

_reachable: dict[str, str | None] = {}


def postgres_unavailable() -> str | None:
    """None when the test server answers, else why not (checked once per run)."""
    if "why" not in _reachable:
        import psycopg

        try:
            with psycopg.connect(POSTGRES_URL, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            _reachable["why"] = None
        except psycopg.Error as exc:
            _reachable["why"] = f"PostgreSQL at {POSTGRES_URL} is not reachable: {exc}"
    return _reachable["why"]


def require_postgres() -> None:
    why = postgres_unavailable()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(why + " (CI is set: the PostgreSQL tests must run)")
    pytest.skip(why)


@dataclass
class Backend:
    """How a test opens (and reopens) one store, and touches its tables behind its back."""

    kind: str
    target: dict[str, Any]
    """What a worker process needs to open the same store: a path, or a url and a schema."""
    open: Callable[[], Store]
    raw: Callable[[str, tuple[object, ...]], None]
    """Run one SQL statement (``?`` placeholders) on a separate connection, committed."""
    query: Callable[[str, tuple[object, ...]], list[tuple[Any, ...]]]
    """Run one SELECT (``?`` placeholders) on a separate connection and return its rows."""


def open_store(kind: str, target: dict[str, Any]) -> Store:
    if kind == "sqlite":
        return SQLiteStore(target["path"])
    return PostgresStore(target["url"], schema=target["schema"])


@contextmanager
def write_held(store: SqlStore, body: Callable[[Tx], None] = lambda tx: None) -> Generator[None]:
    """A write transaction of `store` (in a thread) that runs `body` and stays open until the block ends: what a
    compaction archiving thousands of messages does to the store's write connection for a second or more."""
    inside, release = threading.Event(), threading.Event()

    def slow(tx: Tx) -> None:
        body(tx)
        inside.set()
        release.wait(60)

    writer = threading.Thread(target=lambda: store._transact(slow, write=True))  # pyright: ignore[reportPrivateUsage]
    writer.start()
    try:
        assert inside.wait(10), "the write transaction did not start"
        yield
    finally:
        release.set()
        writer.join(10)
