"""When the manager acts: the per-session state and the trigger decision, as pure functions.

The rules (``specs/ratio-trigger-summary-chain.md``, "Trigger Algorithm" and "Hysteresis & Cooldown"), checked in
the spec's order, first match wins:

1. ``enabled`` false: never.
2. Emergency: ratio >= ``emergency_token_ratio`` (1.0): now, at any history length, ignoring the cooldown and the
   hysteresis: past the window the provider refuses the request, so a four-message history whose last tool
   returned 5 MB must be rescued as surely as a long one.
3. Fewer than ``min_messages`` messages: not otherwise.
4. Cooldown: fewer than ``cooldown_messages`` messages since the last attempt: not yet.
5. Ratio: ratio >= ``trigger_token_ratio`` while the trigger is *armed*; for a question that may get a recall
   block, with the blocks the request carries and the room the question's own would take (`decide`).
6. Refresh: ``force_refresh_after_messages`` messages since the last summarization, whatever the ratio.

The spec's depth guard (``summaryHistory.length >= maxSummaryChainDepth``: no summary ever again) is not a rule
here: it stopped a long conversation from being summarized at all after three summaries, and every request after
that overflowed. ``max_summary_chain_depth`` bounds how deeply summaries nest instead (`chainsum.strategies`
folds summaries only up to it, then moves the oldest to the archive), so a runaway loop of summaries of summaries
still cannot happen, and a session is summarized for as long as it lives.

Hysteresis, precisely. The trigger starts armed. A summarization disarms it unless it brought the ratio below
``reset_token_ratio`` (the manager's budget is the reset ratio, so a summarization that works re-arms at once and
only the cooldown separates two summarizations). A disarmed trigger re-arms when an observed ratio drops below the
reset ratio, or when "enough new messages accumulate" (the spec's words), which is taken to mean
``max(cooldown_messages, preserve_recent)``: a summarization that could not get under the reset ratio was held
up by the verbatim tail, and only once that many new messages have come is the old tail itself summarizable, so
summarizing earlier would mostly re-summarize the summary. So a long burst near the limit gives one summarization,
not one per message.

"Messages since" counts the messages the model sees now beyond those it saw right after the last attempt
(`count_after`): a caller that sends back what it got and one that keeps its full history (mapped by the manager)
are counted alike. A history shorter than that is a new or rewritten conversation, and all its messages count.
A failed attempt starts the cooldown too (it is an attempt: a failing summarizer must not be called on every
turn), but not the hysteresis.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from ._config import ManagerConfig
from ._events import SummarizationReason
from ._recall import PinnedRecall

__all__ = ["SessionState", "decide", "is_armed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionState:
    """What the manager remembers about a session between calls (and processes: it is stored in the archive)."""

    version: int = 0
    """The archive's state version this was read at or written as (compare-and-set)."""
    depth: int = 0
    """Depth of the deepest summary in the context now (0: none)."""
    last_record_id: str | None = None
    armed: bool = True
    """Hysteresis: False after a summarization that did not get under the reset ratio."""
    count_after: int | None = None
    """Messages the model saw right after the last attempt; None before the first."""
    summarized_at: int | None = None
    """Messages the model saw right after the last summarization (for ``force_refresh_after_messages``)."""
    view: Mapping[str, Any] | None = None
    """The stored mapping of the caller's history to what the model sees (`chainsum.manager._view.View`)."""
    last_ratio: float = 0.0
    """Token ratio after the last summarization (or at the last failed attempt)."""
    archived: int = 0
    """Messages archived so far (positions of generated message ids continue from it)."""
    summarizations: int = 0
    failures: int = 0
    retracted: tuple[str, ...] = ()
    """Archive ids of originals whose summary no longer matches the caller's history (a message edited inside a
    summarized range, another branch): recall leaves them out, so a stale version never comes back."""
    recall: tuple[PinnedRecall, ...] = ()
    """The recall blocks sent since the last compaction, each held where it was sent (`PinnedRecall`); a compaction
    folds them in (starts this over)."""

    def since(self, n_messages: int) -> int:
        """Messages since the last attempt (all of them when there was none or the history got shorter)."""
        if self.count_after is None or n_messages < self.count_after:
            return n_messages
        return n_messages - self.count_after

    def since_summary(self, n_messages: int) -> int:
        if self.summarized_at is None or n_messages < self.summarized_at:
            return n_messages
        return n_messages - self.summarized_at

    def to_data(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "summarized_at": self.summarized_at,
            "view": self.view,
            "last_record_id": self.last_record_id,
            "armed": self.armed,
            "count_after": self.count_after,
            "last_ratio": self.last_ratio,
            "archived": self.archived,
            "summarizations": self.summarizations,
            "failures": self.failures,
            "retracted": list(self.retracted),
            "recall": [p.to_data() for p in self.recall],
        }

    @classmethod
    def from_data(cls, version: int, data: Mapping[str, Any]) -> SessionState:
        count_after = data.get("count_after")
        summarized_at = data.get("summarized_at")
        last_id = data.get("last_record_id")
        view = data.get("view")
        return cls(
            version=version,
            depth=int(data.get("depth", 0)),
            last_record_id=None if last_id is None else str(last_id),
            armed=bool(data.get("armed", True)),
            count_after=None if count_after is None else int(count_after),
            summarized_at=None if summarized_at is None else int(summarized_at),
            view=cast(Mapping[str, Any], view) if isinstance(view, Mapping) else None,
            last_ratio=float(data.get("last_ratio", 0.0)),
            archived=int(data.get("archived", 0)),
            summarizations=int(data.get("summarizations", 0)),
            failures=int(data.get("failures", 0)),
            retracted=tuple(str(r) for r in cast(list[object], data.get("retracted") or [])),
            recall=tuple(PinnedRecall.from_data(p) for p in cast(list[Mapping[str, Any]], data.get("recall") or [])),
        )


