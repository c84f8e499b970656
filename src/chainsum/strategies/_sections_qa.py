"""QA-pair summarization: when the chain has too many sections or bytes, the oldest sections become one.

The spec's ``summarizeQAPairs`` builds a new first section: the system message, one human message (the merged
sections' human messages joined, or a summary of them), and one summary of their AI content made with those human
messages as context; the most recent sections follow unchanged. The spec names its helpers
(``exceedsQASectionLimits``, ``prepareQASectionsForSummarization``, ``determineRecentSectionsToKeep``) without
their bodies; `qa_sections_to_keep` records what we chose.

The executor replaces a step's span by its summary and shows `Summarize.context` (messages outside the span) to
the summarizer, so the spec's joined human message cannot be expressed: the merged sections' later human messages
go into the summarized span (the summarizer reads them there, the archive keeps them), and the first one stays
verbatim, or becomes the summary of all of them with `summarize_human_in_qa`. See `plan_qa_pairs`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..chain import Chain
from ..messages import Message
from ._plan import Summarize
from ._sections_common import Layout, SectionsConfig, checked_steps, first_kept_section, form_for_pairs

__all__ = ["exceeds_qa_limits", "plan_qa_pairs", "qa_sections_to_keep"]

logger = logging.getLogger(__name__)


def exceeds_qa_limits(chain: Chain, config: SectionsConfig) -> bool:
    """The spec's ``exceedsQASectionLimits``: more sections than `max_qa_sections`, or more bytes (the whole
    chain, system message included: it is what is sent) than `max_qa_bytes`."""
    return len(chain.sections) > config.max_qa_sections or chain.size > config.max_qa_bytes


def qa_sections_to_keep(chain: Chain, config: SectionsConfig) -> int:
    """The spec's ``determineRecentSectionsToKeep``: how many of the most recent sections stay as they are.

    Walking back from the last section, a section is kept while the kept ones number fewer than
    ``max_qa_sections - 1`` (the summary section is one more, so the result has at most `max_qa_sections`) and
    their bytes stay within `max_qa_bytes`. At least `keep_qa_sections` are kept whatever their size (the
    current turn is never merged away; nor is the section holding the chain's last body pair, see
    `first_kept_section`), and at most all of them.
    """
    kept = 0
    size = 0
    for section in reversed(chain.sections):
        if kept >= config.max_qa_sections - 1 or size + section.size > config.max_qa_bytes:
            break
        kept += 1
        size += section.size
    n = len(chain.sections)
    return min(max(kept, n - first_kept_section(chain, config.keep_qa_sections)), n)


def plan_qa_pairs(messages: Sequence[Message], chain: Chain, config: SectionsConfig) -> list[Summarize]:
    """The steps merging the oldest sections into one summary section, or none when the limits hold.

    Choices where the spec is open:

    - At least two sections must be merged: one old section is already header + one summary after section
      summarization, and merging it with nothing would only summarize a summary again (and, with human
      summarization, do so every round).
    - The merged sections must hold at least one body pair (there must be AI content to summarize).
    - The system message is never in a step; it stays first, as the spec's summary section keeps it.
    - Without `summarize_human_in_qa`: one step from the end of the first section's header (its human message
      and the results of calls that message made stay verbatim) to the end of the last merged section, with that
      human message as context (transcript case 1). The spec keeps every merged human message, joined into one;
      a plan step cannot keep messages inside its span, so the later ones are summarized with the AI content
      they asked for (they are in the span the summarizer reads). When the first section has no human message,
      the step starts after the system message and the case is 2 (AI content), the human messages being inside.
    - With it: two steps. The first section's human message (and the results of any calls it made) becomes a
      user message holding a summary of all the merged human messages (form ``user``, case 3, the later ones as
      context: they lie in the other step's span, not this one's); everything after it, up to the end of the
      last merged section, becomes one summary made with the first human message as context (case 1). The result
      is the spec's: system, one user message summarizing the questions, one summary of the answers. When the
      first section has no human message, the one-step form is used.
    - The summary's form follows ``determineTypeToSummarizedSections`` over every merged pair.
    """
    if not exceeds_qa_limits(chain, config):
        return []
    keep = qa_sections_to_keep(chain, config)
    merged = len(chain.sections) - keep
    if merged < 2:
        return []
    spans = Layout.of(chain).spans[:merged]
    pairs = [p for sp in spans for p in sp.section.body]
    if not pairs:
        return []
    first = spans[0]
    start = first.start + (1 if first.system is not None else 0)
    end = spans[-1].end
    humans = tuple(sp.human for sp in spans if sp.human is not None)
    form = form_for_pairs(pairs)
    reason = (
        f"the chain has {len(chain.sections)} sections and {chain.size} bytes (limits {config.max_qa_sections} "
        f"sections, {config.max_qa_bytes} bytes); the oldest {merged} sections become one, keeping the last {keep}"
    )
    steps: list[Summarize]
    if first.human is None:
        steps = [Summarize(start=start, end=end, form=form, reason=reason, case="ai")]
    elif not config.summarize_human_in_qa:
        steps = [
            Summarize(start=first.body_start, end=end, form=form, reason=reason, case="context", context=(first.human,))
        ]
    else:
        steps = [
            Summarize(
                start=first.human,
                end=first.body_start,
                form="record",
                reason=reason + f"; their {len(humans)} human messages become one summary",
                case="human",
                context=humans[1:],
            ),
            Summarize(
                start=first.body_start, end=end, form=form, reason=reason, case="context", context=(first.human,)
            ),
        ]
    logger.debug("merged=<%d>, kept=<%d>, steps=<%d> | planned QA-pair summarization", merged, keep, len(steps))
    return checked_steps(messages, steps)
