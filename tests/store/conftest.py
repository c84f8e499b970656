"""Fixtures running the same store tests on SQLite (a file) and PostgreSQL (a fresh schema per test).

PostgreSQL: ``CHAINSUM_TEST_POSTGRES_URL`` or ``postgresql://postgres@127.0.0.1:5432/test``. When the server does
not answer, its tests fail under CI (``CI`` set: a missing service must not pass silently) and skip locally.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chainsum.store import Store
from store.store_support import POSTGRES_URL, Backend, open_store, require_postgres


def _sqlite_backend(tmp_path: Path) -> Iterator[Backend]:
    import sqlite3

    target = {"path": str(tmp_path / "store.db")}

    def raw(sql: str, params: tuple[object, ...]) -> None:
        conn = sqlite3.connect(target["path"])
        try:
            with conn:
                conn.execute(sql, params)
        finally:
            conn.close()

    def query(sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        conn = sqlite3.connect(target["path"])
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    yield Backend("sqlite", target, lambda: open_store("sqlite", target), raw, query)


def _postgres_backend() -> Iterator[Backend]:
    require_postgres()
    import psycopg
    from psycopg import sql

    schema = f"chainsum_test_{uuid.uuid4().hex}"
    target = {"url": POSTGRES_URL, "schema": schema}

    def raw(statement: str, params: tuple[object, ...]) -> None:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            conn.execute(statement.replace("?", "%s"), params)  # pyright: ignore[reportArgumentType]

    def query(statement: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            return conn.execute(statement.replace("?", "%s"), params).fetchall()  # pyright: ignore[reportArgumentType]

    try:
        yield Backend("postgres", target, lambda: open_store("postgres", target), raw, query)
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield from _sqlite_backend(tmp_path)
    else:
        yield from _postgres_backend()


@pytest.fixture
def pg_backend() -> Iterator[Backend]:
    """PostgreSQL only (a fresh schema), for what only that backend has: a connection that can die."""
    yield from _postgres_backend()


@pytest.fixture
def store(backend: Backend) -> Iterator[Store]:
    opened = backend.open()
    try:
        yield opened
    finally:
        opened.close()