def rearm_messages(config: ManagerConfig) -> int:
    """New messages after which a disarmed trigger re-arms (see the module docstring)."""
    return max(config.cooldown_messages, config.preserve_recent)


def is_armed(state: SessionState, ratio: float, n_messages: int, config: ManagerConfig) -> bool:
    return state.armed or ratio < config.reset_token_ratio or state.since(n_messages) >= rearm_messages(config)


def decide(
    state: SessionState,
    ratio: float,
    n_messages: int,
    config: ManagerConfig,
    *,
    request_ratio: float | None = None,
    asking_ratio: float | None = None,
) -> SummarizationReason | None:
    """Why to summarize now, or None: the rules of the module docstring, in order. `ratio` is the history's;
    `request_ratio` the whole request's (the recall blocks it carries included, `chainsum.manager._pins`), which
    the emergency rule reads: past the window the provider refuses the request whatever fills it. The ratio rule
    reads the history's, or `asking_ratio` where the request's newest message is a question that may get a block
    of its own and blocks pinned earlier stand: the request with those blocks and the room the question's block
    would take (`_request.RequestWriter.recall_need`). Each new user message gets a block of its own room (up to
    ``recall_token_ratio`` of the window, below the trigger), so the blocks of one cycle add up to more than the
    room a compaction keeps for recall; a question they left too little room brings the compaction that folds
    them in, instead of going without a block: with the blocks counted apart, a chat asked a question a turn
    carried its blocks up to the trigger within three or four questions, and the eleven questions after them,
    until the history itself reached the window, got no block (``bench/bench_recall.py``). Only a question counts
    them: on any other request (an agent's tool step) a block is never the reason for a compaction (the block made
    at a compaction and the next step's output brought the request to the trigger right after it). The emergency
    rule never counts that room (it is not sent); hysteresis stays the history's (`is_armed`)."""
    if not config.enabled:
        return None
    request = ratio if request_ratio is None else max(ratio, request_ratio)
    if request >= config.emergency_token_ratio:
        return "emergency"
    if n_messages < config.min_messages:
        return None
    if state.since(n_messages) < config.cooldown_messages:
        return None
    asking = ratio if asking_ratio is None else max(ratio, asking_ratio)
    if asking >= config.trigger_token_ratio and is_armed(state, ratio, n_messages, config):
        return "ratio"
    refresh = config.force_refresh_after_messages
    if refresh is not None and state.since_summary(n_messages) >= refresh:
        return "refresh"
    return None
