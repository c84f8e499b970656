"""Nothing is lost: every removed original is archived with its SHA-256 and referenced by a record; records chain;
the summarizer sees the meta header under the cap; dicts in give dicts out; the sync twin equals the async core;
a restarted process resumes from the stored state (in memory and in SQLite); an early term survives two
summarizations (the spec's drift test)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from chainsum.chain import RECORD_INTRO, record_blocks
from chainsum.formats import openai_chat
from chainsum.manager import ManagerEvent, SummarizationEvent
from chainsum.messages import Message
from chainsum.rules import validate
from chainsum.store import Archive, MemoryArchive, message_sha256
from chainsum.summarize import StructuredSummary
from chainsum.testing import ScriptedSummarizer
from chainsum.tokens import HeuristicCounter
from manager.manager_support import SYSTEM, Dict, make, replay, tool_turn, turn


def _canon(items: list[Dict]) -> list[str]:
    return [json.dumps(d, sort_keys=True) for d in items]


def test_every_removed_message_is_archived_and_verifiable() -> None:
    archive = MemoryArchive()
    manager = make(archive=archive)
    sent: list[Dict] = [SYSTEM]
    hist: list[Dict] = [SYSTEM]
    for i in range(60):
        new = turn(i)
        sent += new
        hist = list(manager.prepare_sync([*hist, *new]).messages)
    records = archive.records("default")
    assert records, "the replay should have summarized"
    archived = archive.archived("default")
    for entry in archived:
        assert message_sha256(entry.message) == entry.sha256
    ids = [e.message_id for e in archived]
    assert len(ids) == len(set(ids))
    assert sorted(i for r in records for i in r.original_message_ids) == sorted(ids)
    for record in records:
        originals = archive.expand(record.id)
        assert [message_sha256(m) for m in originals] == list(record.original_sha256)
    # every message ever sent is either still in the history or archived (compared by value)
    live = set(_canon(hist))
    kept = {json.dumps(d, sort_keys=True) for d in openai_chat.dump([e.message for e in archived])}
    missing = [m for m in _canon(sent) if m not in live and m not in kept]
    assert missing == []


def test_a_message_repeated_word_for_word_is_archived_when_its_earlier_copy_is_summarized() -> None:
    """ "ok" asked twice: the first copy summarized away while the second stays must still be archived (it was
    once taken for kept, because an equal message was still in the history)."""
    archive = MemoryArchive()
    manager = make(window=600, archive=archive, min_messages=4, preserve_recent=2)
    repeated = [{"role": "user", "content": "ok, go on"}, {"role": "assistant", "content": "Continuing."}]
    hist: list[Dict] = [SYSTEM]
    for i in range(8):
        hist = [*hist, *turn(i, words=40), *repeated]
    given = openai_chat.load(hist).messages
    out = openai_chat.load(list(manager.prepare_sync(hist).messages)).messages
    assert len(out) < len(given)
    still = [json.dumps(d, sort_keys=True) for d in openai_chat.dump(list(out))]
    archived = {e.sha256 for e in archive.archived("default")}
    removed = [m for m in given if json.dumps(openai_chat.dump([m])[0], sort_keys=True) not in still]
    copies_kept = sum(1 for m in out if m.text == "ok, go on")
    copies_removed = sum(1 for m in given if m.text == "ok, go on") - copies_kept
    assert copies_removed > 0
    assert {message_sha256(m) for m in removed} <= archived
    assert sum(1 for e in archive.archived("default") if e.message.text == "ok, go on") == copies_removed


def test_records_carry_facets_key_points_and_ids() -> None:
    archive = MemoryArchive()
    manager = make(archive=archive)
    replay(manager, 40)
    record = archive.records("default")[0]
    assert record.depth == 1 and record.parent_id is None  # a summary of original messages
    assert record.blocks and record.blocks[0].startswith("sum_")
    assert record.summary
    assert len(record.key_points) <= 30
    assert any("src/mod_" in e for e in record.context.domain_entities)
    assert set(record.context.participants) <= {"user", "assistant", "system", "tool"}
    assert all(re.fullmatch(r"msg_[0-9a-f]{16}_\d+", i) for i in record.original_message_ids)
    assert record.token_estimate is not None and record.token_estimate > 0


def test_structured_summarizer_output_fills_the_record() -> None:
    def structured(transcript: str) -> StructuredSummary:
        return StructuredSummary(narrative="We fixed the parser.", key_points=("parser fixed",), entities=("p.py",))

    archive = MemoryArchive()
    manager = make(archive=archive, summarizers=[structured])
    prepared = manager.prepare_sync(replay(make(window=10**9), 30))
    assert prepared.record is not None
    assert prepared.record.key_points == ("parser fixed",)
    assert prepared.record.context.domain_entities == ("p.py",)
    assert "We fixed the parser." in prepared.record.summary


def test_summarizer_sees_the_meta_header_and_a_capped_transcript() -> None:
    scripted = ScriptedSummarizer()
    manager = make(summarizers=[scripted], summarizer_input_cap_tokens=600)
    hist: list[Dict] = [SYSTEM]
    for i in range(30):
        hist += turn(i)
    manager.prepare_sync(hist)
    assert scripted.transcripts
    counter = HeuristicCounter()
    for transcript in scripted.transcripts:
        assert re.match(r"<meta total_messages=\d+ total_tokens=\d+ depth=0 />\n", transcript)
        assert counter.count_text(transcript) <= 600


def test_dicts_in_dicts_out_with_the_callers_objects_kept() -> None:
    manager = make()
    hist: list[Dict] = [SYSTEM]
    for i in range(30):
        hist += turn(i)
    prepared = manager.prepare_sync(hist)
    assert prepared.changed
    out = prepared.messages
    assert all(isinstance(d, dict) for d in out)
    assert out[0] is SYSTEM
    originals = {id(d) for d in hist}
    assert any(id(d) in originals for d in out[1:])  # kept messages are the caller's own dicts
    assert validate(openai_chat.load(list(out)).messages, "openai") == []


def test_messages_in_messages_out() -> None:
    manager = make()
    hist: list[Message] = list(openai_chat.load([SYSTEM, *[m for i in range(30) for m in turn(i)]]).messages)
    prepared = manager.prepare_sync(hist)
    assert prepared.changed
    assert all(isinstance(m, Message) for m in prepared.messages)
    assert prepared.messages[0] is hist[0]


def test_tool_histories_stay_valid_and_smaller() -> None:
    events: list[ManagerEvent] = []
    manager = make(window=6000, events=events)
    hist: list[Dict] = [SYSTEM]
    for i in range(60):
        before = [*hist, *tool_turn(i)]
        prepared = manager.prepare_sync(before)
        hist = list(prepared.messages)
        assert validate(openai_chat.load(hist).messages, "openai") == []
        if prepared.changed:
            counter = HeuristicCounter()
            assert counter.count_messages(openai_chat.load(hist).messages) < counter.count_messages(
                openai_chat.load(before).messages
            )
    assert any(isinstance(e, SummarizationEvent) for e in events)


def test_sync_twin_matches_the_async_core() -> None:
    def history() -> list[Dict]:
        return [SYSTEM, *[m for i in range(30) for m in turn(i)]]

    sync = make().prepare_sync(history())

    async def run() -> Any:
        return await make().prepare(history())

    async_result = asyncio.run(run())
    assert _canon(list(sync.messages)) == _canon(list(async_result.messages))


def test_prepare_sync_works_inside_a_running_loop() -> None:
    """A sync hook called from an async framework (Strands, LangChain): the work runs on a worker thread."""
    history = [SYSTEM, *[m for i in range(30) for m in turn(i)]]
    outside = make().prepare_sync(history)

    async def run() -> Any:
        manager = make()
        small = [SYSTEM, *turn(0)]
        assert manager.prepare_sync(small).messages is small  # nothing to do
        return manager.prepare_sync(history)

    inside = asyncio.run(run())
    assert inside.changed and _canon(list(inside.messages)) == _canon(list(outside.messages))


def _restart(archive: Archive) -> None:
    events: list[ManagerEvent] = []
    first = make(archive=archive, events=events)  # type: ignore[arg-type]
    hist = replay(first, 30)
    assert len(events) == 1
    state = first.state
    # a new process: a new manager on the same archive resumes the state exactly
    second = make(archive=archive, events=events)  # type: ignore[arg-type]
    assert second.state.to_data() == state.to_data() and second.state.version == state.version
    hist = [*hist, {"role": "user", "content": "x " * 10}]
    second.prepare_sync(hist)  # within the cooldown counted from the first process's summarization
    assert len(events) == 1
    replay(second, 60, start=100, history=hist)
    records = archive.records("default")  # type: ignore[attr-defined]
    assert len(records) >= 2 and second.state.summarizations == len(records)
    assert records[1].parent_id == records[0].id  # the chain goes on across the restart


def test_restart_recovery_with_the_memory_archive() -> None:
    _restart(MemoryArchive())


def test_restart_recovery_with_sqlite(tmp_path: Path) -> None:
    from chainsum.store import SQLiteStore

    store = SQLiteStore(tmp_path / "s.db")
    try:
        _restart(store)
    finally:
        store.close()


def test_two_managers_on_one_session_summarize_once() -> None:
    archive = MemoryArchive()
    hist: list[Dict] = [SYSTEM, *[m for i in range(30) for m in turn(i)]]
    a, b = make(archive=archive), make(archive=archive)
    assert b.state.depth == 0  # b reads the session's state now, then decides on it later: the race
    assert a.prepare_sync(hist).changed
    second = b.prepare_sync(hist)  # b's cached state is stale; under the lock it re-reads and stands down
    assert not second.changed
    assert len(archive.records("default")) == 1


def test_early_technical_term_survives_a_second_summarization() -> None:
    archive = MemoryArchive()
    manager = make(archive=archive, strategy="ratio")
    term = "FrobnicatorV2Config"
    hist: list[Dict] = [
        SYSTEM,
        {"role": "user", "content": f"Set up {term} in src/frob/config.py with retries=7."},
        {"role": "assistant", "content": f"Decided: {term} lives in src/frob/config.py; retries=7."},
    ]
    i = 0
    while len(archive.records("default")) < 2:
        hist = [*hist, *turn(i)]
        if i % 9 == 8:  # new messages keep referring to the early term
            hist.append({"role": "user", "content": f"Does {term} still use retries=7?"})
            hist.append({"role": "assistant", "content": f"Yes, {term} uses retries=7."})
        hist = list(manager.prepare_sync(hist).messages)
        i += 1
        assert i < 200
    second = archive.records("default")[1]
    records = [d["content"] for d in hist if d["role"] == "user" and str(d["content"]).startswith(RECORD_INTRO)]
    assert len(records) == 1 and hist[1]["content"] == records[0]  # one record, after the user's system prompt
    blocks = record_blocks(openai_chat.load([hist[1]]).messages[0]) or ()
    # two blocks, or the first folded into a deeper one when they outgrew their share of the budget
    assert len(blocks) == 2 or max(b.depth for b in blocks) == 2
    assert term in records[0]  # the early term is still in the context after the second summarization
    assert term in second.summary  # and the new summary keeps it too (the recent turns refer to it)


def test_lock_held_elsewhere_keeps_the_history() -> None:
    archive = MemoryArchive()
    manager = make(archive=archive)
    hist: list[Dict] = [SYSTEM, *[m for i in range(30) for m in turn(i)]]
    with archive.try_lock("default") as held:
        assert held
        prepared = manager.prepare_sync(hist)
    assert prepared.messages is hist and prepared.event is None
    assert archive.records("default") == []


def test_extremely_long_single_user_message() -> None:
    scripted = ScriptedSummarizer()
    events: list[ManagerEvent] = []
    manager = make(summarizers=[scripted], events=events, summarizer_input_cap_tokens=1000)
    huge = {"role": "user", "content": " ".join(f"token{k}" for k in range(20000))}
    hist: list[Dict] = [SYSTEM, *turn(0), huge, {"role": "assistant", "content": "Read it."}]
    for i in range(1, 8):
        hist += turn(i)
    prepared = manager.prepare_sync(hist)
    counter = HeuristicCounter()
    assert all(counter.count_text(t) <= 1000 for t in scripted.transcripts)
    out = list(prepared.messages)
    assert validate(openai_chat.load(out).messages, "openai") == []
    assert counter.count_messages(openai_chat.load(out).messages) <= counter.count_messages(
        openai_chat.load(hist).messages
    )


def test_restart_recovery_with_postgres() -> None:
    import uuid

    import psycopg
    from psycopg import sql

    from chainsum.store import PostgresStore
    from store.store_support import POSTGRES_URL, require_postgres

    require_postgres()
    schema = f"chainsum_mrestart_{uuid.uuid4().hex}"
    store = PostgresStore(POSTGRES_URL, schema=schema)
    try:
        _restart(store)
    finally:
        store.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
