"""The per-phase breakdown of chainsum's time that the benchmarks print: `chainsum.manager.PhaseTimes` collected
over a workload (``ContextManager(..., profile=...)``, which every integration passes on to its manager), as
milliseconds per request (a `prepare` call, or the benchmark's own unit, such as a model call) and share of
chainsum's time, with the summarizer's own time inside ``pipeline`` shown apart when it was counted
(`chainsum.manager.CountingSummarizer.seconds`)."""

from __future__ import annotations

from chainsum.manager import PhaseTimes

TARGET = 1.5
"""Issue 23's target for the compacting benchmarks: chainsum's time at most this many times the fastest of the
libraries it replaces, on the same workload in the same run."""


def target_line(ratio: float, peer: str, *, ours: str = "chainsum", what: str = "time per model call") -> str:
    """The line each compacting benchmark prints per chainsum configuration: its ratio to the fastest peer and
    whether issue 23's target is met (where it is not, the phase table printed with it names the remaining cost)."""
    verdict = "met" if ratio <= TARGET else "NOT met"
    return f"target: {ours}'s {what} <= {TARGET}x the fastest peer's ({peer}): {ratio:.2f}x, {verdict}"


def phase_lines(
    profile: PhaseTimes, *, per: int | None = None, label: str = "request", summarizer_s: float | None = None
) -> str:
    """`profile`'s table (`PhaseTimes.table`), and under it the summarizer's part of ``pipeline``."""
    lines = [profile.table(per=per, label=label, indent="    ")]
    n = max(1, per if per is not None else profile.calls)
    pipeline = profile.phases["pipeline"].seconds
    if summarizer_s and pipeline > 0:
        lines.append(
            f"    of which in the summarizer: {summarizer_s * 1e3 / n:.3f} ms/{label} "
            f"({summarizer_s / pipeline:.0%} of pipeline; the rest is planning, applying and checking)"
        )
    return "\n".join(lines)


def replay_breakdown(
    profile: PhaseTimes,
    *,
    calls: int,
    inside_seconds: float,
    where: str,
    prepare_note: str = "",
    summarizer_s: float | None = None,
) -> str:
    """The lines an integration benchmark prints under its totals for chainsum's fastest replay: how many `prepare`
    calls it made (`prepare_note` says where from), what share of the time spent `where` (`inside_seconds`) they
    took, then `phase_lines` per model call."""
    share = profile.seconds / inside_seconds if inside_seconds else 0.0
    head = (
        f"chainsum: where its time went (its fastest replay): {profile.calls} prepare calls{prepare_note}, "
        f"{share:.0%} of the time in {where}"
    )
    return head + "\n" + phase_lines(profile, per=calls, label="model call", summarizer_s=summarizer_s)
