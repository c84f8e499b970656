"""LangChain benchmark: `ChainsumMiddleware` against LangChain's own ``SummarizationMiddleware`` on the same agent run.

Run: ``uv run python bench/bench_langchain.py`` (``--tau-runs``, ``--repeat``, the windows as options).

The workload: real sessions of the shared corpora replayed through ``create_agent`` (a ``ScriptedChatModel``
answering with the recorded assistant turns, ``ScriptedTools`` answering each call with its recorded result, an
``InMemorySaver`` checkpointer): the first Claude Code session (154 model calls, parallel calls, tool output up to
60 KB) at a ``--cc-window`` (16K) window, and the first ``--tau-runs`` (20) tau-bench runs at ``--tau-window`` (4K).
Each configuration replays the whole workload ``--repeat`` (3) times, configurations interleaved, and keeps its
fastest replay (the least disturbed by other load). Configurations:

- ``none``: no compaction middleware (what LangGraph itself costs per model call: the baseline);
- ``langchain``: ``SummarizationMiddleware(summary_model, trigger=("tokens", 0.8 window), keep=("tokens", 0.7
  window))``, the same ratios as chainsum's defaults, its other settings default (the summary input trimmed to
  4,000 tokens); its summary model is a fake chat model that counts its calls and the tokens of the prompts it gets
  (HeuristicCounter) and answers a fixed text at once;
- ``chainsum-state`` / ``chainsum-request``: ``ChainsumMiddleware(mode=..., context_window=window)``, default
  `ManagerConfig`, its summarizer a function counting calls and input tokens that answers the same fixed text.

Printed per configuration: the time spent inside the middleware's hooks per model call (``before_model`` and
``wrap_model_call`` less the model call it wraps; summarizer calls included, both summarizers instant), as a ratio
to LangChain's; the wall time per model call of the whole replay and its ratio to ``none`` (LangGraph writes the
whole state to the checkpointer at every step, so a compacted state also makes every later step cheaper);
summarizer calls and input tokens; and the requests the model received that were over the window (system prompt
and tool definitions counted, HeuristicCounter) or not valid for the provider (`chainsum.validate`, ``openai`` for
tau-bench, ``anthropic`` for Claude Code). Then, per chainsum configuration, where its time went: the phases of
`ContextManager.prepare` (`chainsum.manager.PhaseTimes`, passed to the middleware as ``profile=``) in milliseconds per
model call and their shares, and the part of the time in the middleware that `prepare` is (the rest is the
integration's own: reading LangChain messages, counting the tools, writing the state). Each chainsum target line
carries its model coverage (`phase_report.coverage_note` of the manager's events, ``on_event=``): of the text its
compactions summarized, the share its summarizer, a model to chainsum (not ``local``), read. Every figure is
measured in this run.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import AgentMiddleware, SummarizationMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from chainsum import validate
from chainsum.formats import load
from chainsum.formats.langchain import from_objects
from chainsum.integrations.langchain import ChainsumMiddleware
from chainsum.manager import ManagerEvent, PhaseTimes
from chainsum.testing import iter_documents
from chainsum.testing.langchain import LangChainScript, ScriptedChatModel, ScriptedTools, agent_script, stub_tools
from chainsum.tokens import HeuristicCounter
from phase_report import coverage_note, phase_lines, target_line

SUMMARY = (
    "The user is working through a multi-step task with the assistant. Earlier turns gathered the relevant records "
    "with tool calls, read their results, settled on an approach and started applying it; identifiers, paths and "
    "decisions from those turns are kept below where they matter. " * 3
)
"""What both summarizers answer: the same fixed text, so that only the middleware differs."""

COUNTER = HeuristicCounter()


@dataclass
class Workload:
    name: str
    script: LangChainScript
    window: int
    provider: str


@dataclass
class Tally:
    seconds: float = float("inf")
    """Wall time of the whole replay."""
    inside: float = float("inf")
    """Time spent inside the compaction middleware's hooks (the model call a ``wrap_model_call`` makes left out)."""
    calls: int = 0
    summarizer_calls: int = 0
    summarizer_tokens: int = 0
    over: int = 0
    invalid: int = 0
    profile: PhaseTimes | None = None
    """chainsum's `prepare` phases over the replay with the least time in the middleware (chainsum only)."""
    events: list[ManagerEvent] = field(default_factory=list[ManagerEvent])
    """chainsum's manager events over the replay (chainsum only): the model coverage printed beside the target."""


