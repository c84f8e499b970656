"""Running the pieces of an end-to-end test: `chainsum serve` as its own process (what a user runs), the session
API it serves, and the real clients, found in ``tests/e2e/node_modules`` (``npm ci --prefix tests/e2e``) or on
``PATH``.

Why a process and not the app in-process: the test then covers the command line, its options and the server as
users start it, and the clients reach it over a real socket like the upstream behind it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

__all__ = ["HERE", "Proxy", "Run", "client", "free_port", "run_client", "serve"]

HERE = Path(__file__).parent
_BIN = HERE / "node_modules" / ".bin"

INSTALL_HINTS = {
    "claude": "npm ci --prefix tests/e2e (or npm install -g @anthropic-ai/claude-code)",
    "codex": "npm ci --prefix tests/e2e (or npm install -g @openai/codex)",
}


def client(name: str) -> str:
    """The client's executable: ``tests/e2e/node_modules/.bin`` first (the versions pinned in package-lock.json),
    else ``PATH``. Missing: a failure in CI (it installs them), a skip with the install command elsewhere."""
    pinned = _BIN / name
    if pinned.exists():
        return str(pinned)
    found = shutil.which(name)
    if found is not None:
        return found
    message = f"{name} not installed: {INSTALL_HINTS.get(name, 'see tests/e2e/package.json')}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


API_TOKEN = "e2e-admin-token"
"""The admin token of the proxy the tests start (the server is closed by default)."""


@dataclass(frozen=True, slots=True)
class Proxy:
    """A running ``chainsum serve``."""

    base_url: str
    log: Path
    token: str = ""
    """The admin token it was started with (`API_TOKEN`): the session API needs it."""

    def api(self, path: str) -> Any:
        request = urllib.request.Request(f"{self.base_url}{path}", headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def sessions(self) -> list[dict[str, Any]]:
        """Every session the proxy served, as the session API lists them."""
        listing = self.api("/api/sessions")
        rows = listing["sessions"] if isinstance(listing, dict) else listing
        return cast(list[dict[str, Any]], rows)


@contextmanager
def serve(tmp: Path, *, upstream: str, context_window: int, extra: Sequence[str] = ()) -> Iterator[Proxy]:
    """``chainsum serve`` on a free loopback port, both upstreams pointed at `upstream` (the fake), the store in
    `tmp`, the given window for every request; stopped (and its log kept in `tmp`) on exit."""
    port = free_port()
    log = tmp / "chainsum-serve.log"
    command = [
        sys.executable,
        "-m",
        "chainsum",
        "serve",
        "--port",
        str(port),
        "--upstream",
        f"{upstream}/v1",
        "--anthropic-upstream",
        upstream,
        "--db",
        str(tmp / "chainsum.db"),
        "--context-window",
        str(context_window),
        "--log-level",
        "warning",
        *extra,
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHAINSUM_", "SUMMARIZATION_"))}
    env["CHAINSUM_API_TOKEN"] = API_TOKEN
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"chainsum serve did not start:\n{log.read_text()}") from None
                time.sleep(0.1)
        yield Proxy(base, log, API_TOKEN)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass(frozen=True, slots=True)
class Run:
    """A client run: its exit status, what it printed, and how long it took."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def describe(self) -> str:
        tail = f"stdout:\n{self.stdout[-4000:]}\nstderr:\n{self.stderr[-4000:]}"
        return f"exit {self.returncode} after {self.seconds:.1f} s\n{tail}"


def run_client(command: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float = 300) -> Run:
    """Run a client to its end, stdin closed (a client that waits for input fails instead of hanging)."""
    started = time.monotonic()
    done = subprocess.run(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def base_env(home: Path) -> dict[str, str]:
    """A clean environment for a client: PATH and locale from ours, a HOME of its own (its config, sessions and
    caches stay in the test's directory), and nothing that could point it at a real provider."""
    home.mkdir(parents=True, exist_ok=True)
    keep = ("PATH", "LANG", "LC_ALL", "TERM", "TMPDIR", "SYSTEMROOT")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env["HOME"] = str(home)
    return env
