"""A bounded load test on loopback: many sessions at once through one server, each resending its growing history;
every request answered, every upstream request inside its window, the metrics adding up."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import pytest

from chainsum.formats import load
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from chainsum.tokens import HeuristicCounter
from server.server_support import proxy

SESSIONS = 24
TURNS = 6
WINDOW = 1500


@pytest.mark.slow
def test_concurrent_sessions_all_answered_inside_their_window(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:

        async def session(client: httpx.AsyncClient, s: int) -> list[int]:
            history: list[dict[str, Any]] = [{"role": "system", "content": f"Session {s}."}]
            statuses: list[int] = []
            for t in range(TURNS):
                history.append({"role": "user", "content": f"s{s} turn {t}: item ITM-{s}-{t}? " + "words " * 200})
                r = await client.post(
                    "/v1/chat/completions",
                    json={"model": "gpt-4o", "messages": history},
                    headers={"X-Chainsum-Session": f"load-{s}"},
                )
                statuses.append(r.status_code)
                history.append({"role": "assistant", "content": r.json()["choices"][0]["message"]["content"]})
            return statuses

        async def run() -> list[list[int]]:
            async with httpx.AsyncClient(base_url=p.url, timeout=60) as client:
                return await asyncio.gather(*(session(client, s) for s in range(SESSIONS)))

        results = asyncio.run(run())
        assert all(code == 200 for statuses in results for code in statuses)
        assert len(fake.requests) == SESSIONS * TURNS
        counter = HeuristicCounter()
        for request in fake.requests:
            assert counter.count_messages(list(load(request.json["messages"], format="openai").messages)) <= WINDOW  # type: ignore[index]
        metrics = httpx.get(p.url + "/metrics", headers=p.auth()).text
        served = re.search(r'chainsum_requests_total\{route="chat",status="200"\} (\d+)', metrics)
        assert served is not None and int(served.group(1)) == SESSIONS * TURNS
        compactions = sum(float(v) for v in re.findall(r"chainsum_compactions_total\{[^}]*\} (\S+)", metrics))
        assert compactions >= SESSIONS, metrics  # every session outgrew its window at least once
        assert len(p.get("/api/sessions")["sessions"]) == SESSIONS
