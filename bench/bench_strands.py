"""Strands integration benchmark: chainsum's `ChainsumConversationManager` against Strands' own
`SummarizingConversationManager`, on the same replayed agent runs, in the same process.

Run: ``uv run python bench/bench_strands.py`` (``--tau-runs``, ``--tau-windows``, ``--cc-windows``, ``--repeat``).

Workloads: the first ``--tau-runs`` (12) tau-bench airline runs one after the other at the ``--tau-windows``
(4,096 and 8,192 tokens), and the first Claude Code session (parallel tool calls, results up to 30K characters) at
the ``--cc-windows`` (16,000 and 64,000). Each is replayed through a real Strands ``Agent``
(`chainsum.testing.strands`: a canned model replays the recorded assistant steps, the tools answer with the recorded
results) whose provider refuses a request over the window (``ContextWindowOverflowException``), counted with
chainsum's `HeuristicCounter`, which is also the prompt size it reports as usage. A manager whose agent requests are
refused 10 times in a row is stopped there (Strands' loop, its issue #3338; 10 is the bound its proposed fix, PR
#3350, puts on the retries) and that agent call fails; the replay goes on with the next prompt.

Managers, each configured as its documentation recommends:

- ``strands``: ``SummarizingConversationManager(proactive_compression=True)`` (summarizes at 70 % of the model's
  ``context_window_limit``, and on overflow); its summaries come from the agent's model, here the canned provider
  answering at once with one line.
- ``chainsum``: ``ChainsumConversationManager(context_window=W)`` with an instant scripted summarizer (one line, as
  Strands gets), so that both managers' own work is compared.
- ``chainsum-extractive``: the same with chainsum's default extractive summarizer (real work, in process).

Printed per workload and manager: model calls answered and refused (over the window), failed agent calls, the CPU
time spent in the manager per answered model call (its hooks, `apply_management`, `reduce_context` as the agent calls
it, chainsum's request middleware; nested calls counted once; the best of ``--repeat`` (1) runs), its ratio to
``strands`` measured in the same run, the input tokens of the answered requests (millions), summarizer calls and
their input tokens (`HeuristicCounter` of what the summarizer was given: chainsum's transcript; Strands' messages and
prompt, sent to the model), and the wall time of the whole replay. Then, per chainsum manager, where its time went:
the phases of `ContextManager.prepare` (`chainsum.manager.PhaseTimes`, passed to the manager as ``profile=``), wall
clock, in milliseconds per answered model call and their shares, the summarizer's own time apart. Each chainsum
target line carries its model coverage (`phase_report.coverage_note` of the manager's events, ``on_event=``): the
scripted summarizer is a model to chainsum (not ``local``) and reads all it summarizes; the extractive one is none.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from strands import Agent
from strands.agent.conversation_manager import ConversationManager, SummarizingConversationManager

from chainsum import ExtractiveSummarizer, Message, formats
from chainsum.integrations.strands import ChainsumConversationManager
from chainsum.manager import CountingSummarizer, ManagerEvent, PhaseTimes
from chainsum.testing import ScriptedSummarizer, iter_documents
from chainsum.testing.strands import CannedModel, CannedRequest, Replay, replay_of
from chainsum.tokens import HeuristicCounter
from phase_report import coverage_note, phase_lines, target_line

COUNTER = HeuristicCounter()
STOP_AFTER = 10


class Stopped(Exception):
    """The provider refused `STOP_AFTER` requests in a row: the manager is looping."""


def request_tokens(request: CannedRequest) -> int:
    tokens = COUNTER.count_messages(formats.load(request.messages, "bedrock").messages)
    tokens += COUNTER.count_text(request.system_prompt) if request.system_prompt else 0
    if request.tool_specs:
        tokens += COUNTER.count_text(json.dumps(request.tool_specs, ensure_ascii=False, sort_keys=True, default=str))
    return tokens


class Provider:
    """Refuses requests over `window` tokens; stops a manager whose agent requests are refused `STOP_AFTER` times
    in a row (the summary requests a manager makes between them do not count)."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.refused = 0
        self.in_a_row = 0
        self.sent = 0
        """Tokens of the agent requests answered."""

    def __call__(self, request: CannedRequest) -> bool:
        tokens = request_tokens(request)
        fits = tokens <= self.window
        if request.is_summarization:  # Strands' summary requests: refused when too long, not counted
            return not fits
        if fits:
            self.in_a_row = 0
            self.sent += tokens
            return False
        self.refused += 1
        self.in_a_row += 1
        if self.in_a_row >= STOP_AFTER:
            self.in_a_row = 0
            raise Stopped
        return True


