"""OpenTelemetry (issue 34): a compaction is a ``chainsum.compaction`` span under the caller's span, carrying the
figures of its event; every prepared request marks its span ``gen_ai.conversation.compacted``; a failed compaction
is an error span; without the API installed the manager runs as before. Read with the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from chainsum.errors import SummarizerError
from chainsum.manager import SummarizationEvent
from chainsum.manager import _telemetry as telemetry
from chainsum.testing import ScriptedSummarizer
from manager.manager_support import SYSTEM, Dict, make, turn


def _exporter() -> InMemorySpanExporter:
    """The in-memory exporter on the process's SDK tracer provider: set here, or on the one another test (a
    framework's own telemetry) set first. It is kept on the provider, so every module that asks (this one is imported
    again by the proxy's telemetry test) gets the same one."""
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        current = trace.get_tracer_provider()
    assert isinstance(current, TracerProvider)
    exporter = getattr(current, "_chainsum_test_exporter", None)
    if not isinstance(exporter, InMemorySpanExporter):
        exporter = InMemorySpanExporter()
        current.add_span_processor(SimpleSpanProcessor(exporter))
        current._chainsum_test_exporter = exporter  # type: ignore[attr-defined]
    return exporter


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = _exporter()
    exporter.clear()
    yield exporter
    exporter.clear()


def _history(n: int = 30) -> list[Dict]:
    hist: list[Dict] = [SYSTEM]
    for i in range(n):
        hist += turn(i)
    return hist


def _named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def test_a_compaction_is_a_child_span_with_its_events_figures(spans: InMemorySpanExporter) -> None:
    events: list[object] = []
    manager = make(summarizers=[ScriptedSummarizer(["A summary of the order questions."])], events=events)  # type: ignore[arg-type]
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("request"):
        prepared = manager.prepare_sync(_history())
    event = prepared.event
    assert isinstance(event, SummarizationEvent)
    (span,) = _named(spans, telemetry.SPAN_NAME)
    (parent,) = _named(spans, "request")
    assert span.parent is not None and span.parent.span_id == parent.context.span_id
    attributes = dict(span.attributes or {})
    assert attributes["gen_ai.conversation.id"] == manager.session
    assert attributes["chainsum.compaction.reason"] == event.reason
    assert attributes["chainsum.tokens.before"] == prepared.tokens_before
    assert attributes["chainsum.tokens.after"] == prepared.tokens_after < prepared.tokens_before
    assert attributes["chainsum.messages.summarized"] == event.messages_compressed > 0
    assert attributes["chainsum.model_coverage"] == event.model_coverage  # a scripted model: it read the span
    assert attributes["chainsum.summarizer.errors"] == 0
    assert float(attributes["chainsum.duration_ms"]) > 0  # type: ignore[arg-type]
    assert dict(parent.attributes or {})[telemetry.COMPACTED] is True


def test_each_request_says_whether_its_history_is_compacted(spans: InMemorySpanExporter) -> None:
    manager = make(summarizers=[ScriptedSummarizer(["A summary."])])
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("short"):
        manager.prepare_sync(_history(2))
    with tracer.start_as_current_span("long"):
        compacted = manager.prepare_sync(_history(30))
    with tracer.start_as_current_span("next"):
        manager.prepare_sync([*compacted.messages, *turn(99)])
    flags = {s.name: dict(s.attributes or {}).get(telemetry.COMPACTED) for s in spans.get_finished_spans()}
    assert flags["short"] is False and flags["long"] is True and flags["next"] is True
    assert len(_named(spans, telemetry.SPAN_NAME)) == 1  # the next request compacted nothing itself


def test_the_span_follows_prepare_sync_onto_its_worker_thread(spans: InMemorySpanExporter) -> None:
    """Inside a running event loop `prepare_sync` runs the compaction on a worker thread: the caller's span is
    still its parent (the context goes with it)."""
    manager = make(summarizers=[ScriptedSummarizer(["A summary."])])
    tracer = trace.get_tracer("test")

    async def inside_a_loop() -> None:
        with tracer.start_as_current_span("agent step"):
            manager.prepare_sync(_history())

    asyncio.run(inside_a_loop())
    (span,) = _named(spans, telemetry.SPAN_NAME)
    (parent,) = _named(spans, "agent step")
    assert span.parent is not None and span.parent.span_id == parent.context.span_id


def test_a_failed_compaction_is_an_error_span(spans: InMemorySpanExporter) -> None:
    bad = ScriptedSummarizer([SummarizerError("no", kind="invalid")], repeat=True)
    make(summarizers=[bad]).prepare_sync(_history())  # fails open
    with pytest.raises(SummarizerError):
        make(summarizers=[bad], abort_on_failure=True).prepare_sync(_history())
    open_, aborted = _named(spans, telemetry.SPAN_NAME)
    for span, was_aborted in ((open_, False), (aborted, True)):
        assert span.status.status_code is StatusCode.ERROR
        attributes = dict(span.attributes or {})
        assert attributes["error.type"] == "invalid" and attributes["chainsum.compaction.aborted"] is was_aborted


def test_without_the_api_nothing_is_traced_and_nothing_changes(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telemetry, "_api", None)
    monkeypatch.setattr(telemetry, "_resolved", True)  # as when ``import opentelemetry`` failed
    prepared = make(summarizers=[ScriptedSummarizer(["A summary."])]).prepare_sync(_history())
    assert isinstance(prepared.event, SummarizationEvent)
    assert spans.get_finished_spans() == ()
