"""The session API against a real server: sessions, their context and record chain, search, verified originals,
a manual compaction, clearing, the event stream, the stateless compact, the API token, and errors naming the
field."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from chainsum.server import ServerSettings, SettingsError
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.server_support import Running, chat, proxy

WINDOW = 2000
EXAMPLE = Path(__file__).parents[2] / "examples" / "support-session.json"


def send(p: Running, messages: list[dict[str, Any]], session: str = "api-test", **headers: str) -> httpx.Response:
    r = httpx.post(
        p.openai_url + "/chat/completions",
        json={"model": "gpt-4o", "messages": messages},
        headers={"X-Chainsum-Session": session, "Authorization": "Bearer sk-client", **headers},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return r


def settle(p: Running, sid: str, check: Any, timeout: float = 5.0) -> Any:
    """The session's API view once `check` holds (directory writes happen in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        data = p.get(f"/api/sessions/{sid}")
        if check(data) or time.monotonic() > deadline:
            return data
        time.sleep(0.05)


def test_sessions_context_records_search_and_originals(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        sid = send(p, chat(30)).headers["x-chainsum-session"]
        listed = p.get("/api/sessions")["sessions"]
        assert [s["id"] for s in listed] == [sid]
        row = listed[0]
        assert row["label"] == "api-test" and row["window"] == WINDOW and row["summarized"] is True
        assert row["compactions"] == 1 and 0 < row["tokens"] <= WINDOW and row["created_ms"] <= row["active_ms"]
        detail = settle(p, sid, lambda d: d["events"])
        assert detail["records"] and detail["records"][-1]["depth"] >= 1
        record = detail["records"][-1]
        assert record["tokens_before"] > record["tokens_after"] > 0 and record["messages"] > 0
        assert detail["events"][-1]["type"] == "context_summarized"
        assert detail["events"][-1]["tokensAfter"] == record["tokens_after"]

        context = p.get(f"/api/sessions/{sid}/context")
        assert context["source"] == "live" and context["tokens"] <= WINDOW
        kinds = [m["kind"] for m in context["messages"]]
        assert "summary" in kinds and context["messages"][0]["role"] == "system"
        block = next(m for m in context["messages"] if m["kind"] == "summary")["blocks"][0]

        assert block["record_id"] in {r["id"] for r in detail["records"]}
        originals = p.get(f"/api/summaries/{block['record_id']}/originals")
        assert originals["verified"] is True and len(originals["messages"]) >= block["messages"] > 0
        assert "ORD-1000" in json.dumps(originals["messages"])

        hits = p.get(f"/api/sessions/{sid}/search?q=ORD-1003")["hits"]
        assert hits and "1003" in hits[0]["snippet"]


def test_originals_that_fail_verification_are_refused_not_shown(fake: FakeLLMServer, tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    store = SQLiteStore(db)
    try:
        with proxy(fake, store, context_window=WINDOW) as p:
            sid = send(p, chat(30)).headers["x-chainsum-session"]
            record = p.get(f"/api/sessions/{sid}")["records"][-1]
            with sqlite3.connect(db) as conn:
                conn.execute("UPDATE archive SET json = replace(json, 'ORD-1000', 'ORD-6666')")
            with p.api() as api:
                r = api.get(f"/api/summaries/{record['id']}/originals")
            assert r.status_code == 500 and "ORD-6666" not in r.text
            assert r.json()["error"]["field"] == "id"
    finally:
        store.close()


def test_manual_compaction_clear_and_404s(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=8000) as p:
        sid = send(p, chat(12)).headers["x-chainsum-session"]  # well under the trigger: nothing compacted
        assert p.get(f"/api/sessions/{sid}")["compactions"] == 0
        with p.api() as api:
            done = api.post(f"/api/sessions/{sid}/compact")
            assert done.status_code == 200 and done.json()["status"] == "compacted"
            assert done.json()["tokens_after"] < done.json()["tokens_before"]
            assert api.post("/api/sessions/nope/compact").status_code == 404
            assert api.delete(f"/api/sessions/{sid}").json() == {"deleted": sid}
            assert api.delete(f"/api/sessions/{sid}").status_code == 404
            assert api.get(f"/api/sessions/{sid}").status_code == 404
            assert api.get("/api/sessions").json() == {"sessions": []}
            assert api.get("/api/summaries/nope/originals").status_code == 404
        assert store.archived(sid) == [] and store.records(sid) == []


def test_the_event_stream_delivers_events_as_they_happen_and_replays_after_an_id(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        received: list[tuple[str, str, dict[str, Any]]] = []
        connected = threading.Event()

        def listen() -> None:
            with httpx.stream("GET", p.url + "/api/events", headers=p.auth(), timeout=30) as r:
                connected.set()
                event, ident = "", ""
                for line in r.iter_lines():
                    if line.startswith("event: "):
                        event = line.removeprefix("event: ")
                    elif line.startswith("id: "):
                        ident = line.removeprefix("id: ")
                    elif line.startswith("data: "):
                        received.append((event, ident, json.loads(line.removeprefix("data: "))))
                        if len(received) == 2:
                            return

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        assert connected.wait(10)
        time.sleep(0.2)
        first = send(p, chat(30), session="one").headers["x-chainsum-session"]
        second = send(p, chat(30), session="two").headers["x-chainsum-session"]
        thread.join(15)
        assert [(e, d["sessionId"]) for e, _, d in received] == [
            ("context_summarized", first),
            ("context_summarized", second),
        ]
        event = received[0][2]
        assert event["message"].startswith("Context optimized: ") and 0 < event["contextCompressionRatio"] < 1
        # a client reconnecting after the first event gets the second again, and only for its session filter
        with httpx.stream(
            "GET", p.url + f"/api/events?session={second}", headers={"Last-Event-ID": "0", **p.auth()}, timeout=30
        ) as r:
            for line in r.iter_lines():
                if line.startswith("data: "):
                    assert json.loads(line.removeprefix("data: "))["sessionId"] == second
                    break


def test_stateless_compact_is_what_the_cli_does(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store) as p, p.api() as api:
        doc = json.loads(EXAMPLE.read_text())
        r = api.post("/api/compact", json={"conversation": doc, "budget": 800})
        assert r.status_code == 200
        out = r.json()
        assert out["report"]["fits"] and out["report"]["valid"] and out["report"]["tokens_after"] <= 800
        assert out["format"] == "openai" and len(out["conversation"]) < len(doc)
        bad = api.post("/api/compact", json={"conversation": doc, "budget": "lots"})
        assert bad.status_code == 400 and bad.json()["error"]["field"] == "budget"
        missing = api.post("/api/compact", json={"budget": 100})
        assert missing.status_code == 400 and missing.json()["error"]["field"] == "conversation"
        unknown = api.post("/api/compact", json={"conversation": {"what": 1}, "budget": 100})
        assert unknown.status_code == 400 and unknown.json()["error"]["field"] == "conversation"
        provider = api.post("/api/compact", json={"conversation": doc, "provider": "acme"})
        assert provider.status_code == 400 and provider.json()["error"]["field"] == "provider"


def test_bad_query_parameters_are_named(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW) as p, p.api() as api:
        sid = send(p, chat(3)).headers["x-chainsum-session"]
        no_q = api.get(f"/api/sessions/{sid}/search")
        assert no_q.status_code == 400 and no_q.json()["error"]["field"] == "q"
        limit = api.get(f"/api/sessions/{sid}/search?q=x&limit=0")
        assert limit.status_code == 400 and limit.json()["error"]["field"] == "limit"
        assert api.get("/healthz").json()["status"] == "ok"
        assert "chainsum_requests_total" in api.get("/metrics").text


def test_with_a_token_nothing_of_the_api_is_reachable_without_it(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW, api_token="s3cret-token") as p:
        send(p, chat(3))
        for token in ("", "wrong"):
            with p.api(token) as api:
                for method, path in (
                    ("GET", "/api/sessions"),
                    ("GET", "/api/events"),
                    ("POST", "/api/compact"),
                    ("DELETE", "/api/sessions/x"),
                    ("GET", "/api/summaries/x/originals"),
                ):
                    r = api.request(method, path, json={} if method == "POST" else None)
                    assert r.status_code == 401, (method, path)
                    assert r.json()["error"]["field"] == "authorization"
        assert len(p.get("/api/sessions", token="s3cret-token")["sessions"]) == 1


def test_no_auth_is_refused_beyond_loopback_and_settings_name_what_is_wrong() -> None:
    with pytest.raises(SettingsError, match=r"--no-auth with --host 0\.0\.0\.0: refused beyond loopback"):
        ServerSettings.from_env({"CHAINSUM_NO_AUTH": "1"}, host="0.0.0.0")
    assert ServerSettings.from_env({"CHAINSUM_API_TOKEN": "t"}, host="0.0.0.0").api_token == "t"
    assert ServerSettings.from_env({}, host="0.0.0.0").api_token is None  # closed all the same: create_app makes one
    assert ServerSettings.from_env({"CHAINSUM_NO_AUTH": "1"}, host="::1").no_auth
    with pytest.raises(SettingsError, match="--no-auth and CHAINSUM_API_TOKEN"):
        ServerSettings.from_env({"CHAINSUM_API_TOKEN": "t"}, no_auth=True)
    with pytest.raises(SettingsError, match="CHAINSUM_NO_AUTH='maybe'"):
        ServerSettings.from_env({"CHAINSUM_NO_AUTH": "maybe"})
    hosts = ServerSettings.from_env({"CHAINSUM_ALLOWED_HOSTS": "chainsum.internal, box:9000"}).allowed_hosts
    assert hosts == ("chainsum.internal", "box:9000")
    with pytest.raises(SettingsError, match="--allowed-host 'http://x'"):
        ServerSettings.from_env({}, allowed_hosts=("http://x",))
    with pytest.raises(SettingsError, match="CHAINSUM_MAX_BODY_BYTES"):
        ServerSettings.from_env({"CHAINSUM_MAX_BODY_BYTES": "big"})
    with pytest.raises(SettingsError, match="--workers above 1 needs a shared store"):
        ServerSettings.from_env({}, workers=2)
