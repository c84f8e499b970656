"""Strands Agents test doubles: a `Model` streaming canned replies, and recorded conversations replayed as an agent.

`CannedModel` is what Strands' own tests use (their ``MockedModelProvider``): a `strands.models.Model` subclass
whose ``stream`` yields the Converse stream events of a canned assistant message, here chosen by a function of the
request, and which records every request it receives (`CannedRequest`), so a test can check what the model was
really sent. Summarization requests (no tool specs, and either the last user message asking for a summary, as
Strands' `SummarizingConversationManager` sends, or chainsum's summarizer system prompt, as chainsum's manager sends
to the agent's model) are answered with a summary without using up a canned reply, and `overflow` makes it
raise ``ContextWindowOverflowException`` the way a provider refuses a request that is too long.

`replay_of` turns a recorded conversation (chainsum `Message`s, from any format: a tau-bench run, a Claude Code
session; through the framework-neutral `chainsum.testing.agent_script`) into a `Replay`: the user prompts, the
model's steps (its text and tool calls, with fresh tool-use ids, since recordings reuse ids) and each call's
recorded result, and the tools (`Replay.tools`) that answer a call with its recorded result. Running
``agent(turn.prompt)`` for each turn with ``replay.model()`` drives a real Strands agent through the recorded work,
parallel tool calls included.

Importing this module imports strands (``pip install "chainsum[strands]"``); `chainsum.testing` does not import it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from ..errors import MissingDependencyError
from ..messages import Message
from ..summarize.llm import DEFAULT_SYSTEM_PROMPT
from .agent_script import AgentScript, script_from_messages

try:
    from pydantic import BaseModel
    from strands.models import Model
    from strands.tools.tools import PythonAgentTool
    from strands.types.content import ContentBlock, Messages
    from strands.types.content import Message as StrandsMessage
    from strands.types.exceptions import ContextWindowOverflowException
    from strands.types.streaming import StreamEvent
    from strands.types.tools import ToolResult as StrandsToolResult
    from strands.types.tools import ToolSpec, ToolUse
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("strands-agents", "strands") from exc

__all__ = [
    "SUMMARY_REQUEST",
    "CannedModel",
    "CannedRequest",
    "Replay",
    "ReplayTurn",
    "replay_of",
    "replay_of_script",
    "stream_events",
]

_T = TypeVar("_T", bound=BaseModel)

SUMMARY_REQUEST = "Please summarize this conversation."
"""The last user message of a summarization request made by Strands' own summarizing manager."""


@dataclass(frozen=True, slots=True)
class CannedRequest:
    """One request the model received, as it received it."""

    messages: Messages
    system_prompt: str | None
    tool_specs: list[ToolSpec] | None

    @property
    def is_summarization(self) -> bool:
        """A summarizing manager asking for a summary: Strands' (no tools, this last message) or chainsum's (no
        tools, chainsum's summarizer system prompt)."""
        if self.tool_specs is not None or not self.messages:
            return False
        if self.system_prompt == DEFAULT_SYSTEM_PROMPT:
            return True
        content = self.messages[-1].get("content") or []
        return any(block.get("text") == SUMMARY_REQUEST for block in content)


def _default_summary(request: CannedRequest) -> str:
    return f"Summary of {len(request.messages) - 1} messages."


def _default_input_tokens(request: CannedRequest) -> int:
    """A quarter of the characters of the whole prompt: messages, system prompt and tool specs."""
    text = json.dumps([request.messages, request.system_prompt, request.tool_specs], default=str)
    return len(text) // 4


class CannedModel(Model):
    """A Strands model answering each request with ``respond(request)`` (a Bedrock assistant message dict).

    `context_window_limit` is reported in the model config (Strands reads it for its utilization estimates).
    `overflow(request)`, when given and true, makes the call raise ``ContextWindowOverflowException``. `summary`
    writes the answer to a summarization request (None: `respond` answers those too, for a model that is only a
    summarizer). `input_tokens(request)` is the prompt size reported in the usage
    metadata (Strands estimates the next request from it). `requests` holds every request, `summaries` counts the
    summarization ones.
    """

    def __init__(
        self,
        respond: Callable[[CannedRequest], StrandsMessage],
        *,
        context_window_limit: int | None = None,
        overflow: Callable[[CannedRequest], bool] | None = None,
        summary: Callable[[CannedRequest], str] | None = _default_summary,
        input_tokens: Callable[[CannedRequest], int] = _default_input_tokens,
    ) -> None:
        self._respond = respond
        self._overflow = overflow
        self._summary = summary
        self._input_tokens = input_tokens
        self.config: dict[str, Any] = {"model_id": "canned", "context_window_limit": context_window_limit}
        self.requests: list[CannedRequest] = []
        self.summaries = 0

    def get_config(self) -> dict[str, Any]:
        return self.config

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    async def structured_output(  # pragma: no cover - not used by these tests
        self, output_model: type[_T], prompt: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, _T | Any], None]:
        raise NotImplementedError("CannedModel has no structured output")
        yield {}

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        request = CannedRequest(messages, system_prompt, tool_specs)
        self.requests.append(request)
        if self._overflow is not None and self._overflow(request):
            raise ContextWindowOverflowException("input is too long for the model's context window")
        if self._summary is not None and request.is_summarization:
            self.summaries += 1
            reply: StrandsMessage = {"role": "assistant", "content": [{"text": self._summary(request)}]}
        else:
            reply = self._respond(request)
        for event in stream_events(reply, input_tokens=self._input_tokens(request)):
            yield event


