"""Chain-layer benchmark: build cost against json.loads, append cost against rebuild, peak memory.

Run: ``uv run python bench/bench_chain.py`` (add ``--messages N`` to change the generated chain's length).

Every figure is a ratio to a baseline measured in the same run on the same bytes, because these machines are
noisy: build/json.loads (target <= 2x), load alone per wire format/json.loads
(target < 2x), append/rebuild (target < 1 %), peak memory/JSON size (target <= 3x).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from chainsum.chain import Chain
from chainsum.formats import dump, load
from chainsum.messages import Message
from chainsum.testing import generate_large_chain, iter_documents


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """Fastest of `repeat` runs, in seconds (the least disturbed by other load on the machine)."""
    times: list[float] = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def build_ratio(text: str, fmt: str, repeat: int) -> tuple[float, float, float]:
    """(json.loads seconds, load+build seconds, ratio). The build starts from the parsed JSON, as a library
    user holding a message list would; json.loads of the same bytes is the baseline."""
    parse = best_of(lambda: json.loads(text), repeat)
    data = json.loads(text)
    build = best_of(lambda: Chain.build(load(data, fmt).messages, repair=True), repeat)
    return parse, build, build / parse


def peak_memory(parse: Callable[[], Any], fmt: str) -> tuple[int, int]:
    """(peak bytes of parsing alone, peak bytes of parsing + load + Chain.build), the input text excluded.

    Parsing is reported apart because for JSON Lines with many small records (Claude Code logs) Python's own
    dicts already cost several times the text; what chainsum adds is the difference."""
    gc.collect()
    tracemalloc.start()
    data = parse()
    _, parse_peak = tracemalloc.get_traced_memory()
    chain = Chain.build(load(data, fmt).messages, repair=True)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del chain, data
    return parse_peak, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    print("== build: load + Chain.build, as a ratio to json.loads of the same bytes (target <= 2x)")
    print(f"{'conversation':58} {'MB':>6} {'msgs':>6} {'loads ms':>9} {'build ms':>9} {'ratio':>6}")
    docs = sorted(iter_documents(), key=lambda d: d.size, reverse=True)
    picked = [d for d in docs if d.format == "claude-code"][:2]
    picked += [d for d in docs if d.format == "tau2"][:1] + [d for d in docs if d.format == "openai"][:1]
    for doc in picked:
        text = "\n".join(json.dumps(r) for r in doc.data) if doc.format == "claude-code" else json.dumps(doc.data)
        data = json.loads(text) if doc.format != "claude-code" else [json.loads(x) for x in text.splitlines()]
        if doc.format == "claude-code":
            # JSONL: the baseline parses each line, as any reader of the file must.
            parse = best_of(lambda t=text: [json.loads(x) for x in t.splitlines()], args.repeat)
            build = best_of(lambda d=data: Chain.build(load(d, "claude-code").messages, repair=True), args.repeat)
            ratio = build / parse
        else:
            parse, build, ratio = build_ratio(text, doc.format, args.repeat)
        n = len(load(data, doc.format).messages)
        print(f"{doc.label[:58]:58} {len(text) / 1e6:6.2f} {n:6d} {parse * 1e3:9.1f} {build * 1e3:9.1f} {ratio:5.2f}x")

    messages = generate_large_chain(args.messages, text_bytes=5000)
    text = json.dumps(dump(list(messages), to="openai"))
    parse, build, ratio = build_ratio(text, "openai", args.repeat)
    n = len(messages)
    print(
        f"{f'generated ({n} messages, OpenAI format)':58} {len(text) / 1e6:6.2f} {n:6d} {parse * 1e3:9.1f} "
        f"{build * 1e3:9.1f} {ratio:5.2f}x"
    )

    print("\n== load alone, per wire format, as a ratio to json.loads of the same bytes (target < 2x)")
    print(f"{'format':18} {'MB':>6} {'loads ms':>9} {'load ms':>9} {'ratio':>6}")
    for fmt in ("openai", "openai-responses", "anthropic", "gemini", "bedrock", "chainsum"):
        wire = json.dumps(dump(list(messages), to=fmt))
        parsed = json.loads(wire)
        parse = best_of(lambda w=wire: json.loads(w), args.repeat)
        mapped = best_of(lambda d=parsed, f=fmt: load(d, f), args.repeat)
        print(f"{fmt:18} {len(wire) / 1e6:6.2f} {parse * 1e3:9.1f} {mapped * 1e3:9.1f} {mapped / parse:5.2f}x")

    print("\n== append one message vs rebuild (target < 1 %)")
    chain = Chain.build(messages)
    extra = Message.of("user", "one more question")
    rebuild = best_of(lambda: Chain.build([*messages, extra]), args.repeat)
    append_runs: list[float] = []
    for _ in range(200):
        start = time.perf_counter()
        chain.append(extra)
        append_runs.append(time.perf_counter() - start)
    append = statistics.median(append_runs)
    print(f"rebuild {rebuild * 1e3:.2f} ms, append median {append * 1e6:.1f} us: {append / rebuild * 100:.3f} %")

    print("\n== peak memory while parsing and building, as a ratio to the JSON size (target <= 3x)")
    big = picked[0]
    cc_text = "\n".join(json.dumps(r) for r in big.data)
    for label, size, parse, fmt in (
        ("generated", len(text), lambda: json.loads(text), "openai"),
        (big.label, len(cc_text), lambda: [json.loads(x) for x in cc_text.splitlines()], "claude-code"),
    ):
        parse_peak, peak = peak_memory(parse, fmt)
        print(
            f"{label}: JSON {size / 1e6:.1f} MB; json.loads alone peak {parse_peak / size:.2f}x; "
            f"parse + load + build peak {peak / size:.2f}x (chainsum adds {(peak - parse_peak) / size:.2f}x)"
        )


if __name__ == "__main__":
    main()
