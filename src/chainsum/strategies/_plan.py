"""Plans: what a strategy decides, as data. The executor (`chainsum.executor`) is the only code that changes messages.

A plan is a tuple of steps over the *flat* message list a strategy was given (indices into it). Steps never
overlap. A strategy is a planner: ``plan(messages, ctx) -> Plan``. The executor applies a plan, then asks the
strategy again on the result, until the plan is empty, the history fits the budget, or `max_rounds` is reached:
multi-phase algorithms (the sections spec: sections, then oversized pairs, then last-section rotation, then QA
pairs) are one planner that looks at the current state each round. Nothing here calls a model, so a dry run can
print plans.

Steps:

- `Summarize`: replace ``messages[start:end]`` by a summary, rendered from that span (plus, for the
  "human messages as context" case, the human messages in `context`, which are shown to the summarizer but not
  replaced). `form` says how the summary enters the history (see `SummaryForm`).
- `SummarizePart`: replace the content of one oversized part (a tool result or a text) by its summary, in place
  (safe-split's message-level summarization).
- `Mask`: replace an old tool result's content by a short placeholder (no model).
- `Clip`: keep the head and tail of a huge tool result, with a marker in between (no model).
- `DropBlocks`: move the oldest blocks of a record message to the archive (no model): how a summary chain at its
  depth cap makes room, instead of summarizing summaries ever deeper.
- `Evict`: move a span of old messages to the archive without a summary (no model); a depth-0 block in the record
  says so. The last resort over the context window, when nothing else brings the history under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from ..chain import SummaryForm
from ..messages import Message
from ..summarize import TranscriptCase
from ..tokens import TokenCounter
from ._note import NOTE_CHARS

__all__ = [
    "Clip",
    "DropBlocks",
    "Evict",
    "Mask",
    "Plan",
    "PlanContext",
    "Step",
    "Strategy",
    "Summarize",
    "SummarizePart",
    "TranscriptCase",
]


@dataclass(frozen=True, slots=True)
class Summarize:
    start: int
    end: int
    form: SummaryForm
    reason: str
    """Why, in words a dry run prints (e.g. "section 3 has 7 body pairs; sections before the last 1 keep one")."""
    case: TranscriptCase = "context"
    context: tuple[int, ...] = ()
    """Indices of human messages shown to the summarizer as context but kept in the history."""
    target_tokens: int | None = None
    """The summary's length target (the transcript asks for it); None: the summarizer's own default."""
    keep: tuple[int, ...] = ()
    """Indices inside the span kept verbatim, right after the summary (``record`` form), in order: the newest user
    message of an agent's long turn is the task itself and never leaves the context, and a user's system message in
    the middle is an instruction that never does either. The summarizer sees them as context."""
    excerpt_from: int | None = None
    """``record`` form: the span's last messages, ``[excerpt_from:end]``, are also quoted in the block after the
    summary, as head and tail within `excerpt_tokens` (plus what the summary leaves of its target). They are the
    messages a somewhat larger budget keeps verbatim: quoting them in part fills the budget without growing the
    summary, so more budget never buys a shorter summary of a span that was summarized anyway."""
    excerpt_tokens: int = 0
    """The excerpt's room beyond the summary's target; negative when the target is already more than the budget
    leaves (a summary's shortest), so the excerpt only gets what the summary leaves below the target beyond that."""
    kind: Literal["summarize"] = "summarize"


@dataclass(frozen=True, slots=True)
class SummarizePart:
    index: int
    part: int
    reason: str
    kind: Literal["summarize_part"] = "summarize_part"


@dataclass(frozen=True, slots=True)
class Mask:
    index: int
    part: int
    reason: str
    kind: Literal["mask"] = "mask"


@dataclass(frozen=True, slots=True)
class Clip:
    index: int
    part: int
    head: int
    """Characters kept from the start."""
    tail: int
    """Characters kept from the end."""
    reason: str
    kind: Literal["clip"] = "clip"


@dataclass(frozen=True, slots=True)
class DropBlocks:
    index: int
    """The record message."""
    count: int
    """How many of its oldest blocks leave the context (a depth-0 block notes them; see `Evict`)."""
    reason: str
    note_chars: int = NOTE_CHARS
    """The most the note may say beyond its first line (`strategies._note`): a small budget's note says less."""
    kind: Literal["drop_blocks"] = "drop_blocks"


@dataclass(frozen=True, slots=True)
class Evict:
    start: int
    end: int
    """``messages[start:end]`` leave the context for the archive, unsummarized (cut where `safe_cuts` allows)."""
    reason: str
    keep: tuple[int, ...] = ()
    """Indices inside the span that stay (see `Summarize.keep`)."""
    note_chars: int = NOTE_CHARS
    """The most the note standing for the span may say beyond its first line (see `DropBlocks`)."""
    kind: Literal["evict"] = "evict"


Step: TypeAlias = Summarize | SummarizePart | Mask | Clip | DropBlocks | Evict


@dataclass(frozen=True, slots=True)
class Plan:
    steps: tuple[Step, ...] = ()
    note: str = ""
    """What the planner concluded (printed in dry runs), e.g. "fits the budget: nothing to do"."""
    turn_start: int | None = None
    """Where the turn no step may reach starts, when the plan lets the last body pair give way (planned with
    `PlanContext.turn_start`); None: at the last assistant message (`chain.current_turn_start`). The executor's
    check holds the plan to it, and never lets it past the newest user message (`chain.newest_turn_start`)."""

    def __bool__(self) -> bool:
        return bool(self.steps)


@dataclass(frozen=True, slots=True)
class PlanContext:
    """What a planner may look at besides the messages."""

    budget: int | None
    """Target size in tokens (None: the strategy's own thresholds decide, as in the specs)."""
    counter: TokenCounter
    round: int = 0
    """Which round of the executor loop this is (0 first)."""
    depth: int = 0
    """How many summaries deep the history already is (summaries of summaries)."""
    keep_recent: int = 0
    """The last this many messages stay verbatim (the manager's ``preserve_recent``, set by `TailGuard`); a planner
    that knows it plans around them, and the guard removes what reaches into them anyway. Ignored past
    `hard_limit`."""
    max_depth: int = 3
    """Deepest summary of summaries a strategy may write (`chain.message_depth`); at the cap, the oldest blocks of a
    record leave the context (`DropBlocks`) instead of being folded into a deeper summary."""
    hard_limit: int | None = None
    """Tokens above which the provider rejects the request (the model's context window), when known. Only past it
    may a strategy edit the current turn: ``auto`` then clips the current turn's oversized tool output, as a last
    resort, because a request the provider must refuse helps nobody."""
    turn_start: int | None = None
    """Where the current turn starts for this plan, when not at the last assistant message: `TailGuard` sets it to
    the newest user message after it (`chain.newest_turn_start`) when the history is over the budget with nothing
    else left to do, so the pair before that message may give way (its tool output masked, then summarized), and
    marks the plan with it (`Plan.turn_start`). ``auto`` and ``mask`` honour it; a planner that does not plans as
    without it, before the last assistant message."""
    extra: dict[str, object] = field(default_factory=dict[str, object])
    """Facts from the executor: `compact` sets ``tokens_before`` (the input's size when compaction started), which
    ``auto`` uses as the base of its default target when no budget is given."""


class Strategy(Protocol):
    """A planner. Must be deterministic, must never summarize or edit system messages (a record's span may reach
    over one only to keep it aside, `Summarize.keep`), must cut only where
    `chainsum.chain.safe_cuts` allows, must never touch the last body pair of a section (the current turn), with
    one exception: clipping the current turn's tool output when the history is over `PlanContext.hard_limit`."""

    @property
    def name(self) -> str: ...

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan: ...
