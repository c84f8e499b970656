"""Provider-native compaction passes through (issue 34): a request that carries the provider's own context
management (OpenAI Responses ``context_management`` and ``compaction`` items, ``POST /v1/responses/compact``;
Anthropic's ``context_management`` edits ``compact_20260112`` and ``clear_tool_uses_20250919`` and its
``compaction`` blocks) reaches the upstream as the client's very bytes, even far over the window, and the answer
says why chainsum left it alone. The shapes are those the providers document (an encrypted item chainsum cannot
read and must not move)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.server_support import proxy

WINDOW = 2000
"""Far below each history: without the provider's compaction in the request, chainsum would compact it."""


def post(url: str, body: dict[str, Any], **headers: str) -> tuple[httpx.Response, bytes]:
    raw = json.dumps(body, indent=1).encode()  # spaces and newlines: a re-serialization would show
    response = httpx.post(url, content=raw, headers={"content-type": "application/json", **headers}, timeout=30)
    return response, raw


def responses_input(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        out.append({"role": "user", "content": f"Question {i} about ORD-{1000 + i}? " + "please check " * 30})
        out.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": f"ORD-{1000 + i} is in W{i}. " + "checked " * 30}],
            }
        )
    out.append({"role": "user", "content": "And the newest one?"})
    return out


COMPACTION_ITEM = {"type": "compaction", "id": "cmp_0123456789abcdef", "encrypted_content": "gAAAAABo" + "x" * 400}
"""What the Responses API returns when it compacted on the server (and the client sends back in place of what
it replaced): opaque, readable only by the provider that wrote it."""


def anthropic_messages(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        out.append({"role": "user", "content": f"Step {i}: read src/mod_{i}.py. " + "details " * 30})
        out.append({"role": "assistant", "content": [{"type": "text", "text": f"Read mod_{i}. " + "ok " * 30}]})
    out.append({"role": "user", "content": "Go on."})
    return out


@pytest.mark.parametrize(
    ("case", "extra"),
    [
        ("context_management", {"context_management": [{"type": "compaction", "compact_threshold": 200000}]}),
        ("compaction item", {}),
    ],
)
def test_a_responses_request_with_the_providers_compaction_reaches_the_upstream_untouched(
    fake: FakeLLMServer, store: SQLiteStore, case: str, extra: dict[str, Any]
) -> None:
    items = responses_input(30)
    if case == "compaction item":
        items = [COMPACTION_ITEM, *items]
    with proxy(fake, store, context_window=WINDOW) as p:
        r, raw = post(p.url + "/v1/responses", {"model": "gpt-5", "input": items, **extra}, authorization="Bearer k")
        assert r.status_code == 200, r.text
    assert fake.requests[-1].raw == raw
    assert fake.requests[-1].path == "/v1/responses"
    assert r.headers["x-chainsum-skipped"].startswith("provider compaction")
    assert "x-chainsum-summarized" not in r.headers


@pytest.mark.parametrize(
    "edits",
    [
        [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 150000}}],
        [{"type": "clear_tool_uses_20250919", "keep": {"type": "tool_uses", "value": 3}}],
    ],
    ids=["compact_20260112", "clear_tool_uses_20250919"],
)
def test_an_anthropic_request_with_context_management_edits_reaches_the_upstream_untouched(
    fake: FakeLLMServer, store: SQLiteStore, edits: list[dict[str, Any]]
) -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "messages": anthropic_messages(30),
        "context_management": {"edits": edits},
    }
    with proxy(fake, store, context_window=WINDOW) as p:
        r, raw = post(
            p.url + "/v1/messages", body, **{"x-api-key": "k", "anthropic-beta": "context-management-2025-06-27"}
        )
        assert r.status_code == 200, r.text
    assert fake.requests[-1].raw == raw
    assert fake.requests[-1].headers["anthropic-beta"] == "context-management-2025-06-27"
    assert r.headers["x-chainsum-skipped"] == "provider compaction (context_management)"


def test_an_anthropic_history_holding_a_compaction_block_reaches_the_upstream_untouched(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    messages = anthropic_messages(30)
    messages[1] = {
        "role": "assistant",
        "content": [{"type": "compaction", "content": "Summary of the work so far: mod_0 read."}],
    }
    body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": messages}
    with proxy(fake, store, context_window=WINDOW) as p:
        r, raw = post(p.url + "/v1/messages", body, **{"x-api-key": "k"})
        assert r.status_code == 200, r.text
    assert fake.requests[-1].raw == raw
    assert r.headers["x-chainsum-skipped"] == "provider compaction (compaction block at messages[1].content[0])"


def test_without_the_providers_compaction_the_same_history_is_compacted(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    """The check above is not vacuous: the same request without the provider's compaction is compacted."""
    with proxy(fake, store, context_window=WINDOW) as p:
        r, raw = post(
            p.url + "/v1/responses", {"model": "gpt-5", "input": responses_input(30)}, authorization="Bearer k"
        )
        assert r.status_code == 200, r.text
        assert r.headers["x-chainsum-summarized"] == "true"
        body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": anthropic_messages(30)}
        a, _ = post(p.url + "/v1/messages", body, **{"x-api-key": "k"})
        assert a.headers["x-chainsum-summarized"] == "true"
    assert fake.requests[-2].raw != raw


def test_the_standalone_compact_endpoint_is_forwarded_untouched(fake: FakeLLMServer, store: SQLiteStore) -> None:
    body = {"model": "gpt-5", "input": [COMPACTION_ITEM, *responses_input(30)]}
    with proxy(fake, store, context_window=WINDOW) as p:
        r, raw = post(p.url + "/v1/responses/compact", body, authorization="Bearer k")
    assert fake.requests[-1].raw == raw
    assert fake.requests[-1].path == "/v1/responses/compact"
    assert fake.requests[-1].headers["authorization"] == "Bearer k"
    assert r.headers["x-chainsum-passthrough"] == "unknown-route"
