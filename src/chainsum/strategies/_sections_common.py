"""What the `sections` strategy's planners share: the configuration, where each node of the chain sits in the flat
message list, and the spec's type-preservation and transcript-case rules.

A plan addresses messages by their index in the flat list the strategy was given, while the spec reasons about
sections and body pairs. `Layout` is the one translation between the two, so every planner cuts only at pair or
section boundaries (which `chainsum.chain.safe_cuts` always allows: a pair starts with its assistant message and
ends after its last tool message).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..chain import BodyPair, Chain, PairKind, Section, contains_summarized_content, safe_cuts
from ..messages import Message
from ._plan import Summarize, SummaryForm, TranscriptCase

__all__ = [
    "KIB",
    "Layout",
    "SectionSpan",
    "SectionsConfig",
    "checked_steps",
    "first_kept_section",
    "form_for_pair",
    "form_for_pairs",
    "human_case",
    "is_single_summary",
]

KIB = 1024

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class SectionsConfig:
    """The spec's `SummarizerConfig`, with its defaults. Sizes are bytes of content, as the chain measures them.

    The spec (Go) treats a zero or negative value as "use the default"; here the defaults are real defaults and a
    value out of range is a `ValueError`, so a typo cannot silently switch a limit off.
    """

    preserve_last: bool = True
    """``PreserveLast``: manage the size of the last `keep_qa_sections` sections (oversized pairs, then rotation
    of their oldest pairs into one summary)."""
    use_qa: bool = False
    """``UseQA``: when the chain has more than `max_qa_sections` sections or more than `max_qa_bytes` bytes, merge
    the oldest sections into one summary section."""
    summarize_human_in_qa: bool = False
    """``SummHumanInQA``: in QA summarization, replace the merged sections' human messages by a summary of them
    (instead of keeping them verbatim, joined into one user message)."""
    last_sec_bytes: int = 50 * KIB
    """``LastSecBytes``: the size above which one of the last sections is rotated."""
    max_bp_bytes: int = 16 * KIB
    """``MaxBPBytes``: the size above which a body pair of the last sections is summarized on its own."""
    max_qa_sections: int = 10
    """``MaxQASections``: QA summarization keeps the chain at most this many sections long."""
    max_qa_bytes: int = 64 * KIB
    """``MaxQABytes``: QA summarization keeps the recent sections within this many bytes."""
    keep_qa_sections: int = 1
    """``KeepQASections``: how many of the most recent sections are never summarized whole (the current turn is
    always one of them)."""
    last_section_reserve_percent: int = 25
    """The spec's ``lastSectionReservePercentage`` (a constant there): rotation keeps recent pairs within
    ``last_sec_bytes * (100 - reserve) / 100`` bytes, leaving room to grow before the next rotation."""

    def __post_init__(self) -> None:
        for name in ("last_sec_bytes", "max_bp_bytes", "max_qa_sections", "max_qa_bytes", "keep_qa_sections"):
            value: int = getattr(self, name)
            if value <= 0:
                raise ValueError(f"SectionsConfig.{name} must be positive, got {value}")
        reserve = self.last_section_reserve_percent
        if not 0 <= reserve < 100:
            raise ValueError(f"SectionsConfig.last_section_reserve_percent must be in [0, 100), got {reserve}")


@dataclass(frozen=True, slots=True)
class SectionSpan:
    """Where one section lies in the flat message list."""

    section: Section
    start: int
    """Index of the section's first message."""
    system: int | None
    """Index of its system message, if any."""
    human: int | None
    """Index of its human message, if any."""
    body_start: int
    """Index of the first body message (= `end` when the body is empty)."""
    pair_starts: tuple[int, ...]
    """Index of each body pair's assistant message."""
    end: int
    """One past the section's last message."""

    def pair_end(self, i: int) -> int:
        """One past the last message of body pair `i`."""
        return self.pair_starts[i + 1] if i + 1 < len(self.pair_starts) else self.end


@dataclass(frozen=True, slots=True)
class Layout:
    """Every section of a chain with its position in the flat list the chain was built from (a strict build keeps
    messages one to one, in order)."""

    spans: tuple[SectionSpan, ...]

    @classmethod
    def of(cls, chain: Chain) -> Layout:
        spans: list[SectionSpan] = []
        at = 0
        for s in chain.sections:
            start = at
            system = human = None
            if s.header.system is not None:
                system, at = at, at + 1
            if s.header.human is not None:
                human, at = at, at + 1
            at += len(s.header.human_tool_messages)
            body_start = at
            starts: list[int] = []
            for p in s.body:
                starts.append(at)
                at += 1 + len(p.tool_messages)
            spans.append(SectionSpan(s, start, system, human, body_start, tuple(starts), at))
        return cls(tuple(spans))

    @property
    def count(self) -> int:
        return self.spans[-1].end if self.spans else 0


def first_kept_section(chain: Chain, keep: int) -> int:
    """Index of the first section never summarized whole: the last `keep` sections are kept, and so is the
    section holding the chain's last body pair.

    The last pair is the current turn (pending calls, signatures), and the executor protects it wherever it is;
    when a history ends with a human message still waiting for its answer, that pair lies in the section before
    the last one, which the spec's count alone would summarize.
    """
    n = len(chain.sections)
    first = max(n - keep, 0)
    for si in range(n - 1, -1, -1):
        if chain.sections[si].body:
            return min(first, si)
    return first


def form_for_pairs(pairs: Iterable[BodyPair]) -> SummaryForm:
    """The spec's ``determineTypeToSummarizedSection``: a summary of Completion pairs only is a Completion (an
    assistant text with the summarized-content prefix); if any pair is a tool round trip or a Summarization, the
    summary is a Summarization pair, so a history that used tools keeps the shape of one that uses tools."""
    for p in pairs:
        if p.kind is not PairKind.COMPLETION:
            return "pair"
    return "completion"


def form_for_pair(pair: BodyPair) -> SummaryForm:
    """The spec's oversized-pair rule: a RequestResponse pair becomes a Summarization pair, anything else a
    Completion with the prefix."""
    return "pair" if pair.kind is PairKind.REQUEST_RESPONSE else "completion"


def human_case(span: SectionSpan) -> tuple[TranscriptCase, tuple[int, ...]]:
    """The spec's Summary Generation case for AI content of one section: with the section's human message as
    context (case 1) when it has one, else the AI content alone (case 2)."""
    if span.human is not None:
        return "context", (span.human,)
    return "ai", ()


def is_single_summary(pairs: Sequence[BodyPair]) -> bool:
    """True when `pairs` is exactly one summary pair (by kind or by prefix): summarizing it alone again would only
    lose detail, never space worth having."""
    return len(pairs) == 1 and contains_summarized_content(pairs[0])


def checked_steps(messages: Sequence[Message], steps: Iterable[Summarize]) -> list[Summarize]:
    """The steps whose span starts and ends at safe cuts and holds no system message.

    Every planner here cuts at pair or section boundaries after the system message, so nothing is ever dropped;
    the check is the shared safe-cut function applied once more, so a planner bug shows as a missing step (and an
    assertion in the tests), never as an orphaned tool result sent to a provider.
    """
    cuts = safe_cuts(messages)
    out: list[Summarize] = []
    for step in steps:
        ok = 0 <= step.start < step.end <= len(messages) and cuts[step.start] and cuts[step.end]
        if ok and not any(messages[i].role == "system" for i in range(step.start, step.end)):
            out.append(step)
        else:
            logger.warning("start=<%d>, end=<%d> | dropped a step that would split a tool pair", step.start, step.end)
    return out
