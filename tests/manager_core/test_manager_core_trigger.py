"""When the manager summarizes: the ratio trigger, hysteresis, cooldown, emergency, depth guard (spec integration
tests and edge cases), and the pure decision function."""

from __future__ import annotations

from dataclasses import replace

from chainsum.formats import openai_chat
from chainsum.manager._archive import MemoryArchive
from chainsum.manager._config import ManagerConfig
from chainsum.manager._events import ManagerEvent, SummarizationEvent
from chainsum.manager._manager_policy import SessionState, decide, is_armed
from chainsum.tokens import HeuristicCounter
from manager_core.manager_core_support import SYSTEM, Dict, make, replay, turn

CFG = ManagerConfig()


# the decision, unit by unit ------------------------------------------------------------------------------------------
def test_decide_follows_the_spec_order() -> None:
    fresh = SessionState()
    assert decide(fresh, 0.79, 20, CFG) is None
    assert decide(fresh, 0.80, 20, CFG) == "ratio"
    assert decide(fresh, 0.95, 11, CFG) is None  # min_messages
    assert decide(fresh, 1.5, 11, CFG) is None  # min_messages even in an emergency (spec order)
    assert decide(replace(fresh, depth=3), 0.9, 40, CFG) is None  # depth guard: no summary ever again
    assert decide(replace(fresh, depth=3), 1.5, 40, CFG) == "emergency"  # ...but a model-free pass over the window
    assert decide(fresh, 0.9, 20, replace(CFG, enabled=False)) is None


def test_cooldown_and_emergency() -> None:
    after = SessionState(count_after=20, armed=True, depth=1)
    assert decide(after, 0.85, 23, CFG) is None  # 3 messages since: cooldown
    assert decide(after, 0.85, 24, CFG) == "ratio"
    assert decide(after, 1.0, 21, CFG) == "emergency"  # cooldown ignored


def test_hysteresis_rearms_below_reset_or_after_enough_messages() -> None:
    disarmed = SessionState(count_after=20, armed=False, depth=1)
    # cooldown over, above the trigger, but disarmed: no
    assert decide(disarmed, 0.85, 25, CFG) is None
    assert not is_armed(disarmed, 0.85, 25, CFG)
    # a ratio seen under the reset re-arms
    assert is_armed(disarmed, 0.69, 25, CFG)
    # max(cooldown, preserve_recent) = 10 new messages re-arm too
    assert is_armed(disarmed, 0.85, 30, CFG)
    assert decide(disarmed, 0.85, 30, CFG) == "ratio"
    # emergency ignores the hysteresis
    assert decide(disarmed, 1.2, 21, CFG) == "emergency"


def test_forced_refresh() -> None:
    cfg = replace(CFG, force_refresh_after_messages=8)
    state = SessionState(count_after=20, depth=1)
    assert decide(state, 0.3, 27, cfg) is None
    assert decide(state, 0.3, 28, cfg) == "refresh"


def test_state_round_trips_through_its_data() -> None:
    state = SessionState(version=3, depth=2, last_record_id="r", armed=False, count_after=9, last_ratio=0.5)
    assert SessionState.from_data(3, state.to_data()) == state


# integration -------------------------------------------------------------------------------------------------------
def _ratio(history: list[Dict], window: int) -> float:
    return HeuristicCounter().count_messages(openai_chat.load(history).messages) / window


def test_one_long_thread_triggers_once_at_about_the_trigger_ratio() -> None:
    events: list[ManagerEvent] = []
    manager = make(events=events)
    hist: list[Dict] = [SYSTEM]
    ratios: list[float] = []
    for i in range(30):
        before = _ratio(hist, 4000)
        hist = [*hist, *turn(i)]
        prepared = manager.prepare_sync(hist)
        if prepared.event is not None:
            ratios.append(before)
            break
        hist = list(prepared.messages)
    assert len(events) == 1
    event = events[0]
    assert isinstance(event, SummarizationEvent)
    assert event.reason == "ratio"
    assert event.ratio is not None and event.ratio >= 0.8
    assert ratios[0] < 0.8  # the turn before was still under the trigger: it fired at the first crossing
    assert event.tokens_after < event.tokens_before
    assert event.tokens_after / 4000 < 0.8  # out of the trigger zone (the budget is the reset ratio)


def test_small_burst_after_a_summarization_does_not_retrigger() -> None:
    events: list[ManagerEvent] = []
    manager = make(events=events)
    hist: list[Dict] = [SYSTEM]
    i = 0
    while not events:
        hist = list(manager.prepare_sync([*hist, *turn(i)]).messages)
        i += 1
    # a small burst that takes the ratio back over the trigger (under the emergency ratio) within the cooldown
    filler = {"role": "user", "content": " ".join(f"w{k}" for k in range(500))}
    for _ in range(3):
        hist = [*hist, filler]
        if _ratio(hist, 4000) >= 0.85:
            break
    assert 0.8 <= _ratio(hist, 4000) < 1.0
    prepared = manager.prepare_sync(hist)
    assert prepared.event is None and prepared.messages is hist
    assert len(events) == 1


