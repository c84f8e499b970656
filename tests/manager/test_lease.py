"""The session lock is a lease: a process that took it and died (SIGKILL, no cleanup) does not keep a session from
being compacted. On the same machine the waiter sees the holder's process is gone and takes the lock at once; a
holder on another machine loses it when its lease (`SQLiteStore(lock_lease_s=...)`) runs out, while a live holder
keeps it by renewing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chainsum.manager import ContextManager, ManagerConfig
from chainsum.store import SQLiteStore
from manager.manager_support import SYSTEM, Dict, turn

SESSION = "chat"


def _history() -> list[Dict]:
    hist: list[Dict] = [SYSTEM]
    for i in range(30):
        hist += turn(i)
    return hist  # about 0.87 of a 4000-token window: over the trigger, under the window (no lock wait)


def _holder(path: Path, *, lease_s: float, other_host: bool) -> subprocess.Popen[str]:
    """A process that takes the session lock, says so, and then hangs holding it (renewing its lease)."""
    code = textwrap.dedent(
        f"""
        import time
        import chainsum.store._sqlite as sqlite_store
        from chainsum.store import SQLiteStore

        if {other_host!r}:
            sqlite_store._HOST = "another-machine"  # its owner id names a host where no pid can be checked
        store = SQLiteStore({str(path)!r}, lock_lease_s={lease_s!r})
        lock = store.try_lock({SESSION!r})
        print("held" if lock.__enter__() else "refused", flush=True)
        time.sleep(600)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def _kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "sessions.db")
    yield opened
    opened.close()


def _manager(store: SQLiteStore) -> ContextManager:
    return ContextManager(ManagerConfig(), context_window=4000, archive=store, session=SESSION)


def _compacts_within(manager: ContextManager, hist: list[Dict], seconds: float) -> float:
    """Seconds until a `prepare` of `hist` compacts; fails after `seconds`."""
    started = time.monotonic()
    while True:
        if manager.prepare_sync(hist).changed:
            return time.monotonic() - started
        assert time.monotonic() - started < seconds, f"still locked after {seconds} s"
        time.sleep(0.1)


def test_a_lock_holder_killed_with_sigkill_does_not_block_compaction(store: SQLiteStore, tmp_path: Path) -> None:
    proc = _holder(tmp_path / "sessions.db", lease_s=60.0, other_host=False)
    try:
        manager = _manager(store)
        hist = _history()
        prepared = manager.prepare_sync(hist)
        assert not prepared.changed and prepared.messages is hist  # locked by a live process: history kept
    finally:
        _kill(proc)
    # the lease has 60 s left, but its holder is gone: the lock is taken at once
    assert _compacts_within(manager, hist, 5.0) < 2.0
    assert len(store.records(SESSION)) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the zombie state from /proc")
def test_an_unreaped_killed_holder_is_gone_too(store: SQLiteStore, tmp_path: Path) -> None:
    proc = _holder(tmp_path / "sessions.db", lease_s=60.0, other_host=False)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while Path(f"/proc/{proc.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert _compacts_within(_manager(store), _history(), 5.0) < 2.0  # a zombie holds nothing
    finally:
        _kill(proc)


@pytest.mark.slow
def test_a_lease_of_a_holder_elsewhere_expires_when_it_stops_renewing(store: SQLiteStore, tmp_path: Path) -> None:
    proc = _holder(tmp_path / "sessions.db", lease_s=1.0, other_host=True)
    try:
        manager = _manager(store)
        hist = _history()
        time.sleep(1.5)  # longer than the lease: a live holder renews it
        assert not manager.prepare_sync(hist).changed
    finally:
        _kill(proc)
    assert _compacts_within(manager, hist, 5.0) < 3.0  # at most the lease after the holder died
    assert len(store.records(SESSION)) == 1
