"""The ``ratio`` strategy: summarize the oldest share of the history into one message (Strands'
``SummarizingConversationManager``, per ``specs/summarizing-manager-events.md``).

``summary_ratio`` of the non-system messages, oldest first, become one summary; the last ``preserve_recent``
messages are always kept. Choices the spec leaves open, written down:

- The count is ``max(1, int(n * summary_ratio))`` over the n non-system messages, capped so that the last
  ``preserve_recent`` messages and the current turn (the last body pair and what follows it) stay out of it.
- The cut moves to the nearest safe cut (`chainsum.chain.safe_cuts`) at or before that cap, never into the kept
  tail; on a tie the earlier cut wins (summarize less rather than more).
- The summary is one ``system``-form message tagged with its depth. An earlier chainsum summary sitting right
  after the system prompt is summarized again with the rest (Strands folds its previous summary into the next
  one), so summaries do not pile up; the user's own system messages are never in a span.
- Without a budget the strategy acts once (round 0), as Strands does on each overflow; with a budget it acts
  again on the result while the history is over it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..chain import safe_cuts
from ..messages import Message
from ._execute import is_summary_system, summarizable_history
from ._mask import current_turn_start
from ._plan import Plan, PlanContext, Summarize

__all__ = ["RatioStrategy"]


@dataclass(frozen=True, slots=True)
class RatioStrategy:
    """Summarize the oldest `summary_ratio` of the non-system messages into one system-form summary."""

    summary_ratio: float = 0.3
    """Share of the non-system messages to summarize, in [0.1, 0.8]."""
    preserve_recent: int = 10
    """Messages at the end that are always kept."""
    name: str = "ratio"

    def __post_init__(self) -> None:
        if not 0.1 <= self.summary_ratio <= 0.8:
            raise ValueError(f"summary_ratio must be between 0.1 and 0.8, got {self.summary_ratio}")
        if self.preserve_recent < 0:
            raise ValueError(f"preserve_recent must be >= 0, got {self.preserve_recent}")

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        if ctx.budget is None:
            if ctx.round > 0:
                return Plan(note="no budget: one pass only")
        else:
            tokens = ctx.counter.count_messages(messages)
            if tokens <= ctx.budget:
                return Plan(note=f"fits the budget ({tokens} <= {ctx.budget} tokens): nothing to do")
        # the span may run over earlier chainsum summaries and non-system messages, up to the next user system
        start, end_limit = summarizable_history(messages)
        non_system = sum(1 for m in messages if m.role != "system")
        count = max(1, int(non_system * self.summary_ratio))
        cap = min(end_limit, len(messages) - self.preserve_recent, current_turn_start(messages))
        target = min(start + count, cap)
        if target <= start:
            return Plan(note=f"nothing old enough: the last {self.preserve_recent} messages and the current turn stay")
        cuts = safe_cuts(messages)
        best = -1
        for c in range(start + 1, cap + 1):
            if cuts[c] and (best < 0 or abs(c - target) < abs(best - target)):
                best = c
        if best < 0:
            return Plan(note="no safe cut before the kept tail")
        if best - start == 1 and is_summary_system(messages[start]):
            return Plan(note="only the previous summary is old enough; nothing new to summarize")
        reason = (
            f"oldest {best - start} of {non_system} non-system messages (ratio {self.summary_ratio}, target "
            f"{count}, moved to a safe cut); last {self.preserve_recent} kept"
        )
        return Plan((Summarize(start=start, end=best, form="system", reason=reason),), note=reason)