def test_five_message_burst_across_the_threshold_gives_one_summarization() -> None:
    events: list[ManagerEvent] = []
    manager = make(events=events, cooldown_messages=4)
    hist: list[Dict] = [SYSTEM]
    i = 0
    while _ratio([*hist, *turn(i)], 4000) < 0.8:  # stop one turn under the threshold
        hist = [*hist, *turn(i)]
        i += 1
    assert manager.prepare_sync(hist).event is None
    for message in [*turn(i), *turn(i + 1), *turn(i + 2)][:5]:  # five messages, one prepare each
        hist = [*hist, message]
        hist = list(manager.prepare_sync(hist).messages)
    assert len([e for e in events if isinstance(e, SummarizationEvent)]) == 1


def test_emergency_ignores_the_cooldown() -> None:
    events: list[ManagerEvent] = []
    manager = make(events=events)
    hist = replay(manager, 30)
    assert len(events) == 1
    big = {"role": "user", "content": " ".join(f"word{k}" for k in range(2500))}
    prepared = manager.prepare_sync([*hist, {"role": "assistant", "content": "ok"}, big])
    assert len(events) == 2
    assert isinstance(events[1], SummarizationEvent) and events[1].reason == "emergency"
    assert prepared.event is events[1]


def test_depth_guard_halts_after_the_configured_maximum() -> None:
    events: list[ManagerEvent] = []
    manager = make(events=events, max_summary_chain_depth=2)
    replay(manager, 120)
    done = [e for e in events if isinstance(e, SummarizationEvent)]
    assert len(done) == 2
    assert manager.state.depth == 2
    assert [e.depth for e in done] == [1, 2]


def test_small_context_model_compresses_repeatedly_up_to_the_depth_cap() -> None:
    events: list[ManagerEvent] = []
    archive = MemoryArchive()
    manager = make(window=2048, events=events, archive=archive, strategy="ratio", min_messages=6, preserve_recent=4)
    replay(manager, 80)
    done = [e for e in events if isinstance(e, SummarizationEvent)]
    assert len(done) == 3  # the default cap
    assert manager.state.depth == 3
    records = archive.records("default")
    assert [r.depth for r in records] == [0, 1, 2]
    assert records[0].parent_id is None
    assert [r.parent_id for r in records[1:]] == [records[0].id, records[1].id]


def test_below_min_messages_nothing_happens_even_when_huge() -> None:
    events: list[ManagerEvent] = []
    manager = make(events=events)
    hist = [SYSTEM, {"role": "user", "content": " ".join(f"w{k}" for k in range(8000))}]
    prepared = manager.prepare_sync(hist)
    assert prepared.messages is hist
    assert events == []


def test_nothing_to_do_returns_the_callers_own_list() -> None:
    manager = make(window=1_000_000)
    hist = [SYSTEM, *turn(0)]
    for i in range(1, 30):
        prepared = manager.prepare_sync(hist)
        assert prepared.messages is hist
        assert prepared.event is None and prepared.record is None
        hist.extend(turn(i))  # appended in place: the manager keeps its own copy of the references


def test_masking_only_passes_do_not_advance_the_depth() -> None:
    from manager_core.manager_core_support import tool_turn

    archive = MemoryArchive()
    manager = make(window=6000, archive=archive, max_summary_chain_depth=1)
    hist: list[Dict] = [SYSTEM]
    for i in range(40):
        hist = list(manager.prepare_sync([*hist, *tool_turn(i, words=120)]).messages)
    records = archive.records("default")
    assert len(records) >= 2  # masking passes, then (at most) one summary
    assert manager.state.depth <= 1
    assert [r.parent_id for r in records[1:]] == [r.id for r in records[:-1]]


def test_a_non_additive_counter_gives_the_same_decisions() -> None:
    from chainsum.tokens import CalibratedCounter

    events_a: list[ManagerEvent] = []
    events_b: list[ManagerEvent] = []
    replay(make(events=events_a, counter=HeuristicCounter()), 40)
    replay(make(events=events_b, counter=CalibratedCounter(HeuristicCounter(), margin=0.0)), 40)
    assert [type(e) for e in events_a] == [type(e) for e in events_b]
    assert [getattr(e, "tokens_before", None) for e in events_a] == [
        getattr(e, "tokens_before", None) for e in events_b
    ]


def test_an_in_place_edit_in_the_middle_is_seen_before_summarizing() -> None:
    from chainsum.testing import ScriptedSummarizer

    scripted = ScriptedSummarizer()
    manager = make(summarizers=[scripted])
    hist: list[Dict] = [SYSTEM, *turn(0)]
    manager.prepare_sync(hist)
    hist[1] = {"role": "user", "content": "EDITED-MARKER please look at src/edited.py"}  # replaced in place
    for i in range(1, 30):
        hist.extend(turn(i))
        if manager.prepare_sync(hist).changed:
            break
    assert any("EDITED-MARKER" in t for t in scripted.transcripts)
