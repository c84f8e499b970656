"""Executor and strategy benchmark: concurrency of summarizer calls, and the cost of planning and applying.

Run: ``uv run python bench/bench_strategies.py`` (``--latency`` and ``--summaries`` change part a).

a. Concurrency: a summarizer that takes `latency` seconds per call, a history that needs `summaries` independent
   section summaries in one round (the ``sections`` strategy), the concurrency bound at least that. Printed as
   total time / one call's latency (target <= 1.5x; sequential calls would be `summaries` x), with the result's
   model coverage (the scripted summarizer counts as a model: the share of what it summarized that it was shown).
b. Overhead: `compact` with an instant summarizer on the largest Claude Code corpus session, per strategy, as a
   ratio to building the same session's chain (`Chain.build`), both measured in this run on the same messages,
   each with its model coverage.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections.abc import Callable
from typing import Any

from chainsum import formats
from chainsum.chain import Chain
from chainsum.executor import compact, compact_sync
from chainsum.messages import Message
from chainsum.strategies import (
    AutoStrategy,
    MaskStrategy,
    RatioStrategy,
    SectionsStrategy,
    Strategy,
)
from chainsum.testing import iter_documents
from chainsum.tokens import HeuristicCounter
from phase_report import result_coverage_note


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """Fastest of `repeat` runs, in seconds (the least disturbed by other load on the machine)."""
    times: list[float] = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def sections_history(sections: int, answer_chars: int = 3000) -> list[Message]:
    out = [Message.of("system", "You are helpful.")]
    for k in range(sections):
        out.append(Message.of("user", f"Question {k}?"))
        out.append(Message.of("assistant", f"Answer {k}: " + "lorem ipsum " * (answer_chars // 12)))
    return out


def bench_concurrency(latency: float, summaries: int) -> None:
    messages = sections_history(summaries + 1)  # every section but the last is summarized
    counter = HeuristicCounter()
    calls = 0

    async def slow(transcript: str) -> str:
        nonlocal calls
        calls += 1
        await asyncio.sleep(latency)
        return f"summary of {len(transcript)} characters"

    async def run() -> float:
        start = time.perf_counter()
        # the sections strategy summarizes every section but the last in one round (auto would fold them into
        # one summary, which measures nothing about concurrency)
        result = await compact(
            messages, SectionsStrategy(), summarizer=slow, counter=counter, budget=None, concurrency=max(summaries, 20)
        )
        elapsed = time.perf_counter() - start
        assert result.changed and not result.errors
        coverage.append(result.model_coverage)
        return elapsed

    coverage: list[float | None] = []
    elapsed = asyncio.run(run())
    print("a. concurrency")
    print(f"   summaries: {calls} calls of {latency * 1000:.0f} ms, bound {max(summaries, 20)}")
    print(
        f"   total: {elapsed * 1000:.0f} ms = {elapsed / latency:.2f}x one call (target <= 1.5x; sequential {calls}x); "
        f"{result_coverage_note(coverage[0], calls)}"
    )


def largest_claude_code() -> tuple[str, list[Message]] | None:
    docs = [d for d in iter_documents(include_subagents=False) if d.format == "claude-code"]
    if not docs:
        return None
    doc = max(docs, key=lambda d: d.size)
    return doc.label, list(formats.load(doc.data, doc.format).messages)


def bench_overhead(repeat: int) -> None:
    found = largest_claude_code()
    print("b. overhead (instant summarizer)")
    if found is None:
        print("   skipped: the shared corpora are not available")
        return
    label, messages = found
    build = best_of(lambda: Chain.build(messages, repair=True, allow_pending_tail=True), repeat)
    print(f"   session: {label}, {len(messages)} messages; Chain.build {build * 1000:.1f} ms")

    def instant(transcript: str) -> str:
        return f"summary of {len(transcript)} characters"

    counter = HeuristicCounter()
    cold = best_of(lambda: HeuristicCounter().count_messages(messages), repeat)
    tokens = counter.count_messages(messages)
    print(f"   counting its tokens with a cold counter: {cold * 1000:.1f} ms = {cold / build:.2f}x Chain.build")
    print("   (below, the counter is warm on the input, as in an agent loop: the figures are planning and applying)")
    strategies: list[tuple[Strategy, int | None]] = [
        (MaskStrategy(), None),
        (RatioStrategy(), None),
        (AutoStrategy(), tokens // 2),
        (AutoStrategy(), tokens // 5),
    ]
    for strategy, budget in strategies:
        holder: dict[str, Any] = {}

        def run(strategy: Strategy = strategy, budget: int | None = budget, holder: dict[str, Any] = holder) -> None:
            holder["r"] = compact_sync(messages, strategy, summarizer=instant, counter=counter, budget=budget)

        took = best_of(run, repeat)
        r = holder["r"]
        target = "none" if budget is None else str(budget)
        print(
            f"   {strategy.name:<5} budget {target:>6}: {took * 1000:7.1f} ms = {took / build:5.2f}x Chain.build "
            f"({r.tokens_before} -> {r.tokens_after} tokens, {r.rounds} rounds, {r.summarizer_calls} calls; "
            f"{result_coverage_note(r.model_coverage, r.summarizer_calls)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per summarizer call (part a)")
    parser.add_argument("--summaries", type=int, default=20, help="independent summaries needed (part a)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per overhead figure; the fastest is kept")
    args = parser.parse_args()
    bench_concurrency(args.latency, args.summaries)
    bench_overhead(args.repeat)


if __name__ == "__main__":
    main()
