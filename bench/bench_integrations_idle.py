"""Per-request cost with nothing to compact, at 500 messages, in every integration, against each framework's own
manager in the same run (issue 23's target: at most 0.1 ms per request in every integration).

Run: ``uv run python bench/bench_integrations_idle.py`` (``--messages``, ``--requests``, ``--repeat``).

The history: the two Claude Code sessions of the shared corpora, one after the other (741 messages, parallel tool
calls, tool output up to 60 KB), written once as each framework's own objects (LangChain messages with ids, as
LangGraph's ``add_messages`` gives them; pydantic-ai ``ModelRequest`` / ``ModelResponse``; Strands' Bedrock dicts;
OpenAI Responses items). Each integration first gets the first ``--messages`` objects (that first request converts
everything and is not timed), then ``--requests`` requests, each with the next two objects appended (a model call
and its tool result, as an agent's loop adds them), the very objects of the request before plus the new ones. The
window is 10 million tokens, so nothing is ever compacted: what is timed is what a request costs when there is
nothing to do. Per request, CPU time (``process_time``: what the code costs, not what else the machine runs):

- LangChain, ``ChainsumMiddleware`` state mode (the default): ``before_model`` then ``wrap_model_call`` (the model
  call it wraps is a no-op), 3 tools bound; request mode: ``wrap_model_call`` alone. Its own: LangChain's
  ``SummarizationMiddleware.before_model`` (trigger far above the history, so it only counts).
- Strands, ``ChainsumConversationManager``: its ``BeforeModelCallEvent`` hook and its request middleware, 3 tools.
  Its own: ``SummarizingConversationManager(proactive_compression=True)``'s hook, given the projected tokens Strands
  estimates for every manager (the estimate itself is Strands' loop's, not timed).
- pydantic-ai, ``ChainsumHistory``: its tool count and `ChainsumHistory.process` (what ``ChainsumCapability`` does).
  Its own: the documented ``keep_recent_messages`` processor (the last 21 messages), which does nothing else.
- OpenAI Agents SDK, ``ChainsumInputFilter`` (the ``call_model_input_filter``): the SDK has no such filter of its
  own (none: 0). ``ChainsumSession.get_items`` over an in-memory ``SQLiteSession``, against that
  ``SQLiteSession``'s own ``get_items`` (both read the stored items from SQLite).

Each variant starts with the heuristic counter's shared memo of text shapes empty (see `timed`), so the new
objects' texts are counted as a session counts them, not looked up. Printed per integration: microseconds per
request (mean, and median request; best of ``--repeat`` rounds, the variants taking turns), chainsum's
`ContextManager.prepare` part (CPU time too) and the rest (the integration's own reading, counting and writing), the
framework's own manager's time, and the ratio. Every figure is measured in this run.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from chainsum.formats import dump, load
from chainsum.manager import ContextManager
from chainsum.messages import Message
from chainsum.testing import iter_documents
from chainsum.tokens import HeuristicCounter

WINDOW = 10_000_000

Step = Callable[[int], Awaitable[None]]
"""One request of a variant: its history is the first n objects."""


class PrepareClock:
    """CPU seconds spent in a manager's `prepare` / `prepare_sync` (wrapped on the instance; the same clock as the
    request's total, so that the rest is the integration's own)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def watch(self, manager: ContextManager) -> None:
        run, run_sync = manager.prepare, manager.prepare_sync

        async def prepare(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return await run(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - start

        def prepare_sync(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return run_sync(*args, **kwargs)
            finally:
                self.seconds += time.process_time() - start

        manager.prepare = prepare  # type: ignore[method-assign]
        manager.prepare_sync = prepare_sync  # type: ignore[method-assign]


@dataclass
class Timing:
    seconds: list[float] = field(default_factory=list[float])
    """Per request, of the round with the least mean."""
    prepare: float = 0.0
    """Seconds in `prepare` over that round (chainsum only)."""

    @property
    def mean_us(self) -> float:
        return sum(self.seconds) / len(self.seconds) * 1e6 if self.seconds else 0.0


def history() -> list[Message]:
    out: list[Message] = []
    for doc in iter_documents(include_subagents=False):
        if doc.label.startswith("claude-code/"):
            out.extend(m for m in load(doc.data, doc.format).messages if m.role != "system")
    if not out:
        raise SystemExit("the shared corpora are not here (../shared/corpora or $CHAINSUM_CORPORA)")
    return out


async def timed(make: Callable[[PrepareClock], Step], start: int, requests: int) -> tuple[list[float], float]:
    """A fresh variant: its first request (start objects, untimed), then `requests` timed ones of two more each.

    The heuristic counter's memo of long texts' shapes is shared by every counter in the process, so a variant run
    after another (or a round after the first) would find the timed requests' texts counted already and time a
    lookup where a session counts a new tool output: it is emptied first, as a new process has it."""
    HeuristicCounter().clear_cache()
    profile = PrepareClock()
    step = make(profile)
    await step(start)
    profile.seconds = 0.0
    out: list[float] = []
    gc.collect()
    for r in range(1, requests + 1):
        begin = time.process_time()
        await step(start + 2 * r)
        out.append(time.process_time() - begin)
    return out, profile.seconds


# --- LangChain ---------------------------------------------------------------------------------------------------


def langchain_variants(messages: Sequence[Message]) -> dict[str, Callable[[PrepareClock], Step]]:
    from langchain.agents.middleware import ModelRequest, SummarizationMiddleware
    from langchain_core.messages import SystemMessage

    from chainsum.formats.langchain import to_objects
    from chainsum.integrations.langchain import ChainsumMiddleware
    from chainsum.testing.langchain import ScriptedChatModel, stub_tools

    objects = to_objects(list(messages))
    for o in objects:
        o.id = str(uuid.uuid4())  # as LangGraph's add_messages gives them
    model = ScriptedChatModel(responses=[])
    tools: list[Any] = list(stub_tools(["read", "edit", "bash"]))
    system = SystemMessage("You are a coding agent.")

    def request(n: int) -> Any:
        return ModelRequest(model=model, messages=list(objects[:n]), system_message=system, tools=tools)

    def chainsum(mode: Any) -> Callable[[PrepareClock], Step]:
        def make(profile: PrepareClock) -> Step:
            mw = ChainsumMiddleware(mode=mode, context_window=WINDOW, provider="anthropic")
            profile.watch(mw.manager_for(None))

            async def step(n: int) -> None:
                state: Any = {"messages": list(objects[:n])}
                if mode == "state":
                    mw.before_model(state, None)  # type: ignore[arg-type]
                mw.wrap_model_call(request(n), lambda r: None)  # type: ignore[arg-type, return-value]

            return step

        return make

    def own(profile: PrepareClock) -> Step:
        mw = SummarizationMiddleware(model, trigger=("tokens", WINDOW), keep=("tokens", WINDOW // 2))

        async def step(n: int) -> None:
            state: Any = {"messages": list(objects[:n])}
            mw.before_model(state, None)  # type: ignore[arg-type]

        return step

    return {"chainsum state": chainsum("state"), "chainsum request": chainsum("request"), "own": own}


# --- Strands -----------------------------------------------------------------------------------------------------


def strands_variants(messages: Sequence[Message]) -> dict[str, Callable[[PrepareClock], Step]]:
    from strands import Agent
    from strands import tool as strands_tool  # pyright: ignore[reportUnknownVariableType]

    tool: Any = strands_tool  # pyright: ignore[reportUnknownVariableType]
    from strands.agent.conversation_manager import ConversationManager, SummarizingConversationManager
    from strands.hooks import BeforeModelCallEvent
    from strands.middleware import InvokeModelContext

    from chainsum.integrations.strands import ChainsumConversationManager
    from chainsum.testing.strands import CannedModel

    wire: Any = dump(list(messages), to="bedrock")
    items = cast(list[Any], wire["messages"] if isinstance(wire, dict) else wire)

    @tool
    def read(path: str) -> str:
        """Read a file."""
        return path

    @tool
    def edit(path: str, old: str, new: str) -> str:
        """Replace text in a file."""
        return path

    @tool
    def bash(command: str) -> str:
        """Run a shell command."""
        return command

    def agent_with(manager: ConversationManager, n: int) -> Any:
        model = CannedModel(lambda _: {"role": "assistant", "content": [{"text": "ok"}]})
        return Agent(model=model, tools=[read, edit, bash], system_prompt="You are a coding agent.",
                     conversation_manager=manager, messages=list(items[:n]), callback_handler=None)  # fmt: skip

    def chainsum(profile: PrepareClock) -> Step:
        cm = ChainsumConversationManager(context_window=WINDOW)
        profile.watch(cm.manager)
        agent: Any = None

        async def step(n: int) -> None:
            nonlocal agent
            if agent is None:
                agent = agent_with(cm, n)
            else:
                agent.messages.extend(items[len(agent.messages) : n])
            await cm._before_model_call(BeforeModelCallEvent(agent=agent))  # pyright: ignore[reportPrivateUsage]
            context = InvokeModelContext(
                agent=agent,
                messages=agent.messages,
                system_prompt=agent.system_prompt,
                tool_specs=[],
                tool_choice=None,
                invocation_state={},
                model=agent.model,
            )
            cm._request(context)  # pyright: ignore[reportPrivateUsage]

        return step

    def own(profile: PrepareClock) -> Step:
        cm = SummarizingConversationManager(proactive_compression=True)
        agent: Any = None

        async def step(n: int) -> None:
            nonlocal agent
            if agent is None:
                agent = agent_with(cm, n)
            else:
                agent.messages.extend(items[len(agent.messages) : n])
            event = BeforeModelCallEvent(agent=agent, projected_input_tokens=50_000)
            cm._on_before_model_call_threshold(event)  # pyright: ignore[reportPrivateUsage]

        return step

    return {"chainsum": chainsum, "own": own}


# --- pydantic-ai -------------------------------------------------------------------------------------------------


def pydantic_ai_variants(messages: Sequence[Message]) -> dict[str, Callable[[PrepareClock], Step]]:
    from pydantic_ai.tools import ToolDefinition

    from chainsum.formats import pydantic_ai as wire
    from chainsum.integrations.pydantic_ai import ChainsumHistory

    objects = wire.dump_messages(list(messages))
    schema: dict[str, Any] = {"type": "object", "properties": {"path": {"type": "string"}}}
    tools = [ToolDefinition(name=n, description=f"The {n} tool.", parameters_json_schema=schema)
             for n in ("read", "edit", "bash")]  # fmt: skip

    def chainsum(profile: PrepareClock) -> Step:
        history = ChainsumHistory(context_window=WINDOW)
        profile.watch(history.manager)

        async def step(n: int) -> None:
            reserved = history.tool_tokens(tools)
            await history.process(list(objects[:n]), system="You are a coding agent.", reserved_tokens=reserved)

        return step

    def own(profile: PrepareClock) -> Step:
        async def keep_recent_messages(messages: list[Any]) -> list[Any]:
            return messages[-21:] if len(messages) > 21 else messages

        async def step(n: int) -> None:
            await keep_recent_messages(list(objects[:n]))

        return step

    return {"chainsum": chainsum, "own": own}


# --- OpenAI Agents SDK ---------------------------------------------------------------------------------------------


def openai_agents_variants(messages: Sequence[Message]) -> dict[str, Callable[[PrepareClock], Step]]:
    from agents import Agent, SQLiteSession
    from agents.run_config import CallModelData, ModelInputData

    from chainsum.integrations.openai_agents import ChainsumInputFilter, ChainsumSession

    wire: Any = dump(list(messages), to="openai-responses")
    items = cast(list[Any], wire["input"] if isinstance(wire, dict) else wire)
    agent: Any = Agent(name="agent", instructions="You are a coding agent.")

    def filter_(profile: PrepareClock) -> Step:
        f = ChainsumInputFilter(context_window=WINDOW)
        profile.watch(f.manager)

        async def step(n: int) -> None:
            data: Any = CallModelData(ModelInputData(list(items[:n]), "You are a coding agent."), agent, None)
            await f(data)

        return step

    def session(profile: PrepareClock) -> Step:
        s = ChainsumSession("bench", context_window=WINDOW, instructions="You are a coding agent.")
        profile.watch(s.manager)
        held = 0

        async def step(n: int) -> None:
            nonlocal held
            await s.underlying_session.add_items(items[held:n])
            held = n
            await s.get_items()

        return step

    def own(profile: PrepareClock) -> Step:
        s = SQLiteSession("bench")
        held = 0

        async def step(n: int) -> None:
            nonlocal held
            await s.add_items(items[held:n])
            held = n
            await s.get_items()

        return step

    return {"chainsum filter": filter_, "chainsum session": session, "own session": own}


TARGET_US = 100.0
"""Issue 23's target: at most 0.1 ms of CPU a request with nothing to compact, at 500 messages, in every integration."""

FRAMEWORKS = {
    "langchain": langchain_variants,
    "strands": strands_variants,
    "pydantic-ai": pydantic_ai_variants,
    "openai-agents": openai_agents_variants,
}


async def main_async(args: argparse.Namespace) -> None:
    messages = history()
    if args.messages + 2 * args.requests > len(messages):
        raise SystemExit(f"--messages + 2 x --requests is over the {len(messages)} messages of the history")
    print(
        f"{args.messages} messages then {args.requests} requests of 2 more each, nothing to compact"
        f" (window {WINDOW:,}), best of {args.repeat} rounds; microseconds of CPU time per request"
    )
    print(f"{'integration':14} {'variant':17} {'mean':>8} {'median':>8} {'prepare':>8} {'rest':>8} {'vs own':>8}")
    for name, variants_of in FRAMEWORKS.items():
        if args.only and name not in args.only:
            continue
        variants = variants_of(messages)
        best: dict[str, Timing] = {}
        for _ in range(args.repeat):
            for label, make in variants.items():
                seconds, prepare = await timed(make, args.messages, args.requests)
                t = best.setdefault(label, Timing())
                if not t.seconds or sum(seconds) < sum(t.seconds):
                    t.seconds, t.prepare = seconds, prepare
        own = next((t for label, t in best.items() if label.startswith("own")), None)
        for label, t in best.items():
            per = len(t.seconds)
            prepare = t.prepare / per * 1e6
            ratio = f"{t.mean_us / own.mean_us:.1f}x" if own is not None and own is not t and own.mean_us else "-"
            shown = label.startswith("chainsum")
            print(
                f"{name:14} {label:17} {t.mean_us:8.1f} {statistics.median(t.seconds) * 1e6:8.1f}"
                f" {(f'{prepare:8.1f}' if shown else '-'):>8} {(f'{t.mean_us - prepare:8.1f}' if shown else '-'):>8}"
                f" {ratio:>8}"
            )
        for label, t in best.items():
            if label.startswith("chainsum"):
                verdict = "met" if t.mean_us <= TARGET_US else "NOT met"
                print(f"{'':14} target: {label} <= {TARGET_US:.0f} us a request: {t.mean_us:.1f} us, {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=500, help="objects in the history before the timed requests")
    parser.add_argument("--requests", type=int, default=100, help="timed requests (two objects added by each)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; each variant's best round is kept")
    parser.add_argument("--only", nargs="*", choices=sorted(FRAMEWORKS), help="these integrations only")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
