"""The mask strategy: exact plans, placeholders, clipping, and what it never touches."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chainsum.executor import compact_sync
from chainsum.messages import Message, Text, ToolResult
from chainsum.strategies import MASK_PREFIX, Clip, Mask, MaskStrategy, PlanContext, mask_result, widened_mask
from strategies.strategies_support import CharCounter, agent_history, call, tool

CTX = PlanContext(budget=None, counter=CharCounter())


def test_old_results_are_masked_recent_ones_kept() -> None:
    messages = agent_history(6)  # results at 3, 5, 7, 9, 11, 13; answer at 14
    plan = MaskStrategy(keep_last_turns=2).plan(messages, CTX)
    assert [(s.kind, s.index, s.part) for s in plan.steps] == [("mask", i, 0) for i in (3, 5, 7, 9)]


def test_placeholder_keeps_name_arguments_and_size_and_is_not_masked_again() -> None:
    messages = agent_history(4)
    result = compact_sync(messages, MaskStrategy(keep_last_turns=1), summarizer=None, counter=CharCounter())
    masked = result.messages[3].parts[0]
    assert isinstance(masked, ToolResult)
    original = messages[3].parts[0]
    assert isinstance(original, ToolResult)
    assert masked.content == (
        f'[chainsum: tool output masked: tool=read_file args={{"path": "f0.py"}} original={len(original.text)} bytes]'
    )
    assert masked.call_id == original.call_id
    assert result.summarizer_calls == 0 and result.valid
    assert not MaskStrategy(keep_last_turns=1).plan(result.messages, CTX)


def test_huge_recent_results_are_clipped_but_not_in_the_current_turn() -> None:
    huge = "h" * 30000
    messages = [
        Message.of("user", "go"),
        Message(role="assistant", parts=(call("a"),)),
        tool("a", huge),
        Message(role="assistant", parts=(call("b"),)),
        tool("b", huge),
    ]
    plan = MaskStrategy(keep_last_turns=5).plan(messages, CTX)
    assert plan.steps == (Clip(index=2, part=0, head=4000, tail=2000, reason=plan.steps[0].reason),)
    out = compact_sync(messages, MaskStrategy(keep_last_turns=5), summarizer=None, counter=CharCounter()).messages
    clipped = out[2].parts[0]
    assert isinstance(clipped, ToolResult) and isinstance(clipped.content, str)
    assert clipped.content.startswith("h" * 4000 + "\n[chainsum: clipped 24000 of 30000 characters]\n")
    assert out[3:] == tuple(messages[3:])


def test_small_results_and_summary_pairs_are_left_alone() -> None:
    messages = [
        Message.of("user", "go"),
        Message(role="assistant", parts=(call("a"),)),
        tool("a", "ok"),
        Message(role="assistant", parts=(call("s", name="execute_task_and_return_summary"),)),
        tool("s", "y" * 500, name="execute_task_and_return_summary"),
        Message.of("assistant", "done"),
    ]
    assert not MaskStrategy(keep_last_turns=0).plan(messages, CTX)


def test_with_a_budget_it_masks_oldest_first_only_as_needed() -> None:
    messages = agent_history(6)
    total = CharCounter().count_messages(messages)
    plan = MaskStrategy(keep_last_turns=0).plan(messages, PlanContext(budget=total - 50, counter=CharCounter()))
    assert [s.index for s in plan.steps] == [3]
    assert all(isinstance(s, Mask) for s in plan.steps)


def test_parameters_are_checked() -> None:
    with pytest.raises(ValueError):
        MaskStrategy(clip_chars=100, head=80, tail=40)
    with pytest.raises(ValueError):
        MaskStrategy(keep_last_turns=-1)


def test_result_with_image_is_masked_to_text() -> None:
    from chainsum.messages import Image

    content = (Text(text="t" * 300), Image(url="https://example.com/" + "i" * 300))
    messages = [
        Message.of("user", "go"),
        Message(role="assistant", parts=(call("a"),)),
        Message(role="tool", parts=(ToolResult(call_id="a", name="read_file", content=content),)),
        Message.of("assistant", "done"),
    ]
    plan = MaskStrategy(keep_last_turns=0).plan(messages, CTX)
    assert [(s.kind, s.index) for s in plan.steps] == [("mask", 2)]


def test_placeholder_keeps_the_identifiers_the_output_mentioned() -> None:
    """Tool output holds most of a session's identifiers; the placeholder keeps the most frequent, within bounds."""
    listing = "\n".join(
        ["src/app/orders.py: 3 matches", "src/app/orders.py:41 raise OrderNotFound(order_id)", "ERR-4021 at 12ms"] * 20
        + [f"line {k} of plain filler words" for k in range(200)]
    )
    messages = agent_history(3)
    messages[3] = tool("call_0", listing)
    result = compact_sync(messages, MaskStrategy(keep_last_turns=1), summarizer=None, counter=CharCounter())
    masked = result.messages[3].parts[0]
    assert isinstance(masked, ToolResult) and isinstance(masked.content, str)
    assert masked.content.startswith(MASK_PREFIX)
    mentions = masked.content.split("; mentions: ", 1)[1].rstrip("]").split(", ")
    assert mentions == ["src/app/orders.py", "OrderNotFound", "order_id", "ERR-4021", "12ms"]
    assert "filler" not in mentions and "line" not in mentions  # plain words identify nothing
    assert len(masked.content) < 400  # bounded whatever the output held


