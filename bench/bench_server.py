"""HTTP proxy benchmark: what ``chainsum serve`` adds to a request, against calling the upstream directly.

Run: ``uv run python bench/bench_server.py`` (``--quick`` for a short run, ``--rounds N`` for more rounds).

Setup, all on loopback: the fake upstream (`chainsum.testing.FakeLLMServer`, answering every request at once),
``chainsum serve`` in front of it (one worker, a SQLite file store), a bare pass-through proxy beside it (the
same uvicorn and aiohttp, reading the body and forwarding it, nothing else: the floor any Python proxy on this
stack pays on this machine), and the client (httpx's async client, this process). Each session is a chat whose
client resends its whole history every turn (OpenAI Chat Completions, non-streaming), starting from 200 messages
and growing by two per turn. Every scenario runs on the same data straight to the upstream (the baseline),
through the bare proxy and through chainsum, in alternating rounds so that a noisy moment of the machine falls on
all three alike.

Scenarios: 1 and 100 concurrent sessions with nothing to do (a 128K window; about 20K tokens of history), and 1
and 100 sessions while compactions happen (an 8K window: each session compacts every few turns). Printed per
scenario: p50 and p99 latency direct and through chainsum, the p50 and p99 overhead (chainsum minus direct, and
the ratio), how many requests compacted, chainsum's throughput, the overhead of the first and of the last quarter
of the turns (the shortest and the longest histories), and the bare pass-through's p50 overhead. The issue's
target: p50 overhead <= 2 ms at 200 messages with nothing to do, flat as histories grow.

Agent clients (``--agents`` runs only these): a Claude Code-shaped session (Anthropic Messages: 20K tokens of tool
definitions, a 6K-token system prompt with ``cache_control``, a tool step of 2-9 KB output per request, 26 requests
of 115-350 KB) and a Codex-shaped one (OpenAI Responses: instructions, function tools, ``reasoning`` items with
``encrypted_content``, ``function_call`` / ``function_call_output`` items, ``store: false``, ``include``,
``prompt_cache_key``), sent as their clients send them (compact JSON, no chainsum header; a new session each round,
after one round not counted that warms each server up, as a running server is), direct, through the bare
pass-through and through chainsum, with nothing to compact (a 200K window) and compacting (a window the session
outgrows). Printed: the p50 overhead of each proxy over direct, chainsum's against the bare one's (the target: <=
2x), the first and last quarter of the session, and each against the bare one's in the same quarter (flat as it
grows: the bodies grow, and reading them costs both proxies more), the p50 overhead of the requests chainsum
compacted, chainsum's own time on the others and on the compacting ones (its ``Server-Timing: chainsum;dur=``; the
issue's target: <= 20 ms of chainsum time for a compaction), and the CPU time each proxy process spent a request
(all its threads, from ``/proc/PID/task/*/schedstat``, Linux only), chainsum's against the bare one's: on a machine
busy with other jobs, the latencies move by more than a proxy adds, and a process's CPU time much less; and the p50
of each request's CPU time on the main thread alone (``loop cpu p50``, read before and after each request): the
event loop every request waits for, apart from chainsum's background threads (the session directory's writes, a new
session's store reads) and what a session's first requests cost once, the figure to hold against the p50 latency
target on a busy machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _history(session: int, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant for a book club."}]
    for i in range((n - 1) // 2):
        out.append({"role": "user", "content": f"[{session}] Day {i}: what did we say about book {i}? " + "hm " * 30})
        out.append({"role": "assistant", "content": f"Book {i} was about item {i * 7}. " + "indeed " * 30})
    out.append({"role": "user", "content": f"[{session}] And today?"})
    return out


@dataclass
class Run:
    latencies: list[float]
    compacted: int
    seconds: float


async def _drive(url: str, sessions: int, turns: int, window: int | None, start_messages: int) -> Run:
    latencies: list[float] = []
    compacted = 0
    limits = httpx.Limits(max_connections=sessions + 4, max_keepalive_connections=sessions + 4)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:

        async def one(s: int) -> None:
            nonlocal compacted
            history = _history(s, start_messages)
            headers = {"Authorization": "Bearer sk-bench", "X-Chainsum-Session": f"bench-{s}"}
            if window is not None:
                headers["X-Chainsum-Context-Window"] = str(window)
            for t in range(turns):
                started = time.perf_counter()
                r = await client.post(
                    "/chat/completions", json={"model": "gpt-4o", "messages": history}, headers=headers
                )
                latencies.append(time.perf_counter() - started)
                r.raise_for_status()
                compacted += r.headers.get("x-chainsum-summarized") == "true"
                history.append({"role": "assistant", "content": r.json()["choices"][0]["message"]["content"]})
                history.append(
                    {"role": "user", "content": f"[{s}] Turn {t}: next question about item {t}? " + "hm " * 30}
                )

        started = time.perf_counter()
        await asyncio.gather(*(one(s) for s in range(sessions)))
        return Run(latencies, compacted, time.perf_counter() - started)


_LOREM = (
    "read write run test file path error module function value config build check list update result output "
    "commit branch change review line cause fix report status request handler session cache token window"
).split()


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_LOREM) for _ in range(n))


def _output(rng: random.Random, size: int) -> str:
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(
            f"src/mod_{rng.randint(0, 99)}/file_{rng.randint(0, 999)}.py:{rng.randint(1, 900)}: {_words(rng, 9)}"
        )
    return "\n".join(lines)


def _as_sent(body: dict[str, Any]) -> bytes:
    """`body` as JSON.stringify (Claude Code, through Anthropic's TypeScript SDK) and serde_json (Codex) write it:
    no spaces, non-ASCII characters as they are."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def claude_code_bodies(run: int, requests: int = 26) -> list[bytes]:
    """Request bodies shaped like Claude Code's (Anthropic Messages, non-streaming here), each the previous one
    plus a tool step: the tools and the system prompt stay, ``cache_control`` on the system prompt and on the
    newest message, as Claude Code places them."""
    rng = random.Random(7)
    tools = [
        {
            "name": f"Tool{i}",
            "description": _words(rng, 520),
            "input_schema": {
                "type": "object",
                "properties": {f"arg{k}": {"type": "string", "description": _words(rng, 30)} for k in range(6)},
                "required": ["arg0"],
            },
        }
        for i in range(20)
    ]
    system = [
        {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
        {"type": "text", "text": _words(rng, 4300), "cache_control": {"type": "ephemeral"}},
    ]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": f"[run {run}] Find why the nightly build fails."}]}
    ]
    bodies: list[bytes] = []
    for step in range(requests):
        last = json.loads(json.dumps(messages[-1]))
        last["content"][-1]["cache_control"] = {"type": "ephemeral"}
        body = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 32000,
            "system": system,
            "tools": tools,
            "messages": [*messages[:-1], last],
            "metadata": {"user_id": f"user_bench_account__session_{run:08d}-0000-4000-8000-{step * 0:012d}"},
        }
        bodies.append(_as_sent(body))
        call = f"toolu_{run:04d}{step:020d}"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": _words(rng, 20)},
                    {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": f"grep -rn {_LOREM[step]}"}},
                ],
            }
        )
        output = _output(rng, rng.randint(2_000, 9_000))
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": output}]})
    return bodies


