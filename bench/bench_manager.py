"""Context manager benchmark: replay real sessions turn by turn, and the cost of `prepare` when nothing triggers.

Run: ``uv run python bench/bench_manager.py`` (``--turns`` sets the synthetic session's length, ``--limit`` the
number of tau-bench runs replayed, ``--strategy`` the
strategy of the replay).

a. Replay: every corpus session is fed to a `ContextManager` one model request at a time (before each assistant
   message, the history so far plus the manager's earlier output), with the extractive summarizer: Claude Code
   sessions at a 64K window (provider ``anthropic``), tau-bench runs at a 4K window (``openai``). Printed per corpus:
   sessions, requests, compactions per session (mean, max; and those that wrote a summary), sessions that hit
   the depth cap, summarizer calls and input tokens, requests still over the window after `prepare`.
b. Overhead: a 300-turn session given as plain OpenAI-format dicts (appended in place, as an agent loop does),
   a window large enough that nothing triggers; the time of each `prepare_sync` call, as the median per band of
   history length (the curve), and the overall median.

Every figure printed is measured in this run; nothing is estimated.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from chainsum import formats
from chainsum.manager._config import ManagerConfig
from chainsum.manager._manager import ContextManager
from chainsum.manager._replay import CountingSummarizer, replay_sync
from chainsum.messages import Message
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import iter_documents
from chainsum.tokens import HeuristicCounter


@dataclass
class Tally:
    sessions: int = 0
    requests: int = 0
    compactions: list[int] = field(default_factory=list[int])
    summaries: list[int] = field(default_factory=list[int])
    """Compactions that wrote a summary (the rest only masked or clipped tool output)."""
    failures: int = 0
    depth_capped: int = 0
    over_window: int = 0
    summarizer_calls: int = 0
    summarizer_tokens: int = 0
    seconds: float = 0.0


def replay(messages: list[Message], window: int, provider: str, tally: Tally, strategy: str) -> None:
    summarizer = CountingSummarizer(ExtractiveSummarizer(), HeuristicCounter())
    cfg = ManagerConfig(strategy=strategy)
    manager = ContextManager(
        cfg, context_window=window, summarizers=[summarizer], provider=provider, archive=MemoryArchive()
    )
    report = replay_sync(messages, manager, counting=summarizer, check_valid=False)
    totals = report.totals()
    tally.seconds += totals["seconds"]
    tally.requests += totals["requests"]
    tally.over_window += totals["over_window"]
    tally.sessions += 1
    tally.compactions.append(totals["compactions"])
    tally.failures += totals["failures"]
    tally.depth_capped += manager.state.depth >= cfg.max_summary_chain_depth
    tally.summaries.append(manager.state.depth)
    tally.summarizer_calls += totals["summarizer_calls"]
    tally.summarizer_tokens += totals["summarizer_input_tokens"]


def print_tally(name: str, window: int, t: Tally) -> None:
    if not t.sessions:
        print(f"{name}: corpus not found")
        return
    print(
        f"{name:12} window={window:>6}  sessions={t.sessions:>4}  requests={t.requests:>6}  "
        f"compactions/session mean={statistics.mean(t.compactions):.2f} max={max(t.compactions)} "
        f"(with a summary: mean={statistics.mean(t.summaries):.2f} max={max(t.summaries)})  "
        f"depth-capped={t.depth_capped}  failures={t.failures}  over-window={t.over_window}  "
        f"summarizer calls={t.summarizer_calls} input tokens={t.summarizer_tokens}  time={t.seconds:.1f}s"
    )


def bench_replay(limit: int, strategy: str) -> None:
    claude, tau = Tally(), Tally()
    n_tau = 0
    for doc in iter_documents(include_subagents=False):
        if doc.format == "claude-code":
            replay(list(formats.load(doc.data, doc.format).messages), 64_000, "anthropic", claude, strategy)
        elif doc.label.startswith("tau-bench/") and n_tau < limit:
            n_tau += 1
            replay(list(formats.load(doc.data, doc.format).messages), 4_000, "openai", tau, strategy)
    print(f"a. replay (extractive summarizer, default ManagerConfig, strategy {strategy})")
    print_tally("claude-code", 64_000, claude)
    print_tally("tau-bench", 4_000, tau)


def bench_overhead(turns: int) -> None:
    manager = ContextManager(ManagerConfig(), context_window=10**9, archive=MemoryArchive())
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful coding assistant."}]
    times: list[tuple[int, float]] = []
    gc.collect()
    for i in range(turns):
        history.append({"role": "user", "content": f"Question {i}: what does f_{i} in src/mod_{i}.py return?"})
        start = time.perf_counter()
        prepared = manager.prepare_sync(history)
        elapsed = time.perf_counter() - start
        assert prepared.messages is history and prepared.event is None
        times.append((len(history), elapsed))
        history.append({"role": "assistant", "content": f"f_{i} returns {i} after checking the cache. " * 4})
    print(f"\nb. prepare overhead when nothing triggers ({turns} turns as OpenAI dicts, one new message a call)")
    print(f"{'messages':>12} {'median us':>10}")
    band = max(1, turns // 10)
    for k in range(0, turns, band):
        chunk = times[k : k + band]
        lo, hi = chunk[0][0], chunk[-1][0]
        print(f"{lo:>5}-{hi:<6} {statistics.median(t for _, t in chunk) * 1e6:>10.1f}")
    print(f"overall median: {statistics.median(t for _, t in times) * 1e6:.1f} us (target <= 100 us)")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--limit", type=int, default=200, help="tau-bench runs to replay")
    parser.add_argument("--strategy", default="auto", help="auto, ratio, sections, safe-split or mask")
    parser.add_argument("--skip-replay", action="store_true")
    args = parser.parse_args()
    if not args.skip_replay:
        bench_replay(args.limit, args.strategy)
    bench_overhead(args.turns)


if __name__ == "__main__":
    main()
