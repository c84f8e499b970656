"""`CompactionStep`: one compaction, from its budget to the archive write, says what happened: `Compacted` (the
originals archived with the record and the new state, in one write), `Unchanged`, `Failed` (a planner that raised, an
archive that could not write) or `Lost` (another process wrote the session meanwhile: nothing written here)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from chainsum.manager import CompactionSettings, ContextManager, ManagerConfig, SessionState
from chainsum.manager._depth import choose_depth
from chainsum.manager._session_view import Frame, SessionView
from chainsum.manager._step import Compacted, CompactionStep, Failed, Lost, Unchanged
from chainsum.messages import Message
from chainsum.store import MemoryArchive
from chainsum.strategies import Plan, PlanContext, Strategy
from chainsum.summarize import ExtractiveSummarizer
from chainsum.tokens import HeuristicCounter
from manager.manager_support import SYSTEM, Dict, tool_turn, turn

COUNTER = HeuristicCounter()
WINDOW = 3000


def _step(archive: MemoryArchive, strategy: str | Strategy | None = None) -> CompactionStep:
    config = ManagerConfig(context_window=WINDOW)
    summarizers = (ExtractiveSummarizer(),)
    choice = choose_depth(config, summarizers, WINDOW)
    settings = CompactionSettings.from_config(choice.config, strategy=strategy, summarizers=summarizers)
    return CompactionStep(choice.config, choice, settings, WINDOW, COUNTER, "openai", archive, "s", asyncio.sleep)


def _run(step: CompactionStep, items: list[Dict], state: SessionState) -> Compacted | Unchanged | Failed | Lost:
    seen = SessionView(COUNTER, None, "openai")
    seen.read(items, state)
    frame = Frame(items, 0, 0, seen.tokens())
    source = seen.messages()
    return asyncio.run(step.run(source, seen.covers(), seen.prints, frame, "ratio", seen.tokens(), state, None, None))


def _long() -> list[Dict]:
    return [SYSTEM] + [m for i in range(12) for m in (turn(i, words=40) + tool_turn(100 + i, words=40))]


def test_a_compaction_archives_its_originals_with_the_record_and_the_state_in_one_write() -> None:
    archive = MemoryArchive()
    items = _long()
    outcome = _run(_step(archive), items, SessionState())
    assert isinstance(outcome, Compacted), outcome
    assert outcome.removed > 0 and archive.writes == 1
    assert outcome.state.version == 1 == archive.get_state("s").version
    assert outcome.state.archived == outcome.removed and outcome.state.last_record_id == outcome.record.id
    assert outcome.tokens_after == COUNTER.count_messages(outcome.messages)
    assert outcome.tokens_after <= WINDOW
    assert outcome.view.n_in == len(items)  # the mapping covers the whole input


def test_a_short_history_is_unchanged() -> None:
    archive = MemoryArchive()
    assert isinstance(_run(_step(archive), [SYSTEM, *turn(1, words=3)], SessionState()), Unchanged)
    assert archive.writes == 0


def test_another_process_writing_meanwhile_loses_this_write() -> None:
    archive = MemoryArchive()
    assert archive.compare_and_set_state("s", 0, {"armed": True})  # another process, after this one read version 0
    outcome = _run(_step(archive), _long(), SessionState())
    assert isinstance(outcome, Lost)
    assert archive.writes == 0 and archive.get_state("s").version == 1


def test_an_archive_that_cannot_write_fails_the_compaction_open() -> None:
    archive = MemoryArchive()
    archive.fail_writes = True
    outcome = _run(_step(archive), _long(), SessionState())
    assert isinstance(outcome, Failed) and outcome.kind == "archive"
    assert "archive unavailable" in outcome.detail


class _Raising:
    name = "raising"

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        raise RuntimeError("planner bug")


def test_a_planner_that_raises_fails_the_compaction_open() -> None:
    archive = MemoryArchive()
    outcome = _run(_step(archive, _Raising()), _long(), SessionState())
    assert isinstance(outcome, Failed) and outcome.kind == "error"
    assert outcome.detail == "RuntimeError: planner bug"
    assert archive.writes == 0


def test_a_manager_given_a_new_config_or_window_compacts_with_it() -> None:
    """`ContextManager.config` and `.window` may be replaced between calls (an integration lowers the window after a
    refusal): the request writer and the compaction step follow, as they did when the manager was one class."""
    manager = ContextManager(context_window=100_000, archive=MemoryArchive())
    assert manager.prepare_sync(_long()).event is None  # far under the trigger
    manager.window = WINDOW
    manager.config = replace(manager.config, recall_token_ratio=0.0)
    prepared = manager.prepare_sync(_long())
    assert prepared.changed and prepared.tokens_after <= WINDOW and prepared.recall_tokens == 0
    assert manager._step.window == WINDOW and manager._writer.config.recall_token_ratio == 0.0  # pyright: ignore[reportPrivateUsage]
