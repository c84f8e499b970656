"""Two real processes prepare the same session at the same moment, on SQLite and on PostgreSQL: one summarization
happens, and every message that left the context is in the archive (nothing lost)."""

from __future__ import annotations

import multiprocessing
import uuid
from pathlib import Path

import pytest

from chainsum.store import message_sha256
from manager.manager_race_worker import history, prepare_once
from store.store_support import POSTGRES_URL, open_store, require_postgres

pytestmark = pytest.mark.slow  # a real browser / real processes: seconds each (see tests/conftest.py)


def _target(kind: str, tmp_path: Path) -> dict[str, str]:
    if kind == "sqlite":
        return {"path": str(tmp_path / "race.db")}
    require_postgres()
    return {"url": POSTGRES_URL, "schema": f"chainsum_mrace_{uuid.uuid4().hex}"}


def _drop(kind: str, target: dict[str, str]) -> None:
    if kind == "postgres":
        import psycopg
        from psycopg import sql

        with psycopg.connect(target["url"], autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(target["schema"])))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_two_processes_one_summarization_nothing_lost(kind: str, tmp_path: Path) -> None:
    target = _target(kind, tmp_path)
    try:
        open_store(kind, target).close()
        ctx = multiprocessing.get_context("spawn")
        start, results = ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=prepare_once, args=(kind, target, start, results)) for _ in range(2)]
        for p in procs:
            p.start()
        start.set()
        outcomes = [results.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=60)
            assert p.exitcode == 0
        store = open_store(kind, target)
        try:
            records = store.records("shared")
            originals = store.expand(records[0].id) if records else []
        finally:
            store.close()
        assert len(records) == 1, outcomes
        assert sorted(n for n, _, _ in outcomes) == [0, 1]  # one process summarized, the other kept the history
        assert sum(calls for _, _, calls in outcomes) >= 1
        messages = history()
        kept_whole = [size for n, size, _ in outcomes if n == 0]
        assert kept_whole == [len(messages)]  # the loser returned the history unchanged
        # Every message the winner took out of the context is archived, verified by its hash.
        hashes = {message_sha256(m) for m in messages}
        assert originals and {message_sha256(m) for m in originals} <= hashes
        assert records[0].original_sha256 == tuple(message_sha256(m) for m in originals)
    finally:
        _drop(kind, target)
