"""Budget sweep: does ``compact`` land just under the budget it is given, and does more budget keep more?

Run: ``uv run python bench/bench_budget.py [--conversations N]``.

Every k-th conversation of the shared corpora (N in all, spread over the corpora), compacted with the default
strategy (``auto``) and the extractive summarizer at budgets of 15, 25, 35, 50, 65 and 80 % of its tokens. Printed:

- fill: for the runs that reach their budget (``fits``), tokens after as a share of the budget; how many land
  below 85 % of it (the issue's target: none), the lowest, and the worst conversations;
- monotonicity: over each conversation's pairs of budgets that both fit, how often the larger budget keeps fewer
  tokens, or fewer of the conversation's identifiers (the independent matcher of ``bench_retention.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from chainsum.executor import compact
from chainsum.formats import load
from chainsum.strategies import AutoStrategy
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import iter_documents
from chainsum.testing.retention import identifiers, texts
from chainsum.tokens import HeuristicCounter

SHARES = (0.15, 0.25, 0.35, 0.5, 0.65, 0.8)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--conversations", type=int, default=40)
    args = parser.parse_args()
    docs = [d for d in iter_documents(include_subagents=False)]
    if not docs:
        raise SystemExit("the shared corpora are not available (../shared/corpora or $CHAINSUM_CORPORA)")
    step = max(1, len(docs) // args.conversations)
    chosen = docs[::step][: args.conversations]
    counter = HeuristicCounter()
    fills: list[tuple[float, str, float]] = []
    pairs = fewer_tokens = 0
    fewer_ids: list[str] = []
    started = time.perf_counter()
    for doc in chosen:
        messages = list(load(doc.data, doc.format).messages)
        total = counter.count_messages(messages)
        wanted = identifiers(texts(messages))
        kept: list[tuple[float, int, int]] = []  # (share, tokens after, identifiers kept) of the runs that fit
        for share in SHARES:
            budget = max(1, int(total * share))
            result = asyncio.run(
                compact(messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=counter, budget=budget)
            )
            if not result.fits:
                continue
            fills.append((result.tokens_after / budget, doc.label, share))
            kept.append((share, result.tokens_after, len(wanted & identifiers(texts(result.messages)))))
        for i, (small, tokens_small, ids_small) in enumerate(kept):
            for large, tokens_large, ids_large in kept[i + 1 :]:
                pairs += 1
                fewer_tokens += tokens_large < tokens_small
                if ids_large < ids_small:
                    fewer_ids.append(
                        f"{doc.label}: {ids_small} at {small:.0%}, {ids_large} at {large:.0%} (of {len(wanted)})"
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
