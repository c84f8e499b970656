"""The ratio strategy: exact plans on hand-written histories."""

from __future__ import annotations

import pytest

from chainsum.chain import is_record_message, record_blocks
from chainsum.executor import compact_sync
from chainsum.strategies import PlanContext, RatioStrategy, Summarize
from strategies.strategies_support import CharCounter, agent_history, chat_history, fixed_summary

CTX = PlanContext(budget=None, counter=CharCounter())


def test_chat_history_summarizes_the_oldest_share() -> None:
    messages = chat_history(10)  # system + 20
    plan = RatioStrategy().plan(messages, CTX)
    assert [(s.start, s.end, s.form) for s in plan.steps if isinstance(s, Summarize)] == [(1, 7, "record")]


def test_cut_moves_to_the_nearest_safe_cut_earlier_on_a_tie() -> None:
    messages = agent_history(10)  # sys, user, 10 x (assistant, tool), answer: 23 messages, 22 non-system
    plan = RatioStrategy().plan(messages, CTX)
    # target 1 + int(22 * 0.3) = 7 is a tool result; 6 and 8 are equally near, the earlier wins
    assert [(s.start, s.end) for s in plan.steps if isinstance(s, Summarize)] == [(1, 6)]


def test_preserve_recent_caps_the_span() -> None:
    messages = chat_history(10)
    plan = RatioStrategy(summary_ratio=0.8, preserve_recent=15).plan(messages, CTX)
    assert [(s.start, s.end) for s in plan.steps if isinstance(s, Summarize)] == [(1, 6)]
    assert not RatioStrategy(preserve_recent=30).plan(messages, CTX)


def test_budget_fits_means_nothing_to_do_and_no_budget_means_one_round() -> None:
    messages = chat_history(10)
    assert not RatioStrategy().plan(messages, PlanContext(budget=10**9, counter=CharCounter()))
    assert not RatioStrategy().plan(messages, PlanContext(budget=None, counter=CharCounter(), round=1))


@pytest.mark.parametrize("ratio", [0.05, 0.81, 1.0])
def test_ratio_out_of_range_is_rejected(ratio: float) -> None:
    with pytest.raises(ValueError, match="summary_ratio"):
        RatioStrategy(summary_ratio=ratio)


def test_summary_is_one_record_block_after_the_prompt_and_the_next_adds_a_block() -> None:
    messages = chat_history(12)
    # the record's layout with a summary of fixed length: unchecked (the check would fill the first block to its
    # length target, which is all the blocks' room, and the second compaction would fold it instead)
    first = compact_sync(
        messages, RatioStrategy(), summarizer=fixed_summary, counter=CharCounter(), check_summaries=False
    )
    out = first.messages
    assert out[0] == messages[0]
    assert out[1].role == "user" and is_record_message(out[1])  # a record, not a system message
    assert [b.depth for b in record_blocks(out[1]) or ()] == [1]
    assert out[-10:] == tuple(messages[-10:])
    second = compact_sync(out, RatioStrategy(), summarizer=fixed_summary, counter=CharCounter(), check_summaries=False)
    records = [m for m in second.messages if is_record_message(m)]
    assert len(records) == 1 and [b.depth for b in record_blocks(records[0]) or ()] == [1, 1]


def test_summary_role_system_is_available() -> None:
    messages = chat_history(12)
    out = compact_sync(
        messages, RatioStrategy(), summarizer=fixed_summary, counter=CharCounter(), summary_role="system"
    ).messages
    assert out[1].role == "system" and is_record_message(out[1])
