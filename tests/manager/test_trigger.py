"""When the manager summarizes: the ratio trigger, hysteresis, cooldown, emergency, depth guard (spec integration
tests and edge cases), and the pure decision function."""

from __future__ import annotations

from dataclasses import replace

from chainsum.formats import openai_chat
from chainsum.manager import ManagerConfig, ManagerEvent, SummarizationEvent, WindowExceededEvent
from chainsum.manager._policy import SessionState, decide, is_armed
from chainsum.store import MemoryArchive
from chainsum.tokens import HeuristicCounter
from manager.manager_support import SYSTEM, Dict, make, replay, turn

CFG = ManagerConfig()


# the decision, unit by unit ------------------------------------------------------------------------------------------
def test_decide_follows_the_spec_order() -> None:
    fresh = SessionState()
    assert decide(fresh, 0.79, 20, CFG) is None
    assert decide(fresh, 0.80, 20, CFG) == "ratio"
    assert decide(fresh, 0.95, 11, CFG) is None  # min_messages
    assert decide(fresh, 1.5, 2, CFG) == "emergency"  # over the window a short history is rescued too
    assert decide(replace(fresh, depth=3), 0.9, 40, CFG) == "ratio"  # the depth bounds nesting, not the session
    assert decide(fresh, 0.9, 20, replace(CFG, enabled=False)) is None
    assert decide(fresh, 1.5, 20, replace(CFG, enabled=False)) is None


def test_cooldown_and_emergency() -> None:
    after = SessionState(count_after=20, armed=True, depth=1)
    assert decide(after, 0.85, 23, CFG) is None  # 3 messages since: cooldown
    assert decide(after, 0.85, 24, CFG) == "ratio"
    assert decide(after, 1.0, 21, CFG) == "emergency"  # cooldown ignored


def test_recall_blocks_count_for_the_emergency_and_for_a_question_s_room() -> None:
    """The emergency measures the whole request, the recall blocks it carries included: a request they would take
    over the window is compacted at once, and the compaction folds them in. The trigger measures the history, and,
    for a question that may get a block of its own (`asking_ratio`), the request with its blocks and the room the
    question's block would take: blocks that leave it too little room below the trigger bring the compaction that
    folds them in. That room never counts for the emergency; the hysteresis stays the history's."""
    after = SessionState(count_after=20, armed=True, depth=1)
    assert decide(after, 0.75, 24, CFG, request_ratio=0.84) is None  # a tool step: the blocks are not the reason
    assert decide(after, 0.75, 21, CFG, request_ratio=1.02) == "emergency"  # over the window with them
    assert decide(after, 0.85, 24, CFG, request_ratio=0.95) == "ratio"
    assert decide(after, 0.70, 24, CFG, request_ratio=0.75, asking_ratio=0.85) == "ratio"  # no room for a question
    assert decide(after, 0.70, 24, CFG, request_ratio=0.72, asking_ratio=0.78) is None  # room enough
    assert decide(after, 0.70, 23, CFG, request_ratio=0.75, asking_ratio=0.85) is None  # the cooldown holds
    assert decide(after, 0.70, 21, CFG, request_ratio=0.95, asking_ratio=1.05) is None  # never an emergency
    disarmed = SessionState(count_after=20, armed=False, depth=1)
    assert decide(disarmed, 0.75, 25, CFG, request_ratio=0.8, asking_ratio=0.9) is None  # the history's hysteresis


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
    state = SessionState(count_after=20, summarized_at=20, depth=1)
    assert decide(state, 0.3, 27, cfg) is None
    assert decide(state, 0.3, 28, cfg) == "refresh"


def test_state_round_trips_through_its_data() -> None:
    state = SessionState(
        version=3, depth=2, last_record_id="r", armed=False, count_after=9, summarized_at=7, last_ratio=0.5
    )
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
    manager = make(events=events, recall_token_ratio=0)  # no recall block: nothing to do means the caller's list
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
    big = {"role": "user", "content": " ".join(f"word{k}" for k in range(1000))}
    prepared = manager.prepare_sync([*hist, {"role": "assistant", "content": "ok"}, big])
    done = [e for e in events if isinstance(e, SummarizationEvent)]
    assert len(done) == 2 and done[1].reason == "emergency"
    assert prepared.event is done[1] and not prepared.over_window