class CountingSummaryModel(ScriptedChatModel):
    """LangChain's summary model: counts calls and prompt tokens, answers `SUMMARY` at once."""

    prompt_tokens: int = 0

    def _next(self, messages: list[BaseMessage]) -> ChatResult:
        self.requests.append([])  # the count, without keeping the prompts
        self.prompt_tokens += sum(COUNTER.count_text(m.text) for m in messages)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(SUMMARY))])


@dataclass
class CountingSummarizer:
    """chainsum's summarizer: counts calls and transcript tokens, answers `SUMMARY` at once."""

    calls: int = 0
    tokens: int = 0

    def __call__(self, transcript: str) -> str:
        self.calls += 1
        self.tokens += COUNTER.count_text(transcript)
        return SUMMARY


def workloads(tau_runs: int, cc_window: int, tau_window: int) -> list[Workload]:
    out: list[Workload] = []
    for doc in iter_documents(include_subagents=False):
        if doc.label.startswith("tau-bench/") and sum(w.provider == "openai" for w in out) < tau_runs:
            out.append(Workload(doc.label, agent_script(load(doc.data, doc.format).messages), tau_window, "openai"))
        elif doc.label.startswith("claude-code/"):
            out.append(Workload(doc.label, agent_script(load(doc.data, doc.format).messages), cc_window, "anthropic"))
            break
    if not out:
        raise SystemExit("the shared corpora are not here (../shared/corpora or $CHAINSUM_CORPORA)")
    return out


Made = tuple[list[AgentMiddleware[Any, Any, Any]], Callable[[], tuple[int, int]]]
Factory = Callable[[Workload, PhaseTimes, list[ManagerEvent]], Made]
"""A configuration: its middleware for a workload (chainsum's managers filling the `PhaseTimes` and the list of
events), and how to read its summarizer calls and input tokens afterwards."""


def none(w: Workload, profile: PhaseTimes, events: list[ManagerEvent]) -> Made:
    return [], lambda: (0, 0)


def langchain(w: Workload, profile: PhaseTimes, events: list[ManagerEvent]) -> Made:
    summary_model = CountingSummaryModel()
    middleware = SummarizationMiddleware(
        summary_model, trigger=("tokens", int(0.8 * w.window)), keep=("tokens", int(0.7 * w.window))
    )
    return [middleware], lambda: (len(summary_model.requests), summary_model.prompt_tokens)


def chainsum(mode: Literal["state", "request"]) -> Factory:
    def make(w: Workload, profile: PhaseTimes, events: list[ManagerEvent]) -> Made:
        summarizer = CountingSummarizer()
        middleware = ChainsumMiddleware(
            mode=mode,
            context_window=w.window,
            provider=w.provider,
            summarizers=[summarizer],  # type: ignore[arg-type]
            profile=profile,  # every thread's manager fills it (one thread at a time here)
            on_event=events.append,
        )
        return [middleware], lambda: (summarizer.calls, summarizer.tokens)

    return make


