"""The auto strategy: cheapest phase first, as much as the budget needs (masking with headroom), never the current
turn unless over the hard limit."""

from __future__ import annotations

import pytest

from chainsum.chain import is_record_message, record_blocks
from chainsum.executor import compact_sync
from chainsum.messages import Message, ToolResult
from chainsum.strategies import CLIP_MARKER, MASK_PREFIX, AutoStrategy, PlanContext, Summarize
from chainsum.summarize import ExtractiveSummarizer
from chainsum.tokens import HeuristicCounter
from strategies.strategies_support import CharCounter, agent_history, call, chat_history, fixed_summary, tool


def test_fits_means_nothing_to_do() -> None:
    messages = agent_history(3)
    assert not AutoStrategy().plan(messages, PlanContext(budget=10**9, counter=CharCounter()))


def test_masking_comes_first_and_stops_when_enough() -> None:
    messages = agent_history(8, output=2000)
    total = CharCounter().count_messages(messages)
    ctx = PlanContext(budget=total - 100, counter=CharCounter())
    plan = AutoStrategy(keep_last_turns=2, mask_headroom=0).plan(messages, ctx)
    assert [(s.kind, s.index) for s in plan.steps] == [("mask", 3)]


def test_masking_plans_headroom_and_compact_gives_back_what_was_not_needed() -> None:
    """100 tokens over: one mask would do, but `mask_headroom` plans that share of the budget more (estimates of
    what a mask saves can be off); `compact` then undoes masks, newest first, while the result stays within the
    budget, so it lands just under it instead of 15 % below."""
    messages = agent_history(8, output=2000)
    total = CharCounter().count_messages(messages)
    budget = total - 100
    ctx = PlanContext(budget=budget, counter=CharCounter())
    plan = AutoStrategy(keep_last_turns=2, mask_headroom=0.15).plan(messages, ctx)
    minimal_plan = AutoStrategy(keep_last_turns=2, mask_headroom=0).plan(messages, ctx)
    assert [s.kind for s in plan.steps] == ["mask"] * len(plan.steps)
    assert len(plan.steps) > len(minimal_plan.steps) >= 1
    result = compact_sync(
        messages,
        AutoStrategy(keep_last_turns=2, mask_headroom=0.15),
        summarizer=None,
        counter=CharCounter(),
        budget=budget,
    )
    assert budget * 0.85 <= result.tokens_after <= budget
    masked = sum(1 for a, b in zip(messages, result.messages, strict=True) if a != b)
    assert masked == len(minimal_plan.steps)  # what was not needed came back


def huge_current_turn(output: int) -> list[Message]:
    """An agent history whose last step (the current turn: a call and its result) returned `output` characters."""
    messages = agent_history(2, output=200)[:-1]
    messages.append(Message(role="assistant", parts=(call("call_big", args='{"path": "dump.log"}'),)))
    messages.append(tool("call_big", "BEGIN " + "y" * output + " END"))
    return messages


