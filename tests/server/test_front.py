"""`FrontDoor`: the chat routes answered right behind the Host and Origin checks, everything else through the app;
an error a chat handler does not catch still gets Starlette's 500."""

from __future__ import annotations

import httpx
import pytest

from chainsum.server import _proxy  # pyright: ignore[reportPrivateUsage]
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.server_support import proxy

BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]}


def test_a_chat_request_is_answered_and_checked_like_any_other(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=8000) as p:
        r = httpx.post(p.openai_url + "/chat/completions", json=BODY, headers=p.auth())
        assert r.status_code == 200 and r.headers["x-chainsum-summarized"] == "false"
        assert "chainsum;dur=" in r.headers["server-timing"]
        r = httpx.post(p.openai_url + "/chat/completions", json=BODY, headers={"Origin": "https://evil.example"})
        assert r.status_code == 403 and r.json()["error"]["param"] == "origin"
        r = httpx.post(p.url + "/v1/messages", json=BODY, headers={"Host": "evil.example"})
        assert r.status_code == 421 and r.json()["type"] == "error"
        # other methods and paths go through the app's router as before: the other /v1 paths are forwarded
        r = httpx.get(p.url + "/v1/messages", headers=p.auth())
        assert r.headers.get("x-chainsum-passthrough") == "unknown-route"
        assert httpx.get(p.url + "/healthz").status_code == 200


def test_an_uncaught_error_of_a_chat_handler_is_a_500(
    fake: FakeLLMServer, store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(_proxy, "_handle", broken)
    with proxy(fake, store, context_window=8000) as p:
        r = httpx.post(p.openai_url + "/chat/completions", json=BODY, headers=p.auth())
        assert r.status_code == 500
        assert httpx.get(p.url + "/healthz").status_code == 200  # and the server goes on
