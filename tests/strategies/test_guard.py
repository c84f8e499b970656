"""What is kept verbatim gives way by priority (issue 21, "a compaction that is worth it"): a compaction lands at its
budget, not above the trigger, even when the recent steps a strategy spares or the record beside the current turn
are what holds it over. The older goes first: the record is folded before the recent steps' output is touched, that
output is masked oldest first, and the current turn's never (DESIGN invariant 11)."""

from __future__ import annotations

from dataclasses import replace

from chainsum.chain import RecordBlock, record_message
from chainsum.executor import compact_sync
from chainsum.messages import Message, Text, ToolResult
from chainsum.strategies import (
    CLIP_MARKER,
    MASK_PREFIX,
    AutoStrategy,
    MaskStrategy,
    PlanContext,
    Summarize,
    TailGuard,
    mask_result,
    tail_need,
)
from chainsum.strategies._guard import tail_room, verbatim_tail
from chainsum.strategies._record import (
    BLOCK_OVERHEAD_TOKENS,
    MIN_SUMMARY_TOKENS,
    RECORD_OVERHEAD_TOKENS,
    estimate_margin,
    least_record_tokens,
)
from chainsum.summarize import ExtractiveSummarizer
from strategies.strategies_support import CharCounter, call, tool


def _steps(outputs: list[list[int]]) -> list[Message]:
    """system, the task, then a tool step per entry of `outputs` (the characters of each of its parallel results);
    the last step is the current turn."""
    out = [Message.of("system", "You are a coding agent."), Message.of("user", "Fix the bug.")]
    for k, step in enumerate(outputs):
        ids = [f"call_{k}_{j}" for j in range(len(step))]
        calls = tuple(call(cid, args=f'{{"path": "f{k}_{j}.py"}}') for j, cid in enumerate(ids))
        out.append(Message(role="assistant", parts=(Text(text=f"step {k}"), *calls)))
        out.extend(
            tool(cid, f"output {cid} " + "".join(f"line {i}\n" for i in range(chars // 8)))
            for cid, chars in zip(ids, step, strict=True)
        )
    return out


SESSION = [[400], [6000, 400], [6000], [400], [8000]]
"""Step 1's large output is the first result of a parallel step: a tail of ten messages that cannot hold it starts
between that step's results, so the step can be neither summarized (the cut would split it) nor, among the three
recent steps ``auto`` spares, masked; step 2's as large output is in the tail."""


def _output(message: Message) -> str:
    part = message.parts[0]
    assert isinstance(part, ToolResult)
    return part.text


def _cut(text: str) -> bool:
    return text.startswith(MASK_PREFIX) or CLIP_MARKER in text


def test_the_spared_recent_output_gives_way_oldest_first() -> None:
    """With nothing older left to summarize or mask, step 1's output and the tail hold the history over the budget.
    The oldest output goes (the tail, which cannot hold step 1, starts at the safe cut after it, so the step is
    summarized; the mask strategy below masks it), step 2's as large and newer one stays whole, and so does the
    current turn's, the largest."""
    counter = CharCounter()
    messages = _steps(SESSION)
    budget = counter.count_messages(messages) - 1000  # one of the two large outputs has to go, not both
    guard = TailGuard(AutoStrategy(), preserve_recent=10, name="auto")
    result = compact_sync(
        messages, guard, summarizer=ExtractiveSummarizer(), counter=counter, budget=budget, provider="openai"
    )
    assert result.tokens_after <= budget
    outputs = {m.parts[0].call_id: _output(m) for m in result.messages if m.role == "tool"}  # type: ignore[union-attr]
    assert "call_1_0" not in outputs or _cut(outputs["call_1_0"])
    assert outputs["call_2_0"] == _output(messages[8])  # newer: whole
    assert outputs["call_4_0"] == _output(messages[-1])  # the current turn: whole


def test_nothing_gives_way_under_the_budget_nor_the_current_turn() -> None:
    counter = CharCounter()
    messages = _steps(SESSION)
    guard = TailGuard(MaskStrategy(), preserve_recent=10, name="mask")
    assert not guard.plan(messages, PlanContext(budget=counter.count_messages(messages), counter=counter))
    # over the budget by the current turn alone: every older output goes, the current one stays (only the last
    # resorts past the hard limit clip it)
    result = compact_sync(messages, guard, summarizer=None, counter=counter, budget=1, provider="openai")
    outputs = [_output(m) for m in result.messages if m.role == "tool"]
    assert all(_cut(o) for o in outputs[:-1] if len(o) > 600)
    assert outputs[-1] == _output(messages[-1])


def test_any_strategy_behind_the_guard_gives_way() -> None:
    """The ``mask`` strategy spares the last three steps too: behind the guard, they give way the same."""
    counter = CharCounter()
    messages = _steps(SESSION)
    guard = TailGuard(MaskStrategy(), preserve_recent=10, name="mask")
    budget = counter.count_messages(messages) - 1000
    result = compact_sync(messages, guard, summarizer=None, counter=counter, budget=budget, provider="openai")
    assert result.tokens_after <= budget
    assert _cut(_output(result.messages[5])) and not _cut(_output(result.messages[8]))


def test_the_record_gives_way_beside_a_large_current_turn() -> None:
    """A record that, beside the current turn and the task, leaves no room under the budget is folded with the new
    span into one deeper block, asked for what the budget leaves; with room for it, the span gets a block of its
    own and the record stays as it is."""
    counter = CharCounter()
    record = record_message(
        [RecordBlock(id="b1", depth=1, messages=12, text="Read f1.py and f2.py; tests fail. " * 60)]
    )
    steps = _steps([[2000], [2000], [12000]])
    messages = [steps[0], record, *steps[1:]]
    fixed = sum(counter.count_message(m) for m in (messages[0], messages[2], *messages[-2:]))
    tight = fixed + 600  # the record (about 550 tokens) and a summary beside it do not fit
    plan = AutoStrategy().plan(messages, PlanContext(budget=tight, counter=counter))
    summary = next(s for s in plan.steps if isinstance(s, Summarize))
    assert summary.start == 1  # the record folded in
    roomy = AutoStrategy().plan(messages, PlanContext(budget=counter.count_messages(messages) - 400, counter=counter))
    assert [s.start for s in roomy.steps if isinstance(s, Summarize)] == [2]
    result = compact_sync(
        messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=counter, budget=tight, provider="openai"
    )
    assert result.tokens_after <= tight
    assert _output(result.messages[-1]) == _output(messages[-1])


def _least_budget(base: int) -> int:
    """The least budget that leaves `base` tokens beside the smallest record and the margin, which grow with it."""
    budget = base
    while budget < base + least_record_tokens(budget) + estimate_margin(budget):
        budget += 1
    return budget


def test_tail_need_counts_the_tail_with_its_older_tool_output_masked() -> None:
    """`tail_need`: the system prompt, the smallest record and the plan's margin at that budget, and the newest
    `preserve_recent` messages, the tool output before the current turn counted masked (it gives way first) and the
    current turn's whole (it never does). With every output in the tail counted whole, the guard keeps the tail
    verbatim at that budget, and one message less a token below it."""
    counter = CharCounter()
    messages = _steps(SESSION)
    system = counter.count_message(messages[0])
    tail = messages[-10:]
    masked = [
        replace(m, parts=tuple(mask_result(p, None) if isinstance(p, ToolResult) else p for p in m.parts))
        for m in tail[:-2]
    ]
    need = tail_need(messages, 10, counter)
    assert need == _least_budget(system + counter.count_messages(masked) + counter.count_messages(tail[-2:]))
    assert need >= system + least_record_tokens(need) + estimate_margin(need) + counter.count_messages(masked)
    assert need < _least_budget(system + counter.count_messages(tail)) and counter.count_message(messages[-1]) < need
    # the tail starts at step 0's result: kept whole, it keeps the call too; a token less, it starts at step 1
    whole = _least_budget(system + counter.count_messages(messages[-11:]))
    for budget, kept in ((whole, 10), (whole - 1, 9)):
        ctx = PlanContext(budget=budget, counter=counter)
        assert verbatim_tail(messages, 10, replace(ctx, budget=tail_room(messages, ctx))) == kept
    assert tail_need(messages, 0, counter) == _least_budget(system)
    least = min(MIN_SUMMARY_TOKENS, max(30, need // 20))
    assert least_record_tokens(need) == RECORD_OVERHEAD_TOKENS + BLOCK_OVERHEAD_TOKENS + least
