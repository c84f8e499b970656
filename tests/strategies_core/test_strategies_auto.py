"""The auto strategy: cheapest phase first, only as much as the budget needs, never the current turn."""

from __future__ import annotations

import pytest

from chainsum.strategies import AutoStrategy, PlanContext, Summarize, compact_sync
from strategies_core.strategies_core_support import CharCounter, agent_history, chat_history, fixed_summary


def test_fits_means_nothing_to_do() -> None:
    messages = agent_history(3)
    assert not AutoStrategy().plan(messages, PlanContext(budget=10**9, counter=CharCounter()))


def test_masking_comes_first_and_stops_when_enough() -> None:
    messages = agent_history(8, output=2000)
    total = CharCounter().count_messages(messages)
    plan = AutoStrategy(keep_last_turns=2).plan(messages, PlanContext(budget=total - 100, counter=CharCounter()))
    assert [(s.kind, s.index) for s in plan.steps] == [("mask", 3)]


def test_summaries_when_masking_is_not_enough() -> None:
    messages = chat_history(12, size=800)  # no tool output at all: sections are the only way
    total = CharCounter().count_messages(messages)
    result = compact_sync(messages, AutoStrategy(), summarizer=fixed_summary, counter=CharCounter(), budget=total // 2)
    assert result.tokens_after <= total // 2
    kinds = {s.kind for p in result.plans for s in p.steps}
    assert kinds == {"summarize"}
    assert result.messages[-2:] == tuple(messages[-2:])  # the current section's human and answer
    assert result.messages[0] == messages[0]


def test_single_long_agent_turn_is_rotated_but_the_last_pair_kept() -> None:
    messages = agent_history(30, output=600)[:-1]  # ends on a tool result: the last pair is the current turn
    total = CharCounter().count_messages(messages)
    result = compact_sync(
        messages,
        AutoStrategy(keep_last_turns=30),  # masking cannot help
        summarizer=fixed_summary,
        counter=CharCounter(),
        budget=total // 3,
    )
    assert result.tokens_after < total
    assert result.messages[-2:] == tuple(messages[-2:])
    steps = [s for p in result.plans for s in p.steps if isinstance(s, Summarize)]
    assert steps and all(s.form == "pair" for s in steps)


def test_without_budget_it_targets_half_of_the_start() -> None:
    messages = chat_history(12, size=800)
    total = CharCounter().count_messages(messages)
    result = compact_sync(messages, AutoStrategy(), summarizer=fixed_summary, counter=CharCounter())
    assert result.tokens_after <= total // 2


def test_parameters_are_checked() -> None:
    with pytest.raises(ValueError):
        AutoStrategy(pair_share=0)
    with pytest.raises(ValueError):
        AutoStrategy(default_budget_ratio=1.0)
    with pytest.raises(ValueError):
        AutoStrategy(keep_sections=0)
