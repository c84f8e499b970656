"""Reads on a connection of their own (`SqlStore._has_reader`, issue 20): a long write of this store object (a
compaction archiving thousands of messages) holds up none of its reads, on SQLite (a file) and PostgreSQL. The
reads see the last commit, never the write in progress, and see it once committed."""

from __future__ import annotations

import threading

from chainsum.messages import Message
from chainsum.store import SqlStore, StoredState
from chainsum.store._base import Tx
from store.store_support import Backend, write_held


def test_reads_are_answered_while_a_write_transaction_is_open(backend: Backend) -> None:
    store = backend.open()
    assert isinstance(store, SqlStore)
    try:
        store.compare_and_set_state("s", 0, {"n": 1})
        store.archive_and_record("s", [("m0", Message.of("user", "a kept word"))], None)
        store.touch_session("s", "s", {"tokens": 1}, "[]")

        def archive_more(tx: Tx) -> None:
            tx.execute("UPDATE session_state SET data = ? WHERE session = ?", ('{"n": 2}', "s"))

        answers: dict[str, object] = {}
        done = threading.Event()

        def read() -> None:
            answers["state"] = store.get_state("s")
            answers["archived"] = [a.message_id for a in store.archived("s")]
            answers["search"] = [h.message_id for h in store.search("s", "kept")]
            answers["sessions"] = [i.session for i in store.sessions()]
            done.set()

        reader = threading.Thread(target=read)
        with write_held(store, archive_more):
            reader.start()
            # answered while the write is still open (with one connection, the reads waited for its end)
            assert done.wait(10), "the reads waited for the write transaction"
            assert answers == {
                "state": StoredState(version=1, data={"n": 1}),  # the last commit, not the write in progress
                "archived": ["m0"],
                "search": ["m0"],
                "sessions": ["s"],
            }
        reader.join(10)
        assert store.get_state("s") == StoredState(version=1, data={"n": 2})  # committed: read at once
    finally:
        store.close()


def test_a_summarization_lock_is_held_while_reads_go_on_and_writes_wait_for_the_open_write(backend: Backend) -> None:
    """The locks stay with the writes (on PostgreSQL a session-level advisory lock belongs to its connection): a
    second store sees the lock taken while the first reads; and two writes of one store object still take turns."""
    store, other = backend.open(), backend.open()
    assert isinstance(store, SqlStore)
    try:
        with store.try_lock("s") as held:
            assert held
            assert store.get_state("s") == StoredState()
            with other.try_lock("s") as refused:
                assert not refused
        second = threading.Event()
        late = threading.Thread(target=lambda: (store.compare_and_set_state("t", 0, {"n": 1}), second.set()))
        with write_held(store):
            late.start()
            assert not second.wait(0.3), "a second write of the same store ran inside the first"
        late.join(10)
        assert second.is_set()
    finally:
        store.close()
        other.close()
