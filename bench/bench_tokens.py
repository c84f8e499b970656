"""Token-counting benchmark: the heuristic's error against tiktoken o200k on every corpus conversation, counting
throughput, and the cost of counting a growing history.

Run: ``uv run python bench/bench_tokens.py`` (``--fit`` also refits the heuristic's coefficients on the fitting
half and prints them, ready to paste into ``chainsum/tokens/_text.py``).

Conversations are split deterministically, alternately, into a fitting half and a held-out half (per corpus); the
error is reported on both, and on all, per corpus and overall. The reference is tiktoken ``o200k_base`` counting the
same messages with the same framing (`chainsum.tokens._structure`), so the figure is the text estimator's error.
Exits 2, printing why, when tiktoken or its encoding file is not available offline: no fake figures.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chainsum.errors import ChainsumError, MissingDependencyError
from chainsum.formats import load
from chainsum.messages import Message
from chainsum.testing import generate_large_chain, iter_documents
from chainsum.tokens import Coefficients, EncodingUnavailableError, HeuristicCounter, TiktokenCounter
from chainsum.tokens._structure import message_cost, reply_priming
from chainsum.tokens._text import FEATURE_NAMES, text_features

_FIXED = ("tabs", "accented", "alphabetic", "symbols", "cjk", "other_script", "astral")
"""Non-ASCII rates the corpora barely exercise: set from sample text, not fitted."""


@dataclass(frozen=True, slots=True)
class Conversation:
    corpus: str
    label: str
    half: str  # "fit" or "held-out"
    messages: list[Message]
    reference: int  # tiktoken o200k count
    features: tuple[float, ...]  # text features summed over every string the counter sees
    overhead: int  # framing, images and other non-text tokens


def collect(tik: TiktokenCounter) -> list[Conversation]:
    out: list[Conversation] = []
    seen: dict[str, int] = {}
    for doc in iter_documents():
        corpus = doc.label.split("/", 1)[0]
        try:
            messages = list(load(doc.data, doc.format).messages)
        except ChainsumError as exc:
            print(f"  skipped {doc.label}: {exc}", file=sys.stderr)
            continue
        if not messages:
            continue
        n = seen.get(corpus, 0)
        seen[corpus] = n + 1
        sums = [0.0] * len(FEATURE_NAMES)

        def feature_sink(text: str, sums: list[float] = sums) -> int:
            for i, v in enumerate(text_features(text)):
                sums[i] += v
            return 0

        overhead = sum(message_cost(m, feature_sink) for m in messages) + reply_priming(messages)
        reference = tik.count_messages(messages)
        half = "fit" if n % 2 == 0 else "held-out"
        out.append(Conversation(corpus, doc.label, half, messages, reference, tuple(sums), overhead))
    return out


def estimate(conv: Conversation, weights: Sequence[float]) -> float:
    return conv.overhead + sum(w * f for w, f in zip(weights, conv.features, strict=True))


def solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (a small dense system; no numpy needed)."""
    n = len(b)
    m = [[*row, rhs] for row, rhs in zip(a, b, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                if f:
                    m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] / m[i][i] if abs(m[i][i]) >= 1e-12 else 0.0 for i in range(n)]


def fit(convs: list[Conversation], start: Coefficients) -> list[float]:
    """Least squares on the relative error (each conversation weighs the same, whatever its length), over the
    ASCII features; coefficients that come out negative are pinned to zero and the rest refitted."""
    names = list(FEATURE_NAMES)
    weights = list(start.as_tuple())
    free: list[int] = [i for i, n in enumerate(names) if n not in _FIXED]
    while True:
        rows: list[list[float]] = []
        targets: list[float] = []
        for c in convs:
            fixed = sum(weights[i] * c.features[i] for i in range(len(names)) if i not in free)
            rows.append([c.features[i] / c.reference for i in free])
            targets.append((c.reference - c.overhead - fixed) / c.reference)
        k = len(free)
        ata = [[sum(r[i] * r[j] for r in rows) + (1e-6 if i == j else 0.0) for j in range(k)] for i in range(k)]
        atb = [sum(r[i] * t for r, t in zip(rows, targets, strict=True)) for i in range(k)]
        solution = solve(ata, atb)
        negative = [free[j] for j, v in enumerate(solution) if v < 0]
        for j, v in enumerate(solution):
            weights[free[j]] = max(0.0, v)
        if not negative:
            return weights
        free = [i for i in free if i not in negative]
        for i in negative:
            weights[i] = 0.0


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def report(convs: list[Conversation], predict: Callable[[Conversation], float], title: str) -> float:
    """Prints mean / p95 relative error per corpus and half; returns the overall held-out p95."""
    print(f"\n{title}")
    print(f"  {'corpus':<14} {'half':<9} {'n':>4} {'mean err':>9} {'p95 err':>8} {'max err':>8} {'bias':>7}")
    corpora = sorted({c.corpus for c in convs})
    held_out_p95 = 0.0
    for corpus in [*corpora, "ALL"]:
        for half in ("fit", "held-out", "all"):
            chosen = [c for c in convs if (corpus in ("ALL", c.corpus)) and (half == "all" or c.half == half)]
            if not chosen:
                continue
            signed = [(predict(c) - c.reference) / c.reference for c in chosen]
            errors = [abs(e) for e in signed]
            line = (
                f"  {corpus:<14} {half:<9} {len(chosen):>4} {statistics.fmean(errors):>8.2%} {p95(errors):>8.2%} "
                f"{max(errors):>8.2%} {statistics.fmean(signed):>+7.2%}"
            )
            print(line)
            if corpus == "ALL" and half == "held-out":
                held_out_p95 = p95(errors)
    return held_out_p95


