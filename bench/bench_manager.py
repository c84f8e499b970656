"""Context manager benchmark: replay real sessions and long chats turn by turn, what the summarizer calls are spent
on, the cost of `prepare` when nothing triggers, and whether planted facts stay reachable.

Run: ``uv run python bench/bench_manager.py`` (every part) or ``--parts c,e`` (some of them; ``--skip-replay``
leaves out a). Every figure printed is measured in this run; nothing is estimated, and every ratio is to a
baseline measured in the same run. All replays use the extractive summarizer (no model), counted by a wrapper.
Parts a, b and c also print where chainsum's time went (`chainsum.manager.PhaseTimes`, `phase_report.py`): the
milliseconds per request in each phase of `prepare` and its share, the summarizer's own time apart; b times its
session a second time with the profile on and prints both medians (what profiling itself costs). Parts a, c and f
print their model coverage beside their times (`phase_report.coverage_note` of the managers' events,
``on_event=``): with the extractive summarizer, no model is configured, and the line says so.

a. Replay: every corpus session is fed to a `ContextManager` one model request at a time (before each assistant
   message, the history so far plus the manager's earlier output), with the extractive summarizer: Claude Code
   sessions at a 64K window (provider ``anthropic``), tau-bench runs at a 4K window (``openai``; ``--limit`` of
   them), strategy ``--strategy``. Printed per corpus: sessions, requests, compactions per session (mean, max; and
   those that wrote a summary), sessions that hit the depth cap, summarizer calls and input tokens, requests still
   over the window after `prepare`.
b. Overhead: a ``--turns``-turn session given as plain OpenAI-format dicts (appended in place, as an agent loop
   does), a window large enough that nothing triggers; the time of each `prepare_sync` call, as the median per band
   of history length (the curve), and the overall median.
c. Long chat: ``chainsum.testing.sessions.chat(N)`` (N = ``--long-chat-messages``), a request after each user
   message: the caller keeps its full history, calls `prepare_sync` with the history up to and including that
   message, then appends the recorded assistant reply; default `ManagerConfig`, windows ``--long-chat-windows``
   (2K, 4K, 8K tokens), N = 20,000 by default. Printed per window: requests,
   requests over the window (target 0), compactions (requests whose `Prepared.event` is a `SummarizationEvent`),
   summarizer calls, failures, seconds; then for each fifth of the conversation the compactions and summarizer
   calls per 1,000 messages and the seconds (flat rows: the cost does not grow with the conversation). Then the
   memorybank corpus (``../shared/corpora/memorybank``, 15 users' companion chats; `iter_documents` does not yield
   it, so it is read here: a short system prompt, each day's first user message prefixed with ``[date]``) fed the
   same way at ``--memorybank-windows`` (1K, 2K): requests, requests over the window (target 0), compactions,
   summarizer calls, seconds.
d. Discarded summarizer calls: summarizer calls made in requests whose `prepare` applied nothing (no
   `SummarizationEvent` in that request's `Prepared.event`; calls of failed summarizations included and also
   shown apart), per corpus of a (the replays are run for d when a is not selected) and, when c runs in the same
   invocation, per long-chat and memorybank window. Target 0. Also shown: requests that wrote a summary record
   without a `SummarizationEvent` (expected 0).
e. Fresh-list overhead: `prepare_sync` with nothing to do (window 10**9) at ``--overhead-sizes`` messages (50,
   500, 5,000 of a `chat`): the manager is first given the history up to size - 1, then ``--overhead-calls`` (50)
   successive one-message appends are timed, given (1) the same list object grown in place and (2) a fresh list of
   equal dicts each request (a JSON round trip of the history, made before timing, so only `prepare` is timed).
   Printed: the median microseconds of each, and the ratio (2)/(1); targets (1) about 20 us, (2) <= 200 us at 500.
f. Recall: ``--recall-chats`` (5) generated chats, ``chat(--recall-messages (400), seed=s)`` for s = 1..5, each fed
   request by request as in c at a window of ``--recall-window-share`` (20 %) of its tokens (HeuristicCounter on
   the canonical messages); then each planted fact's question is appended as the newest user message (and removed
   before the next one) and the prepared context is searched for the fact's answer (case-insensitive, as a whole
   word: "June 2" is not found in "June 21"). Printed: the share of answers present with recall (default config),
   without recall (``recall_token_ratio=0``) and with plain truncation at the same window (the system prompt plus
   the newest messages that fit, counted with HeuristicCounter), the ratio of each to truncation, and the targets:
   with recall >= 2x truncation, without recall >= truncation.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chainsum import formats
from chainsum.manager import (
    ContextManager,
    CountingSummarizer,
    ManagerConfig,
    ManagerEvent,
    PhaseTimes,
    SummarizationEvent,
    SummarizationFailedEvent,
    replay_sync,
)
from chainsum.messages import Message
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import corpora_root, iter_documents
from chainsum.testing.chat_facts import memorybank_chats
from chainsum.testing.sessions import chat
from chainsum.tokens import HeuristicCounter
from phase_report import coverage_note, phase_lines

_COMPANION = "You are an AI companion who remembers your earlier talks with the user."

PARTS = "abcdef"
LONG_CHAT_DEFAULT = 20_000


def counting_summarizer() -> CountingSummarizer:
    return CountingSummarizer(ExtractiveSummarizer(), HeuristicCounter())


# a. replay ---------------------------------------------------------------------------------------------------------
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
    discarded_calls: int = 0
    """Summarizer calls made in requests that applied nothing (no `SummarizationEvent`)."""
    discarded_requests: int = 0
    failed_calls: int = 0
    """Of `discarded_calls`, those made in requests whose summarization failed."""
    changed_without_event: int = 0
    seconds: float = 0.0
    profile: PhaseTimes = field(default_factory=PhaseTimes)
    """Where chainsum's time went, phase by phase, over every request of the corpus."""
    summarizer_s: float = 0.0
    events: list[ManagerEvent] = field(default_factory=list[ManagerEvent])
    """The managers' events over the corpus: the model coverage printed beside the time."""