def codex_bodies(run: int, requests: int = 26) -> list[bytes]:
    """Request bodies shaped like Codex CLI's (OpenAI Responses, non-streaming here): instructions, function tools,
    and per step a reasoning item with encrypted content, an ``exec_command`` call and its output."""
    rng = random.Random(11)
    tools = [
        {
            "type": "function",
            "name": name,
            "description": _words(rng, 200),
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
        }
        for name in ("exec_command", "write_stdin", "apply_patch", "view_image")
    ]
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": _words(rng, 300)}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"[run {run}] Fix the build."}]},
    ]
    bodies: list[bytes] = []
    for step in range(requests):
        body = {
            "model": "gpt-5-codex",
            "instructions": _words(rng if step == 0 else random.Random(3), 2500),
            "input": items,
            "tools": tools,
            "tool_choice": "auto",
            "parallel_tool_calls": False,
            "reasoning": {"effort": "medium", "summary": "auto"},
            "store": False,
            "stream": False,
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": f"bench-codex-{run}",
        }
        bodies.append(_as_sent(body))
        call = f"call_{run:04d}{step:020d}"
        items = [
            *items,
            {"type": "reasoning", "id": f"rs_{run}_{step}", "summary": [], "encrypted_content": "gAAAA" + "x" * 1500},
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "pytest -x"}),
                "call_id": call,
            },
            {"type": "function_call_output", "call_id": call, "output": _output(rng, rng.randint(2_000, 9_000))},
        ]
    return bodies


@dataclass
class AgentRun:
    latencies: list[list[float]]
    """Per round, the latency of each request in order."""
    compacted: list[list[bool]]
    own: list[list[float]]
    """Per round, chainsum's own time on each request (ms, its ``Server-Timing``; 0 for the others)."""
    loop: list[float] = field(default_factory=list[float])
    """Each request's CPU time on the proxy's main thread (ms; empty for direct)."""


