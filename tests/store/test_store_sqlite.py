"""What only the SQLite backend has: memory databases, WAL, lock leases; and the lazy PostgreSQL import."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import chainsum.store
from chainsum.errors import MissingDependencyError
from chainsum.messages import Message
from chainsum.store import SQLiteStore, StoreError


def test_memory_store_works_and_is_private() -> None:
    with SQLiteStore() as one, SQLiteStore(":memory:") as two:
        one.archive_and_record("s", [("m", Message.of("user", "only in one"))], None)
        assert [h.message_id for h in one.search("s", "only")] == ["m"]
        assert two.archived("s") == []


def test_file_store_uses_wal_and_a_busy_timeout(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.db", busy_timeout_ms=1234) as store:
        conn = store._conn  # pyright: ignore[reportPrivateUsage]
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA busy_timeout").fetchone() == (1234,)
        assert conn.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL: WAL syncs at checkpoints


def test_held_leases_are_renewed_by_one_thread_that_ends_with_the_last(tmp_path: Path) -> None:
    """Two locks held past their 0.3 s lease stay held (renewed), by one renewing thread, which ends once the last
    is released; then the sessions can be taken from another store at once."""
    path = tmp_path / "s.db"

    def renewers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "chainsum-lease"]

    before = len(renewers())
    with SQLiteStore(path, lock_lease_s=0.3) as holder, SQLiteStore(path) as other:
        with holder.try_lock("a") as a, holder.try_lock("b") as b:
            assert a and b
            assert len(renewers()) == before + 1
            time.sleep(0.8)  # well past the lease: only the renewals keep it
            for session in ("a", "b"):
                with other.try_lock(session) as taken:
                    assert not taken, session
        deadline = time.monotonic() + 5
        while len(renewers()) > before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(renewers()) == before
        for session in ("a", "b"):
            with other.try_lock(session) as taken:
                assert taken, session


def test_an_expired_lease_can_be_taken_over_and_the_old_holder_cannot_release_it(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SQLiteStore(path, lock_lease_s=-1) as crashed, SQLiteStore(path) as live, SQLiteStore(path) as third:
        with crashed.try_lock("s") as held_by_crashed:
            assert held_by_crashed  # its lease is already over, as if its process had died long ago
            with live.try_lock("s") as held_by_live:
                assert held_by_live
                with third.try_lock("s") as held_by_third:
                    assert not held_by_third
            # `crashed` leaves its block last: its release must not delete a lease it no longer owns
        with third.try_lock("s") as after:
            assert after


def test_importing_the_store_does_not_import_psycopg() -> None:
    code = "import sys, chainsum.store; assert 'psycopg' not in sys.modules, 'psycopg imported eagerly'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_postgres_store_without_psycopg_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingDependencyError, match=r'pip install "chainsum\[postgres\]"'):
        chainsum.store.PostgresStore("postgresql://127.0.0.1:1/none")


def test_a_path_that_cannot_be_a_database_is_a_store_error_naming_it(tmp_path: Path) -> None:
    """A directory, a missing directory, an unwritable place or a file that is not SQLite: `StoreError` with the
    path, never a bare `sqlite3` error (the CLI prints it as its one line)."""
    not_db = tmp_path / "notes.txt"
    not_db.write_text("just some text, long enough to be read as a database header " * 4)
    cases = {
        tmp_path: "is a directory",
        tmp_path / "missing" / "s.db": "directory does not exist",
        not_db: "not a database",
        Path("/proc/chainsum-cannot-write-here.db"): "cannot open database",
    }
    for path, needle in cases.items():
        if path.parent == Path("/proc") and not path.parent.is_dir():
            continue  # not Linux
        with pytest.raises(StoreError, match=needle) as info:
            SQLiteStore(path)
        assert str(path) in str(info.value)
        assert "\n" not in str(info.value)
