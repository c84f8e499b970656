"""Schema versions on both backends: a fresh database, the current version, a database from before versions were
recorded, a forward migration (run once, atomically, recorded), a newer database refused untouched, and two openers
at once migrating once. Extra migrations are test-only: they are added to the store class's list by monkeypatch."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

import pytest

from chainsum.messages import Message
from chainsum.store import PostgresStore, SchemaVersionError, SQLiteStore, Store, StoredState
from chainsum.store._base import Tx
from chainsum.store._migrations import POSTGRES_MIGRATIONS, SCHEMA_VERSION, SQLITE_MIGRATIONS, Migration
from chainsum.store._schema import POSTGRES_DDL, SQLITE_DDL
from store.store_support import Backend


def store_class(backend: Backend) -> type[SQLiteStore] | type[PostgresStore]:
    return SQLiteStore if backend.kind == "sqlite" else PostgresStore


def recorded_version(backend: Backend) -> list[tuple[int, int]]:
    return [(int(i), int(v)) for i, v in backend.query("SELECT id, version FROM chainsum_schema", ())]


def columns(backend: Backend, table: str) -> list[str]:
    if backend.kind == "sqlite":
        return [r[1] for r in backend.query(f"PRAGMA table_info({table})", ())]
    return [
        r[0]
        for r in backend.query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? "
            "ORDER BY ordinal_position",
            (backend.target["schema"], table),
        )
    ]


def add_migrations(monkeypatch: pytest.MonkeyPatch, backend: Backend, *steps: Callable[[Tx], None]) -> None:
    """Append test-only steps 2, 3... to the backend's migration list, for this test only."""
    cls = store_class(backend)
    current: Sequence[Migration] = cls._migrations  # pyright: ignore[reportPrivateUsage]
    extra = [Migration(version=len(current) + n, name=f"test step {n}", apply=f) for n, f in enumerate(steps, 1)]
    monkeypatch.setattr(cls, "_migrations", (*current, *extra))


def add_note_column(tx: Tx) -> None:
    tx.execute("ALTER TABLE session_state ADD COLUMN note TEXT")


def open_and_close(backend: Backend) -> None:
    backend.open().close()


def write_some(store: Store) -> None:
    store.archive_and_record("s", [("m0", Message.of("user", "kept across versions"))], None)
    assert store.compare_and_set_state("s", 0, {"depth": 1})


def assert_data_intact(store: Store) -> None:
    assert [a.message.text for a in store.archived("s")] == ["kept across versions"]
    assert store.get_state("s") == StoredState(version=1, data={"depth": 1})
    assert [h.message_id for h in store.search("s", "versions")] == ["m0"]


def test_each_backend_lists_its_steps_up_to_the_current_version() -> None:
    assert SCHEMA_VERSION == 3
    for steps in (SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS):
        assert [m.version for m in steps] == list(range(1, SCHEMA_VERSION + 1))
    assert SQLiteStore._migrations is SQLITE_MIGRATIONS  # pyright: ignore[reportPrivateUsage]
    assert PostgresStore._migrations is POSTGRES_MIGRATIONS  # pyright: ignore[reportPrivateUsage]


def test_a_fresh_database_gets_the_current_schema_and_version(store: Store, backend: Backend) -> None:
    assert recorded_version(backend) == [(1, SCHEMA_VERSION)]
    write_some(store)
    assert_data_intact(store)


