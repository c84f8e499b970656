"""Planning summaries into the record message (`chain.record_message`): where they may go and what they cost.

A history written by ``auto`` or ``ratio`` looks like this::

    [user system messages] [record: block, block, ...] [kept messages ...] [current turn]
     0 .. lead              lead (optional)              start ..           protected ..

A user system message further on (OpenAI's ``system``/``developer`` anywhere, Anthropic's mid-conversation beta) is
an instruction, like the leading ones: never summarized, never edited. It does not end the summarizable region
(an agent that gets one early on would otherwise never be summarized past it): a span that reaches over it keeps it
verbatim right after the record (`Summarize.keep`), with the other messages kept aside, in their order. The cuts
right before and after it are safe, and it is what the summarizer reads as context.

A new summary covers ``messages[start:cut]`` (the oldest messages not yet summarized) and becomes one more block of
the record: the summary chain grows by one block per compaction, and a block summarizes only originals (depth 1).
Only when the blocks themselves outgrow their share of the budget are they folded into one deeper block (the span
then starts at the record itself); past `PlanContext.max_depth` the oldest blocks leave the context for the archive
instead (`DropBlocks`), so a conversation of any length keeps being summarized and never stops at a depth guard.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..chain import current_turn_start, is_record_message, is_summary_system, record_blocks
from ..messages import Message
from ..tokens import TokenCounter
from ._note import note_chars, note_tokens
from ._plan import DropBlocks, Step, Summarize

__all__ = [
    "BLOCK_OVERHEAD_TOKENS",
    "LEAST_SUMMARY_TOKENS",
    "MIN_SUMMARY_TOKENS",
    "RECORD_OVERHEAD_TOKENS",
    "Layout",
    "estimate_margin",
    "layout",
    "least_record_tokens",
    "least_summary_tokens",
    "record_steps",
]

RECORD_OVERHEAD_TOKENS = 45
"""What a record message costs beyond its blocks' texts (its framing line and the message itself), estimated."""
BLOCK_OVERHEAD_TOKENS = 30
"""What one block costs beyond its text (its two tag lines), estimated."""
MIN_SUMMARY_TOKENS = 90
"""The shortest summary a summarizer is expected to write (the extractive default writes at least 300 characters,
with its header line): a span no larger than this plus its block's framing is never worth a summarizer call, whose
summary would be thrown away for being no smaller than what it replaces."""
LEAST_SUMMARY_TOKENS = 30
"""The shortest summary ever asked for, at any budget: below it a summary says too little to be worth its framing.
A budget of 20 times that or more asks for more (`least_summary_tokens`)."""


