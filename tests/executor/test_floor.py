"""`budget_floor`: what no compaction removes, and which part alone is over a budget that cannot be reached."""

from __future__ import annotations

from chainsum.executor import budget_floor
from chainsum.messages import Message, ToolCall, ToolResult
from chainsum.strategies import estimate_margin, least_record_tokens
from chainsum.tokens import HeuristicCounter

COUNTER = HeuristicCounter()


def _history(system_words: int, last_words: int) -> list[Message]:
    """A system prompt, two answered turns, a tool step, then the newest user message."""
    call = ToolCall(id="c1", name="lookup", arguments='{"id": "ORD-7731"}')
    return [
        Message.of("system", "rule " * system_words),
        Message.of("user", "Where is my order?"),
        Message.of("assistant", "Let me look."),
        Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=(ToolResult(call_id="c1", name="lookup", content="shipped " * 200),)),
        Message.of("user", "word " * last_words),
    ]


def test_the_floor_is_the_system_prompt_the_newest_user_message_and_the_record_allowance() -> None:
    messages = _history(50, 5)
    floor = budget_floor(messages, COUNTER, 1000)
    assert floor.system == COUNTER.count_messages(messages[:1])
    assert floor.turn == COUNTER.count_messages(messages[-1:])  # the tool step before it is not the current turn
    assert floor.record == least_record_tokens(1000) + estimate_margin(1000)
    assert floor.reachable and floor.shortfall() == ""
    kept = budget_floor(messages, COUNTER, 1000, keep_pair=True)  # below a hard limit the step stays
    assert kept.turn == COUNTER.count_messages(messages[3:])


def test_an_agent_s_current_turn_is_its_task_and_its_last_step() -> None:
    messages = _history(50, 5)[:-1]  # ends on the tool result: the step is the current turn, the task stays
    floor = budget_floor(messages, COUNTER, 1000)
    assert floor.turn == COUNTER.count_messages([*messages[3:], messages[1]])


def test_the_shortfall_names_the_part_that_alone_is_over() -> None:
    big_system = budget_floor(_history(800, 5), COUNTER, 300)
    assert big_system.shortfall().startswith("the system prompt alone is ")
    big_turn = budget_floor(_history(5, 800), COUNTER, 300)
    assert big_turn.shortfall().startswith("the current turn alone ")
    both = _history(120, 120)
    together = budget_floor(both, COUNTER, COUNTER.count_messages([both[0], both[-1]]) - 1)
    assert "together are over" in together.shortfall()
    tight = budget_floor(both, COUNTER, COUNTER.count_messages([both[0], both[-1]]) + 20)
    assert not tight.reachable and "smallest summary record needs" in tight.shortfall()
