"""Retention: how many of a conversation's identifiers survive compaction.

Run: ``uv run python bench/bench_retention.py [--limit N] [--corpora tau-bench,tau2-bench] [--strategies auto,compact]
[--shares 0.25,0.5,0.75]``.

For each strategy, with the extractive summarizer (no model), at budgets of 25 %, 50 % and 75 % of each
conversation's original tokens, over the shared corpora: the share of the original's identifiers (file paths, URLs,
numbers with at least 3 digits or a unit, ids such as ``ORD-7731`` or ``toolu_...``, CamelCase and snake_case
names) still present anywhere in the output text, next to plain truncation at the same budget (the system
messages, then the newest messages that fit, a leading tool result dropped so the history stays valid). The
identifier finder here is deliberately independent of the extractive summarizer's own, so the figure is not
self-fulfilling. The last lines say whether the default strategy (``auto``) is ever below truncation.

``compact`` is ``auto`` as ``chainsum compact`` runs it (`chainsum.manager.CompactionSettings` of the default
configuration: behind the tail guard that keeps the last messages verbatim while they fit), so a change to the guard
shows here too. It is left out of the last lines' verdict.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from chainsum.executor import compact
from chainsum.formats import load
from chainsum.rules import validate
from chainsum.strategies import Strategy
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import CorpusDocument, iter_documents
from chainsum.testing.baselines import truncate
from chainsum.testing.retention import identifiers, texts
from chainsum.tokens import get_counter

STRATEGIES = ("truncate", "mask", "ratio", "sections", "safe-split", "auto", "compact")
SHARES = (0.25, 0.5, 0.75)


def strategy(name: str) -> Strategy:
    from chainsum import strategies as s

    if name == "compact":
        from chainsum.manager import CompactionSettings, ManagerConfig

        return CompactionSettings.from_config(ManagerConfig()).strategy

    return {
        "auto": s.AutoStrategy,
        "sections": s.SectionsStrategy,
        "safe-split": s.SafeSplitStrategy,
        "ratio": s.RatioStrategy,
        "mask": s.MaskStrategy,
    }[name]()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=0, help="use only the first N conversations of each corpus")
    parser.add_argument("--corpora", default="", help="comma-separated corpus folders to read (default: all)")
    parser.add_argument("--strategies", default="", help="comma-separated rows to run (default: all; truncate always)")
    parser.add_argument("--shares", default="", help="comma-separated budgets as shares of each conversation")
    args = parser.parse_args()
    chosen = [n for n in args.strategies.split(",") if n and n != "truncate"]
    names = ["truncate", *chosen] if chosen else list(STRATEGIES)
    shares = tuple(float(x) for x in args.shares.split(",") if x) or SHARES
    counter = get_counter("heuristic")
    summarizer = ExtractiveSummarizer()
    docs = list(iter_documents(include_subagents=False))
    if args.corpora:
        wanted = set(args.corpora.split(","))
        docs = [d for d in docs if d.label.split("/")[0] in wanted]
    if args.limit:
        seen: dict[str, int] = {}
        keep: list[CorpusDocument] = []
        for d in docs:
            corpus = d.label.split("/")[0]
            if seen.get(corpus, 0) < args.limit:
                keep.append(d)
                seen[corpus] = seen.get(corpus, 0) + 1
        docs = keep
    convs = [(d.label.split("/")[0], load(d.data, d.format).messages) for d in docs]
    corpora = sorted({c for c, _ in convs})
    floors: list[float] = []
    for _, messages in convs:
        last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), len(messages))
        fixed = [m for m in messages[:last] if m.role == "system"] + list(messages[last:])
        floors.append(counter.count_messages(fixed) / max(1, counter.count_messages(messages)))
    print(f"{len(convs)} conversations; identifiers retained (mean over conversations), tokens after/before,")
    print("share of conversations that fit the budget, share valid for OpenAI, seconds.")
    print(
        f"Floor (system messages + current turn, never compacted): mean {statistics.mean(floors):.0%} of the tokens;"
        f" {sum(f > 0.2 for f in floors) / len(floors):.0%} of conversations cannot fit 20 %,"
        f" {sum(f > 0.5 for f in floors) / len(floors):.0%} cannot fit 50 %."
    )
    head = " ".join(f"{c[:11]:>11}" for c in corpora)
    print(f"{'strategy':12} {'budget':>6} {'retained':>9} {head} {'tokens':>7} {'fits':>6} {'valid':>6} {'s':>6}")
    mean_by: dict[tuple[str, float], float] = {}
    for name in names:
        for share in shares:
            kept: list[float] = []
            by_corpus: dict[str, list[float]] = {c: [] for c in corpora}
            ratios: list[float] = []
            fits = valid = 0
            start = time.perf_counter()
            for corpus, messages in convs:
                before = counter.count_messages(messages)
                budget = max(1, int(before * share))
                original = identifiers(texts(messages))
                if name == "truncate":
                    result_messages = truncate(messages, budget, counter)
                    ok = not validate(result_messages, "openai")
                else:
                    result = asyncio.run(
                        compact(
                            messages,
                            strategy(name),
                            summarizer=summarizer,
                            counter=counter,
                            budget=budget,
                            provider="openai",
                        )
                    )
                    result_messages, ok = list(result.messages), result.valid
                out = texts(result_messages)
                after = counter.count_messages(result_messages)
                if original:
                    kept.append(sum(1 for i in original if i in out) / len(original))
                    by_corpus[corpus].append(kept[-1])
                ratios.append(after / max(1, before))
                fits += after <= budget
                valid += bool(ok)
            seconds = time.perf_counter() - start
            mean_by[(name, share)] = statistics.mean(kept)
            cols = " ".join(f"{statistics.mean(v) if v else 0:11.1%}" for v in by_corpus.values())
            print(
                f"{name:12} {share:6.0%} {statistics.mean(kept):9.1%} {cols} {statistics.mean(ratios):7.2f} "
                f"{fits / len(convs):6.0%} {valid / len(convs):6.0%} {seconds:6.1f}"
            )
    for share in shares if "auto" in names else ():
        auto, base = mean_by[("auto", share)], mean_by[("truncate", share)]
        verdict = "at or above" if auto >= base else "BELOW"
        print(f"auto at {share:.0%}: {auto:.1%} retained, {auto / max(base, 1e-9):.2f}x truncation ({verdict} it)")


if __name__ == "__main__":
    main()