def throughput(convs: list[Conversation], make: Callable[[], HeuristicCounter | TiktokenCounter]) -> float:
    """Characters per second counting every conversation once with a cold cache (best of three)."""
    chars = sum(len(p) for c in convs for m in c.messages for p in _texts(m))
    best = math.inf
    for _ in range(3):
        counter = make()
        start = time.perf_counter()
        for c in convs:
            counter.count_messages(c.messages)
        best = min(best, time.perf_counter() - start)
    return chars / best


def _texts(message: Message) -> list[str]:
    texts: list[str] = []
    message_cost(message, lambda t: texts.append(t) or 0)
    return texts


class CountingHeuristic(HeuristicCounter):
    """Counts how often the text estimator runs, to show the cache at work."""

    calls = 0

    def count_text(self, text: str) -> int:
        self.calls += 1
        return super().count_text(text)


def growth(messages: int) -> None:
    """Count a history turn by turn, as an agent loop does, with and without the cache."""
    history = generate_large_chain(messages, seed=1, text_bytes=2000)
    cached = CountingHeuristic()
    start = time.perf_counter()
    for n in range(1, len(history) + 1):
        cached.count_messages(history[:n])
    cached_s = time.perf_counter() - start
    uncached = CountingHeuristic(cache_size=0)
    start = time.perf_counter()
    for n in range(1, len(history) + 1):
        uncached.count_messages(history[:n])
    uncached_s = time.perf_counter() - start
    print(f"\ngrowing history of {len(history)} messages, counted after each one (heuristic):")
    per_turn = cached_s / len(history) * 1e6
    print(f"  cached:   {cached.calls:>9} text counts, {cached_s * 1e3:8.1f} ms total, {per_turn:7.1f} us/turn")
    print(
        f"  uncached: {uncached.calls:>9} text counts, {uncached_s * 1e3:8.1f} ms total, "
        f"{uncached_s / len(history) * 1e6:7.1f} us/turn"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--fit", action="store_true", help="refit the ASCII coefficients and report them too")
    parser.add_argument("--growth-messages", type=int, default=500)
    args = parser.parse_args(argv)
    try:
        tik = TiktokenCounter("o200k_base", text_cache_size=0)
    except (MissingDependencyError, EncodingUnavailableError) as exc:
        print(f"cannot benchmark: {exc}", file=sys.stderr)
        return 2
    convs = collect(tik)
    if not convs:
        print("cannot benchmark: no corpus conversations found (see chainsum.testing.corpora_root)", file=sys.stderr)
        return 2
    print(f"{len(convs)} conversations, {sum(c.reference for c in convs):,} o200k tokens in all")
    defaults = Coefficients().as_tuple()
    report(convs, lambda c: c.overhead + sum(_len4(t) for m in c.messages for t in _texts(m)), "chars/4 baseline")
    held_out = report(convs, lambda c: estimate(c, defaults), "HeuristicCounter (shipped coefficients)")
    if args.fit:
        fitted = fit([c for c in convs if c.half == "fit"], Coefficients())
        print("\nfitted coefficients (FEATURE_NAMES order):")
        for name, value in zip(FEATURE_NAMES, fitted, strict=True):
            print(f"  {name} = {value:.4f}")
        report(convs, lambda c: estimate(c, fitted), "HeuristicCounter (refitted)")
    # The whole-counter figure (per-string rounding included) must match the linear model's.
    heuristic = HeuristicCounter()
    actual = [abs(heuristic.count_messages(c.messages) - c.reference) / c.reference for c in convs]
    mean_all = statistics.fmean(actual)
    print(f"\nHeuristicCounter.count_messages, all conversations: mean {mean_all:.2%}, p95 {p95(actual):.2%}")
    h_rate = throughput(convs, HeuristicCounter)
    t_rate = throughput(convs, lambda: TiktokenCounter("o200k_base", text_cache_size=0))
    print("\nthroughput (cold cache, whole conversations):")
    print(f"  heuristic: {h_rate / 1e6:8.1f} M chars/s")
    print(f"  tiktoken:  {t_rate / 1e6:8.1f} M chars/s")
    growth(args.growth_messages)
    target = 0.10
    verdict = "ok" if held_out <= target else "MISSED"
    print(f"\nheld-out p95 relative error {held_out:.2%} (target <= {target:.0%}): {verdict}")
    return 0 if held_out <= target else 1


def _len4(text: str) -> int:
    return math.ceil(len(text) / 4)


if __name__ == "__main__":
    raise SystemExit(main())