def least_summary_tokens(budget: int, most: int = MIN_SUMMARY_TOKENS) -> int:
    """The shortest summary ``auto`` asks for at `budget`: a twentieth of it, from `LEAST_SUMMARY_TOKENS` up to
    `most`. At 30 tokens the extractive summary of a 54-message agent span (asked for that little beside a current
    turn over the budget) was its header and "(651 more items left out for length)", a record that carried nothing
    (issue 21); at 45 it names a command, at 90 five commands and files. A small budget (``chainsum compact
    --budget 800``) cannot spare that much."""
    return min(most, max(LEAST_SUMMARY_TOKENS, budget // 20))


def least_record_tokens(budget: int) -> int:
    """The smallest record ``auto`` writes at `budget`: the record message's framing, one block's tags and the
    shortest summary asked for at that budget (`least_summary_tokens`). Whatever is summarized, the record stands
    beside what no plan removes (the system prompt, the current turn), so a budget is reachable only when they
    leave this much, and the margin (`estimate_margin`), beside them: the allowance ``chainsum compact`` documents
    and its tests grant (45 + 30 + 30 to 45 + 30 + 90 tokens: 105-165)."""
    return RECORD_OVERHEAD_TOKENS + BLOCK_OVERHEAD_TOKENS + least_summary_tokens(budget)


def estimate_margin(budget: int) -> int:
    """What a plan leaves free under `budget`, because a record's framing and a summary's length are estimates:
    5 tokens and a hundredth of the budget."""
    return 5 + budget // 100


@dataclass(frozen=True, slots=True)
class Layout:
    """Where the parts of a history are (see the module docstring)."""

    lead: int
    """``messages[:lead]`` are the user's leading system messages: never touched."""
    record: int | None
    """Index of the record message (always `lead` when present)."""
    start: int
    """First message a new summary may cover (right after the record, or `lead`)."""
    end: int
    """End of the region a summary may cover: the current turn."""
    protected: int
    """Start of the current turn (`chain.current_turn_start`)."""
    newest_user: int | None
    """Index of the newest user message (the task an agent is working on, the question a chat answers), which no
    summary or eviction ever removes: kept verbatim after the record when its span reaches it."""
    systems: tuple[int, ...] = ()
    """Indices of the user's system messages inside ``[start:end]``: kept verbatim after the record when a span
    reaches over them (see the module docstring)."""

    @property
    def kept(self) -> tuple[int, ...]:
        """Every index of the region that stays wherever a cut falls: its system messages and the newest user
        message, in order."""
        u = self.newest_user
        if u is None or u >= self.end or u in self.systems:
            return self.systems
        return tuple(sorted((*self.systems, u)))

    def keep(self, start: int, end: int) -> tuple[int, ...]:
        """The indices of ``[start:end]`` that must stay (its system messages, and the newest user message)."""
        u = self.newest_user
        inside = tuple(i for i in self.systems if start <= i < end)
        if u is not None and start <= u < end:
            return tuple(sorted((*inside, u)))
        return inside


def layout(messages: Sequence[Message], turn_start: int | None = None) -> Layout:
    """Where the parts of `messages` are; the current turn from `turn_start` when given (`PlanContext.turn_start`),
    else from the last assistant message."""
    n = len(messages)
    lead = 0
    while lead < n and _users_system(messages[lead]):
        lead += 1
    record = lead if lead < n and is_record_message(messages[lead]) else None
    start = lead + 1 if record is not None else lead
    protected = current_turn_start(messages) if turn_start is None else turn_start
    end = max(start, protected)
    systems = tuple(i for i in range(start, end) if _users_system(messages[i]))
    newest = next((i for i in range(n - 1, start - 1, -1) if messages[i].role == "user"), None)
    if newest is not None and (is_record_message(messages[newest]) or messages[newest].tool_calls):
        newest = None  # a user message that made tool calls (tau2's simulated users) cannot be moved from its results
    return Layout(
        lead=lead, record=record, start=start, end=end, protected=protected, newest_user=newest, systems=systems
    )


def _users_system(message: Message) -> bool:
    return message.role == "system" and not is_summary_system(message)


def record_steps(
    messages: Sequence[Message],
    lay: Layout,
    cut: int,
    *,
    counter: TokenCounter,
    block_budget: int,
    min_block: int,
    max_depth: int,
    reason: str,
    span_tokens: int | None = None,
    expected_ratio: float = 1.0,
    least: int | None = None,
) -> tuple[list[Step], int]:
    """The steps that summarize ``messages[lay.start:cut]`` into a new block of the record, and the block's length
    target in tokens.

    `block_budget` is what all blocks together may take. When the existing blocks leave less than `min_block` of
    it, they are folded into the new summary (the span starts at the record; the block is one level deeper) while
    that stays within `max_depth`; past it, the oldest blocks are dropped (`DropBlocks`) until the rest leaves room.
    With `span_tokens`, the target is also at most `expected_ratio` of the span (never below `min_block`): the cut was
    planned with that length, and a target above it would let the summary overrun the plan. With `least` (the
    shortest summary asked for at this budget), a folded block is asked for no more than `block_budget` leaves
    beside the record's framing, down to `least`: at a budget of 265 tokens a fold asked for `min_block` (120)
    could only grow the history, and no summary was planned at all.
    """
    cap = None if span_tokens is None else max(min_block, int(span_tokens * expected_ratio))

    def capped(target: int) -> int:
        return target if cap is None else min(target, cap)

    blocks = record_blocks(messages[lay.record]) if lay.record is not None else None
    if lay.record is None or not blocks:
        target = capped(max(min_block, block_budget - RECORD_OVERHEAD_TOKENS - BLOCK_OVERHEAD_TOKENS))
        step = Summarize(
            start=lay.start, end=cut, form="record", reason=reason, target_tokens=target, keep=lay.keep(lay.start, cut)
        )
        return [step], target
    sizes = [counter.count_text(b.text) + BLOCK_OVERHEAD_TOKENS for b in blocks]
    room = block_budget - RECORD_OVERHEAD_TOKENS - sum(sizes) - BLOCK_OVERHEAD_TOKENS
    if room >= min_block:
        target = capped(room)
        step = Summarize(
            start=lay.start, end=cut, form="record", reason=reason, target_tokens=target, keep=lay.keep(lay.start, cut)
        )
        return [step], target
    deepest = max(b.depth for b in blocks)
    if deepest + 1 <= max_depth:
        # at most half the blocks' room: a folded block asked for all of it (and a summarizer that keeps to the
        # length it is asked for) left the next summary no room beside it, so the next round folded again
        target = max(min_block, (block_budget - RECORD_OVERHEAD_TOKENS) // 2 - BLOCK_OVERHEAD_TOKENS)
        if least is not None:
            target = max(least, min(target, block_budget - RECORD_OVERHEAD_TOKENS - BLOCK_OVERHEAD_TOKENS))
        why = f"{reason}; the {len(blocks)} earlier summaries folded in (depth {deepest + 1})"
        step = Summarize(
            start=lay.record, end=cut, form="record", reason=why, target_tokens=target, keep=lay.keep(lay.start, cut)
        )
        return [step], target
    # At the depth cap: the oldest blocks go to the archive; a depth-0 note stands for them, saying what they listed
    # (`_note`: the user's requests first), in at most `note_tokens`.
    chars = note_chars(block_budget)
    room -= note_tokens(chars)
    drop = 0
    while drop < len(blocks) and room < min_block:
        room += sizes[drop]
        drop += 1
    steps: list[Step] = [
        DropBlocks(
            index=lay.record,
            count=drop,
            reason=f"summary chain at its depth cap ({max_depth}): the oldest {drop} summaries leave the context",
            note_chars=chars,
        )
    ]
    target = capped(max(min_block, room))
    steps.append(
        Summarize(
            start=lay.start, end=cut, form="record", reason=reason, target_tokens=target, keep=lay.keep(lay.start, cut)
        )
    )
    return steps, target
