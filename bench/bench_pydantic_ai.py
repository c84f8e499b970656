"""pydantic-ai integration benchmark: chainsum's history processor against pydantic-ai's own documented ways of
bounding a history, on the same agent runs.

Run: ``uv run python bench/bench_pydantic_ai.py`` (``--repeat``, ``--tau``, ``--keep``, windows: see ``--help``).
Every figure is measured in this run; ratios are between variants of this run.

pydantic-ai 2.68 ships no compaction that runs offline or with any model: ``OpenAICompaction`` is OpenAI's
server-side compaction (the Responses API's ``context_management``, or its ``/responses/compact`` endpoint) and
``AnthropicCompaction`` Anthropic's (its ``context_management`` edits); both need the provider's servers and its
models, and a stub standing in for the server would measure the stub. Its documentation's way is a history
processor, given two examples, measured here as the framework's approach:

- ``keep-last``: the documented ``keep_recent_messages`` (the last messages only), with ``--keep`` messages (21:
  odd like the example's 5, so a cut may land on a request of tool returns, as in pydantic-ai issue #2050);
- ``docs-summarize``: the documented ``summarize_old_messages`` (more than ten messages: the oldest ten become a
  summary, followed by the newest message), its summarizer agent replaced by chainsum's extractive summarizer on a
  transcript of those ten (counted the same way as chainsum's);
- ``none``: no processor (the whole history every time): the reference for pydantic-ai's own cost per call;
- ``chainsum``: ``ProcessHistory(ChainsumHistory(...))``, the extractive summarizer (counted), a `MemoryArchive`.

The agent (`chainsum.testing.pydantic_ai.Replay`) replays two corpus sessions with pydantic-ai's `FunctionModel`
answering instantly (so what is timed is pydantic-ai, the processor and the tools, never a model): ``--tau``
tau-bench airline runs one after another at ``--tau-window`` tokens, and the first Claude Code session (parallel
calls, signed thinking) at ``--cc-window``.

Printed per session and variant: model calls; milliseconds per model call (best of ``--repeat`` replays, the
variants taking turns; the whole replay divided by its model calls), the milliseconds of it spent inside the
processor (mean, compactions included, and the median call); summarizer calls and their input tokens; what the
model received (counted afterwards with `HeuristicCounter`: messages, instructions and tool definitions): input
tokens summed over the requests, the largest request, requests over the window; and what went wrong silently:
requests whose history breaks the provider's rules (`chainsum.rules`, Anthropic for the Claude Code session, OpenAI
for tau-bench), tool results a processor cut from their call (orphans, which pydantic-ai drops before sending), and
"interrupted" stand-ins pydantic-ai wrote for calls left without a result. Then the ratio chainsum / keep-last of the
milliseconds per model call, of the processor's own milliseconds, and of the input tokens; and where chainsum's time
went: the phases of `ContextManager.prepare` (`chainsum.manager.PhaseTimes`, passed as ``profile=``) in milliseconds
per model call and their shares, the summarizer's own time apart, and the part of the processor's time they are
(the rest is the integration's own: reading pydantic-ai messages, counting tools, writing its output). The target
line carries chainsum's model coverage (`phase_report.coverage_note` of the manager's events, ``on_event=``): with
the extractive summarizer, no model is configured, and it says so.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart

from chainsum.formats import load
from chainsum.formats import pydantic_ai as wire
from chainsum.integrations.pydantic_ai import ChainsumHistory
from chainsum.manager import CountingSummarizer, ManagerEvent, PhaseTimes
from chainsum.messages import Message
from chainsum.rules import validate
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer, render_transcript
from chainsum.testing import iter_documents
from chainsum.testing.pydantic_ai import INSTRUCTIONS, Replay, orphans, stand_ins
from chainsum.tokens import HeuristicCounter
from phase_report import coverage_note, replay_breakdown, target_line

VARIANTS = ("none", "keep-last", "docs-summarize", "chainsum")


@dataclass
class Session:
    name: str
    messages: tuple[Message, ...]
    window: int
    provider: str
    system: str | None = None


@dataclass
class Result:
    calls: int = 0
    seconds: float = float("inf")
    processor_seconds: float = float("inf")
    processor_median: float = 0.0
    summarizer_calls: int = 0
    summarizer_tokens: int = 0
    input_tokens: int = 0
    largest: int = 0
    over: int = 0
    invalid: int = 0
    orphaned: int = 0
    made_up: int = 0
    profile: PhaseTimes | None = None
    """chainsum's `prepare` phases over the replay (chainsum only)."""
    summarizer_s: float = 0.0
    events: list[ManagerEvent] = field(default_factory=list[ManagerEvent])
    """chainsum's manager events over the replay (chainsum only): its model coverage."""


