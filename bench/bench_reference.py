"""Agent-session reference share: how much of Claude Code's own compaction summary chainsum's output keeps.

Run: ``uv run python bench/bench_reference.py``.

Each Claude Code session of the shared corpora holds one real compaction made by the agent (a ``compact_boundary``
line, then the production summary). The history before it is compacted with chainsum's defaults (the settings of a
default `ManagerConfig`: the default strategy behind its guard, the extractive summarizer, the heuristic counter,
Anthropic's rules) to each budget, and plain truncation (`chainsum.testing.baselines.truncate`) is run at the same
budget. The figure is the share of the reference summary's key items (backticked names and file paths that occur
in the history before the boundary: `chainsum.testing.reference`, patterns independent of the summarizer's) found
verbatim in the output's text. Targets: at least 0.75 at 8K tokens and 0.90 at 20K, for every session.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from chainsum.formats import load
from chainsum.testing import corpora_root
from chainsum.testing.reference import ReferenceCase, measure_reference, reference_case

BUDGETS = (8_000, 20_000)
TARGETS = {8_000: 0.75, 20_000: 0.90}


def cases() -> list[tuple[str, ReferenceCase]]:
    """(session name, its reference case) for every Claude Code session of the corpora."""
    root = corpora_root()
    if root is None:
        raise SystemExit("the shared corpora are not beside the checkout (../shared/corpora)")
    out: list[tuple[str, ReferenceCase]] = []
    for path in sorted((root / "claude-code").glob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        case = reference_case(load(records, format="claude-code").messages)
        if case is not None:
            out.append((Path(path).stem[:8], case))
    return out


async def measure(case: ReferenceCase, budget: int) -> tuple[float, float, int, float]:
    """(chainsum's share, truncation's share, chainsum's tokens after, seconds) for one case at `budget`."""
    started = time.perf_counter()
    run = await measure_reference(case, budget)
    return run.share, run.truncation, run.tokens_after, time.perf_counter() - started


def main() -> None:
    found = cases()
    print(f"{len(found)} Claude Code sessions; share of the reference summary's key items kept")
    print(f"{'session':10} {'items':>5} {'budget':>7} {'chainsum':>9} {'truncate':>9} {'tokens':>7} {'s':>6} target")
    met: dict[int, bool] = {b: True for b in BUDGETS}
    for name, case in found:
        for budget in BUDGETS:
            share, base, tokens, seconds = asyncio.run(measure(case, budget))
            ok = share >= TARGETS[budget] and tokens <= budget
            met[budget] = met[budget] and ok
            verdict = f">= {TARGETS[budget]:.2f} {'met' if ok else 'NOT met'}"
            print(
                f"{name:10} {len(case.items):5d} {budget:7d} {share:9.3f} {base:9.3f} {tokens:7d} {seconds:6.2f} "
                f"{verdict}"
            )
    for budget in BUDGETS:
        verdict = "met" if met[budget] else "NOT met"
        print(f"target at {budget // 1000}K (>= {TARGETS[budget]:.2f} in every session): {verdict}")


if __name__ == "__main__":
    main()
