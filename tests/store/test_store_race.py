"""Two real processes (spawn) race to summarize one session: exactly one summary, every message archived once.

With the lock, the loser waits and then sees the session already summarized (one summarizer call in all). Without
it, both prepare a summary but the compare-and-set on the state version lets only one write land."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from store.race_worker import race
from store.store_support import open_store

pytestmark = pytest.mark.slow  # a real browser / real processes: seconds each (see tests/conftest.py)

N = 12


def _target(kind: str, tmp_path: Path) -> dict[str, str]:
    if kind == "sqlite":
        return {"path": str(tmp_path / "race.db")}
    import uuid

    from store.store_support import POSTGRES_URL, require_postgres

    require_postgres()

    return {"url": POSTGRES_URL, "schema": f"chainsum_race_{uuid.uuid4().hex}"}


def _drop(kind: str, target: dict[str, str]) -> None:
    if kind != "postgres":
        return
    import psycopg
    from psycopg import sql

    with psycopg.connect(target["url"], autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(target["schema"])))


@pytest.mark.parametrize("use_lock", [True, False], ids=["lock+cas", "cas-only"])
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_two_processes_summarize_once(kind: str, use_lock: bool, tmp_path: Path) -> None:
    target = _target(kind, tmp_path)
    try:
        open_store(kind, target).close()  # tables exist before the race (creation races are tested by opening)
        ctx = multiprocessing.get_context("spawn")
        start = ctx.Event()
        results = ctx.Queue()
        procs = [ctx.Process(target=race, args=(kind, target, "shared", N, use_lock, start, results)) for _ in range(2)]
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
            archived = store.archived("shared")
            state = store.get_state("shared")
            expanded = store.expand(records[0].id) if records else []
        finally:
            store.close()
        assert sum(written for _, written in outcomes) == 1
        if use_lock:
            assert sum(prepared for prepared, _ in outcomes) == 1  # the loser never called the summarizer
        assert len(records) == 1
        assert records[0].summary == f"summary by {records[0].id.removeprefix('sum-')}"
        assert [a.message_id for a in archived] == [f"m{i}" for i in range(N)]
        assert [a.position for a in archived] == list(range(N))
        assert len(expanded) == N
        assert state.version == 1 and state.data == {"summarized_upto": N, "depth": 1}
    finally:
        _drop(kind, target)


def test_spawned_workers_can_import_the_helpers() -> None:
    # A guard for the test above: spawn re-imports `race` by module name from this sys.path.
    assert race.__module__ == "store.race_worker"
    assert any(os.path.samefile(p, Path(__file__).parent.parent) for p in __import__("sys").path if os.path.isdir(p))
