"""OpenAI Agents SDK integration benchmark: chainsum's session against the SDK's own way of bounding a session, on
the same agent runs.

Run: ``uv run python bench/bench_openai_agents.py`` (``--repeat``, ``--tau``, ``--limit-items``, windows: see
``--help``). Every figure is measured in this run; ratios are between variants of this run.

The agent replays two corpus sessions (`chainsum.testing.agent_script`), each model request answered with no
latency by `chainsum.testing.openai_agents.ReplayModel` (so what is timed is the Runner, the session and chainsum,
never a model): ``--tau`` tau-bench airline runs one after another (consecutive tool steps merged into parallel
pairs) at ``--tau-window`` tokens, and the first Claude Code session (runs of up to 72 tool steps, parallel calls as
recorded) at ``--cc-window``. Variants, each on the same script:

- ``sqlite``: a plain `SQLiteSession`, nothing bounded: the reference for the SDK's own cost per model call;
- ``sdk-limit``: the SDK's own offline way, `SQLiteSession` with ``SessionSettings(limit=--limit-items)`` (the
  newest N items of the session at the start of each run; nothing bounds what a run adds). The SDK's compaction
  session, ``OpenAIResponsesCompactionSession``, is not measured: it compacts by calling ``responses.compact`` on
  OpenAI's servers (it refuses any non-OpenAI model name), so it cannot run offline, and a stub standing in for
  OpenAI's server would measure the stub;
- ``chainsum``: `ChainsumSession` (over an in-memory `SQLiteSession`) with ``RunConfig(call_model_input_filter=
  session.input_filter)``, the extractive summarizer (counted), the agent's instructions and 300 reserved tokens.

Printed per script and variant: model calls; milliseconds per model call (best of ``--repeat`` replays; the whole
replay divided by the model calls: Runner, session, tools, chainsum), and its overhead over ``sqlite``; for
chainsum, the time inside chainsum per call (the session's ``get_items`` and the filter); summarizer calls and
their input tokens; input tokens the model received (instructions, items and tool definitions, summed over the
requests, counted afterwards with `HeuristicCounter`), the largest request, requests over the window and requests
with a function call or output left without its partner. Then the ratio chainsum / sdk-limit of the milliseconds
per model call and of the input tokens, and where chainsum's time went: the phases of `ContextManager.prepare`
(`chainsum.manager.PhaseTimes`, passed to the session as ``profile=``) in milliseconds per model call and their
shares, the summarizer's own time apart, and the part of the time in chainsum they are. The target line carries
chainsum's model coverage (`phase_report.coverage_note` of the manager's events, ``on_event=``): with the extractive
summarizer, no model is configured, and it says so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from agents import (
    Agent,
    RunConfig,
    Runner,
    Session,
    SessionSettings,
    SQLiteSession,
    TResponseInputItem,
    set_tracing_disabled,
)

import chainsum
from chainsum.integrations.openai_agents import ChainsumInputFilter, ChainsumSession
from chainsum.manager import CountingSummarizer, ManagerConfig, ManagerEvent, PhaseTimes
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import iter_documents
from chainsum.testing.agent_script import AgentScript, concat_scripts, script_from_messages
from chainsum.testing.openai_agents import ReplayModel, script_tools
from chainsum.tokens import HeuristicCounter
from phase_report import coverage_note, replay_breakdown, target_line

VARIANTS = ("sqlite", "sdk-limit", "chainsum")


class TimedSession(ChainsumSession):
    """`ChainsumSession` adding up the wall time of its `get_items` (with its filter's, in `seconds`)."""

    seconds = 0.0

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        started = time.perf_counter()
        try:
            return await super().get_items(limit)
        finally:
            self.seconds += time.perf_counter() - started


class TimedFilter(ChainsumInputFilter):
    """The session's filter (same manager), adding its wall time to the session's."""

    def __init__(self, session: TimedSession) -> None:
        super().__init__(manager=session.manager)
        self.session = session
        self._reader = session._reader  # pyright: ignore[reportPrivateUsage]  # one reader, as session.input_filter

    async def __call__(self, data: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().__call__(data)
        finally:
            self.session.seconds += time.perf_counter() - started


@dataclass
class Result:
    calls: int
    seconds: float
    chainsum_seconds: float
    summarizer_calls: int
    summarizer_tokens: int
    input_tokens: int
    max_tokens: int
    over: int
    unpaired: int
    profile: PhaseTimes | None = None
    """chainsum's `prepare` phases over the replay (chainsum only)."""
    summarizer_s: float = 0.0
    events: list[ManagerEvent] = field(default_factory=list[ManagerEvent])
    """chainsum's manager events over the replay (chainsum only): its model coverage."""


def unpaired(items: list[TResponseInputItem]) -> bool:
    """A function call without its output, or an output without its call before it."""
    calls: set[str] = set()
    answered: set[str] = set()
    for item in items:
        kind, call_id = item.get("type"), str(item.get("call_id"))
        if kind == "function_call":
            calls.add(call_id)
        elif kind == "function_call_output":
            if call_id not in calls:
                return True
            answered.add(call_id)
    return calls != answered


def replay(script: AgentScript, variant: str, window: int, limit_items: int) -> Result:
    model = ReplayModel(keep=True)
    instructions = script.system or "You are a coding agent. Use the tools."
    tools = script_tools(script.tools, model)
    agent = Agent(name="agent", instructions=instructions, model=model, tools=list(tools))
    counter = HeuristicCounter()
    summarizer = CountingSummarizer(ExtractiveSummarizer(), counter)
    session: Session
    run_config = RunConfig(tracing_disabled=True)
    profile = PhaseTimes()
    events: list[ManagerEvent] = []
    if variant == "sqlite":
        session = SQLiteSession("bench")
    elif variant == "sdk-limit":
        session = SQLiteSession("bench", session_settings=SessionSettings(limit=limit_items))
    else:
        chainsum_session = TimedSession(
            "bench",
            config=ManagerConfig(),
            context_window=window,
            summarizers=[summarizer],
            instructions=instructions,
            reserved_tokens=300,
            profile=profile,  # the session's manager, which its filter shares
            on_event=events.append,
        )
        session = chainsum_session
        run_config = RunConfig(tracing_disabled=True, call_model_input_filter=TimedFilter(chainsum_session))

    async def go() -> None:
        for run in script.runs:
            model.play(run)
            await Runner.run(agent, run.user, session=session, run_config=run_config, max_turns=1000)

    started = time.perf_counter()
    asyncio.run(go())
    seconds = time.perf_counter() - started
    tools_text = json.dumps(
        [{"name": t.name, "description": t.description, "parameters": t.params_json_schema} for t in tools],
        sort_keys=True,
    )
    tools_tokens = counter.count_text(tools_text)
    sizes: list[int] = []
    bad = 0
    for request in model.requests:
        messages = chainsum.load(request.input, format="openai-responses").messages
        sizes.append(counter.count_messages(messages) + counter.count_text(request.instructions or "") + tools_tokens)
        bad += unpaired(request.input)
    return Result(
        calls=model.calls,
        seconds=seconds,
        chainsum_seconds=session.seconds if isinstance(session, TimedSession) else 0.0,
        summarizer_calls=summarizer.calls,
        summarizer_tokens=summarizer.input_tokens,
        input_tokens=sum(sizes),
        max_tokens=max(sizes),
        over=sum(s > window for s in sizes),
        unpaired=bad,
        profile=profile if profile.calls else None,
        summarizer_s=summarizer.seconds,
        events=events,
    )


def scripts(tau: int) -> list[tuple[AgentScript, str]]:
    docs = list(iter_documents(include_subagents=False))
    tau_docs = [d for d in docs if d.label.startswith("tau-bench")][:tau]
    cc = [d for d in docs if d.label.startswith("claude-code")][:1]
    out: list[tuple[AgentScript, str]] = []
    if tau_docs:
        parts = [script_from_messages(chainsum.load(d.data, format=d.format).messages, parallel=2) for d in tau_docs]
        out.append((concat_scripts(parts, label=f"tau-bench x{len(tau_docs)}"), "tau"))
    for d in cc:
        messages = chainsum.load(d.data, format=d.format).messages
        out.append((script_from_messages(messages, label=d.label.split("/")[-1][:20]), "cc"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="replays per variant; the fastest is reported")
    parser.add_argument("--tau", type=int, default=14, help="tau-bench runs concatenated into one session")
    parser.add_argument("--tau-window", type=int, default=6000)
    parser.add_argument("--cc-window", type=int, default=16000)
    parser.add_argument("--limit-items", type=int, default=30, help="SessionSettings(limit=...) of sdk-limit")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the SDK warns about nothing here; keep the table readable
    set_tracing_disabled(True)
    found = scripts(args.tau)
    if not found:
        print("corpora not found (../shared/corpora or $CHAINSUM_CORPORA)")
        return
    print(
        "OpenAI Agents SDK: chainsum's session + filter vs the SDK's SQLiteSession with SessionSettings(limit="
        f"{args.limit_items}) (its compaction session needs OpenAI's servers: not measured), best of {args.repeat}"
    )
    for script, kind in found:
        window = args.tau_window if kind == "tau" else args.cc_window
        best: dict[str, Result] = {}
        for _ in range(args.repeat):
            for variant in VARIANTS:
                result = replay(script, variant, window, args.limit_items)
                if variant not in best or result.seconds < best[variant].seconds:
                    best[variant] = result
        base = best["sqlite"].seconds / best["sqlite"].calls
        print(f"\n{script.label}: {len(script.runs)} runs, {script.model_calls} model calls, window {window:,}")
        print(
            f"{'variant':<10} {'ms/call':>8} {'vs sqlite':>10} {'in chainsum':>12} {'summ. calls':>11} "
            f"{'summ. tokens':>12} {'input tokens':>13} {'max req':>8} {'over window':>11} {'unpaired':>8}"
        )
        for variant in VARIANTS:
            r = best[variant]
            per = r.seconds / r.calls
            inside = f"{r.chainsum_seconds / r.calls * 1e3:.2f} ms" if variant == "chainsum" else "-"
            print(
                f"{variant:<10} {per * 1e3:>8.2f} {(per - base) * 1e3:>+8.2f}ms {inside:>12} {r.summarizer_calls:>11} "
                f"{r.summarizer_tokens:>12,} {r.input_tokens:>13,} {r.max_tokens:>8,} {r.over:>11} {r.unpaired:>8}"
            )
        c, s = best["chainsum"], best["sdk-limit"]
        print(
            f"chainsum / sdk-limit: {(c.seconds / c.calls) / (s.seconds / s.calls):.2f}x time per model call, "
            f"{c.input_tokens / s.input_tokens:.2f}x input tokens; requests over the window {c.over} vs {s.over}"
        )
        print(target_line((c.seconds / c.calls) / (s.seconds / s.calls), "sdk-limit", coverage=coverage_note(c.events)))
        if c.profile is not None:
            print(
                replay_breakdown(
                    c.profile,
                    calls=c.calls,
                    inside_seconds=c.chainsum_seconds,
                    where="chainsum",
                    prepare_note=" (get_items and the filter)",
                    summarizer_s=c.summarizer_s,
                )
            )


if __name__ == "__main__":
    main()
