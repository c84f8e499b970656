"""One behaviour, two backends: every test here runs on SQLite (a file) and on PostgreSQL (a fresh schema)."""

from __future__ import annotations

import pytest

from chainsum.errors import ChainsumError
from chainsum.messages import Message, Reasoning, Text, ToolCall, ToolResult
from chainsum.store import (
    ArchiveConflictError,
    ArchiveIntegrityError,
    Store,
    StoredState,
    SummaryRecord,
    UnknownSummaryError,
    canonical_json,
    sha256_all,
)
from chainsum.store._schema import snippet_of
from store.store_support import Backend


def msgs(*texts: str, prefix: str = "m") -> list[tuple[str, Message]]:
    roles = ("user", "assistant")
    return [(f"{prefix}{i}", Message.of(roles[i % 2], t)) for i, t in enumerate(texts)]


def record_for(items: list[tuple[str, Message]], rid: str = "s1", parent: str | None = None, depth: int = 0):
    return SummaryRecord(
        id=rid,
        timestamp_ms=1_700_000_000_000 + depth,
        depth=depth,
        parent_id=parent,
        summary=f"summary {rid}",
        key_points=("a point",),
        original_message_ids=tuple(i for i, _ in items),
        original_sha256=sha256_all([m for _, m in items]),
    )


RICH = Message(
    role="assistant",
    id="native-id",
    parts=(
        Reasoning(text="thinking about grep", signature="sig=="),
        Text(text="Let me search."),
        ToolCall(id="call_1", name="grep", arguments='{"pattern": "TODO"}'),
    ),
)


def test_store_satisfies_the_protocol(store: Store) -> None:
    assert isinstance(store, Store)


def test_round_trip_archive_record_expand(store: Store) -> None:
    items = [("a0", Message.of("user", "find the TODOs")), ("a1", RICH)]
    items.append(("a2", Message(role="tool", parts=(ToolResult(call_id="call_1", content="src/x.py: TODO"),))))
    record = record_for(items)
    assert store.archive_and_record("s", items, record) is True
    assert store.expand("s1") == [m for _, m in items]
    assert store.records("s") == [record]
    archived = store.archived("s")
    assert [(a.message_id, a.position, a.role) for a in archived] == [
        ("a0", 0, "user"),
        ("a1", 1, "assistant"),
        ("a2", 2, "tool"),
    ]
    assert [a.sha256 for a in archived] == list(record.original_sha256)
    assert all(a.created_ms > 0 and a.session == "s" for a in archived)


def test_records_come_back_as_a_chain_in_order(store: Store) -> None:
    first = msgs("one", "two", prefix="x")
    second = msgs("three", "four", prefix="y")
    r1 = record_for(first, "r1")
    r2 = record_for(second, "r2", parent="r1", depth=1)
    store.archive_and_record("s", first, r1)
    store.archive_and_record("s", second, r2)
    store.archive_and_record("other", msgs("elsewhere", prefix="z"), None)
    assert [r.id for r in store.records("s")] == ["r1", "r2"]
    assert store.records("s")[1].parent_id == "r1"
    assert [a.position for a in store.archived("s")] == [0, 1, 2, 3]
    assert store.records("nobody") == []


def test_expand_unknown_summary(store: Store) -> None:
    with pytest.raises(UnknownSummaryError) as info:
        store.expand("missing")
    assert isinstance(info.value, LookupError) and isinstance(info.value, ChainsumError)


def test_archiving_the_same_message_twice_is_idempotent(store: Store) -> None:
    items = msgs("hello", "world")
    store.archive_and_record("s", items, None)
    store.archive_and_record("s", items, record_for(items))
    assert [a.message_id for a in store.archived("s")] == ["m0", "m1"]
    assert len(store.search("s", "hello")) == 1


def test_archiving_an_id_again_with_other_content_is_an_error(store: Store) -> None:
    store.archive_and_record("s", msgs("hello"), None)
    with pytest.raises(ArchiveConflictError) as info:
        store.archive_and_record("s", [("new", Message.of("user", "x")), ("m0", Message.of("user", "changed"))], None)
    assert info.value.message_id == "m0"
    assert [a.message_id for a in store.archived("s")] == ["m0"]  # "new" was rolled back with it


