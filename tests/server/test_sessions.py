"""`Sessions`: where each request is prepared. A request of a session far from compacting, one step more than the
last, is prepared on the event loop (`ContextManager.prepare_quiet`); everything else on a worker thread. Both give
the same upstream bodies, answers, headers and events: checked on generated Claude Code- and Codex-shaped sessions
that compact part way, against the same sessions with every preparation sent to a worker. A large step, a request
over the trigger and a session that has compacted are never prepared on the loop."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest

from chainsum.formats import dump, load
from chainsum.manager import ContextManager, Prepared
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from chainsum.testing.sessions import agent_session
from server.server_support import Running, proxy

WINDOW = 40_000
"""Tokens: each generated session compacts part way (its first requests are far below the trigger)."""


def _tools(dialect: str) -> list[dict[str, Any]]:
    schema = {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}
    if dialect == "anthropic":
        tools: list[dict[str, Any]] = [
            {"name": f"Tool{i}", "description": "runs things " * 40, "input_schema": schema} for i in range(6)
        ]
        tools[-1] = {**tools[-1], "cache_control": {"type": "ephemeral"}}
        return tools
    return [
        {"type": "function", "name": f"tool_{i}", "description": "runs things " * 40, "parameters": schema}
        for i in range(4)
    ]


def _bodies(dialect: str, seed: int) -> list[dict[str, Any]]:
    """The requests of an agent session as Claude Code (Anthropic Messages, its marker on the newest message) or
    Codex (OpenAI Responses) sends them: the history up to each user or tool message."""
    history = agent_session(90, seed=seed)
    messages = load(history, format="openai").messages
    out: list[dict[str, Any]] = []
    if dialect == "anthropic":
        wire = cast(dict[str, Any], dump(list(messages), to="anthropic"))
        items, system = wire["messages"], wire.get("system") or "You are an agent."
        for end in range(1, len(items) + 1):
            if items[end - 1]["role"] != "user":
                continue
            sent = json.loads(json.dumps(items[:end]))
            last = sent[-1]
            if isinstance(last["content"], str):
                last["content"] = [{"type": "text", "text": last["content"]}]
            last["content"][-1]["cache_control"] = {"type": "ephemeral"}
            out.append(
                {
                    "model": "claude-test",
                    "max_tokens": 1024,
                    "system": [{"type": "text", "text": str(system), "cache_control": {"type": "ephemeral"}}],
                    "tools": _tools(dialect),
                    "messages": sent,
                    "metadata": {"user_id": f"user_x_account__session_{seed:08d}-0000-4000-8000-000000000000"},
                }
            )
        return out
    wire_items = cast(list[dict[str, Any]], dump(list(messages), to="openai-responses"))
    instructions = next((m.text for m in messages if m.role == "system"), "")
    items = [i for i in wire_items if i.get("role") not in ("system", "developer")]
    for end in range(1, len(items) + 1):
        if items[end - 1].get("type", "message") in ("function_call_output",) or items[end - 1].get("role") == "user":
            out.append(
                {
                    "model": "gpt-test",
                    "instructions": instructions,
                    "input": items[:end],
                    "tools": _tools(dialect),
                    "store": False,
                    "prompt_cache_key": f"codex-{seed}",
                }
            )
    return out


_PATH = {"anthropic": "/v1/messages", "responses": "/v1/responses"}
_HEADERS = ("x-chainsum-session", "x-chainsum-summarized", "x-chainsum-tokens-before", "x-chainsum-tokens-after")


def _inline(p: Running) -> float:
    value = p.app.state.chainsum.metrics.registry.get_sample_value("chainsum_prepared_inline_total")
    return float(value or 0.0)


def _run(fake: FakeLLMServer, store: SQLiteStore, dialect: str, bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """Send `bodies` in order; what the upstream got, the answers, their headers and the events published."""
    answers: list[bytes] = []
    headers: list[tuple[str | None, ...]] = []
    with proxy(fake, store) as p:
        with httpx.Client(base_url=p.url, timeout=60) as client:
            for body in bodies:
                r = client.post(
                    _PATH[dialect],
                    content=json.dumps(body),
                    headers={"x-api-key": "sk-test", "X-Chainsum-Context-Window": str(WINDOW)},
                )
                assert r.status_code == 200, r.text
                assert "x-chainsum-passthrough" not in r.headers and "x-chainsum-error" not in r.headers
                answers.append(r.content)
                headers.append(tuple(r.headers.get(h) for h in _HEADERS))
        inline = _inline(p)
        session = headers[-1][0]
    assert session is not None
    events = [
        {k: v for k, v in e.data.items() if k not in ("timestamp", "durationMs", "createdAt")}
        for e in store.recent_events(session, 100)
    ]
    return {
        "upstream": [r.raw for r in fake.requests],
        "answers": answers,
        "headers": headers,
        "events": events,
        "inline": inline,
    }


def _never(*args: object, **kwargs: object) -> None:
    """`ContextManager.prepare_quiet` that never answers: every preparation goes to a worker."""


@pytest.fixture
def other_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "other.db")
    try:
        yield opened
    finally:
        opened.close()


@pytest.mark.parametrize(("dialect", "seed"), [("anthropic", 3), ("responses", 8)])
def test_the_loop_and_the_workers_prepare_alike(
    fake: FakeLLMServer, store: SQLiteStore, other_store: SQLiteStore, dialect: str, seed: int
) -> None:
    bodies = _bodies(dialect, seed)
    quiet = _run(fake, store, dialect, bodies)
    with FakeLLMServer() as other, pytest.MonkeyPatch.context() as patch:
        patch.setattr(ContextManager, "prepare_quiet", _never)
        offloaded = _run(other, other_store, dialect, bodies)
    compacted = [i for i, h in enumerate(quiet["headers"]) if h[1] == "true"]
    assert compacted and quiet["events"], "the session must compact for the test to see both paths"
    # every request before the first compaction but the first (the session's state is read then) on the loop
    assert quiet["inline"] >= compacted[0] - 1 >= 3 and offloaded["inline"] == 0
    assert quiet["inline"] <= len(bodies) - 1 - len(compacted)  # the first request and the compactions: workers
    for key in ("upstream", "answers", "headers", "events"):
        assert quiet[key] == offloaded[key], key


def _where(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads the manager prepares on (quiet answers included)."""
    threads: list[str] = []
    prepare, quiet = ContextManager.prepare, ContextManager.prepare_quiet

    async def recorded(self: ContextManager, *args: Any, **kwargs: Any) -> Prepared[Any]:
        threads.append(threading.current_thread().name)
        return await prepare(self, *args, **kwargs)

    def recorded_quiet(self: ContextManager, *args: Any, **kwargs: Any) -> Prepared[Any] | None:
        answer = quiet(self, *args, **kwargs)
        if answer is not None:
            threads.append(threading.current_thread().name)
        return answer

    monkeypatch.setattr(ContextManager, "prepare", recorded)
    monkeypatch.setattr(ContextManager, "prepare_quiet", recorded_quiet)
    return threads


