"""The four phases of `find_safe_split`, each reached by a constructed history, and the tool-pair constraints."""

from __future__ import annotations

from chainsum.chain import safe_cuts
from chainsum.messages import Message, ToolCall, ToolResult
from chainsum.strategies._safe_split_cut import (
    SplitDecision,
    analyze_tool_pairs,
    find_safe_split,
    protected_start,
    system_prefix,
)
from strategies.safe_split_words import COUNTER, a, sys, tool, u


def split(messages: list[Message], threshold: int = 100, window: int = 100) -> SplitDecision:
    return find_safe_split(messages, COUNTER, threshold=threshold, summary_window=window)


def test_phase_1_walks_back_from_the_window_to_a_turn_start() -> None:
    history = [sys(), u(), a(), u(), a(), u(), a(), u(), a()]
    decision = split(history, window=3)  # ideal cut at 6 (an assistant); the turn starts at 5
    assert (decision.index, decision.phase) == (5, 1)
    assert decision.reason.startswith("phase 1:")


def test_phase_1_takes_the_ideal_cut_when_it_starts_a_turn() -> None:
    history = [sys(), u(), a(), u(), a(), u(), a(), u(), a()]
    assert (split(history, window=4).index, split(history, window=4).phase) == (5, 1)


def test_phase_2_searches_forward_when_no_turn_start_fits() -> None:
    # ideal cut at 2 (no turn start at or before it); forward, the first cut keeping <= 70 tokens is 4
    history = [sys(), u(30), a(5), u(5), a(40), a(20), a(10)]
    decision = split(history)
    assert (decision.index, decision.phase) == (4, 2)


def test_phase_3_takes_the_largest_safe_split_under_80_percent() -> None:
    history = [sys(), u(20), a(20), u(5), a(75)]  # nothing keeps <= 70; cutting at 3 keeps exactly 80
    decision = split(history)
    assert (decision.index, decision.phase) == (3, 3)


def test_phase_4_when_even_the_current_turn_is_over_80_percent() -> None:
    history = [sys(), u(20), a(20), u(5), a(90)]
    decision = split(history)
    assert (decision.index, decision.phase) == (4, 4)
    assert "10 over 80" in decision.reason


def test_phase_4_scores_incomplete_calls_and_turn_starts_when_no_strict_cut_exists() -> None:
    # a dangling call at 2 (kept by phases 1-3 only if the cut is <= 2) and an orphan at 4 (must be summarized:
    # the cut is > 4): no strictly safe cut. Every candidate summarizes the dangling call; 6 starts a turn.
    history = [sys(), u(), a(5, "c1"), u(), tool("zz"), a(), u(), a()]
    pairs = analyze_tool_pairs(history)
    assert pairs.orphans == (4,) and pairs.incomplete == (2,)
    decision = split(history, window=3)
    assert (decision.index, decision.phase) == (6, 4)
    assert "summarizes 1 incomplete call" in decision.reason


def test_complete_pair_is_never_split() -> None:
    history = [sys(), u(), a(5, "c1"), tool("c1"), a(), u(), a()]
    decision = split(history, window=4)  # the ideal cut, 3, would separate c1 from its result
    assert decision.index not in (3,)
    assert (decision.index, decision.phase) == (4, 2)
    assert history[decision.index].role != "tool"


def test_parallel_results_stay_with_their_call() -> None:
    history = [sys(), u(), a(5, "c1", "c2"), tool("c1"), tool("c2"), u(), a()]
    for window in range(1, 8):
        decision = split(history, window=window)
        assert decision.index not in (3, 4)


def test_orphaned_result_is_never_kept() -> None:
    history = [sys(), u(), a(), u(), a(), tool("nobody"), u(), a()]
    decision = split(history, window=5)  # phase 1 would pick the turn start at 3, which keeps the orphan
    assert decision.index > 5
    assert (decision.index, decision.phase) == (6, 2)


def test_incomplete_call_is_kept_when_possible() -> None:
    history = [sys(), u(), a(), u(), a(5, "c9"), u(), a()]
    decision = split(history, window=2)  # the ideal cut, 5, would summarize the dangling call at 4
    assert (decision.index, decision.phase) == (3, 1)


def test_results_of_user_calls_pair_with_the_user_message() -> None:
    user_call = Message(role="user", parts=(ToolCall(id="t1", name="toggle"),))
    history = [sys(), u(), a(), user_call, tool("t1"), a()]
    assert analyze_tool_pairs(history).orphans == ()


def test_empty_ids_match_by_name() -> None:
    call = Message(role="assistant", parts=(ToolCall(id="", name="f"), ToolCall(id="", name="g")))
    results = Message(role="tool", parts=(ToolResult(call_id="", name="g"), ToolResult(call_id="", name="f")))
    pairs = analyze_tool_pairs([u(), call, results])
    assert pairs.orphans == () and pairs.incomplete == ()


def test_no_split_before_the_current_turn_or_without_one() -> None:
    assert split([sys(), u(500)]).phase == 0  # the only user message is the current turn
    assert split([sys(), sys()]).phase == 0
    assert split([]).phase == 0
    assert split([tool("x"), tool("y")]).phase == 0


def test_floor_and_ceiling() -> None:
    history = [sys(), sys(), u(), a(5, "c"), tool("c"), u()]
    assert system_prefix(history) == 2
    assert protected_start(history) == 3
    decision = split(history, threshold=1, window=0)
    assert 2 < decision.index <= 3
    assert safe_cuts(history)[decision.index]
