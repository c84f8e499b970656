"""Memory of ``chainsum serve`` as sessions come and go: idle sessions leave memory, so RSS stays flat however many
sessions one instance has served.

Run: ``uv run python bench/bench_sessions.py`` (``--sessions 2000`` for a short run; ``--idle 1e9`` to see the
growth with eviction off, as before ``--session-idle-timeout`` existed).

Setup, all on loopback: the fake upstream (`chainsum.testing.FakeLLMServer`, in its own process), ``chainsum
serve`` (one worker, a SQLite file store, ``--session-idle-timeout`` of `--idle` seconds, a 4,000-token window),
and the client (httpx's async client, `--concurrency` requests at a time). Each session is one OpenAI Chat
Completions request of a 41-message chat (about 2,400 tokens: nothing to compact) with its own
``X-Chainsum-Session``. Printed: the server process's RSS (``VmRSS`` of ``/proc/PID/status``) after a warm-up of
100 sessions, then after 1,000, 5,000 and 10,000 sessions (or the same fractions of `--sessions`), with the live
sessions ``/healthz`` counts, and the ratio of the last RSS to the ones at 1,000 and 5,000 sessions (1.0 is flat).

What is not per session: the token counter's per-message cache is shared by every session and bounded at 65,536
messages (`DEFAULT_CACHE_SIZE` in `chainsum/tokens/_base.py`), which these 41-message sessions fill by about 1,600
sessions; the RSS grows until then and the ratio to the figure at 5,000 is the flat part.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

import httpx

_FAKE = """
import sys
from chainsum.testing import FakeLLMServer
server = FakeLLMServer().start()
server.requests = type("NoRecord", (list,), {"append": lambda self, item: None})()  # no growth in the fake
print(server.port, flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
server.close()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _chat(session: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are the order desk."}]
    for i in range(20):
        out.append({"role": "user", "content": f"[{session}] Where is order ORD-{i}? " + "please check " * 10})
        out.append({"role": "assistant", "content": f"ORD-{i} is in warehouse W{i}. " + "checked " * 10})
    out.append({"role": "user", "content": "Thanks, and the newest one?"})
    return out


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/PID/status (Linux only)")


def _start(args: argparse.Namespace, tmp: str) -> tuple[subprocess.Popen[str], subprocess.Popen[bytes], str]:
    fake = subprocess.Popen([sys.executable, "-c", _FAKE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert fake.stdout is not None
    upstream = f"http://127.0.0.1:{int(fake.stdout.readline())}"
    port = _free_port()
    env = {
        **os.environ,
        "CHAINSUM_UPSTREAM_URL": upstream + "/v1",
        "CHAINSUM_ANTHROPIC_UPSTREAM_URL": upstream,
        "CHAINSUM_DB": os.path.join(tmp, "bench.db"),
        "CHAINSUM_API_TOKEN": "bench-token",
    }
    command = ["-m", "chainsum", "serve", "--port", str(port), "--log-level", "warning"]
    command += ["--session-idle-timeout", str(args.idle), "--context-window", "4000"]
    server = subprocess.Popen([sys.executable, *command], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180  # a busy machine imports slowly
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return fake, server, url
        except httpx.HTTPError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit(f"chainsum serve did not start: {server.stderr.read().decode() if server.stderr else ''}")


async def _cycle(client: httpx.AsyncClient, url: str, first: int, last: int, concurrency: int) -> None:
    """Sessions `first` to `last - 1`, one request each, `concurrency` at a time."""
    queue = iter(range(first, last))

    async def worker() -> None:
        for n in queue:
            r = await client.post(
                url + "/v1/chat/completions",
                json={"model": "gpt-4o", "messages": _chat(n)},
                headers={"X-Chainsum-Session": f"bench-{n}", "Authorization": "Bearer sk-bench"},
            )
            r.raise_for_status()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def _run(args: argparse.Namespace, server: subprocess.Popen[bytes], url: str) -> None:
    total = args.sessions
    marks = [total // 10, total // 2, total]
    async with httpx.AsyncClient(timeout=60) as client:
        await _cycle(client, url, -100, 0, args.concurrency)  # warm-up: imports, caches, the store's pages
        start = _rss_mib(server.pid)
        print(f"{'sessions served':>16} {'RSS MiB':>8} {'live':>5} {'seconds':>8}")
        live = (await client.get(url + "/healthz")).json()["sessions_live"]
        print(f"{'start':>16} {start:8.1f} {live:5d} {0:8.1f}")
        began, done, at = time.monotonic(), 0, {}
        for mark in marks:
            await _cycle(client, url, done, mark, args.concurrency)
            done = mark
            rss = _rss_mib(server.pid)
            at[mark] = rss
            live = (await client.get(url + "/healthz")).json()["sessions_live"]
            print(f"{mark:16,d} {rss:8.1f} {live:5d} {time.monotonic() - began:8.1f}")
    last, first, middle = at[marks[-1]], at[marks[0]], at[marks[1]]
    print(
        f"RSS at {marks[-1]:,} / at {marks[0]:,} sessions: {last / first:.2f}; / at {marks[1]:,}: {last / middle:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=10_000, help="sessions to cycle through (default 10,000)")
    parser.add_argument("--idle", type=float, default=2.0, help="--session-idle-timeout of the server, seconds")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    args = parser.parse_args()
    print(
        f"bench_sessions: {args.sessions:,} sessions of one 41-message request each through one chainsum serve, "
        f"--session-idle-timeout {args.idle:g}, {args.concurrency} in flight"
    )
    with tempfile.TemporaryDirectory() as tmp:
        fake, server, url = _start(args, tmp)
        try:
            asyncio.run(_run(args, server, url))
        finally:
            server.terminate()
            server.wait(30)
            assert fake.stdin is not None
            fake.stdin.close()
            fake.wait(30)


if __name__ == "__main__":
    main()
