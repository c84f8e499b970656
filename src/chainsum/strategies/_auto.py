"""The ``auto`` strategy, chainsum's default: the cheapest step that can still help, one phase per round, until
the history fits the budget.

1. **mask**: mask old tool output and clip huge tool output (no model; see `_mask`), oldest first, as much as
   the budget needs plus `mask_headroom` (so the next pass is not a few messages away); over the hard limit,
   when the last `keep_last_turns` tool steps were all that was left, those too. When masking alone cannot
   reach the budget but the summaries of phases 2 to 4 can (by estimate), and the history is not over the hard
   limit, the summaries go first instead (the summarizer then reads the tool output itself, not placeholders,
   and keeps its identifiers) and what remains is masked in a later round;
2. **oversized pairs**: summarize single body pairs larger than `pair_share` of the budget (the sections
   strategy's `plan_oversized_pairs`, over every section), largest savings first;
3. **sections**: summarize whole sections before the last `keep_sections` into header + one summary (the
   sections strategy's `plan_sections`), oldest first, with the oversized pairs of the kept sections in the same
   round when the sections alone fall short. When the sections cannot reach the budget one by one (each keeps its
   human message and pays for its own summary), everything before the kept sections becomes one ``system``-form
   summary instead, earlier summaries folded in;
4. **rotation**: in the last sections, the oldest body pairs become one rolling summary (the sections strategy's
   `plan_last_section_rotation`, with its byte limit derived from what is left of the budget);
5. **last resort**: only when the history is over `PlanContext.hard_limit` (the context window: the provider would
   reject the request), the current turn's largest tool results are clipped to head and tail. This comes first
   when the untouchable part alone (system messages and the current turn) is over the budget, since no other
   phase can help then, and last otherwise. Nothing else ever touches the current turn.

Each phase plans only the steps its estimate says are needed (a summary is assumed to cost `summary_tokens`), so
a history slightly over budget loses as little as possible and keeps most of its prompt-cache prefix. The
executor stops as soon as the history fits. The current turn (the last body pair and what follows it) is never
touched by phases 1 to 4.

A budget is needed to know when to stop. Without one (`PlanContext.budget` None) the target is
`default_budget_ratio` of the history's size when compaction started (half, by default): "make it notably
smaller" is what a caller asking for compaction without a number means, and an error would make the CLI's plain
``chainsum compact`` useless.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..chain import Chain, safe_cuts
from ..messages import Message
from ._execute import summarizable_history
from ._mask import current_turn_start, plan_current_turn_clips, plan_masks
from ._plan import Plan, PlanContext, Step, Summarize
from ._sections import SectionsConfig, plan_last_section_rotation, plan_oversized_pairs, plan_sections

__all__ = ["AutoStrategy"]

logger = logging.getLogger(__name__)

_MIN_BYTES = 1024
_FIRST_MARGIN = 1.25
"""Summaries go before masking only when their estimated saving clears the need by this factor: the estimate
assumes `AutoStrategy.summary_tokens` a summary, and real summaries often run longer (the extractive default keeps
up to 30 % of its span), while masking first then summarizing is the surer way to the budget."""


@dataclass(frozen=True, slots=True)
class AutoStrategy:
    """Mask, then oversized pairs, then sections (or the older history as one summary), then last-section rotation;
    stop once under budget. Over the hard limit, clip the current turn's tool output as a last resort."""

    keep_last_turns: int = 3
    """Tool-using steps whose output is never masked (see `MaskStrategy`)."""
    clip_chars: int = 20000
    head: int = 4000
    tail: int = 2000
    pair_share: float = 0.25
    """A body pair larger than this share of the budget is summarized on its own."""
    keep_sections: int = 1
    """Most recent sections never summarized whole (the current one is always kept)."""
    mask_headroom: float = 0.15
    """The masking phase clears this share of the budget beyond what is needed (when it can), as Anthropic's
    ``clear_at_least`` does: masking exactly to the budget brings a growing conversation back over it a few
    messages later, and every pass rewrites the prompt prefix and breaks the provider's prompt cache. Summaries
    need no such margin: a summary frees a whole span at once."""
    min_keep_chars: int = 1000
    """A current-turn tool result clipped as a last resort (see `PlanContext.hard_limit`) keeps at least this many
    characters of its head and tail."""
    summarize: bool = True
    """False: phases 1 and 5 only, never a summarizer call (the manager's emergency pass at its depth cap)."""
    summary_tokens: int = 400
    """Assumed size of one summary when estimating what a step saves (at most a third of what it replaces)."""
    default_budget_ratio: float = 0.5
    """Target, as a share of the starting size, when no budget is given."""
    sections_config: SectionsConfig = field(default_factory=SectionsConfig)
    """Base configuration for the section phases (the byte limits are replaced by budget-derived ones)."""
    name: str = "auto"

    def __post_init__(self) -> None:
        if not 0 < self.pair_share <= 1:
            raise ValueError(f"pair_share must be in (0, 1], got {self.pair_share}")
        if not 0 < self.default_budget_ratio < 1:
            raise ValueError(f"default_budget_ratio must be in (0, 1), got {self.default_budget_ratio}")
        if not 0 <= self.mask_headroom < 1:
            raise ValueError(f"mask_headroom must be in [0, 1), got {self.mask_headroom}")
        if self.min_keep_chars < 100:
            raise ValueError(f"min_keep_chars must be >= 100, got {self.min_keep_chars}")
        if self.keep_sections < 1:
            raise ValueError(f"keep_sections must be >= 1 (the current section), got {self.keep_sections}")

    def _budget(self, ctx: PlanContext, tokens: int) -> int:
        if ctx.budget is not None:
            return ctx.budget
        start = ctx.extra.get("tokens_before")
        base = start if isinstance(start, int) else tokens
        return int(base * self.default_budget_ratio)

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        tokens = ctx.counter.count_messages(messages)
        budget = self._budget(ctx, tokens)
        if tokens <= budget:
            return Plan(note=f"fits the budget ({tokens} <= {budget} tokens): nothing to do")
        need = tokens - budget
        protected = current_turn_start(messages)
        if ctx.hard_limit is not None and tokens > ctx.hard_limit:  # phase 5 first (see the module docstring)
            # What no phase may remove: system messages and the current turn. Over the window with that alone
            # over the budget, nothing but the current turn's own tool output can make the request acceptable.
            floor = ctx.counter.count_messages(messages[protected:]) + sum(
                ctx.counter.count_message(m) for m in messages[:protected] if m.role == "system"
            )
            if floor > budget:
                clips = plan_current_turn_clips(messages, ctx, need=floor - budget, min_keep=self.min_keep_chars)
                if clips:
                    return Plan(tuple(clips), note=_clip_note(tokens, ctx.hard_limit))
        over_hard = ctx.hard_limit is not None and tokens > ctx.hard_limit
        masks: list[Step] = []
        saved = 0
        # Over the window, the recent tool steps lose their protection before anything is summarized: masking is
        # reversible (the original is archived) and a request the provider refuses keeps nothing at all.
        for keep in (self.keep_last_turns, 0) if over_hard and self.keep_last_turns else (self.keep_last_turns,):
            masks, saved = plan_masks(
                messages,
                ctx,
                keep_last_turns=keep,
                clip_chars=self.clip_chars,
                head=self.head,
                tail=self.tail,
                need=need + int(budget * self.mask_headroom),
            )
            if masks:
                break
        mask_plan = Plan(tuple(masks), note=f"mask/clip old tool output: {need} tokens over the budget")
        if masks and (saved >= need or over_hard or not self.summarize):
            return mask_plan
        if not self.summarize:
            return self._last_resort(messages, ctx, tokens, need)
        # Masking alone cannot reach the budget. When the summaries this round can (by estimate), they come
        # first, while the summarizer can still read the tool output: masking first would leave it placeholders,
        # and with them most of the identifiers; what is left to mask is masked in a later round. When neither is
        # enough alone, masking still goes first: summaries of masked output are shorter, and both are needed.
        # Over the hard limit the certain, model-free saving always comes first (above).
        summaries = self._summaries(messages, ctx, tokens, budget, need, protected)
        if summaries and (not masks or self._estimate(messages, ctx, summaries) >= need * _FIRST_MARGIN):
            return summaries
        if masks:
            return mask_plan
        return self._last_resort(messages, ctx, tokens, need)

    def _estimate(self, messages: Sequence[Message], ctx: PlanContext, plan: Plan) -> int:
        """Tokens a plan of summaries is expected to save (each summary costing `_saving`'s assumption)."""
        return sum(self._span_saving(messages, ctx, s) for s in plan.steps if isinstance(s, Summarize))

    def _span_saving(self, messages: Sequence[Message], ctx: PlanContext, step: Summarize) -> int:
        """What summarizing `step`'s span is expected to save (see `_saving`)."""
        return _saving(ctx.counter.count_messages(messages[step.start : step.end]), self.summary_tokens)

    def _summaries(
        self, messages: Sequence[Message], ctx: PlanContext, tokens: int, budget: int, need: int, protected: int
    ) -> Plan | None:
        """Phases 2 to 4: the first that plans anything, or None."""
        # A leading assistant message (rule 1) is "repaired" by keeping it in a header-less section, and a system
        # message in the middle (rule 5: an earlier merged summary, or the user's own) by opening a new section;
        # both leave the messages one to one with the chain, as the section planners need. No other repair does.
        chain = Chain.build(messages, repair=True, allow_pending_tail=True)
        other = [r for r in chain.repairs if r.rule not in (1, 5)]
        if other:
            logger.warning("repair=<%s> | not a well-formed chain; only masking is possible", other[0])
            return None
        bytes_per_token = max(chain.size, 1) / max(tokens, 1)

        def to_bytes(n_tokens: float) -> int:
            return max(_MIN_BYTES, int(n_tokens * bytes_per_token))

        def scored(steps: Sequence[Summarize], *, largest_first: bool) -> list[tuple[int, Summarize]]:
            out = [(self._span_saving(messages, ctx, s), s) for s in steps if s.end <= protected]
            out = [(saving, s) for saving, s in out if saving > 0]
            if largest_first:
                out.sort(key=lambda x: (-x[0], x[1].start))
            return out

        def take(candidates: Sequence[tuple[int, Summarize]], goal: int = need) -> tuple[list[Summarize], int]:
            """The first candidates whose estimated savings reach `goal`, and that estimate."""
            chosen: list[Summarize] = []
            saved = 0
            for saving, s in candidates:
                if saved >= goal:
                    break
                chosen.append(s)
                saved += saving
            return chosen, saved

        cfg = self.sections_config
        oversized = SectionsConfig(
            preserve_last=cfg.preserve_last,
            use_qa=cfg.use_qa,
            summarize_human_in_qa=cfg.summarize_human_in_qa,
            last_sec_bytes=cfg.last_sec_bytes,
            max_bp_bytes=to_bytes(budget * self.pair_share),
            max_qa_sections=cfg.max_qa_sections,
            max_qa_bytes=cfg.max_qa_bytes,
            keep_qa_sections=self.keep_sections,
            last_section_reserve_percent=cfg.last_section_reserve_percent,
        )
        pairs = scored(plan_oversized_pairs(messages, chain, oversized), largest_first=True)
        pair_note = f"oversized body pairs (> {oversized.max_bp_bytes} bytes)"
        if pairs and sum(saving for saving, _ in pairs) >= need:
            return _plan(take(pairs)[0], pair_note)
        # The pairs alone are not enough: whole older sections (which hold some of those pairs) in the same round,
        # then the oversized pairs of the sections kept, so that no round summarizes the last round's summaries.
        n_last = min(self.keep_sections, len(chain.sections))
        last_start = sum(s.count for s in chain.sections[: len(chain.sections) - n_last])
        sections, saved = take(scored(plan_sections(messages, chain, oversized), largest_first=False))
        merged = _merge_span(messages, min(last_start, protected))
        merged_saving = 0 if merged is None else self._span_saving(messages, ctx, merged)
        if merged is not None and saved < need and merged_saving > saved:
            # Section by section is not enough: each keeps its human message and pays for its own summary. All
            # the history before the kept sections becomes one summary instead (earlier summaries folded in).
            rest = [(v, p) for v, p in pairs if p.start >= merged.end]
            more = take(rest, need - merged_saving)[0] if merged_saving < need else []
            return _plan([merged, *more], f"older history merged into one summary: {need} tokens over the budget")
        if sections:
            rest = [(v, p) for v, p in pairs if not any(s.start <= p.start and p.end <= s.end for s in sections)]
            more = take(rest, need - saved)[0] if saved < need else []
            return _plan([*sections, *more], f"older sections summarized whole: {need} tokens over the budget")
        if pairs:
            return _plan(take(pairs)[0], pair_note)
        # what the last sections may hold: the budget minus everything before them
        room = budget - ctx.counter.count_messages(messages[:last_start])
        rotation = SectionsConfig(
            preserve_last=True,
            last_sec_bytes=to_bytes(max(room, 1) / n_last),
            max_bp_bytes=oversized.max_bp_bytes,
            keep_qa_sections=self.keep_sections,
            last_section_reserve_percent=cfg.last_section_reserve_percent,
        )
        steps = [s for s in plan_last_section_rotation(messages, chain, rotation) if s.end <= protected]
        if steps:
            return Plan(tuple(steps), note="last-section rotation: the oldest pairs become one summary")
        return None

    def _last_resort(self, messages: Sequence[Message], ctx: PlanContext, tokens: int, need: int) -> Plan:
        if ctx.hard_limit is not None and tokens > ctx.hard_limit:
            clips = plan_current_turn_clips(messages, ctx, need=need, min_keep=self.min_keep_chars)
            if clips:
                return Plan(tuple(clips), note=_clip_note(tokens, ctx.hard_limit))
        return Plan(note=f"{need} tokens over the budget, but nothing left that may be summarized")


