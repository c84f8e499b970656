"""When the manager acts: the per-session state and the trigger decision, as pure functions.

The rules (``specs/ratio-trigger-summary-chain.md``, "Trigger Algorithm" and "Hysteresis & Cooldown"), checked in
the spec's order, first match wins:

1. ``enabled`` false: never.
2. Depth guard: the session already wrote ``max_summary_chain_depth`` summaries: no summary ever again (the
   spec's ``summaryHistory.length >= maxSummaryChainDepth``, a hard stop, so a runaway loop of summaries of
   summaries cannot happen). One departure from the spec, for emergencies only (ratio >= ``emergency_token_ratio``):
   the manager still runs a *model-free* pass (mask and clip tool output, no summarizer call, no new depth),
   because past the window every request fails at the provider, and masking cannot start a loop of summaries.
3. Fewer than ``min_messages`` messages: never.
4. Emergency: ratio >= ``emergency_token_ratio`` (1.0): now, ignoring the cooldown and the hysteresis.
5. Cooldown: fewer than ``cooldown_messages`` messages since the last attempt: not yet.
6. Ratio: ratio >= ``trigger_token_ratio`` while the trigger is *armed*.
7. Refresh: ``force_refresh_after_messages`` messages since the last summarization, whatever the ratio.

Hysteresis, precisely. The trigger starts armed. A summarization disarms it unless it brought the ratio below
``reset_token_ratio`` (the manager's budget is the reset ratio, so a summarization that works re-arms at once and
only the cooldown separates two summarizations). A disarmed trigger re-arms when an observed ratio drops below the
reset ratio, or when "enough new messages accumulate" (the spec's words), which is taken to mean
``max(cooldown_messages, preserve_recent)``: a summarization that could not get under the reset ratio was held
up by the verbatim tail, and only once that many new messages have come is the old tail itself summarizable, so
summarizing earlier would mostly re-summarize the summary. So a long burst near the limit gives one summarization,
not one per message.

"Messages since" counts from the length of the history the last attempt returned: the caller sends that history
back with new messages appended. A history shorter than that is a new or rewritten conversation, and all its
messages count. A failed attempt starts the cooldown too (it is an attempt: a failing summarizer must not be
called on every turn), but not the depth or the hysteresis.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._config import ManagerConfig
from ._events import SummarizationReason

__all__ = ["SessionState", "at_depth_cap", "decide"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionState:
    """What the manager remembers about a session between calls (and processes: it is stored in the archive)."""

    version: int = 0
    """The archive's state version this was read at or written as (compare-and-set)."""
    depth: int = 0
    """Summary records written so far: the next record's depth (0 for the first)."""
    last_record_id: str | None = None
    armed: bool = True
    """Hysteresis: False after a summarization that did not get under the reset ratio."""
    count_after: int | None = None
    """Length of the history the last attempt returned; None before the first."""
    last_ratio: float = 0.0
    """Token ratio after the last summarization (or at the last failed attempt)."""
    archived: int = 0
    """Messages archived so far (positions of generated message ids continue from it)."""
    summarizations: int = 0
    failures: int = 0

    def since(self, n_messages: int) -> int:
        """Messages since the last attempt (all of them when there was none or the history got shorter)."""
        if self.count_after is None or n_messages < self.count_after:
            return n_messages
        return n_messages - self.count_after

    def to_data(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "last_record_id": self.last_record_id,
            "armed": self.armed,
            "count_after": self.count_after,
            "last_ratio": self.last_ratio,
            "archived": self.archived,
            "summarizations": self.summarizations,
            "failures": self.failures,
        }

    @classmethod
    def from_data(cls, version: int, data: Mapping[str, Any]) -> SessionState:
        count_after = data.get("count_after")
        last_id = data.get("last_record_id")
        return cls(
            version=version,
            depth=int(data.get("depth", 0)),
            last_record_id=None if last_id is None else str(last_id),
            armed=bool(data.get("armed", True)),
            count_after=None if count_after is None else int(count_after),
            last_ratio=float(data.get("last_ratio", 0.0)),
            archived=int(data.get("archived", 0)),
            summarizations=int(data.get("summarizations", 0)),
            failures=int(data.get("failures", 0)),
        )


def rearm_messages(config: ManagerConfig) -> int:
    """New messages after which a disarmed trigger re-arms (see the module docstring)."""
    return max(config.cooldown_messages, config.preserve_recent)


def is_armed(state: SessionState, ratio: float, n_messages: int, config: ManagerConfig) -> bool:
    return state.armed or ratio < config.reset_token_ratio or state.since(n_messages) >= rearm_messages(config)


def at_depth_cap(state: SessionState, config: ManagerConfig) -> bool:
    """No summary may be written any more: only model-free passes, in emergencies."""
    return state.depth >= config.max_summary_chain_depth


def decide(state: SessionState, ratio: float, n_messages: int, config: ManagerConfig) -> SummarizationReason | None:
    """Why to summarize now, or None: the rules of the module docstring, in order."""
    if not config.enabled or n_messages < config.min_messages:
        return None
    if ratio >= config.emergency_token_ratio:
        return "emergency"  # at the depth cap too, where the pass is model-free (see `at_depth_cap`)
    if at_depth_cap(state, config):
        return None
    since = state.since(n_messages)
    if since < config.cooldown_messages:
        return None
    if ratio >= config.trigger_token_ratio and is_armed(state, ratio, n_messages, config):
        return "ratio"
    refresh = config.force_refresh_after_messages
    if refresh is not None and since >= refresh:
        return "refresh"
    return None