def stream_events(message: StrandsMessage, *, input_tokens: int = 0) -> Iterator[StreamEvent]:
    """The Converse stream events a provider sends for `message` (text, tool uses, then the stop reason)."""
    stop = "end_turn"
    yield {"messageStart": {"role": "assistant"}}
    for block in message["content"]:
        if "text" in block:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": block["text"]}}}
            yield {"contentBlockStop": {}}
        elif "toolUse" in block:
            stop = "tool_use"
            use = block["toolUse"]
            yield {"contentBlockStart": {"start": {"toolUse": {"name": use["name"], "toolUseId": use["toolUseId"]}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(use["input"])}}}}
            yield {"contentBlockStop": {}}
    yield {"messageStop": {"stopReason": stop}}
    usage = {"inputTokens": input_tokens, "outputTokens": 10, "totalTokens": input_tokens + 10}
    yield cast(StreamEvent, {"metadata": {"usage": usage, "metrics": {"latencyMs": 1}}})


# replays -----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ReplayTurn:
    """One ``agent(prompt)`` call: the user's prompt and the model's steps (each but the last calls tools)."""

    prompt: str
    steps: tuple[StrandsMessage, ...]


@dataclass(slots=True)
class Replay:
    """A recorded conversation as Strands turns, with the recorded tool results."""

    system: str | None
    turns: list[ReplayTurn]
    results: dict[str, str] = field(default_factory=dict[str, str])
    """Per tool-use id: the recorded result text (the script keeps no error flag: every result is a success)."""

    @property
    def steps(self) -> int:
        """Model calls the replay makes."""
        return sum(len(t.steps) for t in self.turns)

    @property
    def tool_names(self) -> list[str]:
        names = {b["toolUse"]["name"] for t in self.turns for s in t.steps for b in s["content"] if "toolUse" in b}
        return sorted(names)

    def responder(self) -> Callable[[CannedRequest], StrandsMessage]:
        """The model's steps in order, whatever the request (a replay, like Strands' ``MockedModelProvider``)."""
        steps = iter([s for t in self.turns for s in t.steps])

        def respond(request: CannedRequest) -> StrandsMessage:
            return next(steps, {"role": "assistant", "content": [{"text": "(replay finished)"}]})

        return respond

    def model(self, **kwargs: Any) -> CannedModel:
        """A `CannedModel` replaying the steps (`kwargs` go to `CannedModel`)."""
        return CannedModel(self.responder(), **kwargs)

    def tools(self) -> list[PythonAgentTool]:
        """One tool per recorded tool name, each answering a call with the result recorded for its id."""
        results = self.results

        async def run(tool_use: ToolUse, **_: Any) -> StrandsToolResult:
            text = results.get(tool_use["toolUseId"], "(no output recorded)")
            return {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": text}]}

        spec_of: Callable[[str], ToolSpec] = lambda name: {  # noqa: E731
            "name": name,
            "description": f"Replayed tool {name}: answers with the recorded result.",
            "inputSchema": {"json": {"type": "object", "additionalProperties": True}},
        }
        return [PythonAgentTool(name, spec_of(name), run) for name in self.tool_names]


_NAME = re.compile(r"[^A-Za-z0-9_-]")


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"input": text}
    return cast(dict[str, Any], value) if isinstance(value, dict) else {"input": value}


def replay_of(messages: Sequence[Message], *, parallel: int = 1) -> Replay:
    """`messages` (a recorded conversation) as a `Replay`, through the framework-neutral
    `chainsum.testing.agent_script.script_from_messages` (its docstring says how a recording becomes runs of model
    turns; `parallel` merges consecutive single calls into parallel ones), then `replay_of_script`."""
    return replay_of_script(script_from_messages(messages, parallel=parallel))


def replay_of_script(script: AgentScript) -> Replay:
    """An `AgentScript` as Strands turns: each model turn one assistant message (its text, then its tool calls with
    fresh tool-use ids, names made valid for Strands), each run one prompt."""
    turns: list[ReplayTurn] = []
    results: dict[str, str] = {}
    serial = 0
    for run in script.runs:
        steps: list[StrandsMessage] = []
        for turn in run.turns:
            content: list[ContentBlock] = [{"text": turn.text}] if turn.text.strip() else []
            for call in turn.calls:
                serial += 1
                fresh = f"tooluse_{serial:06d}"
                name = _NAME.sub("_", call.name)[:64] or "tool"
                content.append({"toolUse": {"toolUseId": fresh, "name": name, "input": _arguments(call.arguments)}})
                results[fresh] = call.output
            steps.append({"role": "assistant", "content": content or [{"text": "(done)"}]})
        turns.append(ReplayTurn(run.user, tuple(steps)))
    return Replay(script.system or None, turns, results)
