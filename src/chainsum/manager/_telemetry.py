"""OpenTelemetry: each compaction a span, each request marked compacted or not (issue 34).

With the ``otel`` extra (``opentelemetry-api``) and a tracer provider configured by the application, a compaction
is a span named ``chainsum.compaction`` (kind internal), the child of whatever span is current where the manager
runs (the proxy's request span under an ASGI instrumentation, a framework's agent or model span), and the parent
of the summarizer's own calls (a model client's instrumentation shows them under it). Its attributes are the
figures of the compaction's event: ``gen_ai.conversation.id`` (the session), ``chainsum.compaction.reason``,
``chainsum.tokens.before`` / ``chainsum.tokens.after`` (the request the model gets, as the event counts it),
``chainsum.messages.summarized``, ``chainsum.model_coverage`` (absent with no model configured),
``chainsum.duration_ms``, ``chainsum.summarizer.errors``; a failed compaction sets the span's status to error with
``error.type`` (the failure's kind) and whether it aborted.

Every request the manager prepares sets ``gen_ai.conversation.compacted`` on the current span: true when the
history the model gets is a compacted one (it holds chainsum's record where originals were), false when it is the
caller's history as given. That is the span the request's model call belongs to: the proxy prepares inside the
request it forwards, the integrations inside the framework's model-call hook.

Without the API installed nothing is imported and each call costs a check of a module-level flag: no dependency
without the extra. With the API but no SDK, OpenTelemetry's own no-op tracer makes the spans cost next to nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator
from types import ModuleType
from typing import Any

__all__ = ["SPAN_NAME", "compaction_span", "mark_request"]

SPAN_NAME = "chainsum.compaction"
COMPACTED = "gen_ai.conversation.compacted"

_api: ModuleType | None = None
_resolved = False


def _trace() -> ModuleType | None:
    """``opentelemetry.trace``, imported the first time it is needed; None when the extra is not installed."""
    global _api, _resolved
    if not _resolved:
        try:
            from opentelemetry import trace
        except ImportError:
            trace = None
        _api, _resolved = trace, True
    return _api


def mark_request(compacted: bool) -> None:
    """Set ``gen_ai.conversation.compacted`` on the current span (a no-op without OpenTelemetry or a span)."""
    trace = _trace()
    if trace is None:
        return
    span: Any = trace.get_current_span()
    if span.is_recording():
        span.set_attribute(COMPACTED, compacted)


class CompactionSpan:
    """What the manager writes on a compaction's span once the compaction is over (`compaction_span`)."""

    def __init__(self, span: Any) -> None:
        self._span = span

    def summarized(
        self,
        *,
        tokens_before: int,
        tokens_after: int,
        messages: int,
        coverage: float | None,
        duration_ms: float,
        errors: int,
    ) -> None:
        span = self._span
        if span is None or not span.is_recording():
            return
        span.set_attribute("chainsum.tokens.before", tokens_before)
        span.set_attribute("chainsum.tokens.after", tokens_after)
        span.set_attribute("chainsum.messages.summarized", messages)
        if coverage is not None:
            span.set_attribute("chainsum.model_coverage", coverage)
        span.set_attribute("chainsum.duration_ms", duration_ms)
        span.set_attribute("chainsum.summarizer.errors", errors)

    def failed(self, *, kind: str, message: str, aborted: bool, duration_ms: float) -> None:
        span = self._span
        trace = _trace()
        if span is None or trace is None or not span.is_recording():
            return
        span.set_attribute("error.type", kind)
        span.set_attribute("chainsum.compaction.aborted", aborted)
        span.set_attribute("chainsum.duration_ms", duration_ms)
        span.set_status(trace.Status(trace.StatusCode.ERROR, message[:300]))


@contextlib.contextmanager
def compaction_span(session: str, reason: str) -> Generator[CompactionSpan]:
    """A ``chainsum.compaction`` span, current while the compaction runs (see the module docstring); without
    OpenTelemetry, a recorder that records nothing."""
    trace = _trace()
    if trace is None:
        yield CompactionSpan(None)
        return
    tracer: Any = trace.get_tracer("chainsum")
    attributes = {"gen_ai.conversation.id": session, "chainsum.compaction.reason": reason}
    # an exception escaping (abort_on_failure's SummarizerError) is the caller's to report: the failure was
    # written on the span already, and OpenTelemetry records the exception as an event of it
    with tracer.start_as_current_span(SPAN_NAME, kind=trace.SpanKind.INTERNAL, attributes=attributes) as span:
        yield CompactionSpan(span)