def sessions(tau: int, tau_window: int, cc_window: int) -> list[Session]:
    found = (d for d in iter_documents(include_subagents=False) if d.label.startswith("tau-bench/"))
    runs = [load(d.data, d.format).messages for d in itertools.islice(found, tau)]
    system = next(m.text for m in runs[0] if m.role == "system")
    out = [Session("tau-bench", tuple(m for r in runs for m in r if m.role != "system"), tau_window, "openai", system)]
    claude = next(d for d in iter_documents(include_subagents=False) if d.label.startswith("claude-code/"))
    out.append(Session("claude-code", load(claude.data, claude.format).messages, cc_window, "anthropic"))
    return out


class Timed:
    """A processor wrapped to add up the time spent inside it, and to count the tool results its output holds
    without their call (counted after the clock stops)."""

    def __init__(self, inner: Callable[..., Any], *, takes_ctx: bool) -> None:
        self.inner = inner
        self.takes_ctx = takes_ctx
        self.seconds = 0.0
        self.each: list[float] = []
        self.orphaned = 0

    async def __call__(self, ctx: RunContext[None], messages: list[ModelMessage]) -> list[ModelMessage]:
        start = time.perf_counter()
        out: Any = self.inner(ctx, messages) if self.takes_ctx else self.inner(messages)
        if asyncio.iscoroutine(out):
            out = await out
        self.each.append(time.perf_counter() - start)
        self.seconds += self.each[-1]
        self.orphaned += len(orphans(out))
        return out


def keep_recent(n: int) -> Callable[[list[ModelMessage]], list[ModelMessage]]:
    """pydantic-ai's documented ``keep_recent_messages`` (its example keeps 5)."""

    def keep_recent_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
        return messages[-n:] if len(messages) > n else messages

    return keep_recent_messages


def docs_summarize(summarizer: CountingSummarizer) -> Callable[[list[ModelMessage]], Any]:
    """pydantic-ai's documented ``summarize_old_messages``, the summarizer agent's answer made by `summarizer`."""

    async def summarize_old_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
        if len(messages) > 10:
            oldest = messages[:10]
            summary = str(await summarizer(render_transcript(wire.load_messages(oldest))))
            asked = ModelRequest(parts=[UserPromptPart("Summarize this conversation.")])
            return [asked, ModelResponse(parts=[TextPart(summary)]), *messages[-1:]]
        return messages

    return summarize_old_messages


def run_variant(session: Session, variant: str, keep: int) -> Result:
    counter = HeuristicCounter()
    summarizer = CountingSummarizer(ExtractiveSummarizer(), counter)
    processor: Timed | None = None
    profile = PhaseTimes()
    events: list[ManagerEvent] = []
    if variant == "chainsum":
        history = ChainsumHistory(
            context_window=session.window,
            summarizers=[summarizer],
            archive=MemoryArchive(),
            provider=session.provider,
            profile=profile,
            on_event=events.append,
        )
        processor = Timed(history, takes_ctx=True)
    elif variant == "keep-last":
        processor = Timed(keep_recent(keep), takes_ctx=False)
    elif variant == "docs-summarize":
        processor = Timed(docs_summarize(summarizer), takes_ctx=False)
    replay = Replay(session.messages)
    capabilities = [ProcessHistory(processor)] if processor is not None else []
    agent = Agent(  # pyright: ignore[reportCallIssue, reportUnknownVariableType, reportArgumentType]
        replay.model(),
        instructions=None if session.system else INSTRUCTIONS,
        system_prompt=session.system or (),
        tools=replay.tools(),
        capabilities=capabilities,
    )
    start = time.perf_counter()
    replay.run(agent)
    seconds = time.perf_counter() - start
    result = Result(calls=len(replay.received), seconds=seconds, events=events)
    result.processor_seconds = processor.seconds if processor is not None else 0.0
    result.orphaned = processor.orphaned if processor is not None else 0
    result.processor_median = statistics.median(processor.each) if processor is not None else 0.0
    result.summarizer_calls, result.summarizer_tokens = summarizer.calls, summarizer.input_tokens
    if profile.calls:
        result.profile, result.summarizer_s = profile, summarizer.seconds
    seen: dict[int, tuple[ModelMessage, tuple[Message, ...]]] = {}
    tools: dict[str, int] = {}
    for received in replay.received:
        canonical: list[Message] = []
        for m in received.messages:
            hit = seen.get(id(m))
            if hit is None or hit[0] is not m:
                hit = seen[id(m)] = (m, wire.load_messages([m]))
            canonical.extend(hit[1])
        tokens = counter.count_messages(canonical) + counter.count_text(received.instructions or "")
        for tool in received.tools:
            if tool.name not in tools:
                tools[tool.name] = counter.count_text(f"{tool.name} {tool.description} {tool.parameters_json_schema}")
            tokens += tools[tool.name]
        result.input_tokens += tokens
        result.largest = max(result.largest, tokens)
        result.over += tokens > session.window
        result.invalid += bool(validate(canonical, session.provider))
        result.made_up += len(stand_ins(received.messages))
    return result


