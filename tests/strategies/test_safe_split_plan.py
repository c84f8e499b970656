"""`SafeSplitStrategy.plan`: triggers, oversized parts first, one snapshot step, system messages never planned."""

from __future__ import annotations

import pytest

from chainsum.messages import Message, Text, ToolCall, ToolResult
from chainsum.strategies import Plan, PlanContext, Summarize, SummarizePart
from chainsum.strategies._safe_split import SafeSplitConfig, SafeSplitStrategy
from strategies.safe_split_words import COUNTER, a, sys, tool, u, words


def ctx(budget: int | None = None, round: int = 0) -> PlanContext:
    return PlanContext(budget=budget, counter=COUNTER, round=round)


def strategy(threshold: int = 1000, window: int = 100, part: int | None = None) -> SafeSplitStrategy:
    return SafeSplitStrategy(
        SafeSplitConfig(conversational_token_threshold=threshold, summary_window=window, message_token_threshold=part)
    )


def conversation(turns: int, k: int = 5) -> list[Message]:
    out = [sys()]
    for _ in range(turns):
        out += [u(k), a(k)]
    return out


def test_nothing_to_do_under_both_triggers() -> None:
    plan = strategy().plan(conversation(3), ctx())
    assert plan == Plan(plan.steps, plan.note) and not plan
    assert "nothing to do" in plan.note


def test_message_window_trigger_in_the_first_round_only() -> None:
    history = conversation(6)  # 12 conversational messages, 60 tokens: far under the token threshold
    s = strategy(window=4)
    plan = s.plan(history, ctx())
    assert plan.steps == (Summarize(1, 9, "snapshot", plan.steps[0].reason, "context"),)
    assert "12 messages > window" in plan.steps[0].reason
    assert "phase 1" in plan.steps[0].reason
    assert not s.plan(history, ctx(round=1))  # a later round of the same request does not re-summarize


def test_token_trigger_uses_the_configured_threshold_then_the_budget() -> None:
    history = conversation(3, k=20)  # 122 tokens (with the system prompt), 6 conversational messages
    assert not strategy(threshold=1000).plan(history, ctx())
    plan = strategy(threshold=100).plan(history, ctx(round=3))
    assert len(plan.steps) == 1
    step = plan.steps[0]
    assert isinstance(step, Summarize) and step.form == "snapshot" and step.case == "context"
    # the window keeps everything, so phase 1 has no turn start to walk back to; phase 2 takes the first safe cut
    # forward keeping <= 70 tokens (the spec's "any safe split", here mid-turn at an assistant message)
    assert (step.start, step.end) == (1, 4)
    assert "phase 2" in step.reason
    assert "122 tokens > 100" in step.reason
    budget_plan = strategy(threshold=1000).plan(history, ctx(budget=100))
    assert budget_plan.steps == plan.steps


def test_oversized_parts_are_planned_first_and_alone() -> None:
    # tool results and assistant texts only: the system prompt and the human's own words are not rewritten
    big = Message(role="tool", parts=(ToolResult(call_id="c", content=words(60)),))
    history = [sys(words(500)), u(90), a(5, "c"), big, Message.of("assistant", words(10), words(70)), u(), a(), u()]
    plan = strategy(threshold=100).plan(history, ctx())
    assert plan.steps == (
        SummarizePart(3, 0, "tool result of 60 tokens exceeds 50"),
        SummarizePart(4, 1, "text of 70 tokens exceeds 50"),
    )
    assert plan.note == "2 oversized part(s) summarized first"


def test_part_threshold_is_half_the_budget_unless_configured() -> None:
    history = [u(), Message.of("assistant", words(30)), u(), a()]
    assert strategy(threshold=1000).part_steps(history, ctx(budget=50)) == (SummarizePart(1, 0, plan_reason(30, 25)),)
    assert strategy(threshold=1000, part=40).part_steps(history, ctx(budget=50)) == ()


def plan_reason(tokens: int, limit: int) -> str:
    return f"text of {tokens} tokens exceeds {limit}"


def test_current_turn_and_system_messages_are_never_part_summarized() -> None:
    huge_result = tool("c", 900)
    history = [sys(words(900)), u(), Message(role="assistant", parts=(ToolCall(id="c", name="f"),)), huge_result]
    assert strategy(threshold=100).part_steps(history, ctx()) == ()


def test_mid_chain_system_message_is_never_in_the_span() -> None:
    history = [sys(), u(10), a(10), sys("mode: terse"), u(30), a(30), u(5), a(5)]
    plan = strategy(threshold=50, part=1000).plan(history, ctx())
    (step,) = plan.steps
    assert isinstance(step, Summarize)
    assert (step.start, step.end) == (4, 6)  # the bigger system-free run before the cut at 6
    assert all(m.role != "system" for m in history[step.start : step.end])


def test_earlier_run_wins_when_it_is_bigger() -> None:
    history = [sys(), u(40), a(40), sys("mode: terse"), u(1), a(1), u(5), a(5)]
    (step,) = strategy(threshold=50, part=1000).plan(history, ctx()).steps
    assert isinstance(step, Summarize) and (step.start, step.end) == (1, 3)


def test_only_a_previous_snapshot_before_the_cut_is_not_resummarized() -> None:
    snapshot = Message.of("user", "<state_snapshot>" + words(10) + "</state_snapshot>")
    history = [sys(), snapshot, u(5), a(60)]
    plan = strategy(window=1).plan(history, ctx())  # phase 1 cuts at 2: only the snapshot is before it
    assert not plan
    assert "snapshot" in plan.note


def test_plan_does_not_touch_its_input() -> None:
    history = conversation(6)
    before = list(history)
    strategy(window=4).plan(history, ctx())
    assert history == before and all(x is y for x, y in zip(history, before, strict=True))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"conversational_token_threshold": 0},
        {"message_token_threshold": 0},
        {"summary_window": -1},
        {"turn_ratio": 0.9, "largest_ratio": 0.8},
        {"largest_ratio": 1.5},
    ],
)
def test_config_is_checked(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        SafeSplitConfig(**kwargs)  # type: ignore[arg-type]


def test_strategy_shape() -> None:
    s = SafeSplitStrategy(SafeSplitConfig())
    assert s.name == "safe-split"
    assert s.finish([u(), u()])[0].parts == (Text(text=words(5)), Text(text=words(5)))