def test_same_id_in_two_sessions_is_two_messages(store: Store) -> None:
    store.archive_and_record("a", msgs("alpha"), None)
    store.archive_and_record("b", msgs("beta"), None)
    assert store.archived("a")[0].message.text == "alpha"
    assert store.archived("b")[0].message.text == "beta"


def test_tampered_json_is_detected(store: Store, backend: Backend) -> None:
    items = msgs("the original text", "second")
    store.archive_and_record("s", items, record_for(items))
    forged = canonical_json(Message.of("user", "a forged text"))
    backend.raw("UPDATE archive SET json = ? WHERE message_id = ?", (forged, "m0"))
    with pytest.raises(ArchiveIntegrityError, match="'m0'") as info:
        store.expand("s1")
    assert info.value.message_id == "m0"
    with pytest.raises(ArchiveIntegrityError):
        store.archived("s")


def test_tampered_hash_and_deleted_original_are_detected(store: Store, backend: Backend) -> None:
    items = msgs("one", "two")
    store.archive_and_record("s", items, record_for(items))
    forged = canonical_json(Message.of("user", "forged"))
    import hashlib

    backend.raw(
        "UPDATE archive SET json = ?, sha256 = ? WHERE message_id = ?",
        (forged, hashlib.sha256(forged.encode()).hexdigest(), "m1"),
    )
    with pytest.raises(ArchiveIntegrityError, match="summary record") as info:
        store.expand("s1")  # the record's own hash still disagrees
    assert info.value.message_id == "m1"
    backend.raw("DELETE FROM archive WHERE message_id = ?", ("m1",))
    with pytest.raises(ArchiveIntegrityError, match="missing"):
        store.expand("s1")


