"""What only the PostgreSQL backend has: a connection that can die under it.

Connections are killed for real, from a second connection, with ``pg_terminate_backend``: while idle, in the middle
of a transaction (a trigger makes one statement slow enough to be caught), and during COMMIT (a deferred constraint
trigger runs at commit time and sleeps). These tests fail rather than skip under CI when the server is absent."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator
from contextlib import ExitStack, contextmanager

import psycopg
import pytest

from chainsum.messages import Message
from chainsum.store import PostgresStore, StoreConnectionError, StoredState, SummaryRecord, sha256_all
from chainsum.store._base import ConnectionLost, Tx
from store.store_support import POSTGRES_URL, Backend


def open_pg(backend: Backend) -> PostgresStore:
    store = backend.open()
    assert isinstance(store, PostgresStore)
    return store


def pid_of(store: PostgresStore) -> int:
    """The backend of the store's main connection: its writes and summarization locks."""
    return store._conn.info.backend_pid  # pyright: ignore[reportPrivateUsage]


def reader_pid_of(store: PostgresStore) -> int:
    """The backend of the store's reader connection: its reads."""
    return store._reader.info.backend_pid  # pyright: ignore[reportPrivateUsage]


def terminate(pid: int) -> None:
    """Kill one server backend and wait (up to 5 s) until it is gone."""
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        row = conn.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,)).fetchone()
    assert row == (True,)


@contextmanager
def kill_when(pid: int, condition: str) -> Generator[threading.Event]:
    """In the background, kill backend `pid` as soon as ``pg_stat_activity`` shows it matching `condition` (SQL
    over its ``state``, ``query`` and ``wait_event``); the yielded event is set once it was killed."""
    killed = threading.Event()
    stop = threading.Event()

    def watch() -> None:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            while not stop.is_set():
                row = conn.execute(
                    f"SELECT 1 FROM pg_stat_activity WHERE pid = %s AND ({condition})",  # pyright: ignore[reportArgumentType]
                    (pid,),
                ).fetchone()
                if row is not None:
                    conn.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
                    killed.set()
                    return
                time.sleep(0.005)

    thread = threading.Thread(target=watch)
    thread.start()
    try:
        yield killed
    finally:
        stop.set()
        thread.join(10)


def items(*texts: str) -> list[tuple[str, Message]]:
    return [(f"m{i}", Message.of("user", t)) for i, t in enumerate(texts)]


def record_for(batch: list[tuple[str, Message]]) -> SummaryRecord:
    return SummaryRecord(
        id="r1",
        timestamp_ms=1_700_000_000_000,
        depth=0,
        parent_id=None,
        summary="a summary",
        original_message_ids=tuple(i for i, _ in batch),
        original_sha256=sha256_all([m for _, m in batch]),
    )


