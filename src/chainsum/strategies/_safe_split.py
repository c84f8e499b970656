"""The safe-split strategy (``specs/history-safe-split.md``) as a planner.

Each round it looks at the history and plans one of two things, never both (steps must not overlap, and the
spec compresses oversized parts *before* it measures the history):

1. message-level summarization: a `SummarizePart` for every tool result or assistant text part over
   ``message_token_threshold`` (default half the conversational threshold), outside system messages and the
   current turn;
2. otherwise, when triggered (tokens over the threshold, or more than ``summary_window`` conversational
   messages), one ``Summarize(form="snapshot", case="context")`` over the oldest part, up to the cut that
   `find_safe_split` chooses with the spec's four phases.

The executor renders the span, runs the chunked map-reduce with consolidation into one ``<state_snapshot>``,
builds the context-restoration message, asks again, and at the end calls `SafeSplitStrategy.finish` (the spec's
role alternation, `ensure_alternating_roles`).

Choices where the spec is open:

- The threshold is ``ctx.budget`` when the caller gives one, else ``conversational_token_threshold``.
- The message window counts non-system messages and applies in round 0 only: the window is a per-request policy,
  and in a later round of the same request it would fire again on the fresh snapshot plus the kept part (phase 1
  may keep a little more than the window to reach a turn start) and summarize the summary: thrash (design
  problem 4). Later rounds act only while the history is over the token threshold.
- System messages are never in a span. The span starts after the leading system messages; a system message in
  the middle of the chain splits the region before the cut into system-free runs, and the span is the run with the
  most tokens (ties: the later one). The system message stays where it is, verbatim; the other runs stay too and
  are candidates in the next round if the history is still too big. One span per plan keeps the spec's single
  ``<state_snapshot>``.
- A plan that would only re-summarize one previous snapshot message is not made (nothing would be gained).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..messages import Message, Text, ToolResult
from ._plan import Plan, PlanContext, Step, Strategy, Summarize, SummarizePart
from ._safe_split_cut import SplitDecision, find_safe_split, protected_start, system_prefix
from ._safe_split_roles import ensure_alternating_roles

__all__ = ["SafeSplitConfig", "SafeSplitStrategy"]

logger = logging.getLogger(__name__)

SNAPSHOT_TAG = "<state_snapshot>"


@dataclass(frozen=True, slots=True, kw_only=True)
class SafeSplitConfig:
    """The spec's knobs (zrb's ``ZRB_LLM_*`` settings), checked on construction."""

    conversational_token_threshold: int = 100_000
    """Tokens above which the oldest part is summarized (overridden by ``PlanContext.budget``)."""
    message_token_threshold: int | None = None
    """Tokens above which one part is summarized on its own; None: half the conversational threshold in effect."""
    summary_window: int = 100
    """How many recent messages the split ideally keeps; more non-system messages than this triggers a split."""
    turn_ratio: float = 0.7
    """Phases 1 and 2 keep at most this share of the threshold."""
    largest_ratio: float = 0.8
    """Phase 3 keeps at most this share of the threshold (phase 4 scores the overshoot above it)."""

    def __post_init__(self) -> None:
        if self.conversational_token_threshold <= 0:
            raise ValueError("conversational_token_threshold must be positive")
        if self.message_token_threshold is not None and self.message_token_threshold <= 0:
            raise ValueError("message_token_threshold must be positive")
        if self.summary_window < 0:
            raise ValueError("summary_window must not be negative")
        if not 0 < self.turn_ratio <= self.largest_ratio <= 1:
            raise ValueError("ratios must satisfy 0 < turn_ratio <= largest_ratio <= 1")


def _part_text(message: Message, part: object) -> str | None:
    """The text of a part the spec compresses on its own: tool results (``ToolReturnPart``) and the model's own
    texts (``TextPart``, a response part). What the human wrote is never rewritten part by part: it is the
    request itself, and it is summarized (with everything else) only by the conversation-level split."""
    if isinstance(part, ToolResult):
        return part.text
    if isinstance(part, Text) and message.role == "assistant":
        return part.text
    return None


def _is_snapshot(message: Message) -> bool:
    return SNAPSHOT_TAG in message.text


@dataclass(frozen=True, slots=True)
class SafeSplitStrategy:
    """The safe-split planner; see the module docstring. Deterministic and pure."""

    config: SafeSplitConfig = SafeSplitConfig()
    name = "safe-split"  # a class attribute, not a field: the `Strategy` protocol wants a writable `name`

    def threshold(self, ctx: PlanContext) -> int:
        """The conversational threshold in effect: the caller's budget, else the configured one."""
        return ctx.budget if ctx.budget is not None else self.config.conversational_token_threshold

    def part_steps(self, messages: Sequence[Message], ctx: PlanContext) -> tuple[SummarizePart, ...]:
        """Oversized tool results and assistant texts, oldest first, outside system messages and the current turn."""
        limit = self.config.message_token_threshold or max(1, self.threshold(ctx) // 2)
        stop = protected_start(messages)
        steps: list[SummarizePart] = []
        for i, message in enumerate(messages[:stop]):
            if message.role == "system":
                continue
            for p, part in enumerate(message.parts):
                text = _part_text(message, part)
                if text is None:
                    continue
                tokens = ctx.counter.count_text(text)
                if tokens > limit:
                    kind = "tool result" if isinstance(part, ToolResult) else "text"
                    steps.append(SummarizePart(i, p, f"{kind} of {tokens} tokens exceeds {limit}"))
        return tuple(steps)

    def split(self, messages: Sequence[Message], ctx: PlanContext) -> SplitDecision:
        """The cut `find_safe_split` chooses with this configuration (for dry runs and tests)."""
        return find_safe_split(
            messages,
            ctx.counter,
            threshold=self.threshold(ctx),
            summary_window=self.config.summary_window,
            turn_ratio=self.config.turn_ratio,
            largest_ratio=self.config.largest_ratio,
        )

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        parts = self.part_steps(messages, ctx)
        if parts:
            logger.debug("parts=<%d> | oversized parts planned", len(parts))
            return Plan(parts, note=f"{len(parts)} oversized part(s) summarized first")

        threshold = self.threshold(ctx)
        total = ctx.counter.count_messages(messages)
        conversational = sum(1 for m in messages if m.role != "system")
        by_tokens = total > threshold
        by_window = ctx.round == 0 and conversational > self.config.summary_window
        if not (by_tokens or by_window):
            return Plan(note=f"{total} tokens <= {threshold} and {conversational} messages: nothing to do")

        decision = self.split(messages, ctx)
        if decision.phase == 0:
            return Plan(note=decision.reason)
        span = _span(messages, ctx, system_prefix(messages), decision.index)
        if span is None:
            return Plan(note=f"{decision.reason}; nothing but system messages or one snapshot before the cut")
        start, end = span
        trigger = f"{total} tokens > {threshold}" if by_tokens else f"{conversational} messages > window"
        step: Step = Summarize(
            start, end, "snapshot", f"{trigger}; {decision.reason}; summarize messages {start}..{end - 1}"
        )
        logger.debug("start=<%d>, end=<%d>, phase=<%d> | snapshot planned", start, end, decision.phase)
        return Plan((step,), note=decision.reason)

    def finish(self, messages: Sequence[Message]) -> tuple[Message, ...]:
        """Post-processing the executor applies to the final history: `ensure_alternating_roles`, on everything
        before the current turn (from the last assistant message on), which is never changed: its reasoning
        signatures and pending calls must reach the provider exactly as they are."""
        last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), len(messages))
        head = ensure_alternating_roles(messages[:last])
        if len(head) == last and all(a is b for a, b in zip(head, messages, strict=False)):
            return tuple(messages)
        return (*head, *messages[last:])


if TYPE_CHECKING:
    _conforms: Strategy = SafeSplitStrategy()  # pyright proves the planner meets the protocol


def _span(messages: Sequence[Message], ctx: PlanContext, floor: int, cut: int) -> tuple[int, int] | None:
    """The system-free run in ``[floor, cut)`` with the most tokens (ties: the later), or None when there is none
    or it is a single previous snapshot."""
    best: tuple[int, int, int] | None = None
    start = floor
    for i in range(floor, cut + 1):
        if i == cut or messages[i].role == "system":
            if i > start:
                tokens = sum(ctx.counter.count_message(m) for m in messages[start:i])
                if best is None or tokens >= best[0]:
                    best = (tokens, start, i)
            start = i + 1
    if best is None:
        return None
    _, s, e = best
    if e - s == 1 and _is_snapshot(messages[s]):
        return None
    return s, e