def test_current_turn_is_never_touched_without_a_hard_limit() -> None:
    messages = huge_current_turn(40_000)
    total = CharCounter().count_messages(messages)
    result = compact_sync(messages, AutoStrategy(), summarizer=fixed_summary, counter=CharCounter(), budget=total // 4)
    assert result.messages[-2:] == tuple(messages[-2:])


def test_over_the_hard_limit_the_current_turn_output_is_clipped() -> None:
    """A tool that returned more than the window holds: without a clip every later request would be refused."""
    messages = huge_current_turn(40_000)
    total = CharCounter().count_messages(messages)
    window = total // 2
    result = compact_sync(
        messages,
        AutoStrategy(),
        summarizer=fixed_summary,
        counter=CharCounter(),
        budget=int(window * 0.7),
        hard_limit=window,
    )
    assert result.valid and result.tokens_after <= window
    clipped = result.messages[-1].tool_results[0].text
    assert clipped.startswith("BEGIN ") and clipped.endswith(" END") and CLIP_MARKER in clipped
    assert result.messages[-2] == messages[-2]  # the call itself is kept
    notes = " ".join(p.note for p in result.plans)
    assert "last resort" in notes


def test_under_the_hard_limit_nothing_in_the_current_turn_changes() -> None:
    messages = huge_current_turn(40_000)
    total = CharCounter().count_messages(messages)
    result = compact_sync(
        messages, AutoStrategy(), summarizer=fixed_summary, counter=CharCounter(), budget=total // 4, hard_limit=total
    )
    assert result.messages[-2:] == tuple(messages[-2:])


def test_model_free_auto_never_summarizes() -> None:
    messages = chat_history(12, size=800)
    total = CharCounter().count_messages(messages)
    result = compact_sync(
        messages, AutoStrategy(summarize=False), summarizer=None, counter=CharCounter(), budget=total // 2
    )
    assert not result.changed and result.summarizer_calls == 0


def test_summaries_when_masking_is_not_enough() -> None:
    messages = chat_history(12, size=800)  # no tool output at all: sections are the only way
    total = CharCounter().count_messages(messages)
    result = compact_sync(messages, AutoStrategy(), summarizer=fixed_summary, counter=CharCounter(), budget=total // 2)
    assert result.tokens_after <= total // 2
    kinds = {s.kind for p in result.plans for s in p.steps}
    assert kinds == {"summarize"}
    assert result.messages[-2:] == tuple(messages[-2:])  # the current section's human and answer
    assert result.messages[0] == messages[0]


def test_single_long_agent_turn_keeps_its_task_and_last_pair() -> None:
    """An agent's whole trajectory is one user turn: the steps are summarized, the user's request (the newest user
    message) stays verbatim right after the summary, and the current turn is untouched."""
    messages = agent_history(30, output=600)[:-1]  # ends on a tool result: the last pair is the current turn
    total = CharCounter().count_messages(messages)
    result = compact_sync(
        messages,
        AutoStrategy(keep_last_turns=30),  # masking cannot help
        summarizer=fixed_summary,
        counter=CharCounter(),
        budget=total // 3,
    )
    assert result.tokens_after <= total // 3 and result.valid
    assert result.messages[-2:] == tuple(messages[-2:])
    task = next(m for m in messages if m.role == "user")
    assert result.messages[0] == messages[0] and is_record_message(result.messages[1])
    assert result.messages[2] is task  # kept aside, verbatim, after the record
    steps = [s for p in result.plans for s in p.steps if isinstance(s, Summarize)]
    assert steps and all(s.form == "record" for s in steps)


def test_without_budget_it_targets_half_of_the_start() -> None:
    messages = chat_history(12, size=800)
    total = CharCounter().count_messages(messages)
    result = compact_sync(messages, AutoStrategy(), summarizer=fixed_summary, counter=CharCounter())
    assert result.tokens_after <= total // 2


def test_parameters_are_checked() -> None:
    with pytest.raises(ValueError):
        AutoStrategy(summary_share=0)
    with pytest.raises(ValueError):
        AutoStrategy(default_budget_ratio=1.0)
    with pytest.raises(ValueError):
        AutoStrategy(min_summary_share=1.5)
    with pytest.raises(ValueError):
        AutoStrategy(mask_headroom=1.0)
    with pytest.raises(ValueError):
        AutoStrategy(min_keep_chars=10)


def test_when_masking_cannot_reach_the_budget_the_summarizer_reads_the_tool_output_first() -> None:
    """Masking first would leave the summarizer placeholders; the identifiers in the output would be lost."""
    messages = agent_history(10, output=3000)
    total = CharCounter().count_messages(messages)
    seen: list[str] = []

    def recording(transcript: str) -> str:
        seen.append(transcript)
        return "short summary"

    # 8 protected steps: masking can free two results, not enough; summarizing the pairs can (by estimate)
    result = compact_sync(
        messages, AutoStrategy(keep_last_turns=8), summarizer=recording, counter=CharCounter(), budget=total // 2
    )
    first = next(p for p in result.plans if p.steps)
    kinds = {s.kind for s in first.steps}
    assert "summarize" in kinds and "mask" not in kinds  # (a large step right after the cut may be kept clipped)
    assert seen and any("output 0 xxx" in t for t in seen)  # the real output, not "[chainsum: tool output masked"
    assert not any(MASK_PREFIX in t for t in seen)
    assert result.tokens_after <= total // 2


def test_when_neither_alone_is_enough_one_round_summarizes_and_masks_after_the_cut() -> None:
    """Both are needed: one summary of the oldest steps (the summarizer reads their real output) and masks of the
    old results after the cut, in the same round, so the budget is reached in one round and one call."""
    messages = agent_history(30, output=600)
    total = CharCounter().count_messages(messages)
    result = compact_sync(
        messages, AutoStrategy(keep_last_turns=2), summarizer=fixed_summary, counter=CharCounter(), budget=total // 4
    )
    first = next(p for p in result.plans if p.steps)
    assert {s.kind for s in first.steps} == {"summarize", "mask"}
    cut = next(s.end for s in first.steps if isinstance(s, Summarize))
    assert all(s.index >= cut for s in first.steps if not isinstance(s, Summarize))  # pyright: ignore
    assert result.summarizer_calls == 1 and result.tokens_after <= total // 4 and result.rounds == 1


def test_when_masking_is_enough_no_summarizer_is_called() -> None:
    messages = agent_history(10, output=3000)
    total = CharCounter().count_messages(messages)
    result = compact_sync(
        messages, AutoStrategy(keep_last_turns=2), summarizer=fixed_summary, counter=CharCounter(), budget=total // 2
    )
    assert result.summarizer_calls == 0 and result.tokens_after <= total // 2


def test_a_chat_becomes_one_record_block_that_grows_by_a_block_per_pass() -> None:
    """A chat of many one-exchange sections: one summary call for all of them (not one per section), and a later
    pass adds a block for the messages since, rather than summarizing the first summary again."""
    messages = chat_history(12, size=800)
    total = CharCounter().count_messages(messages)
    result = compact_sync(messages, AutoStrategy(), summarizer=fixed_summary, counter=CharCounter(), budget=total // 3)
    steps = [s for p in result.plans for s in p.steps]
    assert len(steps) == 1 and isinstance(steps[0], Summarize) and steps[0].form == "record"
    assert result.summarizer_calls == 1 and result.tokens_after <= total // 3
    assert result.messages[0] == messages[0] and result.messages[-2:] == tuple(messages[-2:])
    assert result.valid and is_record_message(result.messages[1]) and result.messages[1].role == "user"
    again = compact_sync(
        [*result.messages, *chat_history(4, size=800)[1:]],
        AutoStrategy(),
        summarizer=fixed_summary,
        counter=CharCounter(),
        budget=total // 2,
    )
    blocks = record_blocks(again.messages[1])
    assert blocks is not None and [b.depth for b in blocks] == [1, 1]
    assert sum(1 for m in again.messages if is_record_message(m)) == 1


def test_blocks_fold_when_they_outgrow_their_share_and_drop_at_the_depth_cap() -> None:
    history = chat_history(12, size=800)
    counter = CharCounter()
    depths: list[list[int]] = []
    for round_ in range(8):
        history = [*history, *chat_history(4, size=800)[1:]]
        budget = counter.count_messages(history) // 2
        result = compact_sync(
            history, AutoStrategy(), summarizer=fixed_summary, counter=counter, budget=budget, max_depth=2
        )
        assert result.valid and result.tokens_after <= budget, round_
        history = list(result.messages)
        depths.append([b.depth for b in record_blocks(history[1]) or ()])
    assert all(max(d) <= 2 for d in depths)  # never deeper than the cap
    assert any(0 in d for d in depths) or any(2 in d for d in depths)  # folded or dropped along the way


def test_over_the_hard_limit_without_a_summarizer_old_messages_move_to_the_archive() -> None:
    messages = chat_history(20, size=800)
    total = CharCounter().count_messages(messages)
    result = compact_sync(
        messages,
        AutoStrategy(summarize=False),
        summarizer=None,
        counter=CharCounter(),
        budget=total // 4,
        hard_limit=total // 3,
    )
    assert result.tokens_after <= total // 3 and result.valid and result.summarizer_calls == 0
    blocks = record_blocks(result.messages[1]) or ()
    assert blocks and blocks[0].depth == 0  # a note: those messages are in the archive, unsummarized
    assert result.messages[-2:] == tuple(messages[-2:])


@pytest.mark.slow
def test_a_larger_budget_never_keeps_fewer_tokens() -> None:
    messages = agent_history(12, output=1500)
    counter = CharCounter()
    total = counter.count_messages(messages)
    kept = [
        compact_sync(messages, AutoStrategy(), summarizer=fixed_summary, counter=counter, budget=b).tokens_after
        for b in range(total // 10, total, total // 15)
    ]
    assert kept == sorted(kept)


def test_a_tool_step_too_large_to_keep_right_before_the_cut_is_kept_clipped_and_the_budget_filled() -> None:
    """The summary's cut would fall right after one large tool result (keeping it whole does not fit): the cut moves
    back over it and the result is kept as head and tail, so the history lands near the budget instead of far
    below it (the extractive summary keeps only the identifiers of a result it reads)."""
    chat = [
        Message.of(role, f"{role} turn {i}: we talked about the weather and the garden today, nothing more. " * 3)
        for i in range(8)
        for role in ("user", "assistant")
    ]
    output = "\n".join(f"row {k}: order ORD-{1000 + k} shipped to warehouse W{k % 7} on day {k}" for k in range(220))
    messages = [
        Message.of("system", "You are a helpful shop assistant."),
        *chat,
        Message(role="assistant", parts=(call("c1", "orders", "{}"),)),
        tool("c1", output, "orders"),
        Message.of("assistant", "Here are the orders you asked about; the first one shipped on day 0."),
        Message.of("user", "Thanks. Which warehouse had the most?"),
    ]
    counter = HeuristicCounter()
    budget = counter.count_messages(messages) * 3 // 4
    result = compact_sync(messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=counter, budget=budget)
    assert result.fits and result.valid
    assert result.tokens_after >= 0.85 * budget, (result.tokens_after, budget)
    kept = [p.text for m in result.messages for p in m.parts if isinstance(p, ToolResult)]
    assert len(kept) == 1 and CLIP_MARKER in kept[0]
    assert "ORD-1000" in kept[0] and "ORD-1219" in kept[0]  # head and tail verbatim
    plain = compact_sync(
        messages,
        AutoStrategy(clip_back_below=0.0),
        summarizer=ExtractiveSummarizer(),
        counter=counter,
        budget=budget,
    )
    assert plain.tokens_after < result.tokens_after  # without it, the result is summarized and the budget unfilled


def _one_long_turn(steps: int, output: int, newest: int) -> list[Message]:
    """An agent's single user turn (Claude Code's shape: the whole loop is one turn): `steps` tool steps with
    `output`-character results, then the current step, whose result has `newest` characters."""
    messages = agent_history(steps, output=output)[:-1]
    messages.append(Message(role="assistant", parts=(call("call_new", args='{"path": "new.log"}'),)))
    messages.append(tool("call_new", "BEGIN " + "n" * newest + " END"))
    return messages


def test_a_newest_output_larger_than_the_budget_stays_whole_when_the_window_holds_it() -> None:
    """The current turn alone is over the budget but well inside the window: every older output goes (masked or
    summarized) and the newest stays whole. It used to be clipped first, while older outputs of the same turn
    stayed whole (a Claude Code session at a 60K window: step 15's output clipped, steps 11 to 14 whole)."""
    messages = _one_long_turn(8, 3000, 8000)
    counter = CharCounter()
    newest = counter.count_message(messages[-1])
    hard = counter.count_messages(messages) // 2
    result = compact_sync(
        messages, AutoStrategy(), summarizer=fixed_summary, counter=counter, budget=newest // 2, hard_limit=hard
    )
    assert result.valid and result.tokens_after <= hard
    assert result.messages[-2:] == tuple(messages[-2:])  # the newest output, whole
    older = [p for m in result.messages[:-1] for p in m.parts if isinstance(p, ToolResult)]
    assert all(p.text.startswith(MASK_PREFIX) or "summary" in p.text for p in older)


def test_the_newest_output_is_clipped_last() -> None:
    """A newest output larger than the window: it is clipped (head and tail, marked) only once nothing older is
    left whole, and then to the budget (the room the next turns need, as for what went before it)."""
    messages = _one_long_turn(6, 2000, 60_000)
    counter = CharCounter()
    hard = counter.count_message(messages[-1]) // 2
    result = compact_sync(
        messages, AutoStrategy(), summarizer=fixed_summary, counter=counter, budget=hard // 4, hard_limit=hard
    )
    assert result.valid and result.tokens_after <= hard
    clipped = result.messages[-1].tool_results[0].text
    assert clipped.startswith("BEGIN ") and clipped.endswith(" END") and CLIP_MARKER in clipped
    assert result.tokens_after <= hard // 4 * 1.2
    kept = [p.text for m in result.messages[:-1] for p in m.parts if isinstance(p, ToolResult)]
    assert not [t for t in kept if t.startswith("output ")]  # no older output whole