class Clock:
    """Seconds spent inside hooks: each hook of a middleware is wrapped on the instance (LangChain decides which hooks
    a middleware has from its class, and calls them through the instance), the handler's time taken out."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, middleware: AgentMiddleware[Any, Any, Any]) -> None:
        middleware.before_model = self._plain(middleware.before_model)  # type: ignore[method-assign]
        middleware.wrap_model_call = self._around(middleware.wrap_model_call)  # type: ignore[method-assign]

    def _plain(self, hook: Callable[..., Any]) -> Callable[..., Any]:
        def timed(state: Any, runtime: Any) -> Any:  # LangGraph passes `runtime` to a hook that names it
            start = time.perf_counter()
            try:
                return hook(state, runtime)
            finally:
                self.seconds += time.perf_counter() - start

        return timed

    def _around(self, hook: Callable[..., Any]) -> Callable[..., Any]:
        def timed(request: Any, handler: Callable[[Any], Any]) -> Any:
            inner = 0.0

            def call(r: Any) -> Any:
                nonlocal inner
                start = time.perf_counter()
                try:
                    return handler(r)
                finally:
                    inner += time.perf_counter() - start

            start = time.perf_counter()
            try:
                return hook(request, call)
            finally:
                self.seconds += time.perf_counter() - start - inner

        return timed


def replay(work: list[Workload], factory: Factory, check: bool) -> Tally:
    tally = Tally(seconds=0.0, inside=0.0, profile=PhaseTimes())
    assert tally.profile is not None
    for w in work:
        middleware, counts = factory(w, tally.profile, tally.events)
        clock = Clock()
        for m in middleware:
            clock.wrap(m)
        model = ScriptedChatModel(responses=w.script.responses)
        agent = create_agent(
            model,
            tools=stub_tools(w.script.tool_names),
            system_prompt=w.script.system,
            middleware=[*middleware, ScriptedTools(w.script.results)],
            checkpointer=InMemorySaver(),
        )
        config: RunnableConfig = {"configurable": {"thread_id": w.name}}
        gc.collect()
        start = time.perf_counter()
        for turn in w.script.turns:
            agent.invoke({"messages": [HumanMessage(turn.user)]}, config)  # pyright: ignore[reportUnknownMemberType]
        tally.seconds += time.perf_counter() - start
        tally.inside += clock.seconds
        tally.calls += len(model.requests)
        calls, tokens = counts()
        tally.summarizer_calls += calls
        tally.summarizer_tokens += tokens
        if check:
            tools = sum(
                COUNTER.count_text(json.dumps(convert_to_openai_tool(t), ensure_ascii=False)) for t in model.tools
            )
            for request in model.requests:
                messages = from_objects(request)
                tally.over += COUNTER.count_messages(messages) + tools > w.window
                tally.invalid += bool(validate(messages, w.provider))
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tau-runs", type=int, default=20, help="tau-bench runs replayed")
    parser.add_argument("--cc-window", type=int, default=16_000, help="context window for the Claude Code session")
    parser.add_argument("--tau-window", type=int, default=4_000, help="context window for the tau-bench runs")
    parser.add_argument("--repeat", type=int, default=3, help="replays per configuration; the fastest is kept")
    args = parser.parse_args()
    work = workloads(args.tau_runs, args.cc_window, args.tau_window)
    configs: dict[str, Factory] = {
        "none": none,
        "langchain": langchain,
        "chainsum-state": chainsum("state"),
        "chainsum-request": chainsum("request"),
    }
    best: dict[str, Tally] = {}
    for k in range(args.repeat):
        for name, factory in configs.items():
            tally = replay(work, factory, check=k == 0)
            if name not in best:
                best[name] = tally
            else:
                if tally.inside < best[name].inside:
                    best[name].profile = tally.profile
                best[name].seconds = min(best[name].seconds, tally.seconds)
                best[name].inside = min(best[name].inside, tally.inside)
    sessions = ", ".join(f"{w.name.split('#')[0]} ({w.window} window)" for w in work[:1] + work[-1:])
    print(f"workload: {len(work)} sessions ({sessions}), {best['none'].calls} model calls, fastest of {args.repeat}")
    lc = best["langchain"].inside / best["langchain"].calls
    base = best["none"].seconds / best["none"].calls
    print(
        f"{'configuration':17} {'in middleware':>13} {'vs LangChain':>12} {'wall/call':>9} {'vs none':>8}"
        f" {'summ. calls':>11} {'summ. input tokens':>18} {'over window':>11} {'invalid':>7}"
    )
    for name, t in best.items():
        inside = t.inside / t.calls
        wall = t.seconds / t.calls
        ratio = f"{inside / lc:.2f}x" if name != "none" and lc > 0 else "-"
        print(
            f"{name:17} {inside * 1e3:10.2f} ms {ratio:>12} {wall * 1e3:6.2f} ms {wall / base:7.2f}x"
            f" {t.summarizer_calls:11d} {t.summarizer_tokens:18,d} {t.over:11d} {t.invalid:7d}"
        )
    for name in ("chainsum-state", "chainsum-request"):
        t = best[name]
        if lc > 0:
            print(
                target_line(
                    t.inside / t.calls / lc,
                    "SummarizationMiddleware",
                    ours=name,
                    what="time in the middleware",
                    coverage=coverage_note(t.events),  # the first replay's: every replay does the same work
                )
            )
    for name, t in best.items():
        if t.profile is None or not t.profile.calls:
            continue
        share = t.profile.seconds / t.inside if t.inside else 0.0
        print(
            f"\n{name}: where chainsum's time went (its replay with the least time in the middleware): "
            f"{t.profile.calls} prepare calls, {share:.0%} of the time in the middleware"
        )
        print(phase_lines(t.profile, per=t.calls, label="model call"))


if __name__ == "__main__":
    main()
