"""Masking old tool calls' long arguments: what is masked, what stays, and that the history stays valid."""

from __future__ import annotations

import json

from chainsum.executor import compact_sync
from chainsum.messages import Message, ToolCall
from chainsum.rules import validate
from chainsum.strategies import ARGUMENT_MASK_PREFIX, Mask, MaskStrategy, PlanContext, mask_call
from chainsum.tokens import HeuristicCounter
from strategies.strategies_support import CharCounter, call, tool

SOURCE = "\n".join(
    f"def handler_{k}(request):\n    return render('page_{k}.html', order='ORD-{k:04d}')" for k in range(80)
)


def write(cid: str, path: str, content: str = SOURCE) -> ToolCall:
    return call(cid, "Write", json.dumps({"file_path": path, "content": content}))


def coding_session(steps: int) -> list[Message]:
    """An agent writing a file and reading the result back, `steps` times."""
    out = [Message.of("system", "You are a coding agent."), Message.of("user", "Write the handlers.")]
    for k in range(steps):
        out += [Message(role="assistant", parts=(write(f"w{k}", f"src/app/handlers_{k}.py"),))]
        out += [tool(f"w{k}", f"File created successfully at: src/app/handlers_{k}.py", "Write")]
    out.append(Message.of("assistant", "All handlers are written."))
    return out


def test_long_string_values_become_placeholders_and_the_rest_stays() -> None:
    masked = mask_call(write("c1", "src/app/handlers.py"))
    args = json.loads(masked.arguments)
    assert args["file_path"] == "src/app/handlers.py"
    assert args["content"].startswith(f"{ARGUMENT_MASK_PREFIX}: {len(SOURCE)} characters; mentions: ")
    assert "page_" in args["content"] or "ORD-" in args["content"]  # identifiers of what was written
    assert len(masked.arguments) < len(SOURCE) // 10
    assert (masked.id, masked.name) == ("c1", "Write")


def test_nested_values_are_masked_and_a_masked_call_is_not_masked_again() -> None:
    nested = call("c1", "MultiEdit", json.dumps({"edits": [{"old": SOURCE, "new": SOURCE + "x"}], "path": "a.py"}))
    once = mask_call(nested)
    edits = json.loads(once.arguments)["edits"]
    assert all(v.startswith(ARGUMENT_MASK_PREFIX) for v in edits[0].values())
    assert mask_call(once) == once


def test_arguments_that_are_not_json_or_hold_nothing_long_are_left_alone() -> None:
    for arguments in ("not json at all " * 100, '"a plain JSON string"', '{"path": "a.py"}'):
        original = call("c1", "Tool", arguments)
        assert mask_call(original) is original


def test_only_calls_before_the_last_tool_using_steps_are_masked() -> None:
    messages = coding_session(5)  # the calls are at 2, 4, 6, 8, 10
    plan = MaskStrategy(keep_last_turns=2).plan(messages, PlanContext(budget=None, counter=CharCounter()))
    masked_calls = [s.index for s in plan.steps if isinstance(s, Mask) and messages[s.index].role == "assistant"]
    assert masked_calls == [2, 4, 6]


def test_a_compacted_coding_session_is_valid_everywhere_and_keeps_what_was_written_where() -> None:
    messages = coding_session(8)
    counter = HeuristicCounter()
    budget = counter.count_messages(messages) // 2
    result = compact_sync(messages, MaskStrategy(), summarizer=None, counter=counter, budget=budget)
    assert result.fits and result.summarizer_calls == 0
    for provider in ("openai", "anthropic", "gemini", "bedrock"):
        assert not validate(result.messages, provider), provider
    calls = [p for m in result.messages for p in m.parts if isinstance(p, ToolCall)]
    assert any(ARGUMENT_MASK_PREFIX in c.arguments for c in calls)
    assert all(json.loads(c.arguments)["file_path"] == f"src/app/handlers_{k}.py" for k, c in enumerate(calls))


def test_a_larger_budget_gives_masked_arguments_back() -> None:
    messages = coding_session(8)
    counter = HeuristicCounter()
    total = counter.count_messages(messages)

    def masked_at(share: float) -> int:
        result = compact_sync(messages, MaskStrategy(), summarizer=None, counter=counter, budget=int(total * share))
        assert result.fits
        return sum(ARGUMENT_MASK_PREFIX in p.arguments for m in result.messages for p in m.tool_calls)

    counts = [masked_at(share) for share in (0.5, 0.65, 0.8, 0.95)]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1], counts