def watch_step_1(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Replace migration step 1 by one that only records that it ran (the later steps stay); returns that record
    (empty if it did not)."""
    ran: list[int] = []
    monkeypatch.setattr(
        store_class(backend),
        "_migrations",
        (Migration(version=1, name="must not run", apply=lambda tx: ran.append(1)), *SQLITE_MIGRATIONS[1:])
        if backend.kind == "sqlite"
        else (Migration(version=1, name="must not run", apply=lambda tx: ran.append(1)), *POSTGRES_MIGRATIONS[1:]),
    )
    return ran


def test_a_database_at_the_current_version_opens_as_is(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    first = backend.open()
    write_some(first)
    first.close()
    ran = watch_step_1(backend, monkeypatch)  # a database already at version 1 must not run it again
    again = backend.open()
    try:
        assert ran == []
        assert_data_intact(again)
    finally:
        again.close()
    assert recorded_version(backend) == [(1, SCHEMA_VERSION)]


def create_unversioned(backend: Backend) -> None:
    """A database as chainsum created it before versions were recorded: today's tables, no ``chainsum_schema``."""
    if backend.kind == "postgres":
        backend.raw(f'CREATE SCHEMA "{backend.target["schema"]}"', ())
    ddl = SQLITE_DDL if backend.kind == "sqlite" else POSTGRES_DDL
    for statement in ddl.split(";"):
        if statement.strip():
            backend.raw(statement, ())
    backend.raw("INSERT INTO session_state (session, version, data, updated_ms) VALUES (?, 1, ?, 1)", ("s", "{}"))


def test_a_database_from_before_versions_is_version_1(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    create_unversioned(backend)
    ran = watch_step_1(backend, monkeypatch)
    store = backend.open()
    try:
        assert ran == []  # its tables are version 1's: nothing to create
        assert store.get_state("s") == StoredState(version=1, data={})
    finally:
        store.close()
    assert recorded_version(backend) == [(1, SCHEMA_VERSION)]  # and from now on the version is recorded, not guessed


def test_an_older_database_is_migrated_forward_once_and_recorded(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = backend.open()
    write_some(first)
    first.close()
    ran: list[int] = []

    def add_note(tx: Tx) -> None:
        ran.append(2)
        tx.execute("ALTER TABLE session_state ADD COLUMN note TEXT")
        tx.execute("UPDATE session_state SET note = ?", ("migrated",))

    add_migrations(monkeypatch, backend, add_note)
    second = backend.open()
    try:
        assert ran == [2]
        assert recorded_version(backend) == [(1, SCHEMA_VERSION + 1)]
        assert "note" in columns(backend, "session_state")
        assert backend.query("SELECT session, note FROM session_state", ()) == [("s", "migrated")]
        assert_data_intact(second)
    finally:
        second.close()
    open_and_close(backend)
    assert ran == [2]  # recorded: the next open does not run it again


def test_a_fresh_database_runs_every_step(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    add_migrations(monkeypatch, backend, add_note_column)
    store = backend.open()
    try:
        write_some(store)
        assert_data_intact(store)
    finally:
        store.close()
    assert recorded_version(backend) == [(1, SCHEMA_VERSION + 1)]
    assert "note" in columns(backend, "session_state")


def test_a_failing_migration_changes_nothing(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    first = backend.open()
    write_some(first)
    first.close()
    before = columns(backend, "session_state")

    def fail(tx: Tx) -> None:
        raise RuntimeError("injected: step 3 fails after step 2 altered a table")

    add_migrations(monkeypatch, backend, add_note_column, fail)
    with pytest.raises(RuntimeError, match="injected"):
        backend.open()
    assert recorded_version(backend) == [(1, SCHEMA_VERSION)]
    assert columns(backend, "session_state") == before  # step 2 was rolled back with step 3: all or nothing
    monkeypatch.undo()
    again = backend.open()
    try:
        assert_data_intact(again)
    finally:
        again.close()


def test_a_newer_database_is_refused_and_left_untouched(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    first = backend.open()
    write_some(first)
    first.close()
    backend.raw("UPDATE chainsum_schema SET version = ?", (7,))
    before = backend.query("SELECT session, version, data FROM session_state", ())
    ran: list[int] = []
    add_migrations(monkeypatch, backend, lambda tx: ran.append(2))
    with pytest.raises(
        SchemaVersionError,
        match=rf"store schema version 7 is newer than this chainsum supports \({SCHEMA_VERSION + 1}\); "
        "upgrade chainsum",
    ) as info:
        backend.open()
    assert (info.value.found, info.value.supported) == (7, SCHEMA_VERSION + 1)
    assert ran == []
    assert recorded_version(backend) == [(1, 7)]
    assert backend.query("SELECT session, version, data FROM session_state", ()) == before


def test_two_openers_at_once_migrate_once(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    open_and_close(backend)
    ran: list[int] = []

    def slow_step(tx: Tx) -> None:
        ran.append(2)
        time.sleep(0.3)  # the other opener arrives meanwhile; without the open lock both would ALTER and one fail
        tx.execute("ALTER TABLE session_state ADD COLUMN note TEXT")

    add_migrations(monkeypatch, backend, slow_step)
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            start.wait(10)
            open_and_close(backend)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert ran == [2]
    assert recorded_version(backend) == [(1, SCHEMA_VERSION + 1)]