def test_placeholder_of_a_small_result_stays_small() -> None:
    """At most half the original goes to identifiers, so masking a small result still saves at least half of it."""
    messages = agent_history(3)
    names = " ".join(f"src/module_{k}.py" for k in range(16))
    messages[3] = tool("call_0", f"see {names} for ERR-1234")
    size = len(messages[3].parts[0].text)  # type: ignore[union-attr]
    result = compact_sync(messages, MaskStrategy(keep_last_turns=1), summarizer=None, counter=CharCounter())
    masked = result.messages[3].parts[0]
    assert isinstance(masked, ToolResult)
    mentions = masked.text.split("; mentions: ", 1)[1].rstrip("]")
    assert mentions.startswith("src/module_0.py") and len(mentions) <= size // 2
    assert "src/module_15.py" not in mentions  # no room left in half the output


def test_a_widened_placeholder_lists_more_identifiers_under_the_same_head() -> None:
    output = ToolResult(call_id="c1", name="grep", content=" ".join(f"src/module_{k}.py" for k in range(40)))
    masked = mask_result(output, None)
    assert isinstance(masked.content, str)
    head, listed = masked.content.split("; mentions: ")
    widened = widened_mask(masked, output, 600 - len(listed))
    assert widened is not None and isinstance(widened.content, str)
    wider_head, wider_listed = widened.content.split("; mentions: ")
    assert wider_head == head and wider_listed.startswith(listed.rstrip("]"))
    assert len(wider_listed) > len(listed) and len(wider_listed) <= 600 + 1
    assert widened.call_id == "c1" and widened.name == "grep"


def test_a_placeholder_is_widened_only_when_that_lists_more() -> None:
    output = ToolResult(call_id="c1", name="grep", content="ERR-1234 " + "plain words only " * 100)
    masked = mask_result(output, None)
    assert widened_mask(masked, output, 2000) is None  # every identifier is listed already
    assert widened_mask(output, output, 2000) is None  # not a placeholder


def test_an_older_recent_result_is_masked_with_a_newer_huge_one_that_is_clipped() -> None:
    """The newest tool output is the last thing to lose (DESIGN invariant 11): in the recent steps only huge output
    is clipped, and an output older than one being clipped is masked with it, never left whole."""
    messages = [
        Message.of("user", "go"),
        Message(role="assistant", parts=(call("a"),)),
        tool("a", "a" * 3000),
        Message(role="assistant", parts=(call("b"),)),
        tool("b", "h" * 30000),
        Message(role="assistant", parts=(call("c"),)),
        tool("c", "c" * 3000),
        Message(role="assistant", parts=(call("d"),)),
        tool("d", "the current turn"),
    ]
    plan = MaskStrategy(keep_last_turns=5).plan(messages, CTX)
    assert [(type(s).__name__, s.index) for s in plan.steps] == [("Mask", 2), ("Clip", 4)]
    # with a budget the oldest go first, so a prefix of them: the clip never comes without the mask before it
    total = CharCounter().count_messages(messages)
    masks_only = MaskStrategy(keep_last_turns=5).plan(messages, replace(CTX, budget=total - 500))
    assert [s.index for s in masks_only.steps] == [2]
