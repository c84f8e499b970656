"""Archive writes in bulk (issue 20): a compaction's originals go in as one batch in one transaction, on both
backends, with the same results as one row at a time (positions, search, hash checks against earlier batches)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainsum.messages import Message
from chainsum.store import ArchiveConflictError, Store, SummaryRecord, sha256_all
from chainsum.store._postgres import _PgTx  # pyright: ignore[reportPrivateUsage]
from chainsum.store._sqlite import _SqliteTx  # pyright: ignore[reportPrivateUsage]


def numbered(ids: list[int]) -> list[tuple[str, Message]]:
    """Messages whose ids and one word of their text say which they are (``w123`` is only in ``m123``)."""
    return [(f"m{i}", Message.of("user" if i % 2 == 0 else "assistant", f"turn w{i} of the chat")) for i in ids]


def record_over(items: list[tuple[str, Message]], rid: str) -> SummaryRecord:
    return SummaryRecord(
        id=rid,
        timestamp_ms=1_700_000_000_000,
        depth=0,
        parent_id=None,
        summary=f"summary {rid}",
        key_points=(),
        original_message_ids=tuple(i for i, _ in items),
        original_sha256=sha256_all([m for _, m in items]),
    )


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every statement a store sends through its transaction object (a batch counts once)."""
    sent: list[str] = []
    for cls in (_SqliteTx, _PgTx):
        for name in ("execute", "one", "all", "many", "copy"):
            original = getattr(cls, name, None)
            if original is None:
                continue

            def counted(self: Any, *args: Any, _original: Any = original, _name: str = name) -> Any:
                sent.append(f"{_name}: {str(args[0])[:60]}")
                return _original(self, *args)

            monkeypatch.setattr(cls, name, counted)
    yield sent


def test_a_large_batch_takes_a_few_statements_not_one_per_message(store: Store, statements: list[str]) -> None:
    small, large = numbered(list(range(10))), numbered(list(range(3000)))
    store.archive_and_record("s", small, record_over(small, "r-small"))
    few = len(statements)
    statements.clear()
    store.archive_and_record("s", large, record_over(large, "r-large"))
    # 3,000 messages: a handful of statements plus one read per 500 ids, where it was two or three per message
    assert len(statements) <= few + 3000 // 500 + 2, statements
    assert [a.message_id for a in store.archived("s")] == [i for i, _ in large]


def test_a_batch_over_an_earlier_one_archives_only_the_new_messages_in_order(store: Store) -> None:
    first = numbered(list(range(0, 1200, 2)))  # every even one
    store.archive_and_record("s", first, record_over(first, "r1"))
    whole = numbered(list(range(1200)))
    store.archive_and_record("s", whole, record_over(whole, "r2"))
    archived = store.archived("s")
    assert [a.position for a in archived] == list(range(1200))
    expected = [f"m{i}" for i in range(0, 1200, 2)] + [f"m{i}" for i in range(1, 1200, 2)]
    assert [a.message_id for a in archived] == expected
    assert [m for _, m in whole] == store.expand("r2")
    for i in (0, 1, 598, 599, 1198, 1199):  # each message is found by its own word, under its own id
        hits = store.search("s", f"w{i}")
        assert [(h.message_id, h.position) for h in hits] == [(f"m{i}", expected.index(f"m{i}"))]


def test_a_record_is_checked_against_its_own_batch_and_against_earlier_ones(store: Store) -> None:
    earlier = numbered([1, 2])
    store.archive_and_record("s", earlier, None)
    batch = numbered([3, 4])
    wrong_earlier = record_over(earlier + batch, "bad1")
    wrong_earlier = replace(wrong_earlier, original_sha256=("0" * 64, *wrong_earlier.original_sha256[1:]))
    with pytest.raises(ArchiveConflictError, match="m1"):
        store.archive_and_record("s", batch, wrong_earlier)
    assert [a.message_id for a in store.archived("s")] == ["m1", "m2"]  # nothing of the batch was written
    wrong_own = record_over(earlier + batch, "bad2")
    shas = list(wrong_own.original_sha256)
    shas[3] = "f" * 64
    wrong_own = replace(wrong_own, original_sha256=tuple(shas))
    with pytest.raises(ArchiveConflictError, match="m4"):
        store.archive_and_record("s", batch, wrong_own)
    store.archive_and_record("s", batch, record_over(earlier + batch, "good"))
    assert [a.message_id for a in store.archived("s")] == ["m1", "m2", "m3", "m4"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.integers(0, 60), max_size=40), min_size=1, max_size=4))
def test_batches_archive_each_message_once_in_first_seen_order(store: Store, batches: list[list[int]]) -> None:
    session = uuid.uuid4().hex
    for ids in batches:
        store.archive_and_record(session, numbered(ids), None)
    seen = list(dict.fromkeys(i for ids in batches for i in ids))
    archived = store.archived(session)
    assert [a.message_id for a in archived] == [f"m{i}" for i in seen]
    assert [a.position for a in archived] == list(range(len(seen)))
    if seen:
        hits = store.search(session, f"w{seen[-1]}")
        assert [h.message_id for h in hits] == [f"m{seen[-1]}"]
