"""`PhaseTimes`: where the time of `ContextManager.prepare` goes, phase by phase, when the caller asks.

A manager given one (``ContextManager(..., profile=PhaseTimes())``, or ``manager.profile = PhaseTimes()`` later)
reads the clock (`time.perf_counter`) at the start of each `prepare` and at the end of each phase, and adds the time
since the previous reading to that phase: the phases tile the call, so they add up to its time (less the few
instructions after the last phase), and nothing is counted twice when one phase's code runs inside another's. A
manager without one does no more than test ``self.profile is not None`` a few times a call.

The phases, in the order a call meets them (`PHASES`):

- ``read``: reading the caller's items (conversion to `Message` objects of what is new, fingerprints, the mapping
  onto what the model saw, token counts), and reading them again where a compaction needs it (checking that items
  were not changed in place, taking another process's mapping, the view after the compaction);
- ``decide``: the policy decision (trigger, hysteresis, cooldown; arming the session, a state write then);
- ``loop``: `prepare_sync` only, when it compacts: starting the event loop the compaction runs on (on a worker
  thread when the caller's thread runs a loop already), and closing it;
- ``lock``: taking the session's summarization lock and loading the stored state before a compaction;
- ``pipeline``: planning and running the compaction (the strategy, the summarizer calls, the executor's checks and
  provider repair, the model-free fallback when needed);
- ``record``: what the compaction removed, its `SummaryRecord`, the new mapping and session state;
- ``archive``: the store's write of the originals, the record and the state, in one transaction;
- ``output``: the history to send, written in the caller's format (recall blocks placed, roles kept alternating,
  prompt-cache breakpoints);
- ``recall``: the recall blocks (the pinned ones that stand, and the archive search for a new one, with its state
  write);
- ``events``: the events this call emits (the subscribers' time included) and the failure bookkeeping.

One profile follows one manager, or several called one after another (an integration's per-thread managers in a
benchmark). Managers that run at the same time, on threads or interleaved on an event loop, would mix their phases:
give each its own."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = ["PHASES", "Phase", "PhaseTime", "PhaseTimes"]

Phase = Literal["read", "decide", "loop", "lock", "pipeline", "record", "archive", "output", "recall", "events"]
"""A phase of `ContextManager.prepare` (the module docstring says what each holds)."""

PHASES: Final[tuple[Phase, ...]] = (
    "read",
    "decide",
    "loop",
    "lock",
    "pipeline",
    "record",
    "archive",
    "output",
    "recall",
    "events",
)
"""Every phase, in the order a `prepare` call meets them."""


@dataclass(slots=True)
class PhaseTime:
    """The time spent in one phase, over every call measured."""

    seconds: float = 0.0
    """Wall-clock seconds, summed."""
    laps: int = 0
    """Stretches of time added to it: a phase may be timed in more than one stretch in a call (``output`` is timed
    before and after ``recall``; ``read`` again after a compaction), or in none."""


@dataclass(slots=True)
class PhaseTimes:
    """Wall-clock seconds per phase of `ContextManager.prepare`, summed over the calls made while a manager holds
    it (see the module docstring). Mutable on purpose: the manager adds to it; `clear` starts it over."""

    phases: dict[Phase, PhaseTime] = field(default_factory=lambda: {p: PhaseTime() for p in PHASES})
    """Each phase's time, in `PHASES` order."""
    calls: int = 0
    """`prepare` (and `prepare_sync`) calls measured."""
    seconds: float = 0.0
    """Wall-clock seconds of those calls, from their start to their end."""
    _mark: float = field(default=0.0, init=False, repr=False)
    _started: float = field(default=0.0, init=False, repr=False)

    def start(self) -> None:
        """A `prepare` call begins: the clock of its first phase and of the call start now."""
        self._started = self._mark = time.perf_counter()

    def lap(self, phase: Phase) -> None:
        """`phase` ends now: the time since the previous `start` or `lap` is its."""
        now = time.perf_counter()
        spent = self.phases[phase]
        spent.seconds += now - self._mark
        spent.laps += 1
        self._mark = now

    def stop(self) -> None:
        """The `prepare` call ends now: its time is added to `seconds`."""
        self.seconds += time.perf_counter() - self._started
        self.calls += 1

    def clear(self) -> None:
        """Start over (every figure back to zero)."""
        for p in PHASES:
            self.phases[p] = PhaseTime()
        self.calls, self.seconds = 0, 0.0

    def add(self, other: PhaseTimes) -> None:
        """Add `other`'s figures to these (the profiles of several managers, summed)."""
        for p in PHASES:
            mine, theirs = self.phases[p], other.phases[p]
            mine.seconds += theirs.seconds
            mine.laps += theirs.laps
        self.calls += other.calls
        self.seconds += other.seconds

    @property
    def measured(self) -> float:
        """Seconds of all the phases together: at most `seconds` (the phases tile each call, up to its last
        instructions)."""
        return sum(t.seconds for t in self.phases.values())

    def table(self, per: int | None = None, label: str = "request", indent: str = "  ") -> str:
        """A plain-text table of the phases that took any time: milliseconds per `label` (`per` of them; by default
        per `prepare` call, the label "request"), each phase's share of the calls' time, its laps; then the whole
        calls (and the part of them no phase holds)."""
        n = max(1, per if per is not None else self.calls)
        total = self.seconds
        rows = [f"{'phase':<9} {f'ms/{label}':>14} {'share':>6} {'laps':>7}"]
        for name, t in self.phases.items():
            if t.laps:
                share = t.seconds / total if total else 0.0
                rows.append(f"{name:<9} {t.seconds * 1e3 / n:>14.3f} {share:>6.1%} {t.laps:>7}")
        rest = max(0.0, total - self.measured)
        rows.append(f"{'(other)':<9} {rest * 1e3 / n:>14.3f} {(rest / total if total else 0.0):>6.1%} {'':>7}")
        rows.append(f"{'total':<9} {total * 1e3 / n:>14.3f} {'100%':>6} {'':>7}  {self.calls} prepare calls")
        return "\n".join(indent + row for row in rows)
