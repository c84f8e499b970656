"""Idle sessions leave memory (``--session-idle-timeout`` / ``CHAINSUM_SESSION_IDLE_SECONDS``) and come back from
the store on their next request: the same session, extended, with no compaction redone and nothing archived lost."""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast
from urllib.parse import quote

import httpx
import pytest

from chainsum.server import ServerSettings, SettingsError
from chainsum.server._identity import SessionKey
from chainsum.server._sessions import Sessions
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.server_support import Running, chat, proxy

WINDOW = 2000


def test_the_variable_sets_the_idle_time() -> None:
    assert ServerSettings.from_env({}).session_idle_s == 600.0
    assert ServerSettings.from_env({"CHAINSUM_SESSION_IDLE_SECONDS": "30"}).session_idle_s == 30.0
    with pytest.raises(SettingsError, match="CHAINSUM_SESSION_IDLE_SECONDS='never'"):
        ServerSettings.from_env({"CHAINSUM_SESSION_IDLE_SECONDS": "never"})


def post(p: Running, messages: list[dict[str, Any]]) -> httpx.Response:
    r = httpx.post(
        p.openai_url + "/chat/completions",
        json={"model": "gpt-4o", "messages": messages},
        headers={"X-Chainsum-Session": "idle-test", "Authorization": "Bearer sk-client"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return r


def sent(fake: FakeLLMServer) -> list[Any]:
    body = fake.requests[-1].json
    assert isinstance(body, dict)
    return list(cast(dict[str, Any], body)["messages"])


def test_an_evicted_session_continues_from_the_store(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW, session_idle_s=0.3) as p:
        sessions: Sessions = p.app.state.chainsum.sessions
        history = chat(30)
        first = post(p, history)
        sid = first.headers["x-chainsum-session"]
        assert first.headers["x-chainsum-summarized"] == "true"
        before = sent(fake)
        records = [r.id for r in store.records(sid)]
        archived = [a.message_id for a in store.archived(sid)]
        assert records and archived
        deadline = time.monotonic() + 10
        while len(sessions) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(sessions) == 0, "the idle session stayed in memory"
        row = p.get(f"/api/sessions/{quote(sid, safe='')}", token=p.app.state.chainsum.settings.api_token)
        assert row["compactions"] == len(records)  # the directory was written on the way out
        # the next request: the same session, the history sent before plus the new messages, nothing redone
        more = [*history, {"role": "assistant", "content": "ORD-1029 is on its way."}]
        more.append({"role": "user", "content": "Which carrier?"})
        again = post(p, more)
        assert again.headers["x-chainsum-session"] == sid
        assert again.headers["x-chainsum-summarized"] == "false"
        after = sent(fake)
        assert after[: len(before)] == before and after[len(before) :] == more[len(history) :]
        assert [r.id for r in store.records(sid)] == records
        assert [a.message_id for a in store.archived(sid)][: len(archived)] == archived


def test_a_session_in_use_or_waiting_for_a_compaction_stays(store: SQLiteStore) -> None:
    async def run() -> None:
        settings = ServerSettings(session_idle_s=10.0)
        sessions = Sessions(store, settings, cast(Any, None), cast(Any, None))
        busy = sessions.live(SessionKey("busy~anon", "busy", "header"), fmt="openai", provider="openai", window=WINDOW)
        asked = sessions.live(
            SessionKey("asked~anon", "asked", "header"), fmt="openai", provider="openai", window=WINDOW
        )
        sessions.live(SessionKey("idle~anon", "idle", "header"), fmt="openai", provider="openai", window=WINDOW)
        asked.force_next = True
        now = time.monotonic()
        assert sessions.evict_idle(now + 5) == 0  # not idle long enough
        async with busy.lock:
            assert sessions.evict_idle(now + 11) == 1  # the idle one; busy is in use, asked waits for its request
        assert sessions.get("idle~anon") is None and len(sessions) == 2
        assert sessions.evict_idle(now + 11) == 1  # busy, once free
        assert sessions.get("asked~anon") is asked

    asyncio.run(run())
