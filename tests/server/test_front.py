"""`FrontDoor`: the chat routes answered right behind the Host and Origin checks, before the FastAPI app, everything
else through the app; an error a chat handler does not catch is still a 500, and reaches the server's log."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi.testclient import TestClient

from chainsum.server import _proxy, create_app  # pyright: ignore[reportPrivateUsage]
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.server_support import proxy, settings_for

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
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # pyright: ignore[reportAttributeAccessIssue]
    with proxy(fake, store, context_window=8000) as p:
        log = logging.getLogger("uvicorn.error")
        log.addHandler(handler)
        try:
            r = httpx.post(p.openai_url + "/chat/completions", json=BODY, headers=p.auth())
        finally:
            log.removeHandler(handler)
        assert r.status_code == 500 and r.text == "Internal Server Error"
        assert httpx.get(p.url + "/healthz").status_code == 200  # and the server goes on
    # the server logged it, with its traceback
    assert [r.exc_info[1] for r in records if r.exc_info] and "a bug" in str(records[0].exc_info)


def test_the_app_built_by_create_app_still_serves_tests_and_raises_what_a_handler_did_not_catch(
    fake: FakeLLMServer, store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object) -> None:
        raise RuntimeError("a bug")

    app = create_app(settings_for(fake, context_window=8000), store=store)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert app.state.chainsum.settings.context_window == 8000
        auth = {"Authorization": "Bearer test-admin-token"}
        assert client.post("/v1/chat/completions", json=BODY, headers=auth).status_code == 200
        monkeypatch.setattr(_proxy, "_handle", broken)
        with pytest.raises(RuntimeError, match="a bug"):
            client.post("/v1/chat/completions", json=BODY, headers=auth)
    with TestClient(app, base_url="http://127.0.0.1:8765", raise_server_exceptions=False) as client:
        r = client.post("/v1/messages", json=BODY, headers=auth)
        assert r.status_code == 500 and r.text == "Internal Server Error"
        # Host checked first, before the handler runs
        assert client.post("/v1/messages", json=BODY, headers={**auth, "Host": "evil.example"}).status_code == 421
