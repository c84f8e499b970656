"""OpenAI Agents SDK test doubles: a `Model` that replays an `AgentScript`, and tools answering with the recorded
outputs, so a real `Runner` can be driven through a recorded conversation offline.

The SDK's own tests fake the model the same way (a `Model` subclass returning canned ``ModelResponse``s). Each
request gets the script's next `ModelTurn`: its text as an assistant message, its calls as function calls (parallel
when a turn has several) with fresh ids (``call_<request>_<k>``: recordings reuse ids, and the SDK requires an id
per invocation), and every request is handed to ``on_request`` (a test checks it there) and kept when ``keep``.
`script_tools` makes one `FunctionTool` per recorded tool name, answering each call with its recorded output.

Not a dataclass on purpose: the Runner identifies a dataclass model by ``dataclasses.asdict``, which deep-copies
everything it holds (the pending outputs, the kept requests) on every run.

Importing this module imports the SDK (``pip install "chainsum[openai-agents]"``); `chainsum.testing` does not.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import MissingDependencyError
from .agent_script import AgentRun, ModelTurn

try:
    from agents import FunctionTool, Model, ModelResponse, TResponseInputItem, Usage
    from agents.items import TResponseStreamEvent
    from agents.tool_context import ToolContext
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("openai-agents", "openai-agents") from exc

__all__ = ["ModelRequest", "ReplayModel", "script_tools"]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request the model received, as the Runner sent it."""

    index: int
    """1 for the first request."""
    instructions: str | None
    input: list[TResponseInputItem]
    tools: list[Any]


class ReplayModel(Model):
    """Answers each request with the next turn queued by `play`."""

    def __init__(self, *, on_request: Callable[[ModelRequest], None] | None = None, keep: bool = False) -> None:
        self.on_request = on_request
        self.keep = keep
        self.turns: deque[ModelTurn] = deque()
        self.outputs: dict[str, str] = {}
        """The recorded output of each call made and not yet run, by call id."""
        self.calls = 0
        self.requests: list[ModelRequest] = []
        """Every request received, when `keep`."""

    def play(self, run: AgentRun) -> None:
        """Queue the turns of `run` (before ``Runner.run(agent, run.user, ...)``)."""
        self.turns.extend(run.turns)

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        self.calls += 1
        n = self.calls
        items: list[TResponseInputItem] = [{"role": "user", "content": input}] if isinstance(input, str) else input
        request = ModelRequest(n, system_instructions, items, tools)
        if self.keep:
            self.requests.append(request)
        if self.on_request is not None:
            self.on_request(request)
        turn = self.turns.popleft()
        output: list[Any] = []
        if turn.text:
            text = ResponseOutputText(text=turn.text, type="output_text", annotations=[])
            output.append(
                ResponseOutputMessage(
                    id=f"msg_{n}", type="message", role="assistant", status="completed", content=[text]
                )
            )
        for k, step in enumerate(turn.calls):
            call_id = f"call_{n}_{k}"
            self.outputs[call_id] = step.output
            output.append(
                ResponseFunctionToolCall(
                    id=f"fc_{n}_{k}", call_id=call_id, name=step.name, arguments=step.arguments, type="function_call"
                )
            )
        return ModelResponse(output=output, usage=Usage(), response_id=f"resp_{n}")

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("ReplayModel does not stream")


def script_tools(names: Iterable[str], model: ReplayModel) -> list[FunctionTool]:
    """One tool per name, each answering a call with the output `model` recorded for it (any arguments)."""

    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        return model.outputs.pop(ctx.tool_call_id)

    schema: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
    return [
        FunctionTool(
            name=name,
            description=f"the recorded {name} tool",
            params_json_schema=schema,
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )
        for name in names
    ]
