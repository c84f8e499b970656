"""The per-phase breakdown of chainsum's time that the benchmarks print: `chainsum.manager.PhaseTimes` collected
over a workload (``ContextManager(..., profile=...)``, which every integration passes on to its manager), as
milliseconds per request (a `prepare` call, or the benchmark's own unit, such as a model call) and share of
chainsum's time, with the summarizer's own time inside ``pipeline`` shown apart when it was counted
(`chainsum.manager.CountingSummarizer.seconds`); and the model coverage each timing target is printed with
(`coverage_note`): a time counts only at equal quality, so the reader sees whether the model read what it
summarized."""

from __future__ import annotations

from collections.abc import Iterable

from chainsum.manager import PhaseTimes, SummarizationEvent

TARGET = 1.5
"""Issue 23's target for the compacting benchmarks: chainsum's time at most this many times the fastest of the
libraries it replaces, on the same workload in the same run."""


def target_line(
    ratio: float, peer: str, *, coverage: str, ours: str = "chainsum", what: str = "time per model call"
) -> str:
    """The line each compacting benchmark prints per chainsum configuration: its ratio to the fastest peer and
    whether issue 23's target is met (where it is not, the phase table printed with it names the remaining cost),
    with `coverage` (`coverage_note` of that configuration's events) beside it: required, so that no timing target
    is printed without what the model read of what was summarized (issue 32)."""
    verdict = "met" if ratio <= TARGET else "NOT met"
    return f"target: {ours}'s {what} <= {TARGET}x the fastest peer's ({peer}): {ratio:.2f}x, {verdict}; {coverage}"


def model_coverage(events: Iterable[object]) -> tuple[float | None, int, int]:
    """Of what the `SummarizationEvent`s among `events` summarized, the share the configured model read, weighed
    by characters (``sum(model_chars) / sum(summarized_chars)``, as ``chainsum replay`` totals it); None when none
    counted any (no model summarizer configured, or nothing summarized). With it, the compactions it is over and
    the summaries written at all (``depth >= 1``: what tells "no model" from "nothing summarized")."""
    summarized = model = counted = written = 0
    for event in events:
        if not isinstance(event, SummarizationEvent):
            continue
        written += event.depth >= 1
        if event.summarized_chars:
            counted += 1
            summarized += event.summarized_chars
            model += event.model_chars
    return (model / summarized if summarized else None), counted, written


def coverage_note(events: Iterable[object]) -> str:
    """``model coverage 100.0 % (12 compactions)``: `model_coverage` of `events` as printed beside a timing
    target; ``model coverage - (no model summarizer)`` when summaries were written but none by a configured model
    (the extractive summarizer's, which says ``local = True``), ``model coverage - (nothing summarized)`` when no
    compaction wrote a summary. A fake model summarizer that answers at once counts as a model: its coverage says
    it read everything it summarized, which is what the time beside it is worth."""
    share, counted, written = model_coverage(events)
    if share is not None:
        return f"model coverage {100 * share:.1f} % ({counted} compaction{'s' * (counted != 1)})"
    return f"model coverage - ({'no model summarizer' if written else 'nothing summarized'})"


def result_coverage_note(coverage: float | None, summarizer_calls: int) -> str:
    """`coverage_note` for one `CompactResult` (its ``model_coverage``), where a benchmark calls the executor
    without a manager: ``model coverage - (no model summarizer)`` when summaries were written by a model-free one,
    ``model coverage - (nothing summarized)`` when no summarizer was called."""
    if coverage is not None:
        return f"model coverage {100 * coverage:.1f} %"
    return f"model coverage - ({'no model summarizer' if summarizer_calls else 'nothing summarized'})"


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
