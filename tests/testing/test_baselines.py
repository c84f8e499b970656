"""The truncation baseline: system messages, then the newest messages that fit, never a leading tool result."""

from __future__ import annotations

from chainsum.messages import Message, ToolCall, ToolResult
from chainsum.testing.baselines import truncate
from chainsum.tokens import HeuristicCounter


def test_keeps_the_system_prompt_and_the_newest_messages_that_fit() -> None:
    counter = HeuristicCounter()
    history = [Message.of("system", "Be brief.")]
    for i in range(20):
        history += [Message.of("user", f"question {i} " * 20), Message.of("assistant", f"answer {i} " * 20)]
    budget = counter.count_messages(history) // 3
    out = truncate(history, budget, counter)
    assert out[0] is history[0] and out[-1] is history[-1]
    assert counter.count_messages(out) <= budget
    assert out[1:] == history[len(history) - len(out) + 1 :]  # a contiguous newest part
    assert counter.count_messages(truncate(history, budget + 200, counter)) > counter.count_messages(out)


def test_a_tool_result_cut_from_its_call_is_dropped_too() -> None:
    counter = HeuristicCounter()
    call = Message(role="assistant", parts=(ToolCall(id="c1", name="read", arguments='{"path": "a.py"}'),))
    result = Message(role="tool", parts=(ToolResult(call_id="c1", content="x" * 40),))
    history = [Message.of("user", "read it " * 200), call, result, Message.of("assistant", "done")]
    budget = counter.count_messages(history[2:]) + 1  # room for the result and the answer, not the call
    out = truncate(history, budget, counter)
    assert out == [history[3]]
