"""The ``sections`` strategy: ``specs/chain-summarization.md`` as a planner.

The spec runs four phases in one call: (1) every section but the last `keep_qa_sections` becomes its header and
one summary pair; (2) in each of those last sections, oversized body pairs are summarized one by one; (3) a last
section still over its limit has its oldest pairs rotated into one summary; (4) with QA enabled, the oldest
sections are merged into one summary section. Here each call to `SectionsStrategy.plan` looks at the history as
it is now and returns the steps of the first phase that has something to do; the executor applies them and asks
again, so the phases run in the spec's order over successive rounds, each seeing the sizes the previous one left.
Within a phase the steps are independent (disjoint spans of whole body pairs or whole sections), so any subset
may be applied, which is how the spec's error aggregation becomes partial application: a failed summary leaves its
span as it was and the others still count.

Where this departs from the spec, and why:

- A single-section chain is not returned unchanged (the spec's flowchart and edge-case table say so, its code
  does not): agent sessions are often one user message and hundreds of tool pairs, and rotation is what keeps
  them in bounds. Section summarization never touches it (the last section is always kept).
- Section summarization summarizes the whole body of an old section, its last pair included, as the spec does:
  that is what makes each old section "header + one body pair", and what QA merging builds on. The last pair
  rule protects the current turn (signatures and pending calls providers check only there): the sections
  summarized whole are never among the last `keep_qa_sections` (at least one) nor the one holding the chain's
  last body pair, so the current turn is never in a step; pair-level steps (oversized pairs, rotation) never
  touch the last pair of any section.
- QA summarization cannot keep the merged sections' later human messages verbatim (a step replaces its whole
  span): they are summarized with the answers they asked for; see `_sections_qa`.
- Summaries are not checked for saving space here (a planner has no summary text): the executor applies a
  result only when it is smaller, which is the spec's "return the modified chain if it saves space".
- A history whose chain build would add, drop or merge messages gets an empty plan with the reason in its note:
  indices must map one to one onto the messages, and repairing them is the executor's first step. (A leading
  assistant message is accepted: it opens a header-less section and changes nothing.)
- Rotation looks at every section that is not summarized whole: the last `keep_qa_sections`, and also the
  section holding the chain's last body pair when a human message waiting for its answer follows it (the
  executor protects that pair, so that section cannot be summarized whole; rotating it is what keeps a long
  agent turn in bounds).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..chain import Chain
from ..messages import Message
from ._plan import Plan, PlanContext, Summarize
from ._sections_common import (
    Layout,
    SectionsConfig,
    checked_steps,
    first_kept_section,
    form_for_pairs,
    human_case,
    is_single_summary,
)
from ._sections_last import (
    determine_last_section_pairs,
    last_section_indices,
    plan_last_section_rotation,
    plan_oversized_pairs,
)
from ._sections_qa import exceeds_qa_limits, plan_qa_pairs, qa_sections_to_keep

__all__ = [
    "SectionsConfig",
    "SectionsStrategy",
    "determine_last_section_pairs",
    "exceeds_qa_limits",
    "plan_last_section_rotation",
    "plan_oversized_pairs",
    "plan_qa_pairs",
    "plan_sections",
    "qa_sections_to_keep",
]

logger = logging.getLogger(__name__)


def plan_sections(messages: Sequence[Message], chain: Chain, config: SectionsConfig) -> list[Summarize]:
    """One step per section before the last `config.keep_qa_sections` whose body is not already a single summary
    (the spec's ``summarizeSections``): the whole body becomes one summary pair. The section holding the chain's
    last body pair is kept too (see `first_kept_section`).

    `chain` must be the strict build of `messages`. Skipped: sections with an empty body, and sections whose
    body is exactly one pair holding a summary, by kind (Summarization) or by prefix (a Completion starting with
    `SUMMARIZED_CONTENT_PREFIX`), so nothing is summarized twice. The header (system and human messages, and the
    results of calls the human made) is never in the step; the human message is the summary's context
    (transcript case 1), else the AI content is summarized alone (case 2). The form follows
    ``determineTypeToSummarizedSection``: ``completion`` when every pair is a Completion, else ``pair``.
    """
    layout = Layout.of(chain)
    steps: list[Summarize] = []
    for si, span in enumerate(layout.spans[: first_kept_section(chain, config.keep_qa_sections)]):
        body = span.section.body
        if not body or is_single_summary(body):
            continue
        case, context = human_case(span)
        steps.append(
            Summarize(
                start=span.body_start,
                end=span.end,
                form=form_for_pairs(body),
                reason=(
                    f"section {si + 1} has {len(body)} body pairs ({span.section.size} bytes); every section "
                    f"before the last {config.keep_qa_sections} keeps one"
                ),
                case=case,
                context=context,
            )
        )
    logger.debug("steps=<%d> | planned section summarization", len(steps))
    return checked_steps(messages, steps)


def _chain_of(messages: Sequence[Message]) -> Chain | None:
    """The chain of `messages` when its sections hold exactly these messages, in order (so plan indices map one
    to one), else None. A leading assistant message (a header-less first section, which the executor's repair
    keeps) is fine; a build that adds, drops or merges messages is not."""
    chain = Chain.build(messages, repair=True, allow_pending_tail=True)
    if chain.count != len(messages) or any(a is not b for a, b in zip(chain.messages(), messages, strict=True)):
        logger.warning("repairs=<%d> | not a well-formed chain; nothing planned", len(chain.repairs))
        return None
    return chain


@dataclass(frozen=True, slots=True)
class SectionsStrategy:
    """The summarization spec's algorithm, one phase per round (see the module docstring).

    Ignores `PlanContext.budget`: the spec's byte thresholds in `config` decide, and the executor stops as soon
    as the history fits the budget. Deterministic: the plan depends on the messages and the config only.
    """

    config: SectionsConfig = field(default_factory=SectionsConfig)
    name: str = "sections"

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        chain = _chain_of(messages)
        if chain is None:
            return Plan(note="not a well-formed chain (its build would change messages); repair it first")
        if not chain.sections:
            return Plan(note="empty history: nothing to do")
        config = self.config
        steps = plan_sections(messages, chain, config)
        if steps:
            return Plan(tuple(steps), note="section summarization: old sections become header + one summary")
        if config.preserve_last:
            last = last_section_indices(chain, config)
            steps = plan_oversized_pairs(messages, chain, config, last)
            if steps:
                return Plan(tuple(steps), note="oversized body pairs in the last sections")
            steps = plan_last_section_rotation(messages, chain, config)
            if steps:
                return Plan(tuple(steps), note="last-section rotation: oldest pairs become one summary")
        if config.use_qa:
            steps = plan_qa_pairs(messages, chain, config)
            if steps:
                return Plan(tuple(steps), note="QA-pair summarization: oldest sections become one")
        return Plan(note="every section is within the limits: nothing to do")