def test_a_killed_connection_is_replaced_and_every_call_recovers(
    pg_backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    store = open_pg(pg_backend)
    try:
        first = items("before the kill", "also before")
        assert store.archive_and_record("s", first, record_for(first), expected_version=0, new_state={"n": 1})
        old = pid_of(store)
        terminate(old)
        with caplog.at_level(logging.WARNING, logger="chainsum.store"):
            assert store.archive_and_record("s", [("after", Message.of("user", "after the kill"))], None)
        assert pid_of(store) != old
        assert "reconnected to PostgreSQL" in caplog.text
        # Reads recover too (on their own connection), each after its own kill, and see everything written before.
        terminate(reader_pid_of(store))
        assert store.get_state("s") == StoredState(version=1, data={"n": 1})
        assert "reconnected to PostgreSQL (the reader)" in caplog.text
        terminate(reader_pid_of(store))
        assert [a.message_id for a in store.archived("s")] == ["m0", "m1", "after"]
        terminate(reader_pid_of(store))
        assert store.expand("r1") == [m for _, m in first]
        terminate(reader_pid_of(store))
        assert {h.message_id for h in store.search("s", "kill")} == {"m0", "after"}
        terminate(pid_of(store))
        assert store.compare_and_set_state("s", 1, {"n": 2})
        terminate(pid_of(store))
        with store.try_lock("s") as held:
            assert held
    finally:
        store.close()
    reopened = pg_backend.open()  # the reconnected store kept its schema (search path): nothing went elsewhere
    try:
        assert reopened.get_state("s") == StoredState(version=2, data={"n": 2})
        assert [a.position for a in reopened.archived("s")] == [0, 1, 2]
    finally:
        reopened.close()


def test_a_transaction_cut_mid_way_is_rolled_back_and_run_again_whole(
    pg_backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    store = open_pg(pg_backend)
    try:
        # Inserting the message "slow" sleeps: the transaction has already inserted m0 when it is killed.
        pg_backend.raw(
            "CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.message_id = 'slow' THEN PERFORM pg_sleep(1); END IF; RETURN NEW; END $$",
            (),
        )
        pg_backend.raw(
            "CREATE TRIGGER slow_insert BEFORE INSERT ON archive FOR EACH ROW EXECUTE FUNCTION slow_insert()", ()
        )
        batch = [
            ("m0", Message.of("user", "first")),
            ("slow", Message.of("user", "slow")),
            ("m2", Message.of("assistant", "z")),
        ]
        old = pid_of(store)
        with (
            caplog.at_level(logging.WARNING, logger="chainsum.store"),
            kill_when(old, "state = 'active' AND wait_event = 'PgSleep'") as killed,
        ):
            written = store.archive_and_record("s", batch, record_for(batch), expected_version=0, new_state={"n": 1})
        assert killed.is_set()
        assert written is True
        assert pid_of(store) != old
        assert "connection lost, reconnecting to retry once" in caplog.text
        archived = store.archived("s")
        assert [(a.message_id, a.position) for a in archived] == [("m0", 0), ("slow", 1), ("m2", 2)]
        assert store.records("s") == [record_for(batch)]
        assert store.get_state("s") == StoredState(version=1, data={"n": 1})
    finally:
        store.close()


def test_a_connection_lost_during_commit_is_not_retried_and_says_the_outcome_is_unknown(
    pg_backend: Backend,
) -> None:
    store = open_pg(pg_backend)
    try:
        # A deferred constraint trigger runs at COMMIT: it sleeps there, and the connection is killed meanwhile.
        pg_backend.raw(
            "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "PERFORM pg_sleep(1); RETURN NULL; END $$",
            (),
        )
        pg_backend.raw(
            "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT OR UPDATE ON session_state "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()",
            (),
        )
        old = pid_of(store)
        dead = store._conn  # pyright: ignore[reportPrivateUsage]
        with kill_when(old, "state = 'active' AND query = 'COMMIT'") as killed:
            with pytest.raises(StoreConnectionError, match=r"outcome unknown") as info:
                store.compare_and_set_state("s", 0, {"n": 1})
        assert killed.is_set()
        assert info.value.outcome_unknown is True
        assert isinstance(info.value.__cause__, psycopg.OperationalError)
        assert store._conn is dead  # pyright: ignore[reportPrivateUsage]  # no reconnect, no second attempt
        pg_backend.raw("DROP TRIGGER slow_commit ON session_state", ())
        # The next write reconnects; here the server had not finished the commit, so nothing landed.
        assert store.get_state("s") == StoredState()
        assert store.compare_and_set_state("s", 0, {"n": 1}) is True
    finally:
        store.close()


def test_a_read_cut_during_commit_is_simply_read_again(pg_backend: Backend) -> None:
    store = open_pg(pg_backend)
    try:
        store.compare_and_set_state("s", 0, {"n": 1})
        calls: list[bool] = []
        attempt = store._attempt  # pyright: ignore[reportPrivateUsage]

        def cut_once(fn: Callable[[Tx], object], *, write: bool, reader: bool) -> object:
            calls.append(write)
            if len(calls) == 1:
                terminate(reader_pid_of(store))
                raise ConnectionLost(commit_sent=True)
            return attempt(fn, write=write, reader=reader)

        store._attempt = cut_once  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
        assert store.get_state("s") == StoredState(version=1, data={"n": 1})
        assert calls == [False, False]
    finally:
        store.close()


def test_losing_the_connection_twice_in_a_row_is_a_clear_error(pg_backend: Backend) -> None:
    store = open_pg(pg_backend)
    try:

        def always_lost(fn: Callable[[Tx], object], *, write: bool, reader: bool) -> object:
            terminate(pid_of(store))
            raise ConnectionLost(commit_sent=False)

        store._attempt = always_lost  # pyright: ignore[reportPrivateUsage, reportAttributeAccessIssue]
        with pytest.raises(StoreConnectionError, match="lost again") as info:
            store.compare_and_set_state("s", 0, {"n": 1})
        assert info.value.outcome_unknown is False
    finally:
        del store._attempt  # pyright: ignore[reportPrivateUsage]
        store.close()


def test_when_the_server_cannot_be_reached_the_error_says_so_and_a_later_call_recovers(pg_backend: Backend) -> None:
    store = open_pg(pg_backend)
    try:
        store.compare_and_set_state("s", 0, {"n": 1})
        url = store._url  # pyright: ignore[reportPrivateUsage]
        store._url = "postgresql://postgres@127.0.0.1:1/test"  # pyright: ignore[reportPrivateUsage]  # nothing listens
        terminate(reader_pid_of(store))
        with pytest.raises(StoreConnectionError, match="could not reconnect") as info:
            store.get_state("s")
        assert isinstance(info.value.__cause__, psycopg.OperationalError)
        store._url = url  # pyright: ignore[reportPrivateUsage]  # the server is back
        assert store.get_state("s") == StoredState(version=1, data={"n": 1})
    finally:
        store.close()


def test_a_summarization_lock_lost_with_its_connection_is_reported_and_not_taken_from_its_new_holder(
    pg_backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    holder, other, third = open_pg(pg_backend), open_pg(pg_backend), open_pg(pg_backend)
    try:
        with caplog.at_level(logging.WARNING, logger="chainsum.store"), ExitStack() as holders_block:
            assert holders_block.enter_context(holder.try_lock("s"))
            with other.try_lock("s") as before:
                assert not before
            terminate(pid_of(holder))
            with other.try_lock("s") as taken_over:
                assert taken_over  # the server freed the dead connection's lock
                # its next call on that connection (a write) reconnects, and says the lock is gone
                assert holder.compare_and_set_state("t", 0, {"n": 1})
                assert "summarization lock lost with the dead connection" in caplog.text
                with holder.try_lock("s") as again:
                    assert not again  # the holder's block is still open: not a second holder in this process
                holders_block.close()  # the holder leaves its block while `other` holds the lock
                assert "nothing to release" in caplog.text
                with third.try_lock("s") as refused:
                    assert not refused  # the holder's release did not free the lock `other` took
        with third.try_lock("s") as free:
            assert free
        with holder.try_lock("s") as usable_again:
            assert usable_again
    finally:
        for s in (holder, other, third):
            s.close()


def test_releasing_a_lock_on_a_dead_connection_does_not_raise(
    pg_backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    store, other = open_pg(pg_backend), open_pg(pg_backend)
    try:
        with caplog.at_level(logging.WARNING, logger="chainsum.store"), store.try_lock("s") as held:
            assert held
            terminate(pid_of(store))
        assert "could not release the summarization lock" in caplog.text
        with other.try_lock("s") as free:
            assert free
        assert store.get_state("s") == StoredState()  # reads go on (their own connection)
        assert store.compare_and_set_state("s", 0, {"n": 1})  # and the main connection recovers on its next call
    finally:
        store.close()
        other.close()


def test_a_closed_store_is_not_reopened(pg_backend: Backend) -> None:
    store = open_pg(pg_backend)
    store.close()
    with pytest.raises(psycopg.OperationalError, match="closed"):
        store.get_state("s")