def test_the_depth_cap_bounds_nesting_and_the_session_goes_on() -> None:
    """The spec's depth guard stopped all summarization after three summaries, and every later request overflowed.
    Now it bounds how deep summaries nest: the session is compacted as often as it needs, for ever."""
    events: list[ManagerEvent] = []
    archive = MemoryArchive()
    manager = make(events=events, archive=archive, max_summary_chain_depth=2)
    hist: list[Dict] = [SYSTEM]
    for i in range(160):
        prepared = manager.prepare_sync([*hist, *turn(i)])
        assert not prepared.over_window
        hist = list(prepared.messages)
    done = [e for e in events if isinstance(e, SummarizationEvent)]
    assert len(done) > 5  # far past the old stop at max_summary_chain_depth summaries
    records = archive.records("default")
    assert max(r.depth for r in records) == 2 and all(r.depth <= 2 for r in records)
    assert [r.parent_id for r in records[1:]] == [r.id for r in records[:-1]]


def test_small_context_model_is_compacted_for_ever_under_its_window() -> None:
    events: list[ManagerEvent] = []
    archive = MemoryArchive()
    manager = make(window=2048, events=events, archive=archive, strategy="ratio", min_messages=6, preserve_recent=4)
    hist: list[Dict] = [SYSTEM]
    for i in range(120):
        prepared = manager.prepare_sync([*hist, *turn(i)])
        assert not prepared.over_window
        hist = list(prepared.messages)
    done = [e for e in events if isinstance(e, SummarizationEvent)]
    assert len(done) >= 10
    assert all(r.depth <= 3 for r in archive.records("default"))
    assert _ratio([d for d in hist if "chainsum recall" not in str(d["content"])], 2048) < 1


def test_a_short_history_over_the_window_is_rescued_or_said_to_be_over() -> None:
    """Below min_messages the emergency path still runs; when the newest user message itself is over the window
    there is nothing to remove (it is the floor), so the history goes as it is and an event says why."""
    events: list[ManagerEvent] = []
    manager = make(events=events)
    hist = [SYSTEM, {"role": "user", "content": " ".join(f"w{k}" for k in range(8000))}]
    prepared = manager.prepare_sync(hist)
    assert prepared.messages is hist and prepared.over_window
    assert [e.kind for e in events] == ["over_window"]
    assert isinstance(events[0], WindowExceededEvent) and events[0].floor_tokens > 4000
    # four messages whose current turn holds a huge tool output: clipped, under the window
    events.clear()
    huge = [
        SYSTEM,
        {"role": "user", "content": "read the log"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "line of log output\n" * 20000},
    ]
    prepared = make(events=events).prepare_sync(huge)
    assert not prepared.over_window and prepared.tokens_after <= 4000
    assert [e.kind for e in events] == ["summarized"]


def test_nothing_to_do_returns_the_callers_own_list() -> None:
    manager = make(window=1_000_000)
    hist = [SYSTEM, *turn(0)]
    for i in range(1, 30):
        prepared = manager.prepare_sync(hist)
        assert prepared.messages is hist
        assert prepared.event is None and prepared.record is None
        hist.extend(turn(i))  # appended in place: the manager keeps its own copy of the references


def test_masking_only_passes_write_depth_zero_records() -> None:
    """Tool output that masking alone can bring under the budget: no summarizer call, records of depth 0, chained."""
    from manager.manager_support import tool_turn

    archive = MemoryArchive()
    calls: list[str] = []

    def counting(transcript: str) -> str:
        calls.append(transcript)
        return "summary"

    manager = make(window=6000, archive=archive, summarizers=[counting], max_summary_chain_depth=1)
    hist: list[Dict] = [SYSTEM]
    i = 0
    while len(archive.records("default")) < 2:
        hist = list(manager.prepare_sync([*hist, *tool_turn(i, words=600)]).messages)
        i += 1
        assert i < 60
    records = archive.records("default")
    assert [r.depth for r in records] == [0, 0] and calls == []  # masking passes: no summarizer, no depth
    assert records[1].parent_id == records[0].id


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
