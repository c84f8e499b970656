"""Several `chainsum serve` instances on one store (SQLite file on one host, PostgreSQL for several): an event
raised by one reaches the event-stream subscribers of the other, and the same session hit on both at once is
summarized once, with nothing lost."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from chainsum.formats import load
from chainsum.rules import validate
from chainsum.store import SQLiteStore, SqlStore
from chainsum.testing import FakeLLMServer
from chainsum.tokens import HeuristicCounter
from server.server_support import Running, chat, proxy
from store.store_support import POSTGRES_URL, require_postgres

pytestmark = pytest.mark.slow  # a real browser / real processes: seconds each (see tests/conftest.py)

WINDOW = 2000


def post(p: Running, session: str, messages: list[dict[str, Any]]) -> httpx.Response:
    return httpx.post(
        p.openai_url + "/chat/completions",
        json={"model": "gpt-4o", "messages": messages},
        headers={"X-Chainsum-Session": session, "Authorization": "Bearer sk-one"},
        timeout=60,
    )


def sqlite_pair(tmp_path: Path) -> Iterator[tuple[SqlStore, SqlStore]]:
    a, b = SQLiteStore(tmp_path / "shared.db"), SQLiteStore(tmp_path / "shared.db")
    try:
        yield a, b
    finally:
        a.close()
        b.close()


def postgres_pair() -> Iterator[tuple[SqlStore, SqlStore]]:
    require_postgres()
    import psycopg
    from psycopg import sql

    from chainsum.store import PostgresStore

    schema = f"chainsum_test_{uuid.uuid4().hex}"
    a, b = PostgresStore(POSTGRES_URL, schema=schema), PostgresStore(POSTGRES_URL, schema=schema)
    try:
        yield a, b
    finally:
        a.close()
        b.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(params=["sqlite", "postgres"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[SqlStore, SqlStore]]:
    make: Callable[[], Iterator[tuple[SqlStore, SqlStore]]] = (
        (lambda: sqlite_pair(tmp_path)) if request.param == "sqlite" else postgres_pair
    )
    yield from make()


@contextlib.contextmanager
def two_servers(fake: FakeLLMServer, pair: tuple[SqlStore, SqlStore]) -> Iterator[tuple[Running, Running]]:
    with proxy(fake, pair[0], context_window=WINDOW) as a, proxy(fake, pair[1], context_window=WINDOW) as b:
        yield a, b


def test_an_event_raised_on_one_instance_reaches_subscribers_of_the_other(
    fake: FakeLLMServer, pair: tuple[SqlStore, SqlStore]
) -> None:
    with two_servers(fake, pair) as (a, b):
        got: list[dict[str, Any]] = []
        connected = threading.Event()

        def listen() -> None:
            with httpx.stream("GET", a.url + "/api/events", headers=a.auth(), timeout=30) as r:
                connected.set()
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        got.append(json.loads(line.removeprefix("data: ")))
                        return

        thread = threading.Thread(target=listen, daemon=True)
        thread.start()
        assert connected.wait(10)
        time.sleep(0.2)
        started = time.monotonic()
        response = post(b, "cross", chat(30))
        assert response.headers["x-chainsum-summarized"] == "true"
        thread.join(15)
        assert got and got[0]["type"] == "context_summarized"
        assert got[0]["sessionId"] == response.headers["x-chainsum-session"]
        assert time.monotonic() - started < 10
        # and the session API of the other instance shows the session (directory in the shared store)
        deadline = time.monotonic() + 5
        while not (sessions := a.get("/api/sessions")["sessions"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [s["id"] for s in sessions] == [response.headers["x-chainsum-session"]]


def test_one_session_hit_on_two_instances_at_once_is_summarized_once(
    fake: FakeLLMServer, pair: tuple[SqlStore, SqlStore]
) -> None:
    with two_servers(fake, pair) as (a, b):
        history = chat(30)
        with ThreadPoolExecutor(2) as pool:
            responses = list(pool.map(lambda p: post(p, "same", history), (a, b)))
        assert [r.status_code for r in responses] == [200, 200]
        sid = responses[0].headers["x-chainsum-session"]
        assert responses[1].headers["x-chainsum-session"] == sid
        records = pair[0].records(sid)
        assert len(records) == 1  # one summarization; the other instance took its result
        archived = {m.message_id for m in pair[0].archived(sid)}
        assert set(records[0].original_message_ids) <= archived  # nothing removed is lost
        counter = HeuristicCounter()
        for request in fake.requests[-2:]:
            sent = list(load(request.json["messages"], format="openai").messages)  # type: ignore[index]
            assert validate(sent, "openai") == [] and counter.count_messages(sent) <= WINDOW
        # the conversation goes on, alternating instances, without a second summarization of the same part
        history += [{"role": "assistant", "content": "W29."}, {"role": "user", "content": "Thanks."}]
        assert post(b, "same", history).headers["x-chainsum-summarized"] == "false"
        assert post(a, "same", history).headers["x-chainsum-summarized"] == "false"
        assert len(pair[1].records(sid)) == 1
