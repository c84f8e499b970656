"""Transparent by default (issue 19, DESIGN invariant 12): a request chainsum cannot fully read goes upstream as the
client's own bytes and says so (header, metric, one warning and one event per session); Claude Code's
mid-conversation system messages are read and kept; only what is not a chat request at all gets a 400; the base
URL answers the probes clients send before they start."""

from __future__ import annotations

import json
import logging
import time
from typing import Any, cast

import httpx
import pytest

from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.cache_support import extends, same_message
from server.server_support import Running, proxy

SYSTEM = [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}]


def post(url: str, body: Any, **headers: str) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(url, content=content, headers={"content-type": "application/json", **headers}, timeout=30)


def claude_code_turns(n: int) -> list[dict[str, Any]]:
    """What Claude Code 2.1 sends with its default model: system messages inside ``messages`` (the
    ``mid-conversation-system`` beta), one right after the first user message."""
    out: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "Fix the failing test in tests/test_app.py."}]},
        {"role": "system", "content": "The user is in plan mode: propose before you edit."},
    ]
    for i in range(n):
        out.append({"role": "assistant", "content": [{"type": "text", "text": f"Step {i}: reading. " + "ok " * 40}]})
        out.append({"role": "user", "content": f"Go on with step {i + 1}. " + "details " * 40})
        if i % 4 == 3:
            out.append({"role": "system", "content": [{"type": "text", "text": f"Reminder {i}: run the tests."}]})
    return out


def events_of(p: Running, session: str, kind: str, count: int = 1) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 5
    while True:
        events = [e for e in p.get(f"/api/sessions/{session}")["events"] if e["type"] == kind]
        if len(events) >= count or time.monotonic() > deadline:
            return events
        time.sleep(0.05)


def test_claude_codes_mid_conversation_system_messages_reach_the_upstream_byte_identical(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store, context_window=200_000) as p:
        body = {"model": "claude-opus-4-5", "max_tokens": 64, "system": SYSTEM, "messages": claude_code_turns(3)}
        raw = json.dumps(body, indent=1).encode()  # spaces and newlines: any re-serialization would show
        r = post(p.url + "/v1/messages?beta=true", raw, **{"x-api-key": "k", "anthropic-beta": "mid-conv-1"})
        assert r.status_code == 200, r.text
        assert "x-chainsum-passthrough" not in r.headers  # read, not merely passed along
        assert r.headers["x-chainsum-summarized"] == "false" and r.headers["x-chainsum-session"]
    assert fake.requests[-1].raw == raw
    assert fake.requests[-1].query == "beta=true"
    assert fake.requests[-1].headers["anthropic-beta"] == "mid-conv-1"


