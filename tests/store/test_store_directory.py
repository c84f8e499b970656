"""The session directory and event log (schema version 2) behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

import threading

from chainsum.messages import Message
from chainsum.store import SessionDirectory, Store, SummaryRecord, sha256_all
from store.store_support import Backend


def _directory(store: Store) -> SessionDirectory:
    assert isinstance(store, SessionDirectory)
    return store


def test_touch_lists_most_recent_first_and_keeps_the_creation_time(store: Store) -> None:
    d = _directory(store)
    d.touch_session("a", "alpha", {"tokens": 10})
    d.touch_session("b", "beta", {"tokens": 20})
    first = d.session_info("a")
    assert first is not None
    d.touch_session("a", "alpha renamed", {"tokens": 11, "window": 4000})
    listed = d.sessions()
    assert [s.session for s in listed] == ["a", "b"]
    again = d.session_info("a")
    assert again is not None
    assert again.label == "alpha renamed"
    assert again.info == {"tokens": 11, "window": 4000}
    assert again.created_ms == first.created_ms
    assert again.active_ms >= first.active_ms
    assert d.session_info("missing") is None


def test_events_are_read_after_a_sequence_number_per_session_or_all(store: Store) -> None:
    d = _directory(store)
    assert d.last_event_seq() == 0
    s1 = d.add_event("a", {"type": "context_summarized", "n": 1})
    s2 = d.add_event("b", {"n": 2})
    s3 = d.add_event("a", {"n": 3})
    assert s1 < s2 < s3 == d.last_event_seq()
    assert [e.data.get("n") for e in d.events(0)] == [1, 2, 3]
    assert [e.seq for e in d.events(s1)] == [s2, s3]
    assert [e.data["n"] for e in d.events(0, session="a")] == [1, 3]
    assert [e.data["n"] for e in d.recent_events("a", limit=1)] == [3]
    assert d.events(s3) == []


def test_delete_session_removes_everything_of_that_session_only(store: Store) -> None:
    d = _directory(store)
    for name in ("gone", "kept"):
        items = [(f"{name}0", Message.of("user", f"secret plan {name}")), (f"{name}1", Message.of("assistant", "ok"))]
        record = SummaryRecord(
            id=f"r-{name}",
            timestamp_ms=1_700_000_000_000,
            depth=1,
            parent_id=None,
            summary="s",
            key_points=(),
            original_message_ids=tuple(i for i, _ in items),
            original_sha256=sha256_all([m for _, m in items]),
        )
        store.archive_and_record(name, items, record)
        store.compare_and_set_state(name, 0, {"depth": 1})
        d.touch_session(name, name, {})
        d.add_event(name, {"x": 1})
    assert d.delete_session("gone")
    assert not d.delete_session("gone")
    assert store.archived("gone") == [] and store.records("gone") == []
    assert store.get_state("gone").version == 0
    assert d.session_info("gone") is None and d.events(0, session="gone") == []
    assert store.search(None, "secret plan gone") == []
    assert store.search(None, "secret plan kept") != []
    assert {h.session for h in store.search(None, "plan")} == {"kept"}
    assert len(store.archived("kept")) == 2 and d.session_info("kept") is not None


def test_postgres_notifies_listeners_of_each_event(pg_backend: Backend) -> None:
    import psycopg

    store = pg_backend.open()
    try:
        assert hasattr(store, "url")
        url: str = store.url  # type: ignore[attr-defined]
        got: list[str] = []
        ready = threading.Event()

        def listen() -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("LISTEN chainsum_events")
                ready.set()
                for note in conn.notifies(timeout=10, stop_after=1):
                    got.append(note.payload)

        thread = threading.Thread(target=listen)
        thread.start()
        assert ready.wait(10)
        seq = _directory(store).add_event("s", {"x": 1})
        thread.join(15)
        assert got == [str(seq)]
    finally:
        store.close()
