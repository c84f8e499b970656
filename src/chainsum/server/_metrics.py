"""Prometheus metrics of one server process, in a registry of its own (two apps in one process, as in tests,
never share or collide): requests by route and status, requests passed through untouched by route and reason
(`_passthrough`), compactions, summarizer calls and seconds, and latency of
the proxy's own work and of the upstream."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

__all__ = ["Metrics"]

_FAST = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_SLOW = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


class Metrics:
    """The counters and histograms `GET /metrics` shows."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("chainsum_requests", "Proxied requests", ["route", "status"], registry=r)
        self.passthrough = Counter(
            "chainsum_passthrough",
            "Requests sent upstream untouched because chainsum could not read them",
            ["route", "reason"],
            registry=r,
        )
        self.inline = Counter(
            "chainsum_prepared_inline",
            "Requests prepared on the event loop: nothing to do, provably quick (the others go to a worker thread)",
            registry=r,
        )
        self.compactions = Counter("chainsum_compactions", "Compactions applied", ["reason"], registry=r)
        self.failures = Counter("chainsum_summarization_failures", "Summarizations that failed open", registry=r)
        self.summarizer_calls = Counter("chainsum_summarizer_calls", "Summarizer calls", registry=r)
        self.summarizer_seconds = Counter("chainsum_summarizer_seconds", "Seconds spent compacting", registry=r)
        self.tokens_removed = Counter("chainsum_tokens_removed", "Tokens removed by compactions", registry=r)
        self.prepare_seconds = Histogram(
            "chainsum_prepare_seconds", "Proxy work before forwarding", ["route"], buckets=_FAST, registry=r
        )
        self.upstream_seconds = Histogram(
            "chainsum_upstream_seconds", "Upstream time to response headers", ["route"], buckets=_SLOW, registry=r
        )

        self._children: dict[tuple[object, ...], Any] = {}

    def _child(self, metric: Counter | Histogram, *labels: str) -> Any:
        """`metric`'s child of these label values, made once: prometheus_client's ``labels()`` takes a lock and
        builds its key on every call, a few microseconds each, three times a proxied request. Routes and statuses
        are few, so the children kept are few."""
        key = (metric, *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def count_request(self, route: str, status: int) -> None:
        """A proxied request answered with `status`."""
        self._child(self.requests, route, str(status)).inc()

    def observe_prepare(self, route: str, seconds: float) -> None:
        self._child(self.prepare_seconds, route).observe(seconds)

    def observe_upstream(self, route: str, seconds: float) -> None:
        self._child(self.upstream_seconds, route).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
