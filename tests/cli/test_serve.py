"""``chainsum serve`` on the command line: bad options get one line and exit 2 before anything binds; a real
process serves the proxy and the API and stops cleanly; two worker processes on one SQLite file share sessions."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from chainsum.cli._app import app
from chainsum.formats import load
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from chainsum.tokens import HeuristicCounter
from server.server_support import chat

runner = CliRunner()


def serve(*args: str) -> tuple[int, str]:
    """``chainsum serve ARGS`` in this process: the options are checked before anything binds."""
    result = runner.invoke(app, ["serve", *args])
    return result.exit_code, result.stderr


def test_no_auth_is_refused_beyond_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHAINSUM_API_TOKEN", raising=False)
    code, err = serve("--host", "0.0.0.0", "--no-auth")
    assert code == 2
    assert err.strip().count("\n") == 0 and "--no-auth with --host 0.0.0.0: refused beyond loopback" in err
    code, err = serve("--allowed-host", "http://x/")
    assert code == 2 and "--allowed-host 'http://x/'" in err and err.strip().count("\n") == 0


@pytest.mark.slow
def test_closed_by_default_the_token_is_printed_once_and_never_logged(tmp_path: Path) -> None:
    """No CHAINSUM_API_TOKEN: ``chainsum serve`` makes one and prints the page's URL with it; the API needs it;
    opening that URL (logged by uvicorn at INFO) does not put the token in the log."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHAINSUM_")}
    log = tmp_path / "serve.log"
    cmd = [sys.executable, "-m", "chainsum", "serve", "--port", str(port), "--db", str(tmp_path / "c.db")]
    with log.open("wb") as out:
        proc = subprocess.Popen([*cmd, "--log-level", "info"], stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 60
        while not (found := re.search(r"http://127\.0\.0\.1:\d+/\?token=([A-Za-z0-9_-]{40,})", log.read_text())):
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.1)
        token, url = found.group(1), f"http://127.0.0.1:{port}"
        while True:
            try:
                assert (
                    httpx.get(f"{url}/?token={token}", timeout=2).status_code == 200
                )  # the page, as a browser opens it
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert httpx.get(url + "/api/sessions").status_code == 401
        listed = httpx.get(url + "/api/sessions", headers={"Authorization": f"Bearer {token}"})
        assert listed.status_code == 200 and listed.json() == {"sessions": []}
        assert httpx.get(url + "/healthz", headers={"Host": f"evil.example:{port}"}).status_code == 421
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text()
    assert text.count(token) == 1, text  # the console line, and no access-log line
    assert "GET /?token=[redacted] HTTP/1.1" in text


def test_bad_options_are_one_line_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CHAINSUM_UPSTREAM_URL", "CHAINSUM_DB", "CHAINSUM_POSTGRES_URL", "SUMMARIZATION_CONTEXT_WINDOW"):
        monkeypatch.setenv(name, "")  # the command writes its options into the environment: restore it after
    for args, needle in (
        (("--upstream", "ftp://x"), "--upstream 'ftp://x'"),
        (("--db", "a.db", "--postgres", "postgresql://x"), "exclusive"),
        (("--workers", "3"), "shared store"),
        (("--context-window", "huge"), "--context-window"),
    ):
        code, err = serve(*args)
        assert code == 2, args
        assert needle in err and err.strip().count("\n") == 0, err


@contextmanager
def running(*args: str) -> Iterator[str]:
    """``chainsum serve ARGS`` on a free port until the block ends; yields its URL. It must stop cleanly."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "chainsum", "serve", "--port", str(port), "--log-level", "warning", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and proc.poll() is None, "chainsum serve did not start"
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    # uvicorn shuts down gracefully, then re-raises the SIGTERM it caught (exit by that signal, as it should)
    assert proc.returncode in (0, -15)
    assert b"Traceback" not in err, err.decode()


@pytest.mark.slow
def test_a_real_process_serves_and_stops(tmp_path: Path) -> None:
    with FakeLLMServer() as fake:
        args = ("--upstream", fake.openai_base_url, "--db", str(tmp_path / "serve.db"), "--context-window", "4000")
        with running(*args) as url:
            r = httpx.post(
                url + "/v1/chat/completions",
                json={"model": "anything", "messages": [{"role": "user", "content": "hi"}]},
                headers={"X-Chainsum-Session": "cli"},
            )
            assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "A fake summary."
            assert r.headers["x-chainsum-session"].startswith("cli~")


@pytest.mark.slow
def test_two_worker_processes_on_one_sqlite_file(tmp_path: Path) -> None:
    """uvicorn workers as ``--workers 2`` starts them: one session's request sent four at once is answered every
    time, the session is summarized once, and every request reaches the upstream inside the window."""
    db = tmp_path / "serve.db"
    history = chat(30)
    with FakeLLMServer() as fake:
        args = ("--upstream", fake.openai_base_url, "--db", str(db), "--workers", "2", "--context-window", "2000")
        with running(*args) as url:

            def send(_: int) -> httpx.Response:
                return httpx.post(
                    url + "/v1/chat/completions",
                    json={"model": "anything", "messages": history},
                    headers={"X-Chainsum-Session": "cli", "Authorization": "Bearer k"},
                    timeout=60,
                )

            with ThreadPoolExecutor(4) as pool:
                responses = list(pool.map(send, range(4)))
        assert [r.status_code for r in responses] == [200] * 4
        sid = responses[0].headers["x-chainsum-session"]
        assert {r.headers["x-chainsum-session"] for r in responses} == {sid}
        counter = HeuristicCounter()
        for request in fake.requests:
            sent = list(load(request.json["messages"], format="openai").messages)  # type: ignore[index]
            assert counter.count_messages(sent) <= 2000
    store = SQLiteStore(db)
    try:
        assert len(store.records(sid)) == 1
    finally:
        store.close()
