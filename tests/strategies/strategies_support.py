"""Doubles for the executor and strategy tests: a transparent token counter, a scripted summarizer that measures
its own concurrency, and a strategy that returns fixed plans."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from chainsum.errors import SummarizerError
from chainsum.messages import Message, Text, ToolCall, ToolResult
from chainsum.strategies import Plan, PlanContext


class CharCounter:
    """Tokens = characters / 4 (rounded up) + 4 per message: easy to reason about in exact-plan tests."""

    name = "chars"

    def count_text(self, text: str) -> int:
        return (len(text) + 3) // 4

    def count_message(self, message: Message) -> int:
        total = 4
        for p in message.parts:
            if isinstance(p, Text):
                total += self.count_text(p.text)
            elif isinstance(p, ToolCall):
                total += self.count_text(p.name + p.arguments)
            elif isinstance(p, ToolResult):
                total += self.count_text(p.text)
        return total

    def count_messages(self, messages: Sequence[Message]) -> int:
        return sum(self.count_message(m) for m in messages)


@dataclass
class Scripted:
    """Returns ``summary #n`` (n = call number); fails for transcripts containing any of `fail_on`; records the
    transcripts and the most calls in flight at once (each call yields to the loop `yields` times)."""

    fail_on: tuple[str, ...] = ()
    yields: int = 3
    latency: float = 0.0
    calls: list[str] = field(default_factory=list[str])
    in_flight: int = 0
    max_in_flight: int = 0

    async def __call__(self, transcript: str) -> str:
        self.calls.append(transcript)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            for _ in range(self.yields):
                await asyncio.sleep(0)
            if self.latency:
                await asyncio.sleep(self.latency)
            if any(marker in transcript for marker in self.fail_on):
                raise SummarizerError("scripted failure", kind="rate_limit")
            return f"summary #{len(self.calls)}"
        finally:
            self.in_flight -= 1


def fixed_summary(transcript: str) -> str:
    """A deterministic sync summarizer: a short digest of the transcript's length."""
    return f"summary of {len(transcript)} characters"


@dataclass(frozen=True)
class FixedPlan:
    """A strategy that returns `plan` in round 0 and nothing afterwards."""

    plan_: Plan
    name: str = "fixed"

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        return self.plan_ if ctx.round == 0 else Plan(note="done")


def call(cid: str, name: str = "read_file", args: str = '{"path": "a.py"}') -> ToolCall:
    return ToolCall(id=cid, name=name, arguments=args)


def tool(cid: str, content: str, name: str = "read_file") -> Message:
    return Message(role="tool", parts=(ToolResult(call_id=cid, name=name, content=content),))


def agent_history(steps: int, output: int = 400, *, system: bool = True) -> list[Message]:
    """system, user, then `steps` tool-using assistant steps with `output`-character results, then an answer."""
    out: list[Message] = [Message.of("system", "You are a coding agent.")] if system else []
    out.append(Message.of("user", "Fix the bug."))
    for k in range(steps):
        cid = f"call_{k}"
        out.append(Message(role="assistant", parts=(Text(text=f"step {k}"), call(cid, args=f'{{"path": "f{k}.py"}}'))))
        out.append(tool(cid, f"output {k} " + "x" * output))
    out.append(Message.of("assistant", "Done."))
    return out


def chat_history(turns: int, size: int = 200) -> list[Message]:
    out = [Message.of("system", "Be brief.")]
    for k in range(turns):
        out.append(Message.of("user", f"question {k}?"))
        out.append(Message.of("assistant", f"answer {k} " + "a" * size))
    return out
