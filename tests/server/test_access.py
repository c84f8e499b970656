"""Who reaches what (`chainsum.server._access`): a client's key opens only its own sessions, by every route of the
session API (a secret planted in one client's session never reaches the other); the admin token opens all; the
Host, Origin and cross-site POST checks; ``/healthz`` open and ``/metrics`` behind the token; a server made with no
token closed all the same; the token kept out of the access log."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from chainsum.manager import ManagerConfig
from chainsum.server import ServerSettings, create_app
from chainsum.server._access import (
    _ADDRESSED,  # pyright: ignore[reportPrivateUsage]
    ADMIN,
    Caller,
    HostGuard,
    RedactTokens,
    client_scopes,
    host_allowed,
    redact_access_log,
    redact_tokens,
)
from chainsum.server._identity import session_key
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.server_support import ADMIN_TOKEN, Running, chat, proxy, serve_app, settings_for

WINDOW = 1200
SECRET = "PLANTED-SECRET-alice-7f3a9c"
ALICE = "sk-alice-0123456789"
BOB = "sk-ant-bob-9876543210"


def _alice_turns(p: Running) -> str:
    """Alice (an OpenAI client: ``Authorization: Bearer``) talks until her session compacts; the secret is in her
    first message, so it ends up in the archive, a summary's originals and the search index."""
    messages = chat(30)
    messages[1] = {"role": "user", "content": f"My locker code is {SECRET}. " + "please note " * 12}
    r = httpx.post(
        p.openai_url + "/chat/completions",
        json={"model": "gpt-4o", "messages": messages},
        headers={"X-Chainsum-Session": "alice-work", "Authorization": f"Bearer {ALICE}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return r.headers["x-chainsum-session"]


def _bob_turns(p: Running) -> str:
    """Bob (an Anthropic client: ``x-api-key``) talks until his session compacts too."""
    messages = [m for m in chat(30) if m["role"] != "system"]
    r = httpx.post(
        p.url + "/v1/messages",
        json={
            "model": "claude-sonnet-4-5",
            "max_tokens": 100,
            "system": "You are the order desk.",
            "messages": messages,
        },
        headers={"X-Chainsum-Session": "bob-work", "x-api-key": BOB, "anthropic-version": "2023-06-01"},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return r.headers["x-chainsum-session"]


def _settled(p: Running, *sids: str, compactions: int = 1) -> dict[str, dict[str, Any]]:
    """The admin's rows once each of `sids` is listed with `compactions` (directory writes are in the background)."""
    deadline = time.monotonic() + 10
    while True:
        rows = {s["id"]: s for s in p.get("/api/sessions")["sessions"]}
        done = all(s in rows and rows[s]["compactions"] >= compactions for s in sids)
        if done or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)


def _events(p: Running, headers: dict[str, str], query: str = "") -> list[dict[str, Any]]:
    """Every event the stream replays from the start (``Last-Event-ID: 0``), read until it goes quiet."""
    got: list[dict[str, Any]] = []
    try:
        with httpx.stream(
            "GET",
            p.url + "/api/events" + query,
            headers={"Last-Event-ID": "0", **headers},
            timeout=httpx.Timeout(10, read=1.5),
        ) as r:
            if r.status_code != 200:
                return [{"status": r.status_code}]
            for line in r.iter_lines():
                if line.startswith("data: "):
                    got.append(json.loads(line.removeprefix("data: ")))
    except httpx.ReadTimeout:
        pass
    return got


@pytest.mark.slow
def test_a_clients_key_opens_its_own_sessions_and_no_route_reaches_another_clients(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        alice, bob = _alice_turns(p), _bob_turns(p)
        rows = _settled(p, alice, bob)
        assert {alice, bob} <= set(rows)  # the admin sees both
        records = store.records(alice)
        assert records, "Alice's session never compacted: nothing archived to leak"
        record = records[-1].id
        archived = [e.message_id for e in store.archived(alice)]

        # Positive control: Alice's own key reaches her secret by each route that shows text, so the checks below
        # look where the secret is.
        with p.api(ALICE) as api:
            assert [s["id"] for s in api.get("/api/sessions").json()["sessions"]] == [alice]
            assert SECRET in api.get(f"/api/summaries/{record}/originals").text
            assert SECRET in api.get(f"/api/sessions/{alice}/originals", params={"ids": ",".join(archived)}).text
            assert SECRET[:20] in api.get(f"/api/sessions/{alice}/search", params={"q": "locker"}).text
            assert api.get(f"/api/sessions/{bob}").status_code == 404

        # Bob, with his key as the page sends it (bearer) and as his client sends it (x-api-key)
        for headers in ({"Authorization": f"Bearer {BOB}"}, {"x-api-key": BOB}):
            with httpx.Client(base_url=p.url, headers=headers, timeout=30) as api:
                listed = api.get("/api/sessions")
                assert [s["id"] for s in listed.json()["sessions"]] == [bob], headers
                answers = [
                    listed,
                    api.get(f"/api/sessions/{alice}"),
                    api.get(f"/api/sessions/{alice}/context"),
                    api.get(f"/api/sessions/{alice}/search", params={"q": "locker"}),
                    api.get(f"/api/sessions/{alice}/originals", params={"ids": ",".join(archived)}),
                    api.get(f"/api/summaries/{record}/originals"),
                    api.post(f"/api/sessions/{alice}/compact", json={}),
                    api.delete(f"/api/sessions/{alice}"),
                ]
                assert [r.status_code for r in answers[1:]] == [404] * 7, [r.text for r in answers]
                assert all(SECRET not in r.text and "locker" not in r.text for r in answers)
                assert api.get(f"/api/sessions/{bob}/context").status_code == 200  # his own, as a control
            events = _events(p, headers)
            assert events and {e["sessionId"] for e in events} == {bob}, events
            assert _events(p, headers, f"?session={alice}") == [{"status": 404}]

        # Nothing of Alice's was compacted or deleted by Bob's calls, and the admin still reaches it all
        assert p.get(f"/api/sessions/{alice}")["compactions"] == rows[alice]["compactions"]
        assert SECRET in json.dumps(p.get(f"/api/summaries/{record}/originals"))
        assert {e["sessionId"] for e in _events(p, p.auth())} == {alice, bob}


def test_no_credential_or_an_unknown_one_is_refused_and_anonymous_sessions_are_the_admins(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        r = httpx.post(p.openai_url + "/chat/completions", json={"model": "m", "messages": chat(2)}, timeout=30)
        anon = r.headers["x-chainsum-session"]
        assert anon.endswith("~anon")
        assert anon in _settled(p, anon, compactions=0)  # the admin's
        for token in ("", "sk-nobody", "anon"):
            with p.api(token) as api:
                r = api.get("/api/sessions")
                assert r.status_code == 401 and r.json()["error"]["field"] == "authorization", token
        assert Caller(admin=False, scopes=client_scopes("anon")).owns(anon) is False


def test_metrics_need_the_admin_token_and_healthz_is_open(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        _alice_turns(p)
        _settled(p)
        assert httpx.get(p.url + "/healthz").status_code == 200
        assert httpx.get(p.url + "/metrics").status_code == 401
        assert httpx.get(p.url + "/metrics", headers={"Authorization": f"Bearer {ALICE}"}).status_code == 403
        assert "chainsum_requests_total" in httpx.get(p.url + "/metrics", headers=p.auth()).text
    with proxy(fake, store, public_metrics=True) as p:
        assert httpx.get(p.url + "/metrics").status_code == 200


def test_a_foreign_host_gets_421_everywhere_and_allowed_hosts_pass(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store) as p:
        port = p.url.rsplit(":", 1)[1]
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        for path, method in (("/", "GET"), ("/api/sessions", "GET"), ("/healthz", "GET"), ("/static/app.js", "GET")):
            for host in ("evil.example", f"evil.example:{port}", "127.0.0.1:1", f"127.0.0.2.nip.io:{port}"):
                r = httpx.request(method, p.url + path, headers={"Host": host, **p.auth()})
                assert r.status_code == 421, (path, host)
                assert r.json()["error"]["field"] == "host"
        # the proxy routes answer in their provider's error shape
        r = httpx.post(p.openai_url + "/chat/completions", json=body, headers={"Host": "evil.example"})
        assert r.status_code == 421 and r.json()["error"]["param"] == "host"
        r = httpx.post(p.url + "/v1/messages", json=body, headers={"Host": "evil.example"})
        assert r.status_code == 421 and r.json()["type"] == "error"
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"LOCALHOST.:{port}"):
            assert httpx.get(p.url + "/api/sessions", headers={"Host": host, **p.auth()}).status_code == 200
    with proxy(fake, store, allowed_hosts=("chainsum.internal", f"box:{port}")) as p:
        port = p.url.rsplit(":", 1)[1]
        assert httpx.get(p.url + "/healthz", headers={"Host": "chainsum.internal"}).status_code == 200
        assert httpx.get(p.url + "/healthz", headers={"Host": "chainsum.internal:9"}).status_code == 200
        assert httpx.get(p.url + "/healthz", headers={"Host": "evil.example"}).status_code == 421


def test_cross_site_requests_are_refused_even_without_a_token(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW, api_token=None, no_auth=True) as p:
        sid = _alice_turns(p)
        _settled(p, sid)
        port = p.url.rsplit(":", 1)[1]
        # a form or text/plain POST from a page: no JSON, no custom header
        for headers in ({"Content-Type": "text/plain"}, {"Content-Type": "application/x-www-form-urlencoded"}, {}):
            r = httpx.post(p.url + f"/api/sessions/{sid}/compact", content=b"x", headers=headers)
            assert r.status_code == 403 and r.json()["error"]["field"] == "content-type", headers
        # the Origin of another site (or of another local port), even with JSON
        for origin in ("http://evil.example", f"http://evil.example:{port}", "http://127.0.0.1:1", "null"):
            r = httpx.post(p.url + f"/api/sessions/{sid}/compact", json={}, headers={"Origin": origin})
            assert r.status_code == 403 and r.json()["error"]["field"] == "origin", origin
            assert httpx.get(p.url + "/api/sessions", headers={"Origin": origin}).status_code == 403
        assert (
            httpx.delete(p.url + f"/api/sessions/{sid}", headers={"Origin": "http://evil.example"}).status_code == 403
        )
        # the page's own calls pass: same origin, its header; and a script's JSON
        same = {"Origin": f"http://127.0.0.1:{port}", "X-Chainsum-Request": "page"}
        assert httpx.post(p.url + f"/api/sessions/{sid}/compact", headers=same).status_code in (200, 202)
        assert httpx.post(p.url + f"/api/sessions/{sid}/compact", json={}).status_code in (200, 202)
        assert sid in [s["id"] for s in p.get("/api/sessions", token="")["sessions"]]  # --no-auth: no token needed


def test_an_app_made_without_a_token_is_closed(fake: FakeLLMServer, store: SQLiteStore) -> None:
    app = create_app(settings_for(fake, api_token=None, context_window=WINDOW), store=store, event_poll_s=0.05)
    with serve_app(app) as p:
        assert p.token and p.token != ADMIN_TOKEN  # made for this app, known to no one
        sid = _alice_turns(p)
        for token in ("", ADMIN_TOKEN):
            with p.api(token) as api:
                assert api.get("/api/sessions").status_code == 401
        _settled(p, sid)
        with p.api(ALICE) as api:
            assert [s["id"] for s in api.get("/api/sessions").json()["sessions"]] == [sid]


def test_the_token_never_reaches_the_access_log(caplog: pytest.LogCaptureFixture) -> None:
    redact_access_log()
    redact_access_log()  # once, however many apps
    access = logging.getLogger("uvicorn.access")
    assert sum(isinstance(f, RedactTokens) for f in access.filters) == 1
    with caplog.at_level(logging.INFO, logger="uvicorn.access"):
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/?token=s3cr3t&x=1", "1.1", 200)
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/api/x?after=2&TOKEN=abc", "1.1", 200)
    text = caplog.text
    assert "s3cr3t" not in text and "abc" not in text and text.count("token=[redacted]") == 1
    assert "/?token=[redacted]&x=1" in text and "TOKEN=[redacted]" in text


def test_settings_from_the_environment_reach_the_app(tmp_path: Path) -> None:
    settings = ServerSettings.from_env(
        {"CHAINSUM_ALLOWED_HOSTS": "a.example", "CHAINSUM_PUBLIC_METRICS": "1", "CHAINSUM_NO_AUTH": "true"},
        db=str(tmp_path / "x.db"),
        config=ManagerConfig(),
    )
    assert settings.allowed_hosts == ("a.example",) and settings.public_metrics and settings.no_auth


# -- the pure parts, over generated input --------------------------------------------------------------------------


def test_the_host_checks_answers_are_kept_by_what_they_read_and_the_rest_checked_each_time() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover - never reached here
        raise AssertionError

    guard = HostGuard(app, ServerSettings(port=8765))

    def refusal(host: str, *, origin: str | None = None, path: str = "/v1/messages", media: str = "") -> Any:
        headers = [(b"host", host.encode()), (b"content-type", media.encode())]
        headers += [(b"origin", origin.encode())] if origin is not None else []
        scope = {"type": "http", "method": "POST", "path": path, "headers": headers, "server": ["127.0.0.1", 8765]}
        return guard.refusal(scope)

    for _ in range(2):  # the second time from what was kept, the same answers
        assert refusal("127.0.0.1:8765") is None
        assert refusal("evil.example")[0] == 421
        assert refusal("127.0.0.1:8765", origin="http://evil.example")[0] == 403
        assert refusal("127.0.0.1:8765", path="/api/sessions/x/compact", media="text/plain")[0] == 403
        assert refusal("127.0.0.1:8765", path="/api/sessions/x/compact", media="application/json") is None
    for i in range(3 * _ADDRESSED):  # any Host may come: what is kept stays bounded
        assert refusal(f"h{i}.example")[0] == 421
    assert len(guard._addressed) <= _ADDRESSED  # pyright: ignore[reportPrivateUsage]
    assert refusal("localhost:8765") is None and refusal("localhost:1")[0] == 421


_names = st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,10}){0,3}", fullmatch=True)
_ports = st.integers(1, 65535)


@given(name=_names, port=_ports, other=_ports)
def test_only_the_loopback_names_and_allowed_hosts_with_the_port_are_this_server(
    name: str, port: int, other: int
) -> None:
    def allowed(netloc: str, *hosts: str) -> bool:
        return host_allowed(netloc, port=port, local=["0.0.0.0"], allowed=hosts)

    if name != "localhost":
        assert not allowed(name) and not allowed(f"{name}:{port}")  # DNS rebinding: a name of the attacker's
    for loopback in ("localhost", "127.0.0.1", "[::1]"):
        assert allowed(f"{loopback}:{port}")
        assert allowed(f"{loopback}:{other}") == (other == port)
    assert allowed(f"{name}:{other}", name) and allowed(name.upper(), name)
    assert allowed(f"{name}:{port}", f"{name}:{port}") and allowed(f"{name}:{other}", f"{name}:{port}") == (
        other == port
    )
    assert allowed(f"{name}:{other}", "*")
    assert not allowed(f"{name}:x{port}", name) and not allowed(f"[{name}", name) and not allowed("", name)


@given(alice=st.text(min_size=1, max_size=60).map(str.strip).filter(bool), bob=st.text(min_size=1, max_size=60))
def test_a_key_owns_exactly_the_sessions_made_with_it(alice: str, bob: str) -> None:
    bob = bob.strip() or "b"
    assume(alice != f"Bearer {bob}" and bob != f"Bearer {alice}")  # a key that holds the other: it knows it
    sessions = {
        "openai": session_key({"authorization": f"Bearer {alice}"}, {}, system=None, messages=[]).id,
        "anthropic": session_key({"x-api-key": alice}, {}, system=None, messages=[]).id,
    }
    anon = session_key({}, {}, system=None, messages=[]).id
    mine, theirs = Caller(admin=False, scopes=client_scopes(alice)), Caller(admin=False, scopes=client_scopes(bob))
    assert all(mine.owns(s) for s in sessions.values())
    assert not mine.owns(anon) and not theirs.owns(anon) and ADMIN.owns(anon)
    assert all(theirs.owns(s) == (alice == bob) for s in sessions.values())
    legacy = sessions["openai"][:-6]  # a 10-digit scope of an earlier version: the admin's only
    assert not mine.owns(legacy) and ADMIN.owns(legacy)
    assert not mine.owns(sessions["openai"].replace("~", "_"))


def test_redact_tokens_leaves_other_parameters() -> None:
    assert redact_tokens("/?token=a&b=c#d") == "/?token=[redacted]&b=c#d"
    assert redact_tokens("/x?mytoken=a") == "/x?mytoken=a"
    assert redact_tokens("/x?a=1&token=") == "/x?a=1&token=[redacted]"
