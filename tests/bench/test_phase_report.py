"""`bench/phase_report.py`'s model coverage, the note every timing target is printed with (issue 32): aggregated
over compactions as ``chainsum replay`` totals it, and telling "no model" from "nothing summarized"."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from hypothesis import given
from hypothesis import strategies as st

from chainsum.manager import (
    AnySummarizer,
    ContextManager,
    ManagerConfig,
    ManagerEvent,
    SummarizationEvent,
    WindowExceededEvent,
)
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import ScriptedSummarizer
from chainsum.testing.sessions import chat

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load() -> ModuleType:
    """The helper module, loaded from its file as a benchmark imports it (``bench/`` is not a package)."""
    spec = importlib.util.spec_from_file_location("_bench_phase_report", BENCH / "phase_report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


report = _load()


def _event(depth: int = 1, summarized: int = 0, model: int = 0) -> SummarizationEvent:
    coverage = model / summarized if summarized else None
    return SummarizationEvent(
        reason="ratio",
        depth=depth,
        tokens_before=100,
        tokens_after=10,
        model_coverage=coverage,
        summarized_chars=summarized,
        model_chars=model,
    )


def test_coverage_is_weighed_by_characters() -> None:
    events = [_event(summarized=100, model=100), _event(summarized=300, model=0)]
    assert report.model_coverage(events) == (0.25, 2, 2)
    assert report.coverage_note(events) == "model coverage 25.0 % (2 compactions)"


def test_summaries_without_a_model_say_so() -> None:
    assert report.coverage_note([_event(), _event(depth=0)]) == "model coverage - (no model summarizer)"


def test_no_summary_written_is_nothing_summarized() -> None:
    other = WindowExceededEvent(tokens=10, window=5, floor_tokens=8, detail="the system prompt alone")
    assert report.coverage_note([]) == "model coverage - (nothing summarized)"
    assert report.coverage_note([_event(depth=0), other]) == "model coverage - (nothing summarized)"


@given(st.lists(st.tuples(st.integers(0, 10**6), st.floats(0, 1)), max_size=20))
def test_coverage_is_the_share_of_all_summarized_characters(pairs: list[tuple[int, float]]) -> None:
    events = [_event(summarized=n, model=int(n * share)) for n, share in pairs]
    share, counted, written = report.model_coverage(events)
    total = sum(n for n, _ in pairs)
    assert written == len(pairs) and counted == sum(n > 0 for n, _ in pairs)
    if total == 0:
        assert share is None
    else:
        assert share == sum(int(n * s) for n, s in pairs) / total and 0 <= share <= 1


def test_target_line_carries_the_coverage() -> None:
    line = report.target_line(1.2, "peer", coverage=report.coverage_note([_event(summarized=10, model=10)]))
    assert line.endswith("1.20x, met; model coverage 100.0 % (1 compaction)")


def _coverage_of(summarizer: AnySummarizer) -> str:
    events: list[ManagerEvent] = []
    manager = ContextManager(
        ManagerConfig(),
        context_window=1_500,
        summarizers=[summarizer],
        on_event=events.append,
    )
    history: list[dict[str, object]] = []
    for message in chat(120).messages:
        history.append(message)
        if message.get("role") == "user":
            manager.prepare_sync(history)
    return report.coverage_note(events)


def test_an_instant_fake_counts_as_a_model_and_the_extractive_one_does_not() -> None:
    """What the benchmarks rely on: a scripted summarizer that calls no model is a model to chainsum (it is not
    ``local``), so its coverage shows it read what it summarized; the extractive summarizer is none."""
    fake = _coverage_of(ScriptedSummarizer(default=lambda t: "Summary of the earlier conversation."))
    assert fake.startswith("model coverage 100.0 % (")
    assert _coverage_of(ExtractiveSummarizer()) == "model coverage - (no model summarizer)"
