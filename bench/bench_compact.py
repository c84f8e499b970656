"""Large one-shot compaction: a generated 5,001-message agent session (about 14 MB of OpenAI JSON) to a 32K budget.

Run: ``uv run python bench/bench_compact.py`` (``--messages``, ``--budget``, ``--latency`` change the setup).

The session is `chainsum.testing.sessions.agent_session` (deterministic: agent turns with tool results of 0.1 to
60 KB, some parallel calls, planted identifiers). Printed, each measured in this run:

a. `json.loads` of the same bytes: the baseline every time below is divided by.
b. ``compact`` with the extractive summarizer (the CLI's default): seconds (and the ratio to a), summarizer calls,
   the largest transcript against the input cap, tokens after against the budget (the fill), the share of
   the planted identifiers (``ERR-nnnnn``) still in the output, and the result's model coverage (none: the
   extractive summarizer calls no model, and the line says so).
c. The same with a scripted summarizer that answers after `--latency` seconds (calls run concurrently): seconds
   end to end, and its model coverage (the scripted summarizer counts as a model: the share of the summarized
   conversation it was shown, which is what its time is worth).
d. One `ContextManager.prepare` on the whole session at a window of the budget / 0.7 (so its reset budget is the
   budget above), the extractive summarizer: seconds, summarizer calls, tokens after, and its model coverage
   (`phase_report.coverage_note` of the manager's events: no model is configured, and the line says so).
e. Plain truncation (keep the system prompt and the newest messages that fit) at the same budget: its fill and
   planted identifiers, for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from collections.abc import Sequence

from chainsum.executor import DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS, compact_sync
from chainsum.formats import load
from chainsum.manager import ContextManager, ManagerConfig, ManagerEvent
from chainsum.messages import Message
from chainsum.store import MemoryArchive
from chainsum.strategies import AutoStrategy
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing.baselines import truncate
from chainsum.testing.sessions import agent_session
from chainsum.tokens import HeuristicCounter
from phase_report import coverage_note, result_coverage_note

_PLANTED = re.compile(r"ERR-\d{5}")


def planted(messages: Sequence[Message]) -> set[str]:
    found: set[str] = set()
    for m in messages:
        found.update(_PLANTED.findall(m.text))
        for r in m.tool_results:
            found.update(_PLANTED.findall(r.text))
    return found


class Measured:
    """Wraps a summarizer: counts calls and keeps the largest transcript's token count. Without a latency it is the
    extractive summarizer, and says so through ``inner`` (as `chainsum.manager.CountingSummarizer` does; the
    extractive one says ``local = True``): the manager then sees no model, for its model coverage and its
    cache-aware reset."""

    def __init__(self, latency: float, counter: HeuristicCounter) -> None:
        self.latency = latency
        self.counter = counter
        self.calls = 0
        self.largest = 0
        self.extractive = ExtractiveSummarizer()
        self.inner: ExtractiveSummarizer | None = None if latency else self.extractive

    async def __call__(self, transcript: str) -> str:
        self.calls += 1
        self.largest = max(self.largest, self.counter.count_text(transcript))
        if self.latency:
            await asyncio.sleep(self.latency)
            return "A scripted summary: the agent read files, ran the tests and fixed ERR-00001."
        return self.extractive.summarize_text(transcript)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--messages", type=int, default=5001)
    parser.add_argument("--budget", type=int, default=32000)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    budget: int = args.budget

    data = json.dumps(agent_session(args.messages))
    started = time.perf_counter()
    json.loads(data)
    baseline = time.perf_counter() - started
    messages = load(data).messages
    all_planted = planted(messages)
    print(f"session: {len(messages):,} messages, {len(data) / 1e6:.1f} MB; json.loads {baseline:.3f} s")
    print(f"budget {budget:,} tokens; summarizer input cap {DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS:,} tokens")

    for label, latency in (("extractive", 0.0), (f"scripted, {args.latency:g} s a call", args.latency)):
        counter = HeuristicCounter()
        summarizer = Measured(latency, counter)
        started = time.perf_counter()
        result = compact_sync(messages, AutoStrategy(), summarizer=summarizer, counter=counter, budget=budget)
        seconds = time.perf_counter() - started
        kept = planted(result.messages) & all_planted
        print(
            f"compact ({label}): {seconds:.2f} s = {seconds / baseline:.1f}x json.loads; "
            f"{summarizer.calls} summarizer calls, largest input {summarizer.largest:,} tokens "
            f"(cap {DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS:,}); {result.tokens_after:,} tokens = "
            f"{result.tokens_after / budget:.0%} of the budget; planted identifiers kept "
            f"{len(kept)}/{len(all_planted)} ({len(kept) / max(1, len(all_planted)):.1%}); valid {result.valid}; "
            f"{result_coverage_note(result.model_coverage, summarizer.calls)}"
        )

    counter = HeuristicCounter()
    summarizer = Measured(0.0, counter)
    window = int(budget / 0.7)
    events: list[ManagerEvent] = []
    manager = ContextManager(
        ManagerConfig(),
        context_window=window,
        summarizers=[summarizer],
        archive=MemoryArchive(),
        counter=counter,
        on_event=events.append,
    )
    dicts = json.loads(data)
    started = time.perf_counter()
    prepared = manager.prepare_sync(dicts)
    seconds = time.perf_counter() - started
    out = load(prepared.messages, format="openai").messages
    kept = planted(out) & all_planted
    print(
        f"prepare (window {window:,}): {seconds:.2f} s = {seconds / baseline:.1f}x json.loads; "
        f"{summarizer.calls} summarizer calls; {counter.count_messages(out):,} tokens; planted identifiers kept "
        f"{len(kept)}/{len(all_planted)} ({len(kept) / max(1, len(all_planted)):.1%}); {coverage_note(events)}"
    )

    counter = HeuristicCounter()
    started = time.perf_counter()
    cut = truncate(messages, budget, counter)
    seconds = time.perf_counter() - started
    kept = planted(cut) & all_planted
    print(
        f"plain truncation: {seconds:.2f} s; {counter.count_messages(cut):,} tokens = "
        f"{counter.count_messages(cut) / budget:.0%} of the budget; planted identifiers kept "
        f"{len(kept)}/{len(all_planted)} ({len(kept) / max(1, len(all_planted)):.1%})"
    )


if __name__ == "__main__":
    main()
