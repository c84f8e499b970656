"""No input gets a 500: Hypothesis sends every route of ``chainsum serve`` (the session API, the proxy, the page)
arbitrary path segments, query values and headers, on both stores (SQLite and PostgreSQL, whose text cannot hold a
NUL), and every answer is below 500 (a 5xx only when it is the upstream's own, relayed), with a JSON body for each
4xx of ``/api`` and ``/v1``.

The always-on run sends `EXAMPLES` requests per store (a few seconds); ``HYPOTHESIS_PROFILE=thorough`` sends 1,000.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.routing import BaseRoute, Mount, Route

from chainsum.store import SQLiteStore, SqlStore
from chainsum.testing import FakeLLMServer
from sampling import examples
from server.server_support import Running, proxy
from store.store_support import POSTGRES_URL, require_postgres

EXAMPLES = examples(120)
TOKEN = "fuzz-admin-token"

_PARAM = re.compile(r"\{(\w+)(:path)?\}")

_AWKWARD = [
    "\x00",
    "a\x00b",
    "0",
    "-1",
    "1" * 40,
    "1e999",
    "NaN",
    "²",
    "%",
    "%00",
    "..",
    "/",
    "~",
    "\ud7ff",
    "é/è",
    " ",
    "",
]
_TEXT = st.one_of(st.sampled_from(_AWKWARD), st.text(max_size=24), st.integers().map(str))
_HEADER_TEXT = st.one_of(
    st.sampled_from(["0", "-1", "1" * 40, "1.5", "1e999", "abc", "Bearer x", ""]),
    st.integers().map(str),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=24),
)
_HEADERS = [
    "last-event-id",
    "x-chainsum-context-window",
    "x-chainsum-session",
    "x-claude-code-session-id",
    "session-id",
    "x-chainsum-events",
    "authorization",
    "x-api-key",
    "anthropic-version",
    "content-type",
    "accept",
    "origin",
    "referer",
    "cookie",
]
_QUERY = ["q", "limit", "ids", "session", "after", "token", "beta", "x"]


def _routes(app_routes: list[BaseRoute], prefix: str = "") -> list[tuple[str, str]]:
    """(method, path template) of every route the app has (the page's static files as one), through the routers
    it includes (FastAPI keeps an included router whole, as `original_router`, in recent versions)."""
    found: list[tuple[str, str]] = []
    for route in app_routes:
        if isinstance(route, Route):
            found += [(m, prefix + route.path) for m in sorted(route.methods or ())]
        elif isinstance(route, Mount):
            found.append(("GET", prefix + route.path + "/{file:path}"))
        elif (router := getattr(route, "original_router", None)) is not None:
            context = getattr(route, "include_context", None)
            found += _routes(list(router.routes), prefix + str(getattr(context, "prefix", "")))
    return found


def _body(path: str) -> dict[str, Any]:
    history: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]
    if path == "/v1/responses":
        return {"model": "gpt-4o", "input": history}
    if path == "/api/compact":
        return {"conversation": history, "budget": 100}
    return {"model": "gpt-4o", "max_tokens": 10, "messages": history}


@st.composite
def requests(draw: st.DrawFn, routes: list[tuple[str, str]]) -> tuple[str, str, dict[str, str], bytes | None]:
    method, template = draw(st.sampled_from(routes))

    def segment(match: re.Match[str]) -> str:
        value = draw(_TEXT)
        return quote(value, safe="/" if match.group(2) else "", errors="surrogatepass")

    path = _PARAM.sub(segment, template)
    names = st.one_of(st.sampled_from(_QUERY), st.text(min_size=1, max_size=8))
    query = draw(st.lists(st.tuples(names, _TEXT), max_size=3))
    if query:
        path += "?" + urlencode([(k, v.encode("utf-8", "surrogatepass")) for k, v in query])
    headers = {"authorization": f"Bearer {TOKEN}"}
    headers.update(draw(st.dictionaries(st.sampled_from(_HEADERS), _HEADER_TEXT, max_size=3)))
    body: bytes | None = None
    if method in ("POST", "PUT", "PATCH"):
        body = draw(st.one_of(st.just(json.dumps(_body(template)).encode()), st.binary(max_size=16)))
    return method, path, headers, body


def _check(p: Running, client: httpx.Client, request: tuple[str, str, dict[str, str], bytes | None]) -> None:
    method, path, headers, body = request
    with client.stream(method, p.url + path, headers=headers, content=body) as response:
        status = response.status_code
        assert status != 500, (method, path, headers, response.read())
        # Under /v1 a 501 is the upstream's own (the fake has no HEAD, PUT...), relayed; 502 and 504 say it failed.
        proxied = path.startswith("/v1/")
        assert status < 500 or (proxied and status in (501, 502, 504)), (method, path, headers, status)
        relayed = "x-chainsum-passthrough" in response.headers  # the upstream's own answer, passed on
        if 400 <= status < 500 and path.startswith(("/api/", "/v1/")) and not relayed and method != "HEAD":
            text = response.read()
            assert isinstance(json.loads(text), dict), (method, path, text)


def _postgres() -> Iterator[SqlStore]:
    require_postgres()
    import psycopg
    from psycopg import sql

    from chainsum.store import PostgresStore

    schema = f"chainsum_test_{uuid.uuid4().hex}"
    opened = PostgresStore(POSTGRES_URL, schema=schema)
    try:
        yield opened
    finally:
        opened.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlStore]:
    if request.param == "postgres":
        yield from _postgres()
        return
    opened = SQLiteStore(tmp_path / "fuzz.db")
    try:
        yield opened
    finally:
        opened.close()


def test_no_input_gets_a_500(fake: FakeLLMServer, any_store: SqlStore) -> None:
    with proxy(fake, any_store, context_window=4000, api_token=TOKEN) as p, httpx.Client(timeout=30) as client:
        routes = _routes(list(p.app.routes))
        assert {("GET", "/api/sessions/{session}"), ("GET", "/api/events"), ("POST", "/v1/messages")} <= set(routes)

        @settings(max_examples=EXAMPLES, database=None)
        @given(requests(routes))
        def fuzz(request: tuple[str, str, dict[str, str], bytes | None]) -> None:
            _check(p, client, request)

        fuzz()


_KNOWN: list[tuple[str, dict[str, str]]] = [
    ("/api/sessions/%00", {}),
    ("/api/sessions/a%00b/context", {}),
    ("/api/sessions/x/search?q=%00", {}),
    ("/api/sessions/x/originals?ids=%00", {}),
    ("/api/summaries/%00/originals", {}),
    ("/api/events", {"last-event-id": "1" + "0" * 30}),
    ("/api/events?after=" + "9" * 30, {}),
    ("/api/events?after=%C2%B2", {}),
    ("/api/events", {"last-event-id": "1.5"}),
    ("/api/events?session=%00", {}),
]
"""The inputs that reached a 500 before (issue 20), and their neighbours."""


def test_the_inputs_that_got_a_500_get_a_named_400(fake: FakeLLMServer, any_store: SqlStore) -> None:
    with proxy(fake, any_store, context_window=4000, api_token=TOKEN) as p, httpx.Client(timeout=30) as client:
        for path, headers in _KNOWN:
            r = client.get(p.url + path, headers={"authorization": f"Bearer {TOKEN}", **headers})
            assert r.status_code == 400, (path, r.text)
            error = r.json()["error"]
            assert error["field"] in ("session", "summary", "q", "ids", "after", "Last-Event-ID"), (path, error)
            assert "\n" not in error["message"]
