"""Properties of the safe-split planner over generated, malformed and noisy histories."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chainsum.chain import safe_cuts
from chainsum.messages import Message
from chainsum.strategies import PlanContext, Summarize, SummarizePart
from chainsum.strategies._safe_split import SafeSplitConfig, SafeSplitStrategy
from chainsum.strategies._safe_split_cut import analyze_tool_pairs, find_safe_split, protected_start, system_prefix
from chainsum.testing import generate_large_chain
from generators import histories, well_formed_histories
from strategies.safe_split_words import COUNTER

thresholds = st.integers(min_value=1, max_value=80)
windows = st.integers(min_value=0, max_value=12)


@given(histories(), thresholds, windows)
def test_split_is_safe_and_never_keeps_a_leading_tool_message(
    history: list[Message], threshold: int, window: int
) -> None:
    decision = find_safe_split(history, COUNTER, threshold=threshold, summary_window=window)
    floor, ceiling = system_prefix(history), protected_start(history)
    if decision.phase == 0:
        assert decision.index == floor
        assert ceiling <= floor or ceiling == len(history)
        return
    assert floor < decision.index <= ceiling  # never before the system prompt, never into the current turn
    assert safe_cuts(history)[decision.index]  # a safe cut always exists (the ceiling), so the choice is safe
    assert history[decision.index].role != "tool"
    orphans = analyze_tool_pairs(history).orphans
    assert not [o for o in orphans if decision.index <= o < ceiling]  # orphans before the current turn go
    assert decision == find_safe_split(history, COUNTER, threshold=threshold, summary_window=window)


@given(histories(), thresholds, windows, st.integers(0, 2))
def test_plans_never_include_system_messages_and_are_deterministic(
    history: list[Message], threshold: int, window: int, round: int
) -> None:
    before = list(history)
    strategy = SafeSplitStrategy(SafeSplitConfig(conversational_token_threshold=threshold, summary_window=window))
    ctx = PlanContext(budget=None, counter=COUNTER, round=round)
    plan = strategy.plan(history, ctx)
    assert history == before and all(x is y for x, y in zip(history, before, strict=True))
    assert plan == strategy.plan(list(history), ctx)
    ceiling = protected_start(history)
    for step in plan.steps:
        if isinstance(step, SummarizePart):
            assert history[step.index].role != "system"
            assert step.index < ceiling
            assert 0 <= step.part < len(history[step.index].parts)
        else:
            assert isinstance(step, Summarize)
            assert step.form == "snapshot" and step.case == "context" and step.context == ()
            assert system_prefix(history) <= step.start < step.end <= ceiling
            assert all(m.role != "system" for m in history[step.start : step.end])
            assert len(plan.steps) == 1
    if any(isinstance(s, SummarizePart) for s in plan.steps):
        assert all(isinstance(s, SummarizePart) for s in plan.steps)


@given(well_formed_histories(), thresholds, windows)
def test_well_formed_histories_keep_whole_pairs(history: list[Message], threshold: int, window: int) -> None:
    decision = find_safe_split(history, COUNTER, threshold=threshold, summary_window=window)
    if decision.phase:
        kept_ids = {c.id for m in history[decision.index :] for c in m.tool_calls}
        for m in history[decision.index :]:
            for r in m.tool_results:
                assert r.call_id in kept_ids


def test_large_generated_chain_reaches_the_budget_in_one_split() -> None:
    history = generate_large_chain(400, seed=3, text_bytes=200)
    total = COUNTER.count_messages(history)
    decision = find_safe_split(history, COUNTER, threshold=total // 4, summary_window=40)
    assert decision.phase in (1, 2, 3)
    assert COUNTER.count_messages(history[decision.index :]) <= total // 4
    assert safe_cuts(history)[decision.index]