def warm_up(session: Session, keep: int) -> None:
    """One untimed pass of each variant over a few runs: first uses build pydantic's serializers for the message
    types and import what a first compaction needs (half a second, once per process, not per call)."""
    short = Session(session.name, session.messages[:60], 2_000, session.provider, session.system)
    for variant in VARIANTS:
        run_variant(short, variant, keep)


def measure(session: Session, repeat: int, keep: int) -> dict[str, Result]:
    best: dict[str, Result] = {}
    for r in range(repeat):
        order = VARIANTS[r % len(VARIANTS) :] + VARIANTS[: r % len(VARIANTS)]  # each variant takes its turn first
        for variant in order:
            result = run_variant(session, variant, keep)
            if variant not in best or result.seconds < best[variant].seconds:
                best[variant] = result
    return best


def _print(session: Session, results: dict[str, Result]) -> None:
    print(f"\n{session.name}: {len(session.messages)} recorded messages, window {session.window:,} tokens")
    head = ("variant", "calls", "ms/call", "in proc", "median in proc", "summ. calls", "summ. input",
            "input tokens", "largest", "over", "invalid", "orphaned", "stand-ins")  # fmt: skip
    print(" | ".join(head))
    for variant in VARIANTS:
        r = results[variant]
        print(
            f"{variant} | {r.calls} | {1000 * r.seconds / r.calls:.1f} | {1000 * r.processor_seconds / r.calls:.2f} | "
            f"{1000 * r.processor_median:.3f} | "
            f"{r.summarizer_calls} | {r.summarizer_tokens:,} | {r.input_tokens:,} | {r.largest:,} | {r.over} | "
            f"{r.invalid} | {r.orphaned} | {r.made_up}"
        )
    c, k = results["chainsum"], results["keep-last"]
    print(
        f"chainsum / keep-last: {c.seconds / c.calls / (k.seconds / k.calls):.2f}x ms per model call, "
        f"processor time {1000 * c.processor_seconds / c.calls:.2f} vs {1000 * k.processor_seconds / k.calls:.3f} ms "
        f"per call, {c.input_tokens / k.input_tokens:.2f}x input tokens"
    )
    peers = {v: results[v].seconds / results[v].calls for v in ("keep-last", "docs-summarize")}
    fastest = min(peers, key=lambda v: peers[v])
    what = "wall time per model call"
    print(target_line(c.seconds / c.calls / peers[fastest], fastest, what=what, coverage=coverage_note(c.events)))
    if c.profile is not None:
        print(
            replay_breakdown(
                c.profile,
                calls=c.calls,
                inside_seconds=c.processor_seconds,
                where="the processor",
                summarizer_s=c.summarizer_s,
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="replays per variant (best time kept)")
    parser.add_argument("--tau", type=int, default=14, help="tau-bench runs replayed one after another")
    parser.add_argument("--tau-window", type=int, default=6_000, help="context window for the tau-bench session")
    parser.add_argument("--cc-window", type=int, default=16_000, help="context window for the Claude Code session")
    parser.add_argument("--keep", type=int, default=21, help="messages keep-last keeps (pydantic-ai's example: 5)")
    args = parser.parse_args()
    logging.getLogger("chainsum").setLevel(logging.ERROR)  # over-window warnings are counted, not printed
    started = time.perf_counter()
    found = sessions(args.tau, args.tau_window, args.cc_window)
    warm_up(found[0], args.keep)
    for session in found:
        results = measure(session, args.repeat, args.keep)
        _print(session, results)
    print(f"\n{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