def _own_ms(value: str) -> float:
    """The ``chainsum;dur=`` entry of a ``Server-Timing`` header, in ms (0.0 when absent)."""
    for entry in value.split(","):
        name, _, params = entry.strip().partition(";")
        if name == "chainsum" and params.startswith("dur="):
            return float(params.removeprefix("dur="))
    return 0.0


async def _drive_agent(
    url: str, path: str, bodies: list[bytes], window: int | None, pid: int | None = None
) -> tuple[list[float], list[bool], list[float], list[float]]:
    """Each body's latency, whether chainsum compacted it, chainsum's own time, and the CPU time of process
    `pid`'s main thread while it was answered (ms; none without `pid`)."""
    headers = {"content-type": "application/json", "x-api-key": "sk-bench", "authorization": "Bearer sk-bench"}
    if window is not None:
        headers["X-Chainsum-Context-Window"] = str(window)
    latencies: list[float] = []
    compacted: list[bool] = []
    own: list[float] = []
    loop: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        for body in bodies:
            cpu = _loop_ns(pid) if pid is not None else None
            started = time.perf_counter()
            r = await client.post(path, content=body, headers=headers)
            latencies.append(time.perf_counter() - started)
            if pid is not None and cpu is not None and (after := _loop_ns(pid)) is not None:
                loop.append((after - cpu) / 1e6)
            r.raise_for_status()
            compacted.append(r.headers.get("x-chainsum-summarized") == "true")
            own.append(_own_ms(r.headers.get("server-timing", "")))
    return latencies, compacted, own, loop


def _overheads(run: AgentRun, direct: AgentRun, only: list[list[bool]] | None = None) -> list[float]:
    """Per request, ms: the same body's latency through a proxy minus direct, in the same round."""
    return [
        (p - d) * 1000
        for r, (lat, base) in enumerate(zip(run.latencies, direct.latencies, strict=True))
        for i, (p, d) in enumerate(zip(lat, base, strict=True))
        if only is None or only[r][i]
    ]


def _cpu_ns(pid: int) -> int | None:
    """CPU time of every thread of process `pid` so far, in ns (Linux's ``/proc/PID/task/*/schedstat``; None
    elsewhere): what a proxy spent, whatever else the machine ran meanwhile."""
    try:
        return sum(int(p.read_text().split()[0]) for p in Path(f"/proc/{pid}/task").glob("*/schedstat"))
    except (OSError, ValueError, IndexError):
        return None