def _merge_span(messages: Sequence[Message], end: int) -> Summarize | None:
    """One ``system``-form summary of everything from after the leading system prompt up to `end` (the start of
    the kept sections, or the current turn), stopping before any user system message and at a safe cut; None when
    that leaves less than two messages, or only an earlier summary, to summarize."""
    start, end_limit = summarizable_history(messages)
    end = min(end, end_limit)
    cuts = safe_cuts(messages)
    while end > start and not cuts[end]:
        end -= 1
    if end - start < 2:
        return None
    reason = f"messages {start}..{end - 1}: everything before the kept sections, as one summary"
    return Summarize(start=start, end=end, form="system", reason=reason)


def _plan(steps: Sequence[Step], note: str) -> Plan:
    return Plan(tuple(sorted(steps, key=_position)), note=note)


def _clip_note(tokens: int, hard_limit: int) -> str:
    return f"last resort: {tokens} tokens exceed the hard limit of {hard_limit}; clipping current-turn tool output"


def _saving(span_tokens: int, summary_tokens: int) -> int:
    """What summarizing a span is expected to save: a summary is assumed to cost `summary_tokens`, or a third of
    the span when that is less (summarizers shorten; they do not pad a short answer to a fixed length)."""
    return span_tokens - min(summary_tokens, span_tokens // 3)


def _position(step: Step) -> int:
    return step.start if isinstance(step, Summarize) else step.index
