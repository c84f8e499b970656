"""Which requests pay for recall, and how much: the ``recall`` phase of `ContextManager.prepare` split by request,
those that searched the archive (a new user message as the request's newest, or a compaction) and the others, on
bench_strands' replays (the chainsum manager with an instant summarizer).

Run: ``uv run python bench/bench_recall_requests.py`` (``--tau-runs``, ``--tau-windows``, ``--cc-windows``,
``--repeat``). To compare two versions of chainsum in one run, alternate ``PYTHONPATH=<checkout>/src`` between calls.

Printed per workload: the requests that searched (``RecallPins.search`` called), how many of those searches
reached the store (``MemoryArchive.search``: the others found no query words or no room for a block) and the CPU
milliseconds of their recall step in all; the other requests, their median recall time in microseconds and their
total in milliseconds; and the median CPU time of reading a request (``_frame``: conversion, mapping, token counts,
the pinned blocks' check). CPU time (`time.process_time`), each figure the lowest of ``--repeat`` (3) runs: medians
and process time keep the machine's load out of it. The figures time private methods (wrapped here), so they follow
the manager's code, not its API.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench_strands import run, workloads
from chainsum.manager import ContextManager
from chainsum.store import MemoryArchive

_PROBE = ContextManager(context_window=1000)
RequestWriter = type(_PROBE._writer)  # pyright: ignore[reportPrivateUsage]
RecallPins = type(_PROBE._writer._pins)  # pyright: ignore[reportPrivateUsage]
"""The manager's request writer and recall-pin classes, taken from a manager (what this benchmark counts the searches
of is their own internal, as `_recall_blocks` and `_frame` below are: the manager's private modules stay unimported
here)."""


class Split:
    """Per request: the CPU seconds of the recall step and whether it searched; the CPU seconds of reading."""

    def __init__(self) -> None:
        self.searches = 0
        self.store_searches = 0
        """Searches that reached the store (the others found no query words or no room for a block)."""
        self.recall: list[tuple[float, bool]] = []
        self.read: list[float] = []

    def install(self) -> None:
        search: Callable[..., Any] = RecallPins.search
        blocks: Callable[..., Any] = RequestWriter._recall_blocks  # pyright: ignore[reportPrivateUsage]
        frame: Callable[..., Any] = ContextManager._frame  # pyright: ignore[reportPrivateUsage]
        store_search: Callable[..., Any] = MemoryArchive.search

        def counted_store_search(*args: Any, **kwargs: Any) -> Any:
            self.store_searches += 1
            return store_search(*args, **kwargs)

        def counted_search(*args: Any, **kwargs: Any) -> Any:
            self.searches += 1
            return search(*args, **kwargs)

        def timed_blocks(*args: Any, **kwargs: Any) -> Any:
            before, start = self.searches, time.process_time()
            try:
                return blocks(*args, **kwargs)
            finally:
                self.recall.append((time.process_time() - start, self.searches > before))

        def timed_frame(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return frame(*args, **kwargs)
            finally:
                self.read.append(time.process_time() - start)

        RecallPins.search = counted_search  # type: ignore[method-assign]
        MemoryArchive.search = counted_store_search  # type: ignore[method-assign]
        RequestWriter._recall_blocks = timed_blocks  # type: ignore[method-assign]
        ContextManager._frame = timed_frame  # type: ignore[method-assign]

    def figures(self) -> tuple[int, int, float, int, float, float, float]:
        """(requests that searched, how many reached the store, their ms; the others, their median us, their ms;
        read median us)."""
        searched = [s for s, hit in self.recall if hit]
        other = [s for s, hit in self.recall if not hit]
        return (
            len(searched),
            self.store_searches,
            sum(searched) * 1e3,
            len(other),
            statistics.median(other) * 1e6 if other else 0.0,
            sum(other) * 1e3,
            statistics.median(self.read) * 1e6 if self.read else 0.0,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--tau-runs", type=int, default=12, help="tau-bench runs replayed one after the other")
    parser.add_argument("--tau-windows", default="8192", help="windows for the tau-bench replay (tokens)")
    parser.add_argument("--cc-windows", default="64000", help="windows for the Claude Code replay (tokens)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per workload; the lowest figures are kept")
    args = parser.parse_args()
    logging.disable(logging.ERROR)
    ints = lambda text: [int(x) for x in text.split(",") if x.strip()]  # noqa: E731
    found = workloads(args.tau_runs, ints(args.tau_windows), ints(args.cc_windows))
    if not found:
        raise SystemExit("no corpora found (../shared/corpora or $CHAINSUM_CORPORA)")
    split = Split()
    split.install()
    header = f"{'workload':<24} {'searched':>8} {'in store':>8} {'their ms':>9} {'others':>7} {'median us':>10}"
    print(f"{header} {'their ms':>9} {'read us':>8}")
    for name, replay, window, system in found:
        best: tuple[float, ...] | None = None
        for _ in range(max(1, args.repeat)):
            split.recall.clear()
            split.read.clear()
            split.store_searches = 0
            run(replay, "chainsum", window, system)
            figures = split.figures()
            best = figures if best is None else tuple(min(a, b) for a, b in zip(best, figures, strict=True))
        assert best is not None
        n_searched, n_store, searched_ms, n_other, median_us, other_ms, read_us = best
        print(
            f"{name:<24} {n_searched:>8.0f} {n_store:>8.0f} {searched_ms:>9.1f} {n_other:>7.0f} {median_us:>10.1f} "
            f"{other_ms:>9.1f} {read_us:>8.1f}"
        )


if __name__ == "__main__":
    main()