class Timer:
    """CPU seconds of this process spent inside wrapped entry points, nested calls counted once (CPU time, not wall
    time: the figure should not depend on what else the machine runs; chainsum's sync path works on a worker thread
    of the same process, which process time includes)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0

    def sync(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._depth += 1
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1
                if not self._depth:
                    self.seconds += time.process_time() - start

        return timed

    def coroutine(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            self._depth += 1
            start = time.process_time()
            try:
                return await fn(*args, **kwargs)
            finally:
                self._depth -= 1
                if not self._depth:
                    self.seconds += time.process_time() - start

        return timed


@dataclass
class Result:
    answered: int
    refused: int
    failed: int
    manager_s: float
    sent: int
    summarizer_calls: int
    summarizer_tokens: int
    wall_s: float
    profile: PhaseTimes | None = None
    """chainsum's `prepare` phases over the run (chainsum's managers only)."""
    summarizer_s: float = 0.0
    events: list[ManagerEvent] = field(default_factory=list[ManagerEvent])
    """chainsum's manager events over the run (chainsum's managers only): its model coverage."""

    @property
    def per_call_us(self) -> float:
        return self.manager_s / max(1, self.answered) * 1e6


def make_manager(
    kind: str, window: int, profile: PhaseTimes, events: list[ManagerEvent]
) -> tuple[ConversationManager, Timer, Callable[[CannedModel], tuple[int, int, float]]]:
    """The manager (chainsum's filling `profile` and `events`), a timer wrapped around its entry points (before the
    agent registers them), and how to read its summarizer calls, input tokens and seconds after the run."""
    timer = Timer()
    if kind == "strands":
        cm = SummarizingConversationManager(proactive_compression=True)
        cm._on_before_model_call_threshold = timer.sync(cm._on_before_model_call_threshold)  # type: ignore[method-assign]

        def strands_summaries(model: CannedModel) -> tuple[int, int, float]:
            asked = [r for r in model.requests if r.is_summarization]
            return len(asked), sum(request_tokens(r) for r in asked), 0.0

        summaries = strands_summaries
    else:
        inner = ScriptedSummarizer(default=lambda t: "Summary of the earlier conversation.")
        counting = CountingSummarizer(ExtractiveSummarizer() if kind == "chainsum-extractive" else inner, COUNTER)
        chainsum = ChainsumConversationManager(
            context_window=window, summarizers=[counting], profile=profile, on_event=events.append
        )
        chainsum._before_model_call = timer.coroutine(chainsum._before_model_call)  # type: ignore[method-assign]
        chainsum._request = timer.sync(chainsum._request)  # type: ignore[method-assign]
        cm = chainsum

        def chainsum_summaries(model: CannedModel) -> tuple[int, int, float]:
            return counting.calls, counting.input_tokens, counting.seconds

        summaries = chainsum_summaries
    cm.apply_management = timer.sync(cm.apply_management)  # type: ignore[method-assign]
    cm.reduce_context = timer.sync(cm.reduce_context)  # type: ignore[method-assign]
    return cm, timer, summaries


def run(replay: Replay, kind: str, window: int, system: str) -> Result:
    profile = PhaseTimes()
    events: list[ManagerEvent] = []
    cm, timer, summaries = make_manager(kind, window, profile, events)
    provider = Provider(window)
    model = replay.model(context_window_limit=window, overflow=provider, input_tokens=request_tokens)
    agent = Agent(
        model=model, tools=replay.tools(), system_prompt=system, conversation_manager=cm, callback_handler=None
    )
    failed = 0

    async def play() -> None:
        nonlocal failed
        for turn in replay.turns:
            try:
                await agent.invoke_async(turn.prompt)
            except Exception:  # Stopped, or an overflow the manager gave up on: the agent call failed
                failed += 1

    gc.collect()
    start = time.perf_counter()
    asyncio.run(play())
    wall = time.perf_counter() - start
    calls, tokens, summarizer_s = summaries(model)
    work = [r for r in model.requests if not r.is_summarization]
    answered = len(work) - provider.refused
    result = Result(
        answered, provider.refused, failed, timer.seconds, provider.sent, calls, tokens, wall, events=events
    )
    if profile.calls:
        result.profile, result.summarizer_s = profile, summarizer_s
    return result


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def workloads(tau_runs: int, tau_windows: list[int], cc_windows: list[int]) -> list[tuple[str, Replay, int, str]]:
    docs = list(iter_documents(include_subagents=False))
    out: list[tuple[str, Replay, int, str]] = []
    tau = [d for d in docs if d.label.startswith("tau-bench")][:tau_runs]
    if tau:
        messages: list[Message] = []
        for i, doc in enumerate(tau):
            messages += [m for m in formats.load(doc.data).messages if i == 0 or m.role != "system"]
        replay = replay_of(messages)
        out += [(f"tau-bench x{len(tau)} @ {w}", replay, w, replay.system or "") for w in tau_windows]
    cc = [d for d in docs if d.label.startswith("claude-code")][:1]
    if cc:
        replay = replay_of(formats.load(cc[0].data).messages)
        out += [(f"claude-code @ {w}", replay, w, "You are a coding agent.") for w in cc_windows]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tau-runs", type=int, default=12, help="tau-bench runs replayed one after the other")
    parser.add_argument("--tau-windows", default="4096,8192", help="windows for the tau-bench replay (tokens)")
    parser.add_argument("--cc-windows", default="16000,64000", help="windows for the Claude Code replay (tokens)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per manager; the fastest manager time is kept")
    args = parser.parse_args()
    logging.disable(logging.ERROR)  # Strands logs every refusal; the figures below say how many there were
    windows = (_ints(args.tau_windows), _ints(args.cc_windows))
    found = workloads(args.tau_runs, *windows)
    if not found:
        raise SystemExit("no corpora found (../shared/corpora or $CHAINSUM_CORPORA)")
    header = (
        f"{'manager':<20} {'answered':>8} {'refused':>7} {'failed':>6} {'us/call':>8} {'ratio':>7} {'sent Mtok':>9} "
        f"{'summ.calls':>10} {'summ.tokens':>11} {'wall s':>7}"
    )
    for name, replay, window, system in found:
        print(f"\n{name}: {len(replay.turns)} prompts, {replay.steps} recorded model steps")
        print(header)
        results: dict[str, Result] = {}
        for kind in ("strands", "chainsum", "chainsum-extractive"):
            runs = [run(replay, kind, window, system) for _ in range(args.repeat)]
            results[kind] = min(runs, key=lambda r: r.manager_s)
        base = results["strands"].per_call_us
        for kind, r in results.items():
            ratio = r.per_call_us / base if base else float("nan")
            print(
                f"{kind:<20} {r.answered:>8} {r.refused:>7} {r.failed:>6} {r.per_call_us:>8.0f} {ratio:>6.3g}x "
                f"{r.sent / 1e6:>9.2f} {r.summarizer_calls:>10} {r.summarizer_tokens:>11} {r.wall_s:>7.2f}"
            )
        for kind in ("chainsum", "chainsum-extractive"):
            if base:
                print(target_line(results[kind].per_call_us / base, "SummarizingConversationManager", ours=kind,
                                  what="CPU time per call", coverage=coverage_note(results[kind].events)))  # fmt: skip
        for kind, r in results.items():
            if r.profile is not None:
                print(f"{kind}: where chainsum's time went (wall clock; the table's us/call is CPU time)")
                print(phase_lines(r.profile, per=r.answered, label="answered call", summarizer_s=r.summarizer_s))


if __name__ == "__main__":
    main()
