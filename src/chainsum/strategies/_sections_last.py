"""The last sections: oversized body pairs, then rotation of the oldest pairs into one summary.

The spec's ``summarizeLastSection`` does both in one call; as a planner it is two phases (the executor applies the
oversized-pair summaries, then asks again, and rotation then sees the sizes they left). In both, the last body
pair of a section is never summarized: it holds the reasoning signatures providers check (Gemini's
thought_signature, Anthropic's signed thinking), the pending calls, and the turn being answered.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from ..chain import BodyPair, Chain, Section, contains_summarized_content
from ..messages import Message
from ._plan import Summarize
from ._sections_common import (
    Layout,
    SectionsConfig,
    checked_steps,
    first_kept_section,
    form_for_pair,
    form_for_pairs,
    human_case,
    is_single_summary,
)

__all__ = ["determine_last_section_pairs", "last_section_indices", "plan_last_section_rotation", "plan_oversized_pairs"]

logger = logging.getLogger(__name__)


def last_section_indices(chain: Chain, config: SectionsConfig) -> list[int]:
    """The sections rotated, newest first (the spec's loop from ``len - 1`` down to ``len - KeepQASections``):
    the last `keep_qa_sections`, and every section after `first_kept_section` (the one holding the chain's last
    body pair, when a human message waiting for its answer follows it: it is not summarized whole, so it is
    rotated instead)."""
    return list(range(len(chain.sections) - 1, first_kept_section(chain, config.keep_qa_sections) - 1, -1))


def plan_oversized_pairs(
    messages: Sequence[Message], chain: Chain, config: SectionsConfig, sections: Iterable[int] | None = None
) -> list[Summarize]:
    """One step per body pair larger than `config.max_bp_bytes` (the spec's ``summarizeOversizedBodyPairs``).

    `chain` must be the strict build of `messages`. `sections` chooses which sections to look at (indices into
    ``chain.sections``); None means every section (what the ``auto`` strategy wants), while `SectionsStrategy`
    passes the last `keep_qa_sections`, as the spec does. Skipped: the last pair of each section (never
    summarized), pairs already holding a summary (by kind or by prefix), pairs within the limit. Each step covers
    exactly one whole pair, so the steps are independent and any subset may be applied. The section's human
    message is the summary's context (transcript case 1), or, without one, case 2 (AI content alone).
    """
    layout = Layout.of(chain)
    chosen = range(len(layout.spans)) if sections is None else sorted(set(sections))
    steps: list[Summarize] = []
    for si in chosen:
        span = layout.spans[si]
        body = span.section.body
        case, context = human_case(span)
        for pi, pair in enumerate(body[:-1]):
            if pair.size <= config.max_bp_bytes or contains_summarized_content(pair):
                continue
            steps.append(
                Summarize(
                    start=span.pair_starts[pi],
                    end=span.pair_end(pi),
                    form=form_for_pair(pair),
                    reason=(
                        f"section {si + 1}, body pair {pi + 1} has {pair.size} bytes, "
                        f"more than the {config.max_bp_bytes} allowed for one pair"
                    ),
                    case=case,
                    context=context,
                )
            )
    logger.debug("steps=<%d> | planned oversized body pairs", len(steps))
    return checked_steps(messages, steps)


def determine_last_section_pairs(
    section: Section, max_bytes: int, reserve_percent: int
) -> tuple[tuple[BodyPair, ...], tuple[BodyPair, ...]]:
    """Split a section's body into the pairs to keep and the pairs to summarize: ``(to_keep, to_summarize)``.

    The spec gives only a flowchart (header size; no pairs: nothing; always keep the last pair; a threshold with
    reserve; the other pairs in reverse order, kept while they fit). Where it is open, this is what we chose:

    - The threshold is ``max_bytes * (100 - reserve_percent) // 100``: the reserve is a share of the *limit*, not
      of the current size, so after a rotation the section has room to grow by that share before it is rotated
      again (hysteresis; a share of the current size would make the kept part depend on how late we acted).
    - The header counts against the threshold: it stays in the section, and the limit is on the section.
    - The last pair is always kept, even when it alone (with the header) is over the threshold.
    - Walking back from the second-to-last pair, a pair is kept while header + kept pairs + it fit. The first pair
      that does not fit is summarized, and so is every older pair: the summary covers a prefix of the body and the
      kept pairs a suffix, so the section stays in chronological order (summary first, then kept pairs, as the
      spec's new body is laid out) and a smaller older pair is never kept after a larger newer one was dropped.
    - The summary's own size is not counted (it is not known yet); the reserve absorbs it.
    - Both tuples are in chronological order; ``to_summarize + to_keep == section.body``.
    - Whether to act on the split (the section must be over `max_bytes`; a prefix that is one summary already is
      not summarized again) is the caller's decision, as in the spec, where ``summarizeLastSection`` checks.
    """
    body = section.body
    if not body:
        return (), ()
    threshold = max_bytes * (100 - reserve_percent) // 100
    used = section.header.size + body[-1].size
    cut = len(body) - 1
    while cut > 0 and used + body[cut - 1].size <= threshold:
        cut -= 1
        used += body[cut].size
    return body[cut:], body[:cut]


def plan_last_section_rotation(messages: Sequence[Message], chain: Chain, config: SectionsConfig) -> list[Summarize]:
    """One step per last section (see `last_section_indices`) larger than `config.last_sec_bytes`: its oldest
    pairs, chosen by `determine_last_section_pairs`, become one summary at the start of its body.

    The summary's form follows the spec's ``determineTypeToSummarizedSection`` over the pairs summarized. Skipped:
    sections within the limit, and sections whose prefix to summarize is a single summary already (a rotation
    summary from an earlier round: summarizing it alone again gains nothing). A prefix that starts with an older
    rotation summary and goes on with new pairs is summarized as a whole, as in the spec (a rolling summary).
    """
    layout = Layout.of(chain)
    steps: list[Summarize] = []
    for si in last_section_indices(chain, config):
        span = layout.spans[si]
        section = span.section
        if section.size <= config.last_sec_bytes:
            continue
        _, to_summarize = determine_last_section_pairs(
            section, config.last_sec_bytes, config.last_section_reserve_percent
        )
        if not to_summarize or is_single_summary(to_summarize):
            continue
        case, context = human_case(span)
        steps.append(
            Summarize(
                start=span.body_start,
                end=span.pair_end(len(to_summarize) - 1),
                form=form_for_pairs(to_summarize),
                reason=(
                    f"section {si + 1} has {section.size} bytes, more than {config.last_sec_bytes}; its oldest "
                    f"{len(to_summarize)} of {len(section.body)} body pairs become one summary, keeping "
                    f"{100 - config.last_section_reserve_percent}% of the limit for the recent ones"
                ),
                case=case,
                context=context,
            )
        )
    logger.debug("steps=<%d> | planned last-section rotation", len(steps))
    return checked_steps(messages, steps)