def test_large_or_compacting_requests_are_prepared_on_a_worker(
    fake: FakeLLMServer, store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = _where(monkeypatch)
    bodies = _bodies("anthropic", 5)
    headers = {"x-api-key": "sk-test", "X-Chainsum-Context-Window": str(WINDOW)}
    with proxy(fake, store) as p, httpx.Client(base_url=p.url, timeout=60) as client:

        def send(body: dict[str, Any]) -> tuple[str, httpx.Response]:
            before = len(threads)
            r = client.post("/v1/messages", content=json.dumps(body), headers=headers)
            assert r.status_code == 200, r.text
            assert len(threads) == before + 1
            return threads[-1], r

        assert send(bodies[0])[0].startswith("chainsum-prepare")  # the session's state is read there first
        assert not send(bodies[1])[0].startswith("chainsum-prepare")  # the next step: on the loop
        # a step of 300,000 characters: its reading is not bounded enough for the loop
        big = json.loads(json.dumps(bodies[2]))
        big["messages"][-1]["content"].insert(0, {"type": "text", "text": "y" * 300_000})
        where, r = send(big)
        assert where.startswith("chainsum-prepare") and r.headers["x-chainsum-summarized"] == "false"
        # small steps again (the same request without the large text first): on the loop, until one compacts
        compacted = None
        for index in range(2, len(bodies)):
            where, r = send(bodies[index])
            if r.headers["x-chainsum-summarized"] == "true":
                assert where.startswith("chainsum-prepare")
                compacted = index
                break
            assert not where.startswith("chainsum-prepare")
        assert compacted is not None
        # and once it has compacted (something archived), every request goes to a worker
        for body in bodies[compacted + 1 : compacted + 4]:
            assert send(body)[0].startswith("chainsum-prepare")
