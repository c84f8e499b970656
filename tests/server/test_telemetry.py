"""OpenTelemetry through the proxy (issue 34): under an ASGI instrumentation's request span (a minimal one here,
what `opentelemetry-instrumentation-asgi` does), each proxied request carries ``gen_ai.conversation.compacted`` and
a compaction is a ``chainsum.compaction`` span under it, although the proxy prepares on a worker thread."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from starlette.types import ASGIApp, Receive, Scope, Send

from chainsum.server import create_app
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from manager.test_telemetry import spans  # noqa: F401  (the fixture: the SDK provider with the in-memory exporter)
from server.server_support import chat, serve_app, settings_for

COMPACTED = "gen_ai.conversation.compacted"


def traced(app: ASGIApp) -> ASGIApp:
    """`app` with a server span around each HTTP request, current while the app handles it."""
    tracer = trace.get_tracer("asgi-test")

    async def wrapper(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        with tracer.start_as_current_span(f"{scope['method']} {scope['path']}", kind=trace.SpanKind.SERVER):
            await app(scope, receive, send)

    return wrapper


@pytest.fixture
def served(fake: FakeLLMServer, store: SQLiteStore) -> Iterator[str]:
    app = create_app(settings_for(fake, context_window=1500), store=store, event_poll_s=0.05)
    with serve_app(app, asgi=traced(app)) as running:
        yield running.url


def test_each_proxied_request_says_whether_it_was_compacted(
    served: str,
    spans: InMemorySpanExporter,  # noqa: F811
) -> None:
    headers = {"content-type": "application/json", "authorization": "Bearer k", "x-chainsum-session": "otel"}
    for n in (1, 30):
        body = {"model": "gpt-4o", "messages": chat(n)}
        r = httpx.post(served + "/v1/chat/completions", content=json.dumps(body), headers=headers, timeout=30)
        assert r.status_code == 200, r.text
    requests = [s for s in spans.get_finished_spans() if s.name == "POST /v1/chat/completions"]
    assert [dict(s.attributes or {}).get(COMPACTED) for s in requests] == [False, True]
    (compaction,) = [s for s in spans.get_finished_spans() if s.name == "chainsum.compaction"]
    assert compaction.parent is not None and compaction.parent.span_id == requests[1].context.span_id
    assert dict(compaction.attributes or {})["chainsum.tokens.after"] == int(r.headers["x-chainsum-tokens-after"])