def replay(messages: list[Message], window: int, provider: str, tally: Tally, strategy: str) -> None:
    summarizer = counting_summarizer()
    cfg = ManagerConfig(strategy=strategy)
    manager = ContextManager(
        cfg,
        context_window=window,
        summarizers=[summarizer],
        provider=provider,
        archive=MemoryArchive(),
        profile=tally.profile,
        on_event=tally.events.append,
    )
    report = replay_sync(messages, manager, counting=summarizer, check_valid=False)
    tally.summarizer_s += summarizer.seconds
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
    for turn in report.turns:
        # the replay sets `reason` from a SummarizationEvent, or to "failed:KIND" from a SummarizationFailedEvent
        applied = turn.reason is not None and not turn.reason.startswith("failed:")
        tally.changed_without_event += turn.compacted and not applied
        if turn.summarizer_calls and not applied:
            tally.discarded_calls += turn.summarizer_calls
            tally.discarded_requests += 1
            if turn.reason is not None:
                tally.failed_calls += turn.summarizer_calls


def print_tally(name: str, window: int, t: Tally) -> None:
    if not t.sessions:
        print(f"{name}: corpus not found")
        return
    print(
        f"{name:12} window={window:>6}  sessions={t.sessions:>4}  requests={t.requests:>6}  "
        f"compactions/session mean={statistics.mean(t.compactions):.2f} max={max(t.compactions)} "
        f"(with a summary: mean={statistics.mean(t.summaries):.2f} max={max(t.summaries)})  "
        f"depth-capped={t.depth_capped}  failures={t.failures}  over-window={t.over_window}  "
        f"summarizer calls={t.summarizer_calls} input tokens={t.summarizer_tokens}  time={t.seconds:.1f}s  "
        f"{coverage_note(t.events)}"
    )
    print(phase_lines(t.profile, summarizer_s=t.summarizer_s))


def run_replays(limit: int, strategy: str) -> tuple[Tally, Tally]:
    claude, tau = Tally(), Tally()
    n_tau = 0
    for doc in iter_documents(include_subagents=False):
        if doc.format == "claude-code":
            replay(list(formats.load(doc.data, doc.format).messages), 64_000, "anthropic", claude, strategy)
        elif doc.label.startswith("tau-bench/") and n_tau < limit:
            n_tau += 1
            replay(list(formats.load(doc.data, doc.format).messages), 4_000, "openai", tau, strategy)
    return claude, tau


