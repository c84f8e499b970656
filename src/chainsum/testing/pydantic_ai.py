"""pydantic-ai test doubles: a recorded conversation replayed by a real agent, and checks on what its model got.

`Replay` turns canonical messages (a corpus session, from any format chainsum reads) into what a pydantic-ai agent
does, the way pydantic-ai tests itself: each user message starts ``agent.run(prompt, message_history=...)``; a
`FunctionModel` answers with the recorded assistant messages in order (text, thinking with its signature, tool
calls with their recorded ids, parallel calls included); one tool per recorded tool name returns the recorded output
for the call id it runs for. A recorded assistant message without tool calls ends pydantic-ai's run, so the
recorded assistant messages after it (before the next user message) go on in a new run prompted "continue".

Every request the model receives is kept (`Replay.received`: the messages with that request's instructions and tool
definitions), and every output a tool produced (`Replay.produced`), so a test or a benchmark can check what the
model saw against what happened. `orphans` lists tool returns with no earlier call (pydantic-ai issue #2050's
defect), `stand_ins` the returns pydantic-ai synthesized for calls whose result went missing.

Importing this module imports pydantic-ai (``pip install "chainsum[pydantic-ai]"``); `chainsum.testing` does not
import it.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ..errors import MissingDependencyError
from ..messages import Message, Reasoning, Text, ToolCall

try:
    from pydantic_ai import Agent, RunContext, Tool, UsageLimits
    from pydantic_ai.messages import (
        SYNTHESIZED_TOOL_RETURN_METADATA_KEY,
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelResponse,
        ModelResponsePart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.tools import ToolDefinition
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("pydantic-ai-slim", "pydantic-ai") from exc

__all__ = ["INSTRUCTIONS", "Received", "Replay", "dumps", "orphans", "runs_of", "stand_ins"]

INSTRUCTIONS = "You are a careful agent. Use the tools; answer briefly."
"""Instructions for a replaying agent whose recording has no system prompt of its own."""


@dataclass(frozen=True, slots=True)
class Received:
    """One model request as the model got it."""

    messages: list[ModelMessage]
    instructions: str | None
    tools: list[ToolDefinition]


def runs_of(messages: Sequence[Message]) -> list[tuple[str, list[Message]]]:
    """(prompt, assistant messages) per pydantic-ai run: a user message opens one, an assistant message without
    tool calls closes it (what follows before the next user message goes on after "continue")."""
    runs: list[tuple[str, list[Message]]] = []
    open_run = False
    for m in messages:
        if m.role == "user":
            runs.append((m.text.strip()[:4000] or "(attachment)", []))
            open_run = True
        elif m.role == "assistant" and runs:
            if not open_run:
                runs.append(("continue", []))
            runs[-1][1].append(m)
            open_run = bool(m.tool_calls)
    return [r for r in runs if r[1]]


def _response(message: Message) -> ModelResponse:
    """A recorded assistant message as the model's response (blank text, which providers refuse, left out)."""
    parts: list[ModelResponsePart] = []
    for p in message.parts:
        if isinstance(p, Text) and p.text.strip():
            parts.append(TextPart(p.text))
        elif isinstance(p, Reasoning) and (p.text or p.signature):
            parts.append(ThinkingPart(p.text, signature=p.signature, provider_name="anthropic"))
        elif isinstance(p, ToolCall):
            parts.append(ToolCallPart(p.name, p.arguments, tool_call_id=p.id))
    return ModelResponse(parts=parts or [TextPart("(nothing)")], model_name="replay")


def _outputs() -> defaultdict[str, deque[str]]:
    return defaultdict(deque)


def _produced() -> defaultdict[str, list[str]]:
    return defaultdict(list)


@dataclass
class Replay:
    """A recording to drive an agent through: ``Agent(replay.model(), tools=replay.tools(), ...)``, then `run`."""

    messages: Sequence[Message]
    received: list[Received] = field(default_factory=list[Received])
    produced: defaultdict[str, list[str]] = field(default_factory=_produced)
    """Tool call id -> the outputs the tools returned for it, in order (recordings reuse ids)."""
    _outputs: defaultdict[str, deque[str]] = field(default_factory=_outputs)
    _pending: deque[Message] = field(default_factory=deque[Message])

    def __post_init__(self) -> None:
        for m in self.messages:
            for r in m.tool_results:
                self._outputs[r.call_id].append(r.text or "(empty)")

    def model(self) -> FunctionModel:
        """The recording's model: the next recorded response of the current run, "(done)" when it has none."""

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.received.append(Received(list(messages), info.instructions, list(info.function_tools)))
            if self._pending:
                return _response(self._pending.popleft())
            return ModelResponse(parts=[TextPart("(done)")], model_name="replay")

        return FunctionModel(respond, model_name="replay")

    def tools(self) -> list[Tool[Any]]:
        """One tool per recorded tool name, any arguments, answering with the recorded output of its call id."""
        names = sorted({c.name for m in self.messages for c in m.tool_calls})

        async def run_tool(ctx: RunContext[Any], **_: Any) -> str:  # async: no worker thread per call
            call_id = ctx.tool_call_id or ""
            queue = self._outputs.get(call_id)
            output = queue.popleft() if queue else f"(no recorded output for {call_id})"
            self.produced[call_id].append(output)
            return output

        schema: dict[str, Any] = {"type": "object", "additionalProperties": True}
        return [Tool.from_schema(run_tool, name, f"the recorded {name}", schema, takes_ctx=True) for name in names]

    def run(self, agent: Agent[None, str], *, limit: int | None = None) -> list[ModelMessage]:
        """Every run of the recording (the first `limit`), each given the previous run's ``all_messages()``;
        returns the last run's."""
        history: list[ModelMessage] | None = None
        for prompt, responses in runs_of(self.messages)[:limit]:
            self._pending = deque(responses)
            result = agent.run_sync(prompt, message_history=history, usage_limits=UsageLimits(request_limit=None))
            history = result.all_messages()
        return history or []


def orphans(messages: Sequence[ModelMessage]) -> list[str]:
    """Ids of tool returns with no earlier tool call in `messages`."""
    seen: set[str] = set()
    out: list[str] = []
    for m in messages:
        for p in m.parts:
            if isinstance(p, ToolCallPart):
                seen.add(p.tool_call_id)
            elif isinstance(p, ToolReturnPart) and p.tool_call_id not in seen:
                out.append(p.tool_call_id)
    return out


def stand_ins(messages: Sequence[ModelMessage]) -> list[ToolReturnPart]:
    """The tool returns pydantic-ai made up for calls left without one (its "interrupted" placeholder)."""
    out: list[ToolReturnPart] = []
    for m in messages:
        for p in m.parts:
            if isinstance(p, ToolReturnPart):
                metadata: object = p.metadata
                if isinstance(metadata, dict) and cast(dict[str, Any], metadata).get(
                    SYNTHESIZED_TOOL_RETURN_METADATA_KEY
                ):
                    out.append(p)
    return out


def dumps(messages: Sequence[ModelMessage]) -> str:
    """The history as pydantic-ai persists it (JSON text)."""
    return json.dumps(ModelMessagesTypeAdapter.dump_python(list(messages), mode="json"))