def test_mid_conversation_system_messages_stay_verbatim_and_in_order_through_a_compaction(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    turns = claude_code_turns(24)
    with proxy(fake, store, context_window=3000) as p:
        body = {"model": "claude-opus-4-5", "max_tokens": 64, "system": SYSTEM, "messages": turns}
        r = post(p.url + "/v1/messages", body, **{"x-api-key": "k"})
        assert r.status_code == 200 and r.headers["x-chainsum-summarized"] == "true"
    sent = cast(dict[str, Any], fake.requests[-1].json)
    assert sent["system"] == SYSTEM
    sent_messages = cast(list[dict[str, Any]], sent["messages"])
    assert len(sent_messages) < len(turns)
    assert [m for m in sent_messages if m["role"] == "system"] == [m for m in turns if m["role"] == "system"]
    assert "[system]" not in json.dumps(sent_messages)  # never turned into user text
    assert same_message(sent_messages[-1], turns[-1])  # the manager's cache mark aside


def test_a_growing_claude_code_session_keeps_its_system_messages_and_stays_append_only(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    """Turn after turn through several compactions: every system message of the history reaches the upstream
    verbatim and in order, and between two compactions each request is the previous one plus the new messages
    (DESIGN invariant 10; the recall block is made for each request and left out of the comparison; the cache mark
    the manager moves to the newest message is the one difference allowed)."""

    def without_recall(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [m for m in messages if "chainsum recall" not in json.dumps(m)]

    history = claude_code_turns(0)
    previous: list[dict[str, Any]] | None = None
    compactions = 0
    with proxy(fake, store, context_window=3000) as p:
        for i in range(40):
            history.append({"role": "assistant", "content": [{"type": "text", "text": f"Step {i}. " + "ok " * 40}]})
            history.append({"role": "user", "content": f"Go on {i}. " + "details " * 40})
            if i % 5 == 4:
                history.append({"role": "system", "content": f"Reminder {i}: the tests must pass."})
            body = {"model": "claude-opus-4-5", "max_tokens": 64, "system": SYSTEM, "messages": history}
            r = post(p.url + "/v1/messages", body, **{"x-api-key": "k", "X-Claude-Code-Session-Id": "cc-grow"})
            assert r.status_code == 200 and "x-chainsum-passthrough" not in r.headers
            sent = without_recall(cast(dict[str, Any], fake.requests[-1].json)["messages"])
            assert [m for m in sent if m["role"] == "system"] == [m for m in history if m["role"] == "system"]
            if r.headers["x-chainsum-summarized"] == "true":
                compactions += 1
            elif previous is not None:
                assert extends(previous, sent), f"turn {i} is not the previous request plus new messages"
            previous = sent
    assert compactions >= 2


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/v1/messages",
            {"model": "claude-x", "max_tokens": 8, "messages": [{"role": "critic", "content": "hm"}]},
            "messages",
        ),
        (
            "/v1/messages",  # a block chainsum knows, in a shape it does not (a file id as the whole source)
            {
                "model": "claude-x",
                "max_tokens": 8,
                "messages": [{"role": "user", "content": [{"type": "image", "source": "file_011CNha8"}]}],
            },
            "messages",
        ),
        (
            "/v1/chat/completions",
            {"model": "gpt-4o", "messages": [{"role": "user", "content": "a"}, {"role": 42}]},
            "messages",
        ),
        (
            "/v1/responses",
            {"model": "gpt-4o", "input": [{"role": "user", "content": "a"}, {"type": "message", "role": "narrator"}]},
            "input",
        ),
    ],
)
def test_a_history_chainsum_cannot_read_goes_upstream_untouched_and_says_so(
    fake: FakeLLMServer,
    store: SQLiteStore,
    caplog: pytest.LogCaptureFixture,
    path: str,
    body: dict[str, Any],
    field: str,
) -> None:
    caplog.set_level(logging.WARNING, logger="chainsum.server._passthrough")
    raw = json.dumps(body, indent=2).encode()
    with proxy(fake, store, context_window=8000) as p:
        url = (p.openai_url + path.removeprefix("/v1")) if path != "/v1/messages" else p.url + path
        first = post(url, raw, **{"X-Chainsum-Session": "odd"})
        again = post(url, raw, **{"X-Chainsum-Session": "odd"})
        for r in (first, again):
            assert r.status_code == 200, r.text
            assert r.headers["x-chainsum-passthrough"] == "unreadable-history"
            assert r.headers["x-chainsum-passthrough-detail"].startswith(f"{field}: ")
        assert [req.raw for req in fake.requests] == [raw, raw]  # the client's very bytes, both times
        session = first.headers["x-chainsum-session"]
        route = {"/v1/messages": "messages", "/v1/chat/completions": "chat", "/v1/responses": "responses"}[path]
        metrics = httpx.get(p.url + "/metrics", headers=p.auth()).text
        assert f'chainsum_passthrough_total{{reason="unreadable-history",route="{route}"}} 2.0' in metrics
        events = events_of(p, session, "request_passthrough")
        time.sleep(0.2)  # a second event would have been published by now
        events = events_of(p, session, "request_passthrough")
    assert len(events) == 1
    assert events[0]["reason"] == "unreadable-history" and events[0]["route"] == route
    assert events[0]["detail"].startswith(f"{field}: ") and events[0]["sessionId"] == session
    warnings = [r for r in caplog.records if "untouched" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert "reason=<unreadable-history>" in warnings[0].getMessage()


def test_the_detail_header_is_one_printable_line_however_odd_the_input(fake: FakeLLMServer, store: SQLiteStore) -> None:
    body = {"model": "gpt-4o", "messages": [{"role": "\u00fcber\nrole " + "x" * 400, "content": "a"}]}
    with proxy(fake, store, context_window=8000) as p:
        r = post(p.openai_url + "/chat/completions", body)
    detail = r.headers["x-chainsum-passthrough-detail"]
    assert r.status_code == 200 and detail.isascii() and "\n" not in detail and len(detail) <= 300


def test_a_readable_session_goes_on_after_an_unreadable_request(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=8000) as p:
        url = p.openai_url + "/chat/completions"
        good = [{"role": "user", "content": "hi"}]
        assert "x-chainsum-passthrough" not in post(url, {"model": "gpt-4o", "messages": good}).headers
        odd = post(url, {"model": "gpt-4o", "messages": [*good, {"role": "oracle", "content": "?"}]})
        assert odd.headers["x-chainsum-passthrough"] == "unreadable-history"
        later = post(url, {"model": "gpt-4o", "messages": [*good, {"role": "assistant", "content": "hello"}]})
        assert later.status_code == 200 and "x-chainsum-passthrough" not in later.headers
        assert later.headers["x-chainsum-session"] == odd.headers["x-chainsum-session"]


def test_request_fields_chainsum_does_not_need_are_the_upstreams_to_judge(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    """A missing or odd ``model``, integers beyond 64 bits, a Responses request with no ``input`` (a stored prompt)
    or a server-side ``conversation``: all go upstream as they came."""
    bodies: list[tuple[str, bytes]] = [
        ("/chat/completions", b'{"messages": [{"role": "user", "content": "hi"}]}'),
        ("/chat/completions", b'{"model": 7, "messages": [{"role": "user", "content": "hi"}]}'),
        ("/chat/completions", b'{"model": "gpt-4o", "seed": 123456789012345678901234567890, "messages": []}'),
        ("/responses", b'{"model": "gpt-4o", "prompt": {"id": "pmpt_1", "variables": {"city": "Lisbon"}}}'),
        ("/responses", b'{"model": "gpt-4o", "conversation": "conv_1", "input": [{"role": "user", "content": "x"}]}'),
    ]
    with proxy(fake, store, context_window=8000) as p:
        answers = [post(p.openai_url + path, raw) for path, raw in bodies]
    for (path, raw), r, received in zip(bodies, answers, fake.requests, strict=True):
        assert r.status_code == 200, (path, raw, r.text)
        assert received.raw == raw
    assert answers[-2].headers["x-chainsum-skipped"] == "no input"
    assert answers[-1].headers["x-chainsum-skipped"] == "conversation"


def test_a_body_that_is_not_a_chat_request_is_answered_with_a_400_naming_the_field(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store, context_window=8000) as p:
        responses = post(p.openai_url + "/responses", {"model": "gpt-4o", "input": 42})
        assert responses.status_code == 400 and responses.json()["error"]["param"] == "input"
        anthropic = post(p.url + "/v1/messages", {"model": "claude-x", "max_tokens": 5, "messages": {"a": 1}})
        assert anthropic.status_code == 400 and "messages" in anthropic.json()["error"]["message"]
    assert fake.requests == []


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_the_base_url_answers_the_probe_clients_send_before_they_start(store: SQLiteStore, method: str) -> None:
    with proxy(None, store) as p:
        r = httpx.request(method, p.url + "/")
    assert r.status_code == 200


def test_paths_chainsum_has_no_route_for_go_upstream_as_they_came(fake: FakeLLMServer, store: SQLiteStore) -> None:
    """Claude Code counts tokens through ``/v1/messages/count_tokens``; other clients call embeddings or files. The
    upstream answers (here the fake's 404s and 501, relayed as they are) and the answer says chainsum passed it."""
    count = json.dumps({"model": "claude-x", "messages": [{"role": "system", "content": "s"}]}).encode()
    with proxy(fake, store, context_window=8000) as p:
        counted = post(p.url + "/v1/messages/count_tokens?beta=true", count, **{"anthropic-version": "2023-06-01"})
        embedded = post(p.openai_url + "/embeddings", {"model": "text-embedding-3-small", "input": "hi"})
        deleted = httpx.delete(p.openai_url + "/files/file-1", headers={"Authorization": "Bearer sk"})
        metrics = httpx.get(p.url + "/metrics", headers=p.auth()).text
    assert [r.status_code for r in (counted, embedded, deleted)] == [404, 404, 501]
    assert all(r.headers["x-chainsum-passthrough"] == "unknown-route" for r in (counted, embedded, deleted))
    received = [(r.path, r.query) for r in fake.requests]  # the fake records no DELETE: its 501 is its answer
    assert received == [("/v1/messages/count_tokens", "beta=true"), ("/v1/embeddings", "")]
    assert fake.requests[0].raw == count and fake.requests[0].headers["anthropic-version"] == "2023-06-01"
    assert 'chainsum_passthrough_total{reason="unknown-route",route="other"} 3.0' in metrics


def test_a_bug_before_the_manager_runs_fails_open_too(
    fake: FakeLLMServer, store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("injected bug")

    monkeypatch.setattr("chainsum.server._proxy.session_key", broken)
    raw = json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}).encode()
    with proxy(fake, store, context_window=8000) as p:
        r = post(p.openai_url + "/chat/completions", raw)
    assert r.status_code == 200 and "unchanged" in r.headers["x-chainsum-error"]
    assert fake.requests[-1].raw == raw