def print_replays(claude: Tally, tau: Tally, strategy: str) -> None:
    print(f"a. replay (extractive summarizer, default ManagerConfig, strategy {strategy})")
    print_tally("claude-code", 64_000, claude)
    print_tally("tau-bench", 4_000, tau)


# b. overhead -------------------------------------------------------------------------------------------------------
def overhead_session(turns: int, profile: PhaseTimes | None) -> list[tuple[int, float]]:
    """(history length, seconds) of each `prepare_sync` of a `turns`-turn session where nothing triggers."""
    manager = ContextManager(ManagerConfig(), context_window=10**9, archive=MemoryArchive(), profile=profile)
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
    return times


def bench_overhead(turns: int) -> None:
    times = overhead_session(turns, None)
    profile = PhaseTimes()
    profiled = overhead_session(turns, profile)
    print(f"\nb. prepare overhead when nothing triggers ({turns} turns as OpenAI dicts, one new message a call)")
    print(f"{'messages':>12} {'median us':>10}")
    band = max(1, turns // 10)
    for k in range(0, turns, band):
        chunk = times[k : k + band]
        lo, hi = chunk[0][0], chunk[-1][0]
        print(f"{lo:>5}-{hi:<6} {statistics.median(t for _, t in chunk) * 1e6:>10.1f}")
    median = statistics.median(t for _, t in times)
    print(f"overall median: {median * 1e6:.1f} us (target <= 100 us)")
    on = statistics.median(t for _, t in profiled)
    print(
        f"the same session with a PhaseTimes profile: median {on * 1e6:.1f} us ({on / median:.2f}x), where the "
        "time goes:"
    )
    print(phase_lines(profile))


# c. long chat ------------------------------------------------------------------------------------------------------
@dataclass
class Fed:
    """Chats fed to managers one request at a time (a request after each user message)."""

    messages: int = 0
    requests: int = 0
    over_window: int = 0
    compactions: int = 0
    """Requests whose `Prepared.event` is a `SummarizationEvent`."""
    failures: int = 0
    calls: int = 0
    discarded_calls: int = 0
    discarded_requests: int = 0
    failed_calls: int = 0
    changed_without_event: int = 0
    seconds: float = 0.0
    profile: PhaseTimes = field(default_factory=PhaseTimes)
    """Where chainsum's time went, phase by phase, over every request fed."""
    summarizer_s: float = 0.0
    events: list[ManagerEvent] = field(default_factory=list[ManagerEvent])
    """The managers' events over every request fed: the model coverage printed beside the time."""
    rows: list[tuple[int, bool, int, float]] = field(default_factory=list[tuple[int, bool, int, float]])
    """Per request: (index of its user message, applied a summarization, summarizer calls, seconds)."""


def feed_chat(
    messages: Sequence[dict[str, Any]], manager: ContextManager, counting: CountingSummarizer, fed: Fed
) -> list[dict[str, Any]]:
    """Grow a history in place, calling `prepare_sync` after each user message; returns the full history."""
    history: list[dict[str, Any]] = []
    fed.messages += len(messages)
    for i, message in enumerate(messages):
        history.append(message)
        if message.get("role") != "user":
            continue
        calls0 = counting.calls
        start = time.perf_counter()
        prepared = manager.prepare_sync(history)
        seconds = time.perf_counter() - start
        calls = counting.calls - calls0
        applied = isinstance(prepared.event, SummarizationEvent)
        failed = isinstance(prepared.event, SummarizationFailedEvent)
        fed.requests += 1
        fed.over_window += prepared.over_window
        fed.compactions += applied
        fed.failures += failed
        fed.calls += calls
        fed.changed_without_event += prepared.changed and not applied
        if calls and not applied:
            fed.discarded_calls += calls
            fed.discarded_requests += 1
            fed.failed_calls += calls if failed else 0
        fed.seconds += seconds
        fed.rows.append((i, applied, calls, seconds))
    return history


def chat_manager(
    window: int,
    counting: CountingSummarizer,
    config: ManagerConfig | None = None,
    profile: PhaseTimes | None = None,
    events: list[ManagerEvent] | None = None,
) -> ContextManager:
    return ContextManager(
        config or ManagerConfig(),
        context_window=window,
        summarizers=[counting],
        archive=MemoryArchive(),
        profile=profile,
        on_event=None if events is None else events.append,
    )


def fed_line(fed: Fed) -> str:
    return (
        f"requests={fed.requests:>6}  over-window={fed.over_window} (target 0)  compactions={fed.compactions:>5}  "
        f"summarizer calls={fed.calls:>5}  failures={fed.failures}  time={fed.seconds:.1f}s  "
        f"{coverage_note(fed.events)}"
    )


def bench_long_chat(n_messages: int, windows: list[int], mb_windows: list[int]) -> dict[str, Fed]:
    session = chat(n_messages)
    n = len(session.messages)
    note = "" if n_messages == 20_000 else " (not the issue's 20,000)"
    print(
        f"\nc. long chat: chat({n_messages}){note}, {n} messages with the system prompt, a request after each user "
        "message (full history kept by the caller), default ManagerConfig, extractive summarizer"
    )
    results: dict[str, Fed] = {}
    edges = [round(k * n / 5) for k in range(6)]
    for window in windows:
        counting = counting_summarizer()
        fed = Fed()
        feed_chat(
            session.messages, chat_manager(window, counting, profile=fed.profile, events=fed.events), counting, fed
        )
        fed.summarizer_s += counting.seconds
        results[f"long chat {window // 1000}K"] = fed
        print(f"window={window:>6}  {fed_line(fed)}")
        print(phase_lines(fed.profile, summarizer_s=fed.summarizer_s))
        print(f"  {'fifth (messages)':<30}" + "".join(f"{f'{edges[k]}-{edges[k + 1] - 1}':>13}" for k in range(5)))
        comp: list[float] = []
        calls: list[float] = []
        secs: list[float] = []
        for k in range(5):
            rows = [r for r in fed.rows if edges[k] <= r[0] < edges[k + 1]]
            per_k = 1000 / (edges[k + 1] - edges[k])
            comp.append(sum(r[1] for r in rows) * per_k)
            calls.append(sum(r[2] for r in rows) * per_k)
            secs.append(sum(r[3] for r in rows))
        print(f"  {'compactions / 1,000 msgs':<30}" + "".join(f"{x:>13.1f}" for x in comp))
        print(f"  {'summarizer calls / 1,000 msgs':<30}" + "".join(f"{x:>13.1f}" for x in calls))
        print(f"  {'seconds':<30}" + "".join(f"{x:>13.1f}" for x in secs))
    chats = memorybank_chats(corpora_root(), _COMPANION)
    if not chats:
        print("memorybank: corpus not found")
        return results
    sizes = [len(c) for c in chats]
    print(
        f"memorybank: {len(chats)} users' chats, {min(sizes)}-{max(sizes)} messages each, "
        "a request after each user message, default ManagerConfig"
    )
    for window in mb_windows:
        fed = Fed()
        for messages in chats:
            counting = counting_summarizer()
            feed_chat(messages, chat_manager(window, counting, profile=fed.profile, events=fed.events), counting, fed)
            fed.summarizer_s += counting.seconds
        results[f"memorybank {window // 1000}K"] = fed
        print(f"window={window:>6}  {fed_line(fed)}")
        print(phase_lines(fed.profile, summarizer_s=fed.summarizer_s))
    return results


# d. discarded calls ------------------------------------------------------------------------------------------------
def print_discarded(claude: Tally, tau: Tally, fed: dict[str, Fed]) -> None:
    print(
        "\nd. discarded summarizer calls: calls made in requests whose prepare applied nothing "
        "(no SummarizationEvent), target 0"
    )
    print(
        f"{'corpus':<22} {'requests':>9} {'calls':>7} {'discarded':>10} {'in requests':>12} "
        f"{'(failed)':>9} {'record w/o event':>17}"
    )
    rows: list[tuple[str, int, int, int, int, int, int]] = []
    for name, t in (("claude-code 64K", claude), ("tau-bench 4K", tau)):
        if t.sessions:
            row = (t.requests, t.summarizer_calls, t.discarded_calls, t.discarded_requests, t.failed_calls)
            rows.append((name, *row, t.changed_without_event))
    for name, f in fed.items():
        row = (f.requests, f.calls, f.discarded_calls, f.discarded_requests, f.failed_calls)
        rows.append((name, *row, f.changed_without_event))
    for name, requests, calls, discarded, in_requests, failed, no_event in rows:
        print(f"{name:<22} {requests:>9} {calls:>7} {discarded:>10} {in_requests:>12} {failed:>9} {no_event:>17}")
    if not fed:
        print("(long chat and memorybank: run with part c to include them)")


# e. fresh-list overhead --------------------------------------------------------------------------------------------
def time_nothing_to_do(messages: list[dict[str, Any]], size: int, calls: int, fresh: bool) -> tuple[float, int]:
    """Median seconds of `calls` prepare calls from `size` messages on, and how many returned an event."""
    manager = ContextManager(ManagerConfig(), context_window=10**9, archive=MemoryArchive())
    history = list(messages[: size - 1])
    lists: list[list[dict[str, Any]]] = []
    if fresh:
        lists = [json.loads(json.dumps(messages[: size + j])) for j in range(calls)]
        manager.prepare_sync(json.loads(json.dumps(history)))
    else:
        manager.prepare_sync(history)
    times: list[float] = []
    events = 0
    gc.collect()
    for j in range(calls):
        if fresh:
            given = lists[j]
        else:
            history.append(messages[size - 1 + j])
            given = history
        start = time.perf_counter()
        prepared = manager.prepare_sync(given)
        times.append(time.perf_counter() - start)
        events += prepared.event is not None
    return statistics.median(times), events


def bench_fresh_lists(sizes: list[int], calls: int) -> None:
    print(
        f"\ne. prepare with nothing to do (window 10**9), chat messages as OpenAI dicts: (1) the same list grown in "
        f"place, (2) a fresh list of equal dicts each request; median of {calls} calls, one new message each"
    )
    print(f"{'messages':>9} {'(1) us':>9} {'(2) us':>9} {'(2)/(1)':>8}  events")
    messages = chat(max(sizes) + calls + 2).messages
    for size in sizes:
        same, e1 = time_nothing_to_do(messages, size, calls, fresh=False)
        fresh, e2 = time_nothing_to_do(messages, size, calls, fresh=True)
        print(f"{size:>9} {same * 1e6:>9.1f} {fresh * 1e6:>9.1f} {fresh / same:>8.2f}  {e1 + e2}")
    print("targets: (1) about 20 us; (2) <= 200 us at 500 messages")


# f. recall ---------------------------------------------------------------------------------------------------------
def contains(text: str, answer: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(answer.lower())}(?!\w)", text) is not None


def truncated(history: list[dict[str, Any]], window: int, counter: HeuristicCounter) -> list[dict[str, Any]]:
    """The system prompt plus the newest messages that fit `window` tokens."""
    canonical = formats.load(history).messages
    assert len(canonical) == len(history), "one canonical message per chat dict"
    system = canonical[0]
    total = counter.count_messages([system])
    keep = len(history)
    while keep > 1 and total + counter.count_message(canonical[keep - 1]) <= window:
        keep -= 1
        total += counter.count_message(canonical[keep])
    return [history[0], *history[keep:]]


def bench_recall(n_chats: int, n_messages: int, share: float) -> None:
    counter = HeuristicCounter()
    modes = {"with recall": ManagerConfig(), "without recall": ManagerConfig(recall_token_ratio=0)}
    found = {name: 0 for name in (*modes, "truncation")}
    questions = 0
    over = dict.fromkeys(modes, 0)
    windows: list[int] = []
    events: list[ManagerEvent] = []
    started = time.perf_counter()
    for seed in range(1, n_chats + 1):
        session = chat(n_messages, seed=seed)
        window = int(share * counter.count_messages(formats.load(session.messages).messages))
        windows.append(window)
        questions += len(session.facts)
        for name, config in modes.items():
            counting = counting_summarizer()
            manager = chat_manager(window, counting, config, events=events)
            history = feed_chat(session.messages, manager, counting, Fed())
            for fact in session.facts:
                history.append({"role": "user", "content": fact.question})
                prepared = manager.prepare_sync(history)
                history.pop()
                over[name] += prepared.over_window
                text = json.dumps(list(prepared.messages), ensure_ascii=False, default=str).lower()
                found[name] += contains(text, fact.answer)
        for fact in session.facts:
            kept = truncated([*session.messages, {"role": "user", "content": fact.question}], window, counter)
            found["truncation"] += contains(json.dumps(kept, ensure_ascii=False).lower(), fact.answer)
    print(
        f"\nf. recall of planted facts: {n_chats} chats of chat({n_messages}, seed=1..{n_chats}), window "
        f"{share:.0%} of each chat's tokens ({min(windows)}-{max(windows)} tokens), {questions} questions, "
        "each asked as the newest user message after the whole chat was fed request by request"
    )
    base = found["truncation"] / questions if questions else 0.0
    targets = {"with recall": ">= 2x truncation", "without recall": ">= truncation", "truncation": "(baseline)"}
    print(f"{'mode':<16} {'present':>9} {'share':>7} {'/ truncation':>13} {'over-window':>12}  target")
    for name, n in found.items():
        share_found = n / questions if questions else 0.0
        ratio = f"{share_found / base:.2f}" if base else "n/a"
        over_w = str(over[name]) if name in over else "-"
        print(f"{name:<16} {f'{n}/{questions}':>9} {share_found:>7.2f} {ratio:>13} {over_w:>12}  {targets[name]}")
    print(f"time={time.perf_counter() - started:.1f}s  {coverage_note(events)}")


# main --------------------------------------------------------------------------------------------------------------
def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS), help="parts to run, e.g. a,b or c,d (default: all)")
    parser.add_argument("--turns", type=int, default=300, help="b: turns of the overhead session")
    parser.add_argument("--limit", type=int, default=200, help="a, d: tau-bench runs to replay")
    parser.add_argument("--strategy", default="auto", help="a, d: auto, ratio, sections, safe-split or mask")
    parser.add_argument("--skip-replay", action="store_true", help="leave out part a")
    parser.add_argument("--long-chat-messages", type=int, default=LONG_CHAT_DEFAULT, help="c: messages of the chat")
    parser.add_argument("--long-chat-windows", default="2000,4000,8000", help="c: context windows in tokens")
    parser.add_argument("--memorybank-windows", default="1000,2000", help="c: windows for the memorybank chats")
    parser.add_argument("--overhead-sizes", default="50,500,5000", help="e: history lengths in messages")
    parser.add_argument("--overhead-calls", type=int, default=50, help="e: timed calls per size and case")
    parser.add_argument("--recall-chats", type=int, default=5, help="f: generated chats (seeds 1..N)")
    parser.add_argument("--recall-messages", type=int, default=400, help="f: messages per chat")
    parser.add_argument("--recall-window-share", type=float, default=0.2, help="f: window as a share of the tokens")
    args = parser.parse_args()
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    if unknown := parts - set(PARTS):
        parser.error(f"unknown parts: {', '.join(sorted(unknown))} (choose from {', '.join(PARTS)})")
    if args.skip_replay:
        parts.discard("a")
    timings: list[tuple[str, float]] = []

    def timed(name: str, start: float) -> None:
        timings.append((name, time.perf_counter() - start))

    claude, tau = Tally(), Tally()
    if parts & {"a", "d"}:
        start = time.perf_counter()
        claude, tau = run_replays(args.limit, args.strategy)
        if "a" in parts:
            print_replays(claude, tau, args.strategy)
        timed("a" if "a" in parts else "a (for d)", start)
    if "b" in parts:
        start = time.perf_counter()
        bench_overhead(args.turns)
        timed("b", start)
    fed: dict[str, Fed] = {}
    if "c" in parts:
        start = time.perf_counter()
        fed = bench_long_chat(args.long_chat_messages, ints(args.long_chat_windows), ints(args.memorybank_windows))
        timed("c", start)
    if "d" in parts:
        print_discarded(claude, tau, fed)
    if "e" in parts:
        start = time.perf_counter()
        bench_fresh_lists(ints(args.overhead_sizes), args.overhead_calls)
        timed("e", start)
    if "f" in parts:
        start = time.perf_counter()
        bench_recall(args.recall_chats, args.recall_messages, args.recall_window_share)
        timed("f", start)
    print("\npart times: " + ", ".join(f"{name} {seconds:.1f}s" for name, seconds in timings))


if __name__ == "__main__":
    main()
