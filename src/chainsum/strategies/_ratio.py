"""The ``ratio`` strategy: summarize the oldest share of the history into one message (Strands'
``SummarizingConversationManager``, per ``specs/summarizing-manager-events.md``).

``summary_ratio`` of the non-system messages, oldest first, become one summary; the last ``preserve_recent``
messages are always kept. Choices the spec leaves open, written down:

- The count is ``max(1, int(n * summary_ratio))`` over the n non-system messages, capped so that the last
  ``preserve_recent`` messages and the current turn (the last body pair and what follows it) stay out of it.
- The cut moves to the nearest safe cut (`chainsum.chain.safe_cuts`) at or before that cap, never into the kept
  tail; on a tie the earlier cut wins (summarize less rather than more).
- The summary is one more block of the record message (`chain.record_message`, a user-role record by default,
  not a system message: it holds what tools and users said). Strands folds its previous summary into every next
  one, which raises the depth each time until a depth guard stops summarizing for good; here blocks are folded only
  when they outgrow their share of the budget, and at the depth cap the oldest leave the context for the archive
  (`_record.record_steps`), so the strategy keeps working for ever. The user's own system messages are never
  summarized: a span that reaches over one keeps it verbatim after the record (`_record.Layout.systems`).
- Without a budget the strategy acts once (round 0), as Strands does on each overflow; with a budget it acts
  again on the result while the history is over it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..chain import safe_cuts
from ..messages import Message
from ._plan import Plan, PlanContext
from ._record import layout, record_steps

__all__ = ["RatioStrategy"]

SUMMARY_RATIO = 0.3
"""Length asked of a summary, as a share of the span it replaces (the extractive default's own bound)."""


@dataclass(frozen=True, slots=True)
class RatioStrategy:
    """Summarize the oldest `summary_ratio` of the non-system messages into one system-form summary."""

    summary_ratio: float = 0.3
    """Share of the non-system messages to summarize, in [0.1, 0.8]."""
    preserve_recent: int = 10
    """Messages at the end that are always kept."""
    summary_share: float = 0.25
    """Share of the budget the record's summary blocks may take together (see `_record.record_steps`)."""
    name: str = "ratio"

    def __post_init__(self) -> None:
        if not 0.1 <= self.summary_ratio <= 0.8:
            raise ValueError(f"summary_ratio must be between 0.1 and 0.8, got {self.summary_ratio}")
        if self.preserve_recent < 0:
            raise ValueError(f"preserve_recent must be >= 0, got {self.preserve_recent}")

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        tokens = ctx.counter.count_messages(messages)
        if ctx.budget is None:
            if ctx.round > 0:
                return Plan(note="no budget: one pass only")
        elif tokens <= ctx.budget:
            return Plan(note=f"fits the budget ({tokens} <= {ctx.budget} tokens): nothing to do")
        lay = layout(messages)
        non_system = sum(1 for m in messages if m.role != "system")
        count = max(1, int(non_system * self.summary_ratio))
        cap = min(lay.end, len(messages) - max(self.preserve_recent, ctx.keep_recent))
        target = min(lay.start + count, cap)
        if target <= lay.start:
            return Plan(note=f"nothing old enough: the last {self.preserve_recent} messages and the current turn stay")
        cuts = safe_cuts(messages)
        best = -1
        for c in range(lay.start + 1, cap + 1):
            if cuts[c] and (best < 0 or abs(c - target) < abs(best - target)):
                best = c
        if best < 0 or best - lay.start <= len(lay.keep(lay.start, best)):
            return Plan(note="no safe cut before the kept tail")
        reason = (
            f"oldest {best - lay.start} of {non_system} non-system messages (ratio {self.summary_ratio}, target "
            f"{count}, moved to a safe cut); last {self.preserve_recent} kept"
        )
        budget = ctx.budget if ctx.budget is not None else tokens // 2
        steps, _ = record_steps(
            messages,
            lay,
            best,
            counter=ctx.counter,
            block_budget=max(int(budget * self.summary_share), 200),
            min_block=60,
            max_depth=ctx.max_depth,
            reason=reason,
            # a summary is asked for about a third of what it replaces, at most the blocks' room: asked for the
            # whole room, a summary that honours its length fills it, and the next compaction folds it
            span_tokens=sum(
                ctx.counter.count_message(messages[i]) for i in range(lay.start, best) if i not in lay.kept
            ),
            expected_ratio=SUMMARY_RATIO,
        )
        return Plan(tuple(steps), note=reason)