def test_a_failure_after_archiving_leaves_nothing(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    items = msgs("kept in context", "unique zebra word")

    def boom(*args: object) -> None:
        raise RuntimeError("injected after the archive rows, before the record")

    monkeypatch.setattr(store, "_insert_record", boom)
    with pytest.raises(RuntimeError, match="injected"):
        store.archive_and_record("s", items, record_for(items), expected_version=0, new_state={"n": 1})
    monkeypatch.undo()
    assert store.archived("s") == []
    assert store.records("s") == []
    assert store.search(None, "zebra") == []
    assert store.get_state("s") == StoredState()


def test_a_record_naming_an_unarchived_message_writes_nothing(store: Store) -> None:
    items = msgs("first", "second")
    bad = record_for([*items, ("ghost", Message.of("user", "never archived"))])
    with pytest.raises(ArchiveConflictError, match="not archived") as info:
        store.archive_and_record("s", items, bad)
    assert info.value.message_id == "ghost"
    assert store.archived("s") == [] and store.records("s") == []
    wrong_hash = record_for(items)
    wrong_hash = SummaryRecord.from_dict({**wrong_hash.to_dict(), "original_sha256": ["0" * 64, "1" * 64]})
    with pytest.raises(ArchiveConflictError, match="SHA-256"):
        store.archive_and_record("s", items, wrong_hash)
    assert store.archived("s") == []


def test_state_compare_and_set(store: Store) -> None:
    assert store.get_state("s") == StoredState(version=0, data={})
    assert store.compare_and_set_state("s", 0, {"last_ratio": 0.5, "since": 3, "depth": 0}) is True
    assert store.compare_and_set_state("s", 0, {"clobber": True}) is False
    assert store.get_state("s") == StoredState(version=1, data={"last_ratio": 0.5, "since": 3, "depth": 0})
    assert store.compare_and_set_state("s", 1, {"depth": 1}) is True
    assert store.compare_and_set_state("s", 1, {"depth": 9}) is False
    assert store.compare_and_set_state("s", 5, {"depth": 9}) is False
    assert store.get_state("s") == StoredState(version=2, data={"depth": 1})
    assert store.get_state("other").version == 0
    with pytest.raises(ValueError):
        store.compare_and_set_state("s", -1, {})


def test_archive_with_stale_version_writes_nothing(store: Store) -> None:
    store.compare_and_set_state("s", 0, {"depth": 0})
    items = msgs("stale one")
    assert store.archive_and_record("s", items, record_for(items), expected_version=0, new_state={"x": 1}) is False
    assert store.archived("s") == [] and store.records("s") == []
    assert store.archive_and_record("s", items, record_for(items), expected_version=1, new_state={"depth": 1}) is True
    assert store.get_state("s") == StoredState(version=2, data={"depth": 1})
    with pytest.raises(ValueError):
        store.archive_and_record("s", items, None, expected_version=2)


def test_restart_recovers_everything(backend: Backend) -> None:
    first = backend.open()
    items = msgs("remember the migration to postgres", "ok")
    first.archive_and_record("s", items, record_for(items), expected_version=0, new_state={"depth": 1, "since": 0})
    first.close()
    second = backend.open()
    try:
        assert second.get_state("s") == StoredState(version=1, data={"depth": 1, "since": 0})
        assert second.records("s") == [record_for(items)]
        assert second.expand("s1") == [m for _, m in items]
        assert [h.message_id for h in second.search("s", "migration")] == ["m0"]
        second.archive_and_record("s", msgs("after restart", prefix="n"), None)
        assert [a.position for a in second.archived("s")] == [0, 1, 2]
    finally:
        second.close()


def test_search_ranks_and_filters_by_session(store: Store) -> None:
    store.archive_and_record(
        "a",
        [
            ("once", Message.of("user", "kafka appears once among many other ordinary words in this line")),
            ("thrice", Message.of("assistant", "kafka kafka kafka consumer lag on the orders topic")),
            ("none", Message.of("user", "nothing relevant here")),
        ],
        None,
    )
    store.archive_and_record("b", [("elsewhere", Message.of("user", "kafka in another session"))], None)
    hits = store.search("a", "kafka")
    assert [h.message_id for h in hits] == ["thrice", "once"]
    assert hits[0].rank > hits[1].rank
    assert hits[0].session == "a" and hits[0].position == 1 and hits[0].role == "assistant"
    assert "[kafka]" in hits[0].snippet.lower()
    bare = store.search("a", "kafka", snippets=False)  # recall reads the originals: no snippets to make
    assert [(h.message_id, h.snippet) for h in bare] == [("thrice", ""), ("once", "")]
    assert {h.message_id for h in store.search(None, "kafka")} == {"once", "thrice", "elsewhere"}
    assert [h.message_id for h in store.search("b", "KAFKA session")] == ["elsewhere"]
    assert store.search("a", "kafka absentword") == []
    assert len(store.search(None, "kafka", limit=2)) == 2
    assert store.search(None, "kafka", limit=0) == []


def test_search_finds_tool_calls_results_and_reasoning(store: Store) -> None:
    store.archive_and_record("s", [("r", RICH)], None)
    store.archive_and_record(
        "s", [("t", Message(role="tool", parts=(ToolResult(call_id="c", content="exit 137"),)))], None
    )
    assert [h.message_id for h in store.search("s", "grep")] == ["r"]
    assert [h.message_id for h in store.search("s", "TODO pattern")] == ["r"]
    assert [h.message_id for h in store.search("s", "137")] == ["t"]


HOSTILE_TEXT = "'; DROP TABLE archive; -- \" OR 1=1 %s ? $1 \\x00 NEAR(a b) * ^ col:x \x00 end"
HOSTILE_QUERIES = [
    '"',
    '""',
    "*",
    "kafka*",
    "NEAR",
    "NEAR(kafka lag, 2)",
    "OR",
    "kafka OR lag",
    "AND NOT",
    "-kafka",
    "(",
    ")",
    "col:x",
    "^start",
    "'",
    "\\",
    "%",
    "%s",
    "?",
    "$1",
    "'; DROP TABLE archive; --",
    "\x00",
    "",
    "   ",
    "🚀",
    "{a b}",
    "a" * 10_000,
    "word " * 500,
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=range(len(HOSTILE_QUERIES)))
def test_hostile_queries_never_error(store: Store, query: str) -> None:
    store.archive_and_record(
        "s", [("h", Message.of("user", HOSTILE_TEXT)), ("k", Message.of("user", "kafka lag"))], None
    )
    hits = store.search("s", query)
    assert all(h.session == "s" for h in hits)
    assert [a.message_id for a in store.archived("s")] == ["h", "k"]  # nothing injected, nothing dropped


def test_search_syntax_words_are_plain_words(store: Store) -> None:
    store.archive_and_record(
        "s", [("h", Message.of("user", HOSTILE_TEXT)), ("k", Message.of("user", "kafka lag"))], None
    )
    assert [h.message_id for h in store.search("s", "NEAR")] == ["h"]
    assert [h.message_id for h in store.search("s", "OR")] == ["h"]
    assert store.search("s", "kafka OR nothing") == []  # OR is a word to match, not an operator
    assert [h.message_id for h in store.search("s", '"kafka" lag*')] == ["k"]


HOSTILE_IDS = ["'; DROP TABLE summaries; --", "%s%s", "?", "naïve 🚀 日本語", "x" * 2000, ""]


def test_hostile_sessions_and_ids_round_trip(store: Store) -> None:
    for n, weird in enumerate(HOSTILE_IDS):
        items = [(weird, Message.of("user", f"{weird} text {n}", name=weird))]
        record = record_for(items, rid=weird + "-summary")
        assert store.archive_and_record(weird, items, record, expected_version=0, new_state={"key": weird}) is True
        assert store.expand(weird + "-summary") == [items[0][1]]
        assert store.records(weird) == [record]
        assert store.get_state(weird).data == {"key": weird}
        with store.try_lock(weird) as held:
            assert held
    assert len({a.message_id for s in HOSTILE_IDS for a in store.archived(s)}) == len(HOSTILE_IDS)


def test_unicode_and_control_characters_round_trip(store: Store) -> None:
    text = "Grüße aus Köln 🚀 日本語のテキスト Ωmega \x00 nul \u200b zero-width \U0010ffff end"
    items = [("u", Message.of("user", text, extras={"k": "ü\x00"}))]
    store.archive_and_record("s", items, record_for(items))
    assert store.expand("s1") == [items[0][1]]
    assert [h.message_id for h in store.search("s", "Grüße")] == ["u"]
    assert [h.message_id for h in store.search("s", "Köln")] == ["u"]
    store.search("s", "koln ωmega 日本語")  # accent and script folding may differ by backend; it must not error


def test_huge_message_round_trips_and_is_searchable(store: Store) -> None:
    words = " ".join(f"w{i}" for i in range(400_000))  # about 3 MB
    huge = Message(role="tool", parts=(ToolResult(call_id="c", content=words),))
    items = [("big", huge)]
    store.archive_and_record("s", items, record_for(items))
    assert store.expand("s1") == [huge]
    assert [h.message_id for h in store.search("s", "w12")] == ["big"]


def test_try_lock_excludes_a_second_holder(store: Store, backend: Backend) -> None:
    other = backend.open()
    try:
        with store.try_lock("s") as held:
            assert held is True
            with store.try_lock("s") as again:
                assert again is False
            with other.try_lock("s") as elsewhere:
                assert elsewhere is False
            with other.try_lock("another session") as free:
                assert free is True
        with other.try_lock("s") as after:
            assert after is True
    finally:
        other.close()


def test_concurrent_compare_and_set_loses_no_increment(backend: Backend) -> None:
    """Four connections increment one counter by read-then-CAS, retrying on conflict: no update is lost."""
    import threading

    stores = [backend.open() for _ in range(4)]
    errors: list[BaseException] = []

    def work(store: Store) -> None:
        try:
            for _ in range(10):
                while True:
                    state = store.get_state("counter")
                    count = int(state.data.get("count", 0))
                    if store.compare_and_set_state("counter", state.version, {"count": count + 1}):
                        break
                store.archive_and_record("threads", [(f"{id(store)}-{count}", Message.of("user", "x"))], None)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert stores[0].get_state("counter") == StoredState(version=40, data={"count": 40})
        assert [a.position for a in stores[0].archived("threads")] == list(range(40))
    finally:
        for s in stores:
            s.close()


def test_closing_the_store_while_holding_the_lock_does_not_raise_on_release(backend: Backend) -> None:
    store = backend.open()
    with store.try_lock("s") as held:
        assert held
        store.close()


def test_snippets_mark_the_matching_words_around_the_first_match_and_can_be_left_out() -> None:
    text = "filler " * 500 + "We moved the broker to Kafka last week. " + "more " * 500
    shown = snippet_of(text, ["kafka"])
    assert "[Kafka]" in shown and shown.startswith("…") and shown.endswith("…")
    assert len(shown.split()) <= 17
    assert snippet_of("short kafka note", ["KAFKA"]) == "short [kafka] note"
    assert snippet_of("nothing here", ["kafka"]) == "nothing here"
