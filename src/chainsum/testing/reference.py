"""How much of a production summary's key items a compaction kept: the agent-session reference share.

Each Claude Code session of the corpora holds one compaction Claude Code made itself: a ``compact_boundary`` line,
then a user message (``isCompactSummary``) with the summary its model wrote of the history before it. That summary
is a reference of what a careful model thought worth keeping. Its key items are what this module reads off it:

- backticked names (`` `mix compile --force` ``, `` `length/1` ``): inline code spans, fenced code blocks left out
  (a block is a quoted excerpt of a file, not a name), each stripped of spaces at its ends;
- file paths: a word with a directory separator or a file extension (``lib/spotter/otel.ex``, ``mix.exs``),
  trailing punctuation stripped.

Only the items that occur in the history before the boundary count (a model's paraphrase, or a path it made up, is
not something any compaction could have kept). An item is kept when it occurs, verbatim, in the text of the
compacted history (`chainsum.testing.retention.texts`). The patterns are this module's own, independent of the
extractive summarizer's (`chainsum.summarize`), so a share measured with them is not self-fulfilling.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..formats import claude_code
from ..messages import Message, Text
from .retention import texts

__all__ = ["ReferenceCase", "ReferenceRun", "key_items", "measure_reference", "reference_case", "reference_share"]

_FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`([^`\n]{2,200})`")
_PATH = re.compile(r"(?<![\w/.~-])(?:~|\.{1,2})?/?(?:[\w@+-][\w.@+-]*/)+[\w.@+-]+|(?<![\w/.-])[\w-]+\.[A-Za-z]{1,6}\b")
_TRAILING = ".,;:)]}'\"`"
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}$")


def key_items(reference: str, history: str) -> set[str]:
    """The key items of `reference` (backticked names and file paths, see the module) that occur in `history`."""
    prose = _FENCE.sub(" ", reference)
    found: set[str] = set()
    for match in _INLINE.finditer(prose):
        item = match.group(1).strip()
        if len(item) >= 2:
            found.add(item)
    for match in _PATH.finditer(prose):
        item = match.group(0).rstrip(_TRAILING)
        if "/" in item.strip("/") or _EXTENSION.search(item):
            if len(item) >= 4 and not item.replace(".", "").isdigit():
                found.add(item)
    return {item for item in found if item in history}


def reference_share(items: set[str], output: Sequence[Message]) -> float:
    """The share of `items` that occur in the text of `output` (1.0 when there are none)."""
    if not items:
        return 1.0
    text = texts(output)
    return sum(item in text for item in items) / len(items)


@dataclass(frozen=True, slots=True)
class ReferenceCase:
    """One session's compaction: the history before it, the production summary, and its key items."""

    history: tuple[Message, ...]
    reference: str
    items: frozenset[str]


def reference_case(messages: Sequence[Message]) -> ReferenceCase | None:
    """The first compaction of a loaded Claude Code session (`chainsum.formats.claude_code`), None when it has
    none."""
    boundaries = claude_code.compaction_boundaries(messages)
    if not boundaries:
        return None
    at = boundaries[0]
    summary = messages[at]
    first = summary.parts[0] if summary.parts else None
    reference = first.text if isinstance(first, Text) else ""  # the local-command lines logged after it join it
    history = tuple(messages[:at])
    return ReferenceCase(history, reference, frozenset(key_items(reference, texts(history))))


@dataclass(frozen=True, slots=True)
class ReferenceRun:
    """One case compacted to one budget with chainsum's defaults, beside plain truncation at that budget."""

    share: float
    """Of the reference summary's key items, the share in chainsum's output."""
    truncation: float
    """The same share in the truncated history."""
    tokens_after: int


async def measure_reference(case: ReferenceCase, budget: int) -> ReferenceRun:
    """`case`'s history compacted to `budget` as ``chainsum compact`` does with the defaults (`ManagerConfig()`:
    the ``auto`` strategy behind the tail guard, the extractive summarizer), for Anthropic, and truncated."""
    from ..manager import CompactionSettings, ManagerConfig
    from ..tokens import HeuristicCounter
    from .baselines import truncate

    counter = HeuristicCounter()
    settings = CompactionSettings.from_config(ManagerConfig())
    result = await settings.compact(
        case.history, summarizer=settings.summarizer, counter=counter, budget=budget, hard_limit=None,
        provider="anthropic",
    )  # fmt: skip
    items = set(case.items)
    baseline = truncate(case.history, budget, counter)
    return ReferenceRun(reference_share(items, result.messages), reference_share(items, baseline), result.tokens_after)
