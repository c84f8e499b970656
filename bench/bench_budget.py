"""Budget sweep: does ``compact`` land just under the budget it is given, and does more budget keep more?

Run: ``uv run python bench/bench_budget.py [--conversations N] [--generated N]``.

Every k-th conversation of the shared corpora (N in all, spread over the corpora; 0: all of them), compacted with
the default strategy (``auto``) and the extractive summarizer at budgets of 15, 25, 35, 50, 65 and 80 % of its
tokens. Printed:

- fill: for the runs that reach their budget (``fits``), tokens after as a share of the budget; how many land
  below 85 % of it (the issue's target: none), the lowest, and the worst conversations;
- monotonicity: over each conversation's pairs of budgets that both fit, how often the larger budget keeps fewer
  tokens, or fewer of the conversation's identifiers (the independent matcher of ``bench_retention.py``).

With ``--generated N``, the same monotonicity over N generated histories (``tests/generators.py``'s
``identifier_histories``: chats and tool calls with planted order ids, paths, fields, dates and amounts), each at
the same budgets: the property over data nobody chose.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import time
from typing import TYPE_CHECKING, NamedTuple, cast

from chainsum.executor import compact
from chainsum.formats import load
from chainsum.messages import Message
from chainsum.strategies import AutoStrategy
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import iter_documents
from chainsum.testing.retention import identifiers, texts
from chainsum.tokens import HeuristicCounter

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

SHARES = (0.15, 0.25, 0.35, 0.5, 0.65, 0.8)


class Run(NamedTuple):
    share: float
    budget: int
    tokens: int
    identifiers: int


def sweep(messages: list[Message], counter: HeuristicCounter, wanted: set[str]) -> list[Run]:
    """`messages` compacted with ``auto`` and the extractive summarizer at each of `SHARES` of their tokens: the
    runs that reach their budget, with the tokens they keep and how many of `wanted` (the history's identifiers)."""
    total = counter.count_messages(messages)
    runs: list[Run] = []
    for share in SHARES:
        budget = max(1, int(total * share))
        result = asyncio.run(
            compact(messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=counter, budget=budget)
        )
        if result.fits:
            runs.append(Run(share, budget, result.tokens_after, len(wanted & identifiers(texts(result.messages)))))
    return runs


def generated(count: int) -> None:
    """Monotonicity over `count` generated histories (see the module docstring)."""
    import sys
    from pathlib import Path

    from hypothesis import HealthCheck, Phase, given, settings

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from generators import identifier_histories  # pyright: ignore[reportMissingImports, reportUnknownVariableType]

    histories = cast("SearchStrategy[list[Message]]", identifier_histories())

    counter = HeuristicCounter()
    seen = [0, 0, 0]  # histories, pairs, pairs keeping fewer identifiers
    examples: list[str] = []

    @settings(max_examples=count, phases=[Phase.generate], database=None, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
    @given(histories)
    def check(messages: list[Message]) -> None:
        kept = sweep(messages, counter, identifiers(texts(messages)))
        seen[0] += 1
        for small, large in itertools.combinations(kept, 2):
            seen[1] += 1
            if large.identifiers < small.identifiers:
                seen[2] += 1
                examples.append(
                    f"{len(messages)} messages: {small.identifiers} at {small.share:.0%}, "
                    f"{large.identifiers} at {large.share:.0%}"
                )

    started = time.perf_counter()
    check()
    print(
        f"generated: {seen[0]} histories, {seen[1]} budget pairs that both fit; the larger keeps fewer identifiers "
        f"in {seen[2]} (target 0); {time.perf_counter() - started:.1f} s"
    )
    for line in examples[:5]:
        print(f"  {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--conversations", type=int, default=40, help="how many (0: every conversation)")
    parser.add_argument("--generated", type=int, default=0, help="also this many generated histories")
    args = parser.parse_args()
    if args.generated:
        generated(args.generated)
    docs = [d for d in iter_documents(include_subagents=False)]
    if not docs:
        raise SystemExit("the shared corpora are not available (../shared/corpora or $CHAINSUM_CORPORA)")
    wanted_count = args.conversations or len(docs)
    step = max(1, len(docs) // wanted_count)
    chosen = docs[::step][:wanted_count]
    counter = HeuristicCounter()
    fills: list[tuple[float, str, float]] = []
    pairs = fewer_tokens = 0
    fewer_ids: list[str] = []
    started = time.perf_counter()
    for doc in chosen:
        messages = list(load(doc.data, doc.format).messages)
        wanted = identifiers(texts(messages))
        kept = sweep(messages, counter, wanted)
        fills.extend((run.tokens / run.budget, doc.label, run.share) for run in kept)
        for small, large in itertools.combinations(kept, 2):
            pairs += 1
            fewer_tokens += large.tokens < small.tokens
            if large.identifiers < small.identifiers:
                fewer_ids.append(
                    f"{doc.label}: {small.identifiers} at {small.share:.0%}, {large.identifiers} at "
                    f"{large.share:.0%} (of {len(wanted)})"
                )
    low = sorted(f for f in fills if f[0] < 0.85)
    values = [f[0] for f in fills]
    print(
        f"bench_budget: {len(chosen)} conversations x {len(SHARES)} budgets ({', '.join(f'{s:.0%}' for s in SHARES)})"
        f", auto + extractive; {time.perf_counter() - started:.1f} s"
    )
    print(
        f"fill of the {len(fills)} runs that fit: median {statistics.median(values):.1%}, lowest {min(values):.1%}; "
        f"below 85 %: {len(low)} (target 0)"
    )
    for fill, label, share in low[:8]:
        print(f"  {fill:6.1%}  {label} at {share:.0%}")
    print(
        f"budget pairs that both fit: {pairs}; the larger keeps fewer tokens in {fewer_tokens} (target 0), fewer "
        f"identifiers in {len(fewer_ids)} (target 0)"
    )
    for line in fewer_ids[:8]:
        print(f"  {line}")


if __name__ == "__main__":
    main()
