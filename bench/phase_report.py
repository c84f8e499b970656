"""The per-phase breakdown of chainsum's time that the benchmarks print: `chainsum.manager.PhaseTimes` collected
over a workload (``ContextManager(..., profile=...)``, which every integration passes on to its manager), as
milliseconds per request (a `prepare` call, or the benchmark's own unit, such as a model call) and share of
chainsum's time, with the summarizer's own time inside ``pipeline`` shown apart when it was counted
(`chainsum.manager.CountingSummarizer.seconds`)."""

from __future__ import annotations

from chainsum.manager import PhaseTimes


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