def _loop_ns(pid: int) -> int | None:
    """CPU time of process `pid`'s main thread so far (the one serving the event loop), in ns (None off Linux):
    what a request waits for, apart from chainsum's background threads (the session directory's writes, a new
    session's store reads), which run beside it."""
    try:
        return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _agent_scenarios(upstream: str, bare_port: int, port: int, rounds: int, pids: tuple[int, int]) -> None:
    print()
    print("agent clients: 26 requests a session (115-350 KB), non-streaming, a new session each round")
    print(
        f"{'scenario':40} {'direct p50 ms':>13} {'bare +p50':>9} {'chainsum +p50':>13} {'x bare':>6} "
        f"{'+p50 first/last q':>18} {'x bare first/last':>13} {'compacted':>9} {'+p50 compacting':>15} "
        f"{'own p50 other/compacting':>24} "
        f"{'cpu/req bare/chainsum ms':>24} {'x bare':>6} {'loop cpu p50 bare/chainsum':>25} {'x bare':>6}"
    )
    bare_pid, chainsum_pid = pids
    for index, (name, make, path, window) in enumerate(
        (
            ("Claude Code-shaped, nothing to compact", claude_code_bodies, "/v1/messages", 200_000),
            ("Claude Code-shaped, compacting (64K)", claude_code_bodies, "/v1/messages", 64_000),
            ("Codex-shaped, nothing to compact", codex_bodies, "/v1/responses", 200_000),
            ("Codex-shaped, compacting (24K)", codex_bodies, "/v1/responses", 24_000),
        )
    ):
        direct, bare, through = AgentRun([], [], []), AgentRun([], [], []), AgentRun([], [], [])
        cpu = {bare_pid: 0, chainsum_pid: 0}
        for r in range(-1, rounds):  # round -1 warms each server up (pools, caches, lazy parts) and is not counted
            bodies = make(100 * r + index + 1000 * (r < 0))
            for run, base, win, pid in (
                (direct, upstream.removesuffix("/v1"), None, None),
                (bare, f"http://127.0.0.1:{bare_port}", None, bare_pid),
                (through, f"http://127.0.0.1:{port}", window, chainsum_pid),
            ):
                before = _cpu_ns(pid) if pid is not None else None
                latencies, compacted, own, loop = asyncio.run(_drive_agent(base, path, bodies, win, pid))
                after = _cpu_ns(pid) if pid is not None else None
                if r < 0:
                    continue
                if pid is not None and before is not None and after is not None:
                    cpu[pid] += after - before
                run.latencies.append(latencies)
                run.loop.extend(loop)
                run.compacted.append(compacted)
                run.own.append(own)

        d50 = statistics.median(v for lat in direct.latencies for v in lat) * 1000
        b50 = statistics.median(_overheads(bare, direct))
        c50 = statistics.median(_overheads(through, direct))
        n = len(direct.latencies[0])
        k = max(1, n // 4)
        first, last = _quarter(through, direct, range(k)), _quarter(through, direct, range(n - k, n))
        b_first, b_last = _quarter(bare, direct, range(k)), _quarter(bare, direct, range(n - k, n))
        compacting = _overheads(through, direct, through.compacted)
        n_compacted = sum(map(sum, through.compacted))
        c_text = f"{statistics.median(compacting):.2f}" if compacting else "-"
        own = [
            ms
            for flags, times in zip(through.compacted, through.own, strict=True)
            for f, ms in zip(flags, times, strict=True)
            if f
        ]
        o_text = f"{statistics.median(own):.2f}" if own else "-"
        rest = [
            ms
            for flags, times in zip(through.compacted, through.own, strict=True)
            for f, ms in zip(flags, times, strict=True)
            if not f
        ]
        o_text = f"{statistics.median(rest):.2f}/{o_text}" if rest else f"-/{o_text}"
        sent = rounds * n
        b_cpu, c_cpu = cpu[bare_pid] / sent / 1e6, cpu[chainsum_pid] / sent / 1e6
        cpu_text = f"{b_cpu:.2f}/{c_cpu:.2f}" if b_cpu > 0 else "-"
        b_loop = statistics.median(bare.loop) if bare.loop else 0.0
        c_loop = statistics.median(through.loop) if through.loop else 0.0
        loop_text = f"{b_loop:.2f}/{c_loop:.2f}" if b_loop > 0 else "-"
        print(
            f"{name:40} {d50:13.2f} {b50:9.2f} {c50:13.2f} {c50 / b50 if b50 > 0 else float('nan'):6.2f} "
            f"{first:8.2f}/{last:<9.2f} {_ratio(first, b_first):>6}/{_ratio(last, b_last):<6} {n_compacted:9d} "
            f"{c_text:>15} {o_text:>24} {cpu_text:>24} {c_cpu / b_cpu if b_cpu > 0 else float('nan'):6.2f} "
            f"{loop_text:>25} {c_loop / b_loop if b_loop > 0 else float('nan'):6.2f}"
        )


def _quarter(run: AgentRun, direct: AgentRun, requests: range) -> float:
    """Median overhead over direct (ms) of these requests of the session (by position), over every round."""
    return statistics.median(
        (run.latencies[r][i] - direct.latencies[r][i]) * 1000 for r in range(len(run.latencies)) for i in requests
    )


def _ratio(ours: float, bare: float) -> str:
    return f"{ours / bare:.2f}" if bare > 0 else "-"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _quarters(values: list[float], rounds: int) -> tuple[float, float]:
    """Median of the first and of the last quarter of the turns (the shortest and the longest histories), over
    all rounds (each round's latencies follow the previous round's)."""
    per = len(values) // rounds
    k = max(1, per // 4)
    first = [v for r in range(rounds) for v in values[r * per : r * per + k]]
    last = [v for r in range(rounds) for v in values[(r + 1) * per - k : (r + 1) * per]]
    return statistics.median(first) * 1000, statistics.median(last) * 1000


_BARE = """
import sys
import aiohttp
import uvicorn

UPSTREAM = sys.argv[1]
state = {}


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                state["client"] = aiohttp.ClientSession(auto_decompress=False)
                await send({"type": "lifespan.startup.complete"})
            else:
                await state["client"].close()
                await send({"type": "lifespan.shutdown.complete"})
                return
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    if scope["path"] == "/healthz":
        status, body = 200, b"ok"
    else:
        headers = {"content-type": "application/json", "authorization": "Bearer sk-bench", "x-api-key": "sk-bench"}
        url = UPSTREAM + scope["path"][len("/v1"):]
        async with state["client"].post(url, data=b"".join(chunks), headers=headers) as response:
            status, body = response.status, await response.read()
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


uvicorn.run(app, port=int(sys.argv[2]), log_level="warning", timeout_keep_alive=65)
"""

_FAKE = """
import sys
from chainsum.testing import FakeLLMServer
server = FakeLLMServer().start()
print(server.port, flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
server.close()
"""


def _start_fake() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-c", _FAKE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    return proc, f"http://127.0.0.1:{port}/v1"


def _start_proxy(upstream: str, db: str, port: int, *, bare: bool = False) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "CHAINSUM_UPSTREAM_URL": upstream,
        "CHAINSUM_ANTHROPIC_UPSTREAM_URL": upstream.removesuffix("/v1"),
        "CHAINSUM_DB": db,
    }
    command = ["-c", _BARE, upstream, str(port)] if bare else ["-m", "chainsum", "serve", "--port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, *command, *([] if bare else ["--log-level", "warning"])],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"chainsum serve did not start: {proc.stderr.read().decode() if proc.stderr else ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer turns and rounds")
    parser.add_argument("--agents", action="store_true", help="only the agent-client scenarios")
    parser.add_argument("--rounds", type=int, default=None, help="rounds a scenario (default 3; 1 with --quick)")
    args = parser.parse_args()
    (turns_one, turns_many), rounds = ((20, 3), 1) if args.quick else ((30, 4), 3)
    if args.rounds is not None:
        rounds = max(1, args.rounds)
    scenarios = [
        ("nothing to do, 1 session", 1, turns_one, 128_000),
        ("nothing to do, 100 sessions", 100, turns_many, 128_000),
        ("compacting, 1 session", 1, turns_one, 8_000),
        ("compacting, 100 sessions", 100, turns_many, 8_000),
    ]
    print("bench_server: 200-message chats (about 20K tokens), OpenAI Chat Completions, non-streaming, loopback")
    print(f"{rounds} round(s) per scenario, alternating direct / bare pass-through / chainsum serve")
    fake, upstream = _start_fake()
    with tempfile.TemporaryDirectory() as tmp:
        port, bare_port = _free_port(), _free_port()
        proxy = _start_proxy(upstream, os.path.join(tmp, "bench.db"), port)
        bare = _start_proxy(upstream, "", bare_port, bare=True)
        try:
            head = (
                f"{'scenario':30} {'direct p50/p99 ms':>18} {'proxy p50/p99 ms':>17} {'overhead p50/p99 ms':>20} "
                f"{'ratio p50':>9} {'compacted':>9} {'proxy req/s':>11} {'overhead first/last q':>22} "
                f"{'bare overhead p50':>17}"
            )
            if args.agents:
                _agent_scenarios(upstream, bare_port, port, rounds, (bare.pid, proxy.pid))
                return
            print(head)
            for name, sessions, turns, window in scenarios:
                direct, through, floor = Run([], 0, 0.0), Run([], 0, 0.0), Run([], 0, 0.0)
                for _ in range(rounds):
                    for run, url, win in (
                        (direct, upstream, None),
                        (floor, f"http://127.0.0.1:{bare_port}/v1", None),
                        (through, f"http://127.0.0.1:{port}/v1", window),
                    ):
                        one = asyncio.run(_drive(url, sessions, turns, win, 200))
                        run.latencies.extend(one.latencies)
                        run.compacted += one.compacted
                        run.seconds += one.seconds
                d50, d99 = _pct(direct.latencies, 0.5), _pct(direct.latencies, 0.99)
                p50, p99 = _pct(through.latencies, 0.5), _pct(through.latencies, 0.99)
                dq, pq = _quarters(direct.latencies, rounds), _quarters(through.latencies, rounds)
                print(
                    f"{name:30} {d50:8.2f}/{d99:<9.2f} {p50:8.2f}/{p99:<8.2f} {p50 - d50:9.2f}/{p99 - d99:<10.2f} "
                    f"{p50 / d50:9.2f} {through.compacted:9d} {len(through.latencies) / through.seconds:11.1f} "
                    f"{pq[0] - dq[0]:10.2f}/{pq[1] - dq[1]:<10.2f} {_pct(floor.latencies, 0.5) - d50:17.2f}"
                )
            _agent_scenarios(upstream, bare_port, port, rounds, (bare.pid, proxy.pid))
        finally:
            for proc in (proxy, bare):
                proc.terminate()
                proc.wait(10)
            fake.communicate("", timeout=10)


if __name__ == "__main__":
    main()
