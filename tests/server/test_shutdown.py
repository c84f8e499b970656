"""Graceful shutdown (issue 20), on SQLite and PostgreSQL: SIGTERM to a real ``chainsum serve`` while a request is
being compacted (its session's summarization lock held, its summarizer mid-call) lets that request finish, then the
process exits 0 and the session's lock is free for another instance at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from chainsum.store import SQLiteStore, SqlStore
from chainsum.testing import FakeLLMServer
from server.server_support import ADMIN_TOKEN, chat, free_port
from store.store_support import POSTGRES_URL, require_postgres

pytestmark = pytest.mark.slow  # a real browser / real processes: seconds each (see tests/conftest.py)

SUMMARY_DELAY_S = 2.0


class _SlowSummarizer(ThreadingHTTPServer):
    """An OpenAI-compatible endpoint that answers every chat completion after `SUMMARY_DELAY_S`: a summarizer model
    mid-call when the signal comes."""

    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _SlowHandler)
        self.calls = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _SlowHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        assert isinstance(self.server, _SlowSummarizer)
        self.server.calls.set()
        time.sleep(SUMMARY_DELAY_S)
        body = json.dumps(
            {
                "id": "chatcmpl-slow",
                "object": "chat.completion",
                "created": 0,
                "model": "slow",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "The order desk checked every order."},
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        del format, args


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[list[str], Callable[[], SqlStore]]]:
    """The store options of ``chainsum serve``, and how another instance opens the same store."""
    if request.param == "sqlite":
        db = tmp_path / "chainsum.db"
        yield ["--db", str(db)], lambda: SQLiteStore(db)
        return
    require_postgres()
    import psycopg
    from psycopg import sql

    from chainsum.store import PostgresStore

    schema = f"chainsum_test_{uuid.uuid4().hex}"
    PostgresStore(POSTGRES_URL, schema=schema).close()  # the schema and its tables
    sep = "&" if "?" in POSTGRES_URL else "?"
    try:
        yield (
            ["--postgres", f"{POSTGRES_URL}{sep}options=-csearch_path%3D{schema}"],
            lambda: PostgresStore(POSTGRES_URL, schema=schema),
        )
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture
def slow() -> Iterator[_SlowSummarizer]:
    server = _SlowSummarizer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_sigterm_mid_compaction_finishes_the_request_exits_0_and_frees_the_lock(
    fake: FakeLLMServer,
    slow: _SlowSummarizer,
    where: tuple[list[str], Callable[[], SqlStore]],
    tmp_path: Path,
) -> None:
    port = free_port()
    store_options, open_other = where
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHAINSUM_", "SUMMARIZATION_"))}
    env |= {
        "CHAINSUM_API_TOKEN": ADMIN_TOKEN,
        "SUMMARIZATION_MODEL_ID": "openai:slow",
        "SUMMARIZATION_BASE_URL": slow.base_url,
        "OPENAI_API_KEY": "sk-test",
        "CHAINSUM_SHUTDOWN_TIMEOUT_SECONDS": "20",
        # the whole 40-message chat goes to the slow model (past the default per-compaction bound it would go to
        # the extractive summarizer, and no model call would be in flight at the SIGTERM)
        "SUMMARIZATION_MODEL_TOKENS_PER_COMPACTION": "0",
    }
    cmd = [
        *(sys.executable, "-m", "chainsum", "serve", "--port", str(port), *store_options),
        *("--upstream", fake.base_url + "/v1", "--context-window", "2000", "--log-level", "warning"),
    ]
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.1)
        got: list[httpx.Response] = []

        def compacting_request() -> None:
            got.append(
                httpx.post(
                    url + "/v1/chat/completions",
                    json={"model": "gpt-4o", "messages": chat(40)},  # over the 2,000-token window
                    headers={"X-Chainsum-Session": "desk", "Authorization": f"Bearer {ADMIN_TOKEN}"},
                    timeout=60,
                )
            )

        thread = threading.Thread(target=compacting_request)
        thread.start()
        assert slow.calls.wait(30), log.read_text()  # the summarizer is being called: the lock is held now
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        thread.join(30)
        assert proc.wait(30) == 0, log.read_text()
        assert got, "the request in flight got no answer"
        response = got[0]
        assert response.status_code == 200, response.text
        assert response.headers["x-chainsum-summarized"] == "true"  # it completed its compaction
        assert time.monotonic() - sent < 20
        summarized = fake.requests[-1].json
        assert isinstance(summarized, dict) and len(summarized["messages"]) < len(chat(40))  # pyright: ignore
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    # another instance takes the session's lock at once: the process released it before exiting
    other = open_other()
    try:
        with other.try_lock(response.headers["x-chainsum-session"]) as held:
            assert held
        assert len(other.records(response.headers["x-chainsum-session"])) == 1
    finally:
        other.close()
