"""The ``auto`` strategy, chainsum's default: the cheapest step that reaches the budget, landing just under it.

One phase per round, each planned to land just under the budget (a budget is a size to fill, not only a ceiling:
a history compacted far below it has lost what it had room to keep):

1. **mask**: when masking old tool output (and clipping huge output) can reach the budget alone, only that, oldest
   first, with `mask_headroom` of the budget beyond the need so a growing conversation is not re-masked (and its
   prompt cache broken) a few messages later. No model.
2. **summary**: otherwise one new summary block in the record (`chain.record_message`) covers the oldest messages not
   yet summarized, ``messages[start:cut]``, and every maskable tool result after the cut is masked in the same round.
   The summary is planned at the length expected for the whole summarizable region (`summary_floor`), within what the
   record may take (`summary_share` of the budget, minus the blocks already there), whatever the cut; the cut is the
   smallest safe cut for which the history lands under the budget beside it, so the most messages stay verbatim; and
   what the budget leaves beyond that quotes the last messages before the cut in the block
   (`Summarize.excerpt_from`). The summarizer reads the span as it is (tool output unmasked). Blocks are folded into
   a deeper summary only when they outgrow their share, and past `PlanContext.max_depth` the oldest leave the context
   instead (`_record.record_steps`): a session is summarized for ever, never stopped by a depth guard.
   `min_summary_share` makes every summary cover at least that share of the summarizable messages (the manager passes
   ``summary_ratio``), so summaries come less often.
3. **last resorts**, only past `PlanContext.hard_limit` (the context window: the provider would refuse the request)
   or when no summary may be written (``summarize=False``, the manager's path when every summarizer failed): all old
   tool output masked (past the hard limit the recent tool steps too); the record's blocks dropped to a note; the
   oldest messages moved to the archive unsummarized (`Evict`); and only then, as far as the window needs, the
   current turn's largest tool results clipped as a group (DESIGN invariant 11: the newest tool output is the last
   thing to lose, even where the current turn alone is over the budget).

Monotone by construction: with more budget the cut can only move back (more verbatim messages), the summary's
length target can only grow, the excerpt grows until the messages it quotes are kept verbatim, and fewer tool
results are masked, so a larger budget never keeps fewer tokens.

Without a budget (`PlanContext.budget` None) the target is `default_budget_ratio` of the history's size when
compaction started: "make it notably smaller" is what a caller asking for compaction without a number means.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..chain import record_blocks, safe_cuts
from ..messages import File, Image, Message, ToolResult
from ..tokens import TokenCounter
from ._mask import clip_result, mask_candidates, plan_current_turn_clips, plan_group_clips
from ._note import note_chars, note_tokens
from ._plan import Clip, DropBlocks, Evict, Plan, PlanContext, Step, Summarize
from ._record import (
    BLOCK_OVERHEAD_TOKENS,
    MIN_SUMMARY_TOKENS,
    RECORD_OVERHEAD_TOKENS,
    Layout,
    estimate_margin,
    layout,
    least_summary_tokens,
    record_steps,
)

__all__ = ["AutoStrategy"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AutoStrategy:
    """Mask when that is enough, else one summary block plus masks after it, landing just under the budget; over the
    hard limit (or without a summarizer), the model-free last resorts. See the module docstring."""

    keep_last_turns: int = 3
    """Tool-using steps whose output is not masked (see `MaskStrategy`), except past the hard limit."""
    clip_chars: int = 20000
    head: int = 4000
    tail: int = 2000
    mask_headroom: float = 0.05
    """The masking phase clears this share of the budget beyond what is needed (when it can), as Anthropic's
    ``clear_at_least`` does: masking exactly to the budget brings a growing conversation back over it a few
    messages later, and every pass rewrites the prompt prefix and breaks the provider's prompt cache."""
    summary_share: float = 0.25
    """Share of the budget all summary blocks together may take (at least `min_block_tokens` more than the record's
    framing, at most half the budget); what remains goes to verbatim messages."""
    min_block_tokens: int = 120
    """The smallest length target a new block gets (below it the blocks are folded or dropped first): a summary
    shorter than this keeps too little to be worth its call."""
    min_summary_tokens: int = MIN_SUMMARY_TOKENS
    """The shortest summary a summarizer is expected to write: a span is summarized only when it is larger than that
    plus the framing; otherwise the call would write something no smaller than what it replaces, and be thrown
    away."""
    min_summary_share: float = 0.0
    """Each new summary covers at least this share of the summarizable messages (0: only what the budget needs)."""
    expected_ratio: float = 0.3
    """How long a summary is expected to be, as a share of what it replaces (the extractive default's own bound),
    when the cut is planned: a small span gets a small summary, not its full length target."""
    expected_tool_ratio: float = 0.1
    """The same for tool output: mostly data, of which a summary keeps what identifies it (ids, paths, errors)."""
    summary_floor: float = 1.0
    """Whatever the cut, the new summary is planned at least this share of the summary expected for the whole
    summarizable region (within the blocks' share of the budget). At 1.0 the summary's room does not depend on the
    cut at all, only on the budget, so it never shrinks as the budget grows; what the budget leaves beyond it goes
    to an excerpt (`Summarize.excerpt_from`). Measured over every conversation of the corpora at six budgets
    (``bench/bench_budget.py --conversations 0``), with the excerpt: fewer identifiers at a larger budget in 1 of
    1,334 budget pairs at 1.0, 12 at 0.5."""
    overshoot_share: float = 0.2
    """When what stays whatever the cut (the current turn, the recent tail) leaves the record less than its share
    of the budget, the history lands over the budget anyway; the record may then take up to this share of the room
    between the budget and the hard limit beyond what the budget leaves (0: only what the budget leaves, the least
    block at worst). Below the hard limit by most of that room, so the next requests still fit before the trigger.
    ``bench/bench_cost.py --sessions 500``, extractive: the facts of the replaced messages a request kept 4.1 % ->
    8.1 % on the generated session, the replaced identifiers 23.9 % -> 29.5 % and 17.6 % -> 18.6 % on the two Claude
    Code sessions, for 1.0 % and 0.6 % more cost there (0.2; at 0.33 the cost rose 3 % on one)."""
    clip_back_below: float = 0.9
    """When a summary's cut would leave the history below this share of the budget because the tool step before the
    cut is too large to keep, that step is kept with its output clipped instead (`_clip_back`)."""
    min_keep_chars: int = 1000
    """A current-turn tool result clipped as a last resort keeps at least this many characters of head and tail."""
    summarize: bool = True
    """False: masking and the last resorts only, never a summarizer call."""
    default_budget_ratio: float = 0.5
    """Target, as a share of the starting size, when no budget is given."""
    name: str = "auto"

    def __post_init__(self) -> None:
        if not 0 < self.default_budget_ratio < 1:
            raise ValueError(f"default_budget_ratio must be in (0, 1), got {self.default_budget_ratio}")
        if not 0 <= self.mask_headroom < 1:
            raise ValueError(f"mask_headroom must be in [0, 1), got {self.mask_headroom}")
        if not 0 < self.summary_share < 1:
            raise ValueError(f"summary_share must be in (0, 1), got {self.summary_share}")
        if not 0 <= self.overshoot_share < 1:
            raise ValueError(f"overshoot_share must be in [0, 1), got {self.overshoot_share}")
        if not 0 <= self.summary_floor <= 1:
            raise ValueError(f"summary_floor must be in [0, 1], got {self.summary_floor}")
        if not 0 <= self.min_summary_share <= 1:
            raise ValueError(f"min_summary_share must be in [0, 1], got {self.min_summary_share}")
        if self.min_keep_chars < 100:
            raise ValueError(f"min_keep_chars must be >= 100, got {self.min_keep_chars}")

    def _budget(self, ctx: PlanContext, tokens: int) -> int:
        if ctx.budget is not None:
            return ctx.budget
        start = ctx.extra.get("tokens_before")
        base = start if isinstance(start, int) else tokens
        return int(base * self.default_budget_ratio)

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        counter = ctx.counter
        tokens = counter.count_messages(messages)
        budget = self._budget(ctx, tokens)
        if tokens <= budget:
            return Plan(note=f"fits the budget ({tokens} <= {budget} tokens): nothing to do")
        need = tokens - budget
        lay = layout(messages, ctx.turn_start)
        over_hard = ctx.hard_limit is not None and tokens > ctx.hard_limit
        sizes = [counter.count_message(m) for m in messages]
        # The current turn's tool output is the last thing to lose (DESIGN invariant 11), even where it alone is over
        # the budget: every older output is masked and every older turn summarized (or moved to the archive) first,
        # and then it is clipped only as far as the window needs (`_last_resorts`).
        tail_from = max(lay.start, len(messages) - ctx.keep_recent) if not over_hard else len(messages)
        # The recent tool steps keep their output in the first two phases even over the hard limit: when masking
        # the older output or a summary is enough, the step the agent is working from stays readable. Only the
        # last resorts mask it too.
        masks = [(s, v) for s, v in self._masks(messages, ctx, self.keep_last_turns) if _index(s) < tail_from]
        if sum(v for _, v in masks) >= need:
            goal = need + int(budget * self.mask_headroom)
            chosen: list[Step] = []
            saved = 0
            for step, saving in masks:
                if saved >= goal:
                    break
                chosen.append(step)
                saved += saving
            return Plan(tuple(chosen), note=f"mask/clip old tool output: {need} tokens over the budget")
        if self.summarize:
            plan = self._summary(messages, ctx, lay, sizes, masks, budget, tail_from)
            if plan:
                return plan
        if over_hard:
            every = self._masks(messages, ctx, 0)
            return self._last_resorts(messages, ctx, lay, sizes, every, budget, tokens, over_hard)
        if not self.summarize:
            return self._last_resorts(messages, ctx, lay, sizes, masks, budget, tokens, over_hard)
        if masks:
            return Plan(tuple(s for s, _ in masks), note="mask/clip all old tool output; nothing left to summarize")
        return Plan(note=f"{need} tokens over the budget, but nothing left that may be summarized")

    def _least_target(self, budget: int) -> int:
        """The shortest summary asked for at this budget (`_record.least_summary_tokens`, at most
        `min_summary_tokens`); `TailGuard` leaves the record that much room beside the tail it keeps."""
        return least_summary_tokens(budget, self.min_summary_tokens)

    def _masks(self, messages: Sequence[Message], ctx: PlanContext, keep_last_turns: int) -> list[tuple[Step, int]]:
        return mask_candidates(
            messages, ctx, keep_last_turns=keep_last_turns, clip_chars=self.clip_chars, head=self.head, tail=self.tail
        )

    def _summary(
        self,
        messages: Sequence[Message],
        ctx: PlanContext,
        lay: Layout,
        sizes: Sequence[int],
        masks: Sequence[tuple[Step, int]],
        budget: int,
        tail_from: int,
    ) -> Plan | None:
        """Phase 2: one new block over ``messages[lay.start:cut]`` and the masks after the cut (module docstring)."""
        highest = min(lay.end, tail_from) if tail_from > lay.start else lay.end
        if highest <= lay.start:
            return None
        # The blocks' share of the budget; it stretches (up to half the budget) to make room for one more block
        # beside those already there, so earlier summaries are folded into a summary of summaries only when one
        # level cannot fit: folding loses most of what they held.
        existing_blocks = sizes[lay.record] if lay.record is not None else 0
        block_budget = min(
            max(
                int(budget * self.summary_share),
                existing_blocks + self.min_block_tokens + RECORD_OVERHEAD_TOKENS + BLOCK_OVERHEAD_TOKENS,
            ),
            budget // 2,
        )
        saving_at = [0] * (len(messages) + 1)
        for step, saving in masks:
            saving_at[_index(step)] += saving
        after = [max(1, s - v) for s, v in zip(sizes, saving_at, strict=False)]
        lowest = min(highest, lay.start + max(1, math.ceil((highest - lay.start) * self.min_summary_share)))
        # Everything but the record and the span: the user's system prompt, and what follows the summarizable region
        # (the current turn), as it will be after this round's masks.
        fixed = sum(sizes[: lay.lead]) + sum(after[lay.end :])
        span_sizes = list(sizes)
        for k in lay.kept:  # the user's system messages and the newest user message stay wherever the cut falls
            fixed += after[k]
            after[k] = 0
            span_sizes[k] = 0
        existing = sizes[lay.record] if lay.record is not None else RECORD_OVERHEAD_TOKENS
        # What each message is expected to add to the summary: tool output (mostly data, of which a summary keeps
        # the identifiers) much less than what the people and the assistant wrote.
        # An image or a file adds nothing but a mention: only a media message's text counts.
        expected = [
            (min(s, ctx.counter.count_text(m.text)) if _has_media(m) else s)
            * (self.expected_tool_ratio if m.role == "tool" else self.expected_ratio)
            for m, s in zip(messages, span_sizes, strict=True)
        ]

        # The summary's room has a floor that does not depend on the cut: without it a larger budget moves the cut
        # back over messages that carry little (thanks, greetings) and leaves the summary of what came before them
        # less room than a smaller budget gave it, so more budget kept fewer of the conversation's identifiers.
        floor = int(sum(expected[lay.start : highest]) * self.summary_floor)

        def record_cost(summary: float) -> int:
            least = max(int(summary), self.min_summary_tokens, floor)
            return min(block_budget, existing + BLOCK_OVERHEAD_TOKENS + least)

        margin = estimate_margin(budget)  # the framing's cost and the summary's length are estimates
        # The record gives way before anything newer: when what stays whatever the cut (the current turn, and the
        # verbatim tail from `highest` on) leaves the blocks less than their share, no cut brings the history under
        # the budget beside them, so their share shrinks to what is left and `record_steps` folds them (or drops the
        # oldest past the depth cap). A seed-0 session at a 6K window kept its 1,332-token record beside a 3.4K-token
        # current step and compacted to 4,891 tokens, over the 4,800 trigger, so the next request compacted again.
        beside = fixed + sum(after[highest : lay.end])
        if beside + record_cost(sum(expected[lay.start : highest])) > budget - margin:
            least = RECORD_OVERHEAD_TOKENS + BLOCK_OVERHEAD_TOKENS + self.min_block_tokens
            # Landing over the budget then, the record may take a share of the room between the budget and the
            # hard limit (`overshoot_share`) rather than only what the budget leaves: `agent_session(500)` at 32K
            # asked 13 of 21 records for 90-151 tokens beside a large new tool step, and they carried 4 % of the
            # facts of what they replaced.
            limit = budget
            if ctx.hard_limit is not None and ctx.hard_limit > budget:
                limit += int((ctx.hard_limit - budget) * self.overshoot_share)
            block_budget = min(block_budget, max(limit - margin - beside, least))
        cuts = safe_cuts(messages)
        cut = _smallest_cut(
            cuts,
            after,
            expected,
            record_cost,
            fixed,
            budget - margin,
            lay.start,
            lowest,
            highest,
            lay.end,
        )
        if cut is None or cut - lay.start <= len(lay.keep(lay.start, cut)):
            return None  # nothing to summarize but what must stay
        clips: list[Clip] = []
        back = self._clip_back(
            messages, cuts, ctx, lay, cut, after, span_sizes, expected, record_cost, masks, fixed, budget, lowest
        )
        if back is not None:
            cut, clips, after = back

        def build(cut: int) -> tuple[list[Step], int]:
            reason = f"messages {lay.start}..{cut - 1}: the oldest not yet summarized, into one record block"
            return record_steps(
                messages,
                lay,
                cut,
                counter=ctx.counter,
                block_budget=block_budget,
                min_block=self.min_block_tokens,
                least=self._least_target(budget),
                max_depth=ctx.max_depth,
                reason=reason,
                span_tokens=sum(span_sizes[lay.start : cut]),
                expected_ratio=self.expected_ratio,
            )

        steps, target = build(cut)
        last = steps[-1]
        kept = last.keep if isinstance(last, Summarize) else ()
        if isinstance(last, Summarize) and last.start == lay.start and len(steps) == 1:
            # The cut keeps the most it can verbatim beside the summary's planned length (never more than what the
            # cut leaves, nor half the budget); what the budget has left beyond both quotes the stretch of messages
            # right before the cut, so the result lands near the budget while the summary's length depends on the
            # budget only (`Summarize.excerpt_from`).
            record = existing + BLOCK_OVERHEAD_TOKENS

            def room_at(cut: int, kept: Sequence[int]) -> int:
                return budget - fixed - sum(after[cut : lay.end]) - record - sum(after[k] for k in kept) - margin

            left = room_at(cut, kept)
            # the summary's planned length: the expected summary of the whole region (the floor) within the
            # blocks' share and half the budget, and at least the shortest usual summary; it does not depend on
            # the cut, and grows with the budget
            planned = min(record_cost(sum(expected[lay.start : cut])) - record, budget // 2 - record)
            planned = max(planned, self.min_summary_tokens)
            if left < planned and not clips:
                # Where no cut leaves the planned length (a floor close to the budget), the summary is asked for what
                # summarizing up to the highest cut leaves, and the cut moves forward until it leaves that much: a
                # length taken from the chosen cut shrank as a larger budget kept one more message verbatim, and
                # the summary listed fewer of the span's identifiers.
                # `highest` (the start of the protected tail) need not be a safe cut: a tool call right before it
                # would be split from its result, and the executor's check rejects such a plan
                top = next((c for c in range(highest, cut, -1) if cuts[c]), cut)
                want = max(min(planned, room_at(top, ())), self._least_target(budget))
                later = cut
                while left < want and later < top:
                    later = next(c for c in range(later + 1, top + 1) if cuts[c])
                    moved, _ = build(later)
                    moved_last = moved[-1]
                    if not (isinstance(moved_last, Summarize) and len(moved) == 1):
                        break
                    if room_at(later, moved_last.keep) >= want:
                        cut, steps, last, kept = later, moved, moved_last, moved_last.keep
                        left = room_at(later, kept)
                planned = want
            target = max(min(left, planned), self._least_target(budget))
            room = left - target
            # The excerpt quotes the stretch of messages before the cut, and reaches further back while the room is
            # more than that stretch holds (a short tool step): handing that room to the summary made its length
            # depend on the cut again. An image or a file cannot be quoted: what no stretch back to the start can
            # fill goes to the summary after all, so the budget is still filled.
            stretch, quotable = cut, 0
            while stretch > lay.start and (stretch == cut or quotable < room):
                earlier = next((c for c in range(stretch - 1, lay.start, -1) if cuts[c]), lay.start)
                quotable += sum(
                    ctx.counter.count_text(messages[i].text) if _has_media(messages[i]) else after[i]
                    for i in range(earlier, stretch)
                    if i not in kept
                )
                stretch = earlier
            if room > quotable:
                target = min(target + room - quotable, max(target, budget // 2 - record))
                room = left - target
            steps = [replace(last, target_tokens=target, excerpt_from=stretch, excerpt_tokens=room)]
        span_tokens = sum(sizes[lay.start : cut]) - sum(sizes[k] for k in kept)
        # a summary asked for less than the usual shortest (a tight room: `_least_target`) is expected at that length
        block = max(min(target, span_tokens * 3 // 10), min(target, self.min_summary_tokens)) + BLOCK_OVERHEAD_TOKENS
        block += RECORD_OVERHEAD_TOKENS if lay.record is None else 0
        replaced = span_tokens + _freed_by_drops(messages, lay, steps, ctx.counter)
        if lay.record is not None and isinstance(last, Summarize) and last.start == lay.record:
            replaced += sizes[lay.record]  # a fold replaces the record too, and writes it anew, framing and all
            block += RECORD_OVERHEAD_TOKENS
        if replaced <= block:
            # The summary would cost what it replaces, and the blocks dropped beside it (at the depth cap) free no
            # more than that: the round could only grow the history, and the executor would throw its summary away,
            # a summarizer call paid for nothing. A 6-token assistant message beside an image over the whole window
            # was summarized next to a one-block drop whose note cost what the block did (`test_invariants`).
            return None
        kept_masks = [s for s, _ in masks if _index(s) >= cut]
        note = f"summary block over {cut - lay.start} messages, {len(kept_masks)} old tool results masked after it"
        if clips:
            note += f", {len(clips)} clipped right after it"
        return Plan(tuple(sorted([*steps, *kept_masks, *clips], key=_index)), note=note)

    def _clip_back(
        self,
        messages: Sequence[Message],
        cuts: Sequence[bool],
        ctx: PlanContext,
        lay: Layout,
        cut: int,
        after: Sequence[int],
        span_sizes: Sequence[int],
        expected: Sequence[float],
        record_cost: Callable[[float], int],
        masks: Sequence[tuple[Step, int]],
        fixed: int,
        budget: int,
        lowest: int,
    ) -> tuple[int, list[Clip], list[int]] | None:
        """When the cut leaves the budget well short because the stretch before it (one tool step) is too large
        to keep, the cut moves back over that stretch and its tool output is clipped, as a group, to fit: a head and
        a tail verbatim keep more of it than the few identifiers a summary has room for, and the budget is filled.
        Returns the new cut, the clips and the kept sizes after them; None when that does not apply."""

        def total(c: int) -> int:
            return fixed + sum(after[c : lay.end]) + record_cost(sum(expected[lay.start : c]))

        if total(cut) >= budget * self.clip_back_below:
            return None
        back = next((c for c in range(cut - 1, max(lowest, lay.start + 1) - 1, -1) if cuts[c]), None)
        if back is None or back - lay.start <= len(lay.keep(lay.start, back)):
            return None
        block = max(int(sum(expected[lay.start : back])), self.min_summary_tokens) + BLOCK_OVERHEAD_TOKENS
        block += RECORD_OVERHEAD_TOKENS if lay.record is None else 0
        if sum(span_sizes[lay.start : back]) <= 2 * block:
            return None  # the shorter span would hardly be worth its summary
        need = total(back) - budget + budget // 50  # a margin: the sizes are estimates
        masked = {_index(s) for s, _ in masks}
        indices = [i for i in range(back, cut) if i not in masked and i not in lay.kept]
        why = "tool output of {chars} characters kept after the summary as head and tail: {keep} characters"
        clips = plan_group_clips(messages, ctx, indices, need, self.min_keep_chars, why)
        new_after = list(after)
        saved = 0
        for clip in clips:
            part = messages[clip.index].parts[clip.part]
            assert isinstance(part, ToolResult)
            text = part.text
            tokens = ctx.counter.count_text(text)
            # what the head and tail cost, and the marker between them, which a small budget notices
            kept = ctx.counter.count_text(clip_result(part, clip.head, clip.tail).text)
            cut_tokens = tokens - kept
            new_after[clip.index] -= cut_tokens
            saved += cut_tokens
        if not clips or saved < need:
            return None
        return back, clips, new_after

    def _last_resorts(
        self,
        messages: Sequence[Message],
        ctx: PlanContext,
        lay: Layout,
        sizes: Sequence[int],
        masks: Sequence[tuple[Step, int]],
        budget: int,
        tokens: int,
        over_hard: bool,
    ) -> Plan:
        """Phase 3: model-free. Masks first (all of them); then the record's blocks reduced to a note and the oldest
        messages moved to the archive, as far as the budget needs; the current turn's tool output clipped last."""
        if masks:
            return Plan(tuple(s for s, _ in masks), note="last resort: every old tool output masked")
        if not over_hard:
            return Plan(note=f"{tokens - budget} tokens over the budget; without a summarizer nothing else may go")
        need = tokens - budget
        hard = ctx.hard_limit if ctx.hard_limit is not None else budget
        alone = self._clips_alone(messages, ctx, need)
        if alone:
            # The current turn's output is clipped to the budget anyway: the record and the older messages stay,
            # since what they carry (the user's task among it) is worth more than as many more characters of an
            # output already cut. A Claude Code session at a 16K window had its first summary replaced by a note
            # that said nothing, to keep ~100 tokens more of a 16K-token read that was clipped to 4K anyway.
            return Plan(tuple(alone), note=_clip_note(tokens, hard))
        steps: list[Step] = []
        freed = 0
        chars = note_chars(int(budget * self.summary_share))  # what a note may say: a share of the blocks' room
        cost = note_tokens(chars)
        blocks = record_blocks(messages[lay.record]) if lay.record is not None else None
        if (
            lay.record is not None
            and blocks
            and not (len(blocks) == 1 and blocks[0].depth == 0)
            and sizes[lay.record] > cost
        ):
            why = "last resort: summaries archived"
            steps.append(DropBlocks(index=lay.record, count=len(blocks), reason=why, note_chars=chars))
            freed += sizes[lay.record] - cost
        if freed < need and lay.end > lay.start:
            cuts = safe_cuts(messages)
            cut = None
            evicted = 0
            for c in range(lay.start + 1, lay.end + 1):
                evicted += sizes[c - 1]
                if cuts[c]:
                    cut = c
                    if freed + evicted - cost >= need:  # the note says what they held
                        break
            if cut is not None and cut - lay.start > len(lay.keep(lay.start, cut)):
                keep = lay.keep(lay.start, cut)
                why = f"last resort: messages {lay.start}..{cut - 1} archived"
                steps.append(Evict(start=lay.start, end=cut, reason=why, keep=keep, note_chars=chars))
                freed += sum(sizes[i] for i in range(lay.start, cut) if i not in keep) - cost
        # The current turn's tool output goes last: in the same round as what goes before it when that cannot bring
        # the history under the window, and then as far as the budget needs, like the eviction before it (the room
        # a compaction leaves for the next turns, and for a window that was only estimated).
        under = tokens - freed <= hard - hard // 50  # a margin: the sizes are estimates
        rest = tokens - freed - budget
        clips = plan_current_turn_clips(messages, ctx, need=rest, min_keep=self.min_keep_chars) if not under else []
        if clips:
            note = _clip_note(tokens, hard) if not steps else f"last resort: {tokens} tokens over the hard limit {hard}"
            return Plan(tuple(sorted([*steps, *clips], key=_index)), note=note)
        if steps:
            return Plan(tuple(steps), note=f"last resort: {tokens} tokens over the hard limit {ctx.hard_limit}")
        return Plan(note=f"{need} tokens over the budget; nothing but the system prompt and the current turn is left")

    def _clips_alone(self, messages: Sequence[Message], ctx: PlanContext, need: int) -> list[Step]:
        """The clips of the current turn's tool output that bring the history to the budget by themselves (`need`
        tokens), when they can (each keeping at least `min_keep_chars`); empty when they cannot."""
        clips = plan_current_turn_clips(messages, ctx, need=need, min_keep=self.min_keep_chars)
        saved = 0
        for clip in clips:
            assert isinstance(clip, Clip)
            part = messages[clip.index].parts[clip.part]
            assert isinstance(part, ToolResult)
            saved += ctx.counter.count_text(part.text) - ctx.counter.count_text(
                clip_result(part, clip.head, clip.tail).text
            )
        return clips if clips and saved >= need - need // 20 else []


def _smallest_cut(
    cuts: Sequence[bool],
    kept_sizes: Sequence[int],
    summary_sizes: Sequence[float],
    record_cost: Callable[[float], int],
    fixed: int,
    budget: int,
    start: int,
    lowest: int,
    highest: int,
    end: int,
) -> int | None:
    """The smallest safe cut ``c`` (``cuts[c]``, `chain.safe_cuts`) in ``[lowest, highest]`` for which the history
    fits: ``fixed`` plus what is kept (``kept_sizes[c:end]``) plus the record with the summary of the messages
    ``[start:c]`` (each expected to add ``summary_sizes`` to it). Moving the cut back keeps a message verbatim and
    takes it out of the summary, so the total only grows: the first cut that does not fit ends the search.
    `highest` (or the nearest safe cut before it) when none fits."""
    kept = sum(kept_sizes[highest:end])
    span = sum(summary_sizes[start:highest])
    best: int | None = None
    for c in range(highest, lowest - 1, -1):
        if c < highest:
            kept += kept_sizes[c]
            span -= summary_sizes[c]
        if fixed + kept + record_cost(span) > budget:
            break
        if cuts[c]:
            best = c
    if best is not None:
        return best
    return next((c for c in range(highest, start, -1) if cuts[c]), None)


def _freed_by_drops(messages: Sequence[Message], lay: Layout, steps: Sequence[Step], counter: TokenCounter) -> int:
    """Tokens the `DropBlocks` steps of a plan are expected to free: the blocks they drop, as `record_steps` counts
    them, less the note that stands for them at its most (`note_tokens`); negative where the note costs more."""
    drops = [s for s in steps if isinstance(s, DropBlocks)]
    blocks = record_blocks(messages[lay.record]) if drops and lay.record is not None else None
    if not blocks:
        return 0
    return sum(
        sum(counter.count_text(b.text) + BLOCK_OVERHEAD_TOKENS for b in blocks[: d.count]) - note_tokens(d.note_chars)
        for d in drops
    )


def _has_media(message: Message) -> bool:
    return any(
        isinstance(p, Image | File) or (isinstance(p, ToolResult) and not isinstance(p.content, str))
        for p in message.parts
    )


def _index(step: Step) -> int:
    match step.kind:
        case "summarize" | "evict":
            return step.start  # pyright: ignore[reportAttributeAccessIssue]
        case _:
            return step.index  # pyright: ignore[reportAttributeAccessIssue]


def _clip_note(tokens: int, limit: int) -> str:
    return (
        f"last resort: {tokens} tokens, over {limit} with nothing older left; clipping the current turn's tool output"
    )
