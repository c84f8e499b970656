"""Where safe-split cuts a history: the spec's four-phase search, over `chainsum.chain.safe_cuts`.

A cut ``c`` summarizes ``messages[floor:c]`` and keeps ``messages[c:]``. Every candidate is a cut that
`safe_cuts` allows (no complete call/result pair is ever separated, the kept part never starts with a tool
message); the one shared function decides that, this module only adds the spec's *preferences* on top:

- ``floor``: the leading system messages are never summarized, so the span starts after them.
- ``ceiling``: the current turn is never summarized (the `Strategy` contract: the last body pair, with its
  pending calls and reasoning signatures). The ceiling is the last assistant message (or, with none, the last
  user message); the cut is at most there.
- orphaned results (tool messages answering no call right before them) must not be kept (the spec's MUST):
  every candidate lies after the last orphan below the ceiling. Orphans inside the current turn cannot be
  summarized; provider repair (`chainsum.rules.repair`) drops them.
- incomplete calls (calls with no result) are kept when possible: phases 1 to 3 accept only cuts that summarize
  no incomplete call ("strictly safe" cuts); phase 4 may summarize some, and its score counts them.

Phases (the spec's, made precise; ``T`` is the token threshold, kept tokens are the sum of
`TokenCounter.count_message` over the kept part, which is monotone in the cut so each phase is one scan):

1. from the ideal cut (keeping ``summary_window`` messages) backward: the first strictly safe cut that starts a
   turn (`chainsum.chain.turn_starts`) with the kept part under 70 % of ``T``;
2. from the ideal cut forward: the first strictly safe cut (turn start or not) under 70 %;
3. anywhere: the strictly safe cut keeping the most while under 80 %;
4. best effort: every `safe_cuts` cut after the last orphan is scored, lowest wins, by the tuple
   (tokens kept over 80 % of ``T``, incomplete calls summarized, not a turn start, distance from the ideal cut,
   index). Overshoot comes first because a split that leaves the history over budget helps nobody; among cuts
   that fit equally, the one that summarizes the fewest dangling calls wins (the spec's "minimizes damage to
   incomplete tool pairs"); then readability (a turn start) and closeness to the configured window. The cut
   at the ceiling is always a candidate, so phase 4 always answers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..chain import match_results, safe_cuts, turn_starts
from ..messages import Message
from ..tokens import TokenCounter

__all__ = [
    "SplitDecision",
    "SplitPhase",
    "ToolPairs",
    "analyze_tool_pairs",
    "find_safe_split",
    "protected_start",
    "system_prefix",
]

logger = logging.getLogger(__name__)

SplitPhase: TypeAlias = Literal[0, 1, 2, 3, 4]
"""Which phase chose the cut; 0 when there is nothing that may be summarized."""


@dataclass(frozen=True, slots=True)
class SplitDecision:
    """A cut and why: ``messages[:index]`` (after the leading system messages) is summarized, the rest kept."""

    index: int
    phase: SplitPhase
    reason: str
    """Printed by dry runs, e.g. "phase 2: first safe cut after the window keeping 612 tokens (<= 700)"."""


@dataclass(frozen=True, slots=True)
class ToolPairs:
    """The call/result relationships safe-split needs beyond `safe_cuts` (the spec's ``get_tool_pairs``)."""

    orphans: tuple[int, ...]
    """Indices of tool messages none of whose results answers a call of the message right before their run."""
    incomplete: tuple[int, ...]
    """Indices of messages with at least one call no result in the following tool run answers."""


def analyze_tool_pairs(messages: Sequence[Message]) -> ToolPairs:
    """Orphaned results and incomplete calls, in one pass.

    Canonical messages put a call's results in the ``tool`` messages right after the message that made it (an
    assistant, or a user in tau2-style simulations), so each run of tool messages is matched against the calls
    of the message just before it. A tool message with at least one matching result counts as paired (its
    unmatched results are provider repair's business); one with none, or after a system message or at the start,
    is an orphan.
    """
    orphans: list[int] = []
    incomplete: list[int] = []
    n = len(messages)
    i = 0
    while i < n:
        message = messages[i]
        if message.role == "tool":
            orphans.append(i)
            i += 1
            continue
        calls = message.tool_calls if message.role in ("assistant", "user") else ()
        j = i + 1
        while j < n and messages[j].role == "tool":
            j += 1
        # The chain's own pairing (by id, reused ids in order, empty ids by name): one rule for every layer.
        results = [r for k in range(i + 1, j) for r in messages[k].tool_results]
        answers, _ = match_results(calls, results)
        matched = {id(r) for r in answers if r is not None}
        orphans.extend(k for k in range(i + 1, j) if not any(id(r) in matched for r in messages[k].tool_results))
        if any(a is None for a in answers):
            incomplete.append(i)
        i = j
    return ToolPairs(orphans=tuple(orphans), incomplete=tuple(incomplete))


def system_prefix(messages: Sequence[Message]) -> int:
    """How many leading system messages there are (never summarized)."""
    k = 0
    while k < len(messages) and messages[k].role == "system":
        k += 1
    return k


def protected_start(messages: Sequence[Message]) -> int:
    """Where the current turn starts: the last assistant message, else the last user message, else ``len``.

    Everything from there on is kept verbatim (the last body pair, its pending calls, and any new prompt after
    it)."""
    for role in ("assistant", "user"):
        for i in range(len(messages) - 1, -1, -1):
            if messages[i].role == role:
                return i
    return len(messages)


def find_safe_split(
    messages: Sequence[Message],
    counter: TokenCounter,
    *,
    threshold: int,
    summary_window: int,
    turn_ratio: float = 0.7,
    largest_ratio: float = 0.8,
) -> SplitDecision:
    """The four-phase split (module docstring). Pure: reads `messages`, calls `counter`, returns a decision."""
    n = len(messages)
    floor = system_prefix(messages)
    ceiling = protected_start(messages)
    if ceiling >= n or ceiling <= floor:
        return SplitDecision(floor, 0, "nothing before the current turn may be summarized")

    cuts = safe_cuts(messages)
    starts = set(turn_starts(messages))
    pairs = analyze_tool_pairs(messages)
    last_orphan = max((o for o in pairs.orphans if o < ceiling), default=-1)
    first_incomplete = min((k for k in pairs.incomplete if k >= floor), default=n)

    kept = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        kept[i] = kept[i + 1] + counter.count_message(messages[i])

    def allowed(c: int) -> bool:
        return cuts[c] and c > last_orphan

    def strict(c: int) -> bool:
        return allowed(c) and c <= first_incomplete

    turn_limit = int(threshold * turn_ratio)
    largest_limit = int(threshold * largest_ratio)
    ideal = min(max(n - summary_window, floor + 1), ceiling)
    candidates = range(floor + 1, ceiling + 1)

    for c in range(ideal, floor, -1):
        if c in starts and strict(c) and kept[c] <= turn_limit:
            return _decide(c, 1, f"turn start at or before the window keeping {kept[c]} tokens (<= {turn_limit})")
    for c in range(ideal, ceiling + 1):
        if strict(c) and kept[c] <= turn_limit:
            return _decide(c, 2, f"first safe cut from the window on keeping {kept[c]} tokens (<= {turn_limit})")
    for c in candidates:
        if strict(c) and kept[c] <= largest_limit:
            return _decide(c, 3, f"largest safe kept part: {kept[c]} tokens (<= {largest_limit})")

    incomplete = [k for k in pairs.incomplete if k >= floor]

    def score(c: int) -> tuple[int, int, int, int, int]:
        broken = sum(1 for k in incomplete if k < c)
        return (max(0, kept[c] - largest_limit), broken, 0 if c in starts else 1, abs(c - ideal), c)

    best = min((c for c in candidates if allowed(c)), key=score)
    over, broken, _, _, _ = score(best)
    return _decide(
        best,
        4,
        f"best effort: keeps {kept[best]} tokens ({over} over {largest_limit}), summarizes {broken} incomplete call(s)",
    )


def _decide(index: int, phase: SplitPhase, reason: str) -> SplitDecision:
    logger.debug("phase=<%d>, index=<%d> | safe split chosen", phase, index)
    return SplitDecision(index, phase, f"phase {phase}: {reason}")
