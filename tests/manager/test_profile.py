"""`PhaseTimes`: the phases a manager times tile each `prepare` call (together no more than the call, measured
around it), a compaction's time lands in the phases that do its work (the summarizer inside ``pipeline``, the store's
write inside ``archive``, the event loop of `prepare_sync` in ``loop``), a call with nothing to do runs none of them,
and a manager without a profile times nothing. No timed thresholds: every check compares times the test measured
around the very same work."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from chainsum.manager import (
    PHASES,
    ContextManager,
    CountingSummarizer,
    ManagerConfig,
    PhaseTimes,
    SummarizationEvent,
)
from chainsum.messages import Message
from chainsum.store import MemoryArchive, SummaryRecord
from chainsum.summarize import ExtractiveSummarizer
from chainsum.tokens import HeuristicCounter
from manager.manager_support import SYSTEM, Dict, turn


class TimedArchive(MemoryArchive):
    """A memory archive that measures the time of its compaction writes (`MemoryArchive.writes` counts them)."""

    def __init__(self) -> None:
        super().__init__()
        self.write_seconds = 0.0

    def archive_and_record(
        self,
        session: str,
        originals: Sequence[tuple[str, Message]],
        record: SummaryRecord,
        *,
        expected_version: int | None = None,
        new_state: dict[str, Any] | None = None,
    ) -> bool:
        started = time.perf_counter()
        try:
            return super().archive_and_record(
                session, originals, record, expected_version=expected_version, new_state=new_state
            )
        finally:
            self.write_seconds += time.perf_counter() - started


def _manager(profile: PhaseTimes | None, archive: MemoryArchive, summarizer: CountingSummarizer) -> ContextManager:
    return ContextManager(
        ManagerConfig(), context_window=3000, summarizers=[summarizer], archive=archive, profile=profile
    )


def test_the_phases_tile_each_call_and_a_compaction_times_its_work() -> None:
    profile = PhaseTimes()
    archive = TimedArchive()
    summarizer = CountingSummarizer(ExtractiveSummarizer(), HeuristicCounter())
    manager = _manager(profile, archive, summarizer)
    history: list[Dict] = [SYSTEM]
    compactions = quiet = 0
    for i in range(40):
        history += turn(i)
        profile.clear()
        summarized_s, written_s = summarizer.seconds, archive.write_seconds
        started = time.perf_counter()
        prepared = manager.prepare_sync(history)
        outside = time.perf_counter() - started
        assert profile.calls == 1
        assert profile.measured <= profile.seconds <= outside
        phases = profile.phases
        if isinstance(prepared.event, SummarizationEvent):
            compactions += 1
            assert phases["pipeline"].laps == phases["record"].laps == phases["archive"].laps == 1
            assert phases["pipeline"].seconds >= summarizer.seconds - summarized_s > 0
            assert phases["archive"].seconds >= archive.write_seconds - written_s > 0
            assert phases["lock"].laps == 1 and phases["events"].laps >= 1
            assert phases["loop"].laps == 2  # prepare_sync started an event loop for the compaction, and closed it
        elif prepared.event is None:
            quiet += 1
            assert [p for p in PHASES if phases[p].laps] == ["read", "decide", "output", "recall"]
        history = list(prepared.messages)
    assert compactions >= 2 and quiet >= 10, (compactions, quiet)
    assert archive.writes == compactions


def test_async_prepare_is_profiled_too_and_profiles_add_up() -> None:
    summarizer = CountingSummarizer(ExtractiveSummarizer(), HeuristicCounter())
    profile, whole = PhaseTimes(), PhaseTimes()
    manager = _manager(profile, MemoryArchive(), summarizer)
    history: list[Dict] = [SYSTEM]
    for i in range(30):
        history += turn(i)
        history = list(asyncio.run(manager.prepare(history)).messages)
    assert profile.calls == 30 and profile.phases["pipeline"].laps >= 1
    assert profile.phases["loop"].laps == 0  # the caller's own loop
    assert profile.measured <= profile.seconds
    whole.add(profile)
    whole.add(profile)
    assert whole.calls == 60 and whole.phases["read"].laps == 2 * profile.phases["read"].laps
    table = profile.table(per=15, label="model call")
    assert "ms/model call" in table and "pipeline" in table and "30 prepare calls" in table
    assert "lock" in table and "(other)" in table


def test_a_manager_without_a_profile_times_nothing_and_one_can_be_set_later() -> None:
    summarizer = CountingSummarizer(ExtractiveSummarizer(), HeuristicCounter())
    manager = _manager(None, MemoryArchive(), summarizer)
    history: list[Dict] = [SYSTEM, *turn(0)]
    assert manager.profile is None
    manager.prepare_sync(history)
    manager.profile = profile = PhaseTimes()
    history += turn(1)
    manager.prepare_sync(history)
    assert profile.calls == 1 and profile.phases["read"].laps == 1
    profile.clear()
    assert profile.calls == 0 and profile.seconds == 0.0 and all(t.laps == 0 for t in profile.phases.values())
