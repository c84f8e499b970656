"""Strategies by name, and `TailGuard`, which keeps any strategy's plans out of the verbatim tail.

`STRATEGIES` is the one table of strategy names: the CLI's ``--strategy``, the manager's ``strategy`` setting and
``SUMMARIZATION_STRATEGY`` all read it, so a name means the same strategy everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast

from ..chain import current_turn_start, is_record_message, newest_turn_start, safe_cuts
from ..messages import Message, ToolCall, ToolResult
from ..tokens import TokenCounter
from ._auto import AutoStrategy
from ._mask import MaskStrategy, mask_result
from ._plan import Clip, DropBlocks, Evict, Mask, Plan, PlanContext, Step, Strategy, Summarize
from ._ratio import RatioStrategy
from ._record import (
    BLOCK_OVERHEAD_TOKENS,
    MIN_SUMMARY_TOKENS,
    RECORD_OVERHEAD_TOKENS,
    estimate_margin,
    least_record_tokens,
)
from ._safe_split import SafeSplitStrategy
from ._sections import SectionsStrategy

__all__ = ["STRATEGIES", "StrategyOptions", "TailGuard", "strategy_named", "tail_need"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StrategyOptions:
    """The settings a named strategy is built with (the manager fills them from `ManagerConfig`)."""

    summary_ratio: float = 0.3
    """``ratio``: the share of messages summarized at once."""
    min_summary_share: float = 0.0
    """``auto``: the least share of the summarizable messages each new summary covers (0: land at the budget, as the
    CLI does; the manager passes ``summary_ratio``, so summaries come less often)."""
    preserve_recent: int = 10
    """``ratio``: the messages always kept."""
    summarize: bool = True
    """False: ``auto`` without summaries (masking and the last resorts), whatever name was asked for."""


STRATEGIES: dict[str, Callable[[StrategyOptions], Strategy]] = {
    "auto": lambda o: AutoStrategy(min_summary_share=o.min_summary_share, summarize=o.summarize),
    "sections": lambda o: SectionsStrategy(),
    "safe-split": lambda o: SafeSplitStrategy(),
    "ratio": lambda o: RatioStrategy(summary_ratio=o.summary_ratio, preserve_recent=o.preserve_recent),
    "mask": lambda o: MaskStrategy(),
}
"""Every strategy name, in the order ``--help`` lists them, with how it is built."""


def strategy_named(name: str, options: StrategyOptions | None = None) -> Strategy:
    """The strategy called `name` (ValueError listing the names when there is none); with ``summarize=False`` in
    `options`, ``auto`` without its summaries whatever the name."""
    options = options or StrategyOptions()
    if not options.summarize:
        return AutoStrategy(summarize=False)
    try:
        factory = STRATEGIES[name]
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; strategies: {', '.join(STRATEGIES)}") from None
    return factory(options)


@dataclass(frozen=True, slots=True)
class TailGuard:
    """`inner`, except that no step reaches into the last `preserve_recent` messages: a summarized span ending
    inside the tail is shortened to the nearest safe cut before it (dropped when nothing is left), a part edit
    inside the tail is dropped, except a mask or clip planned while the history is over `PlanContext.hard_limit`
    (the window: keeping the tail verbatim would make the request fail; both are archived and reversible), and an
    eviction, which only happens then. A mask or clip after a summary it shortened or left out goes too (it was
    planned with the messages now kept verbatim summarized, and would cut newer output while they stay whole).
    `finish` (safe-split's post-processing) passes through.

    The tail gives way, newest message last, when it is larger than the budget less what stays beside it anyway, the
    leading system messages and the shortest summary of the rest (`verbatim_tail`, `tail_room`): kept whole it would
    leave the compaction over its target whatever is done before it (a Codex session at a 40K window kept
    five tool steps, 35.8-38.7K tokens, above the 32K trigger, and compacted on every request from the 6th on). The
    messages it gives up are planned like any older ones, cheapest step first (their tool output masked before
    anything is summarized), so a compaction lands at its budget and leaves the room up to the trigger for the
    next steps.

    When the guarded plan is empty and the history is still over the budget (the tail fits its room, but not with
    the recent steps the strategy spares beside it, as ``auto`` spares three), the tool output kept verbatim gives way
    too: masked oldest first as far as the budget needs, every output before the current turn a candidate, the
    current turn's never (`_give_way`). The executor plans again after each round, so this comes only once the
    strategy has summarized and masked all it would: the older work goes before the newer."""

    inner: Strategy
    preserve_recent: int
    name: str

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        tokens = ctx.counter.count_messages(messages)
        over_hard = ctx.hard_limit is not None and tokens > ctx.hard_limit
        # The pair before a newest user message gives way only where the budget is the limit (no window above it,
        # as ``chainsum compact`` without --hard-limit), or past the window: below a window, a live session's
        # request over its target still fits, and the step the user answers stays readable.
        binds = ctx.hard_limit is None or over_hard
        turn = _pair_must_give_way(messages, ctx) if binds and tokens > (ctx.budget or tokens) else None
        if turn is not None:  # known before anything is planned: one summary then covers the pair too
            ctx = replace(ctx, turn_start=turn)
        keep = verbatim_tail(messages, self.preserve_recent, replace(ctx, budget=tail_room(messages, ctx)))
        plan = self._guarded(messages, ctx, keep, over_hard)
        if turn is not None and plan:
            plan = replace(plan, turn_start=turn, note=f"{plan.note}; {_PAIR_GIVES_WAY}")
        if plan or ctx.budget is None or tokens <= ctx.budget:
            return plan
        given = _give_way(messages, ctx, plan.note)
        if given:
            return replace(given, turn_start=turn) if turn is not None else given
        # Nothing left to mask and still over the budget: the tail was kept on estimates (a record or a summary
        # longer than planned), so it gives way, its oldest message first, until the strategy has something to do.
        # tau-bench airline run 132 at a budget of 1,939 kept its last tool step and came out 81 tokens over with
        # nothing planned in the second round.
        for smaller in range(keep - 1, -1, -1):
            shorter = self._guarded(messages, ctx, smaller, over_hard)
            if shorter:  # planned with the pair giving way when `turn` is set: marked so, as above
                return replace(
                    shorter, turn_start=turn, note=f"{shorter.note}; the tail gives way: over the budget with it"
                )
        return (self._pair_gives_way(messages, ctx, over_hard) if binds else Plan()) or given

    def _pair_gives_way(self, messages: Sequence[Message], ctx: PlanContext, over_hard: bool) -> Plan:
        """The last resort where the budget is the limit: with a user message after the last body pair, the pair
        gives way too, its tool output masked first (`_give_way`), then planned by the strategy like any older
        message, so that what stays whatever is done is the system prompt and the newest user message with what
        follows it (`chain.newest_turn_start`), as DESIGN invariant 8 reads. tau-bench airline run 3 with its five
        reservation look-ups made one parallel step right before a short user message (``tests/corpora_support.py``,
        `parallel_step_history`) came out of ``chainsum compact --budget 3000`` at 3,325 tokens, the step whole.
        Empty when no user message follows the pair."""
        turn = newest_turn_start(messages)
        if turn <= current_turn_start(messages) or ctx.turn_start is not None:
            return Plan()
        relaxed = replace(ctx, keep_recent=0, turn_start=turn)
        plan = _give_way(messages, relaxed, "")
        if not plan:
            plan = self._guarded(messages, relaxed, 0, over_hard)
        return replace(plan, turn_start=turn, note=f"{plan.note}; {_PAIR_GIVES_WAY}") if plan else Plan()

    def _guarded(self, messages: Sequence[Message], ctx: PlanContext, tail: int, over_hard: bool) -> Plan:
        """The inner plan with what reaches into the last `tail` messages taken out (see the class docstring)."""
        plan = self.inner.plan(messages, replace(ctx, keep_recent=0 if over_hard else tail))
        limit = len(messages) - tail
        if not plan or all(_end(s) <= limit for s in plan.steps):
            return plan
        cuts = safe_cuts(messages)
        steps: list[Step] = []
        shortened: int | None = None  # where the first summary cut short (or left out) by the tail now ends
        for step in plan.steps:
            if isinstance(step, Summarize):
                end = min(step.end, limit)
                while end > step.start and not cuts[end]:
                    end -= 1
                kept = tuple(k for k in step.keep if k < end)
                if end < step.end:
                    shortened = min(end if shortened is None else shortened, end)
                if end - step.start <= len(kept):
                    shortened = min(step.start if shortened is None else shortened, step.start)
                    continue  # nothing left to summarize besides what must stay
                if end < step.end:
                    span = sum(ctx.counter.count_message(messages[i]) for i in range(step.start, end) if i not in kept)
                    if span <= MIN_SUMMARY_TOKENS + BLOCK_OVERHEAD_TOKENS + _framing(messages, step):
                        shortened = min(step.start if shortened is None else shortened, step.start)
                        continue  # what is left is too small for its summary to be any smaller: no call for it
                    # a shorter span: its excerpt (of messages now kept verbatim) goes
                    step = replace(step, end=end, keep=kept, excerpt_from=None, excerpt_tokens=0)
                steps.append(step)
            elif isinstance(step, Evict | DropBlocks) or _end(step) <= limit:
                steps.append(step)
            elif over_hard and isinstance(step, Mask | Clip):
                steps.append(step)
        if shortened is not None:
            # The masks and clips after a summary that the tail cut short or left out were planned with the messages
            # it no longer covers summarized: kept whole now, they are older than those edits, and the newest tool
            # output is the last thing to lose (DESIGN invariant 11). The next round plans again.
            steps = [s for s in steps if not (isinstance(s, Mask | Clip) and s.index >= shortened)]
        note = f"{plan.note}; the last {tail} messages kept verbatim"
        return Plan(tuple(steps), note=note)

    def finish(self, messages: Sequence[Message]) -> Sequence[Message]:
        inner_finish = getattr(self.inner, "finish", None)
        if callable(inner_finish):
            return cast("Sequence[Message]", inner_finish(messages))
        return messages


_PAIR_GIVES_WAY = "the pair before the newest user message gives way: over the budget with it"


def _pair_must_give_way(messages: Sequence[Message], ctx: PlanContext) -> int | None:
    """`chain.newest_turn_start` when a user message follows the last body pair and the pair, with what stays
    beside it whatever is planned (the leading system messages, the newest user message and what follows it, the
    smallest record and the margin: `_beside_tail`), is over the budget; None otherwise. Planned with the pair
    protected, the summary of everything older came out over the budget by the pair, and the next round could only
    fold it deeper (tau-bench airline run 1 at 1,433 tokens: 1,441 after a 71-token summary beside a 36-token
    answer)."""
    if ctx.budget is None or ctx.turn_start is not None:
        return None
    turn = newest_turn_start(messages)
    pair = current_turn_start(messages)
    if turn <= pair:
        return None
    head, beside = _beside_tail(messages, ctx.counter, ctx.budget)
    stays = [m for m in messages[head:pair] if m.role == "system"] + list(messages[max(head, pair) :])
    return turn if beside + ctx.counter.count_messages(stays) > ctx.budget else None


_GIVING_WAY = MaskStrategy(keep_last_turns=0)
"""How the kept tool output gives way (`_give_way`): the ``mask`` strategy with no recent step spared."""


def _give_way(messages: Sequence[Message], ctx: PlanContext, note: str) -> Plan:
    """The masks that bring a history the guarded strategy left over the budget, with nothing more it would do,
    down to it: the tool output it kept verbatim (in the tail, or in the recent steps it spares) masked oldest
    first, as far as the budget needs, the current turn never (only the last resorts past the hard limit clip it).
    A seed-81 session at a 12K window kept a 4.4K-token output of the fourth-last step whole and compacted to 10,277
    tokens, over the 9,600 trigger, so the next request compacted again. The executor's `refill` then gives back,
    newest first, what the budget has room for, the last of it as head and tail with the clip marker, so an output
    is cut only as far as the room needs."""
    masks = _GIVING_WAY.plan(messages, ctx)
    why = "kept verbatim so far; given way, oldest first: the history is over the budget with nothing else to do"
    steps = tuple(
        replace(s, reason=f"{_what(messages, s)} {why}") if isinstance(s, Mask | Clip) else s for s in masks.steps
    )
    return Plan(steps, note=f"{note}; the kept tool output gives way: {masks.note}" if note else masks.note)


def _what(messages: Sequence[Message], step: Mask | Clip) -> str:
    part = messages[step.index].parts[step.part]
    return "tool call arguments" if isinstance(part, ToolCall) else "tool output"


def verbatim_tail(messages: Sequence[Message], preserve_recent: int, ctx: PlanContext) -> int:
    """How many of the newest messages stay verbatim: `preserve_recent`, fewer when those alone are over
    `ctx.budget` (the most of them that fit it, the newest first; at least the newest message, which the strategies
    protect anyway as the current turn). A tail that starts at a tool result keeps the step that made the call too
    (no summary may split them), so when that step does not fit beside it the tail starts at the safe cut after
    it instead: a 297-token generated history at a budget of 296 kept a 55-token step outside its counted tail,
    and its summary could gain nothing."""
    keep = min(preserve_recent, len(messages))
    if ctx.budget is None or keep == 0:
        return keep
    total = 0
    cuts = safe_cuts(messages)
    for k in range(1, keep + 1):
        total += ctx.counter.count_message(messages[-k])
        if total > ctx.budget:
            # the tail starts at a safe cut: one starting at a tool result kept the step that made the call too (a
            # summary's span ends at a safe cut), which was counted out of the tail for not fitting
            k -= 1
            while k > 1 and not cuts[len(messages) - k]:
                k -= 1
            return max(1, k)
    start = len(messages) - keep
    if not cuts[start]:  # the whole tail fits, but starts at a tool result: the step that made the call stays too
        first = start
        while first > 0 and not cuts[first]:
            first -= 1
        if total + sum(ctx.counter.count_message(m) for m in messages[first:start]) > ctx.budget:
            while keep > 1 and not cuts[len(messages) - keep]:
                keep -= 1
    return keep


def tail_room(messages: Sequence[Message], ctx: PlanContext) -> int | None:
    """What of `ctx.budget` the verbatim tail may take: the budget less what stays beside the tail whatever is
    planned, the leading system messages (no plan removes them), the record of everything older (at its smallest:
    `least_record_tokens`, the record message's framing, one block and the shortest summary asked for at this
    budget) and the margin a plan leaves for its estimates (`estimate_margin`). None without a budget.

    Given the whole budget, the tail was kept whenever it fit by itself: ``chainsum compact --budget 500`` on the
    support example kept the last 8 messages (477 tokens) and came out at 632 tokens with the system prompt and the
    summary, over the budget whatever was summarized. Without the record's framing and the margin (45 and 5 tokens
    and a hundredth of the budget), the tail took room the record needed: ``--budget 1789`` on tau-bench airline
    run 36 kept 9 messages, asked the summary for 89 tokens where 27 were left, and came out at 1,828 tokens."""
    if ctx.budget is None:
        return None
    return max(0, ctx.budget - _beside_tail(messages, ctx.counter, ctx.budget)[1])


def _beside_tail(messages: Sequence[Message], counter: TokenCounter, budget: int) -> tuple[int, int]:
    """(how many leading system messages, the tokens that stay beside the tail at `budget` whatever is planned:
    those messages, the smallest record and the plan's margin)."""
    head = 0
    while head < len(messages) - 1 and messages[head].role == "system":
        head += 1
    systems = sum(counter.count_message(m) for m in messages[:head])
    return head, systems + least_record_tokens(budget) + estimate_margin(budget)


def tail_need(messages: Sequence[Message], preserve_recent: int, counter: TokenCounter) -> int:
    """The least budget at which `TailGuard` keeps the newest `preserve_recent` messages of `messages`, their tool
    output before the current turn masked (what gives way first when they do not all fit, before any of them is
    summarized): what `tail_room` takes off the budget (the leading system messages, the smallest record, the
    margin, which grow with the budget) plus that tail. A caller that chose a deeper budget than its configured one
    (the manager's cache-aware reset) raises its budget to this, up to the configured one, so the deeper choice
    summarizes older work, not the recent messages the configuration keeps (their old tool output aside: counted
    whole, a generated agent session at 16K compacted no deeper than with the configured reset)."""
    head, _ = _beside_tail(messages, counter, 0)
    keep = min(preserve_recent, len(messages) - head)
    current = current_turn_start(messages)
    tail = 0
    for i in range(len(messages) - keep, len(messages)):
        m = messages[i]
        if i < current and any(isinstance(p, ToolResult) for p in m.parts):
            m = replace(m, parts=tuple(mask_result(p, None) if isinstance(p, ToolResult) else p for p in m.parts))
        tail += counter.count_message(m)
    base = sum(counter.count_message(m) for m in messages[:head]) + tail
    need = base
    for _ in range(16):  # the record and the margin grow with the budget (far slower than it): the least fixed point
        grown = base + least_record_tokens(need) + estimate_margin(need)
        if grown <= need:
            break
        need = grown
    return need


def _framing(messages: Sequence[Message], step: Summarize) -> int:
    """The record's framing a summary pays out of its span: all of it where the record is written anew (the span
    folds the record in, or there is none before it), nothing where the summary is one more block of a record that
    stays. A shortened fold of a 115-token record and one 6-token message was summarized into a 127-token record,
    and the executor threw it away (`tests/manager/test_invariants.py`)."""
    if step.form != "record" or any(is_record_message(m) for m in messages[: step.start]):
        return 0
    return RECORD_OVERHEAD_TOKENS


def _end(step: Step) -> int:
    return step.end if isinstance(step, Summarize | Evict) else step.index + 1
