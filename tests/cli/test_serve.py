"""``chainsum serve`` on the command line: bad options get one line and exit 2 before anything binds; a real
process serves the proxy and the API and stops cleanly."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx

from chainsum.testing import FakeLLMServer


def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chainsum", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_refuses_a_public_address_without_a_token() -> None:
    done = serve("--host", "0.0.0.0")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "refusing" in done.stderr and "--insecure" in done.stderr


def test_bad_options_are_one_line_errors() -> None:
    for args, needle in (
        (("--upstream", "ftp://x"), "--upstream 'ftp://x'"),
        (("--db", "a.db", "--postgres", "postgresql://x"), "exclusive"),
        (("--workers", "3"), "shared store"),
        (("--context-window", "huge"), "--context-window"),
    ):
        done = serve(*args)
        assert done.returncode == 2, args
        assert needle in done.stderr and done.stderr.strip().count("\n") == 0, done.stderr


def test_a_real_process_serves_and_stops(tmp_path: object) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with FakeLLMServer() as fake:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "chainsum",
                "serve",
                "--port",
                str(port),
                "--upstream",
                fake.openai_base_url,
                "--db",
                str(tmp_path) + "/serve.db",
                "--context-window",
                "4000",
                "--log-level",
                "warning",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    assert time.monotonic() < deadline and proc.poll() is None
                    time.sleep(0.1)
            r = httpx.post(
                f"http://127.0.0.1:{port}/v1/chat/completions",
                json={"model": "anything", "messages": [{"role": "user", "content": "hi"}]},
                headers={"X-Chainsum-Session": "cli"},
            )
            assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "A fake summary."
            assert r.headers["x-chainsum-session"].startswith("cli~")
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=20)
        # uvicorn shuts down gracefully, then re-raises the SIGTERM it caught (exit by that signal, as it should)
        assert proc.returncode in (0, -15)
        assert b"Traceback" not in err
