"""LangChain test doubles: a tool-calling chat model that answers from a script, a middleware that answers tool calls
from a table, and a reader that turns a recorded conversation (the shared corpora) into both.

LangChain's ``GenericFakeChatModel`` cannot take tools (``bind_tools`` is not implemented), so an agent built with
``create_agent(model, tools)`` cannot run on it; `ScriptedChatModel` binds any tools, records each request it receives
(the messages, with the system prompt first, and the tools bound), and answers with the next scripted
``AIMessage``. `ScriptedTools` answers each tool call by its id, so a recorded session replays without running its
tools. `agent_script` turns a canonical conversation into user turns and the model's answers for each, through the
framework-neutral `chainsum.testing.agent_script` (each turn ends on an answer without calls, as an agent loop
needs), as LangChain messages with call ids made unique (tau-bench reuses them).

Needs ``pip install "chainsum[langchain]"``; not imported by `chainsum.testing`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..integrations._common import require

require("langchain.agents.middleware", package="langchain", extra="langchain")

from langchain.agents.middleware import AgentMiddleware, AgentState  # noqa: E402
from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.tools import BaseTool, StructuredTool  # noqa: E402
from langgraph.prebuilt.tool_node import ToolCallRequest  # noqa: E402  # pyright: ignore[reportMissingTypeStubs]
from langgraph.types import Command  # noqa: E402  # pyright: ignore[reportMissingTypeStubs]
from pydantic import Field  # noqa: E402

from ..messages import Message  # noqa: E402
from .agent_script import AgentScript, script_from_messages  # noqa: E402

__all__ = [
    "LangChainScript",
    "ScriptedChatModel",
    "ScriptedTools",
    "Turn",
    "agent_script",
    "langchain_script",
    "stub_tools",
]


class ScriptedChatModel(BaseChatModel):
    """A chat model that returns `responses` in order (a copy of each), records every request in `requests` (the
    message list as the provider would get it) and the tools of the last ``bind_tools`` in `tools`. When the script
    runs out it answers ``"(end of script)"`` without calls, which ends any agent loop."""

    responses: list[AIMessage] = Field(default_factory=list[AIMessage])
    requests: list[list[BaseMessage]] = Field(default_factory=list[list[BaseMessage]])
    tools: list[Any] = Field(default_factory=list[Any])
    position: int = 0

    @property
    def _llm_type(self) -> str:
        return "chainsum-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        self.tools = list(tools)
        return self

    def _next(self, messages: list[BaseMessage]) -> ChatResult:
        self.requests.append(list(messages))
        if self.position < len(self.responses):
            reply = self.responses[self.position].model_copy()
            self.position += 1
        else:
            reply = AIMessage("(end of script)")
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return self._next(messages)

    async def _agenerate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return self._next(messages)


class ScriptedTools(AgentMiddleware[AgentState[Any], Any, Any]):
    """Answers every tool call from `results` (call id → text) without running a tool; an unknown id gets
    ``"(no output)"``. `calls` counts the calls answered."""

    def __init__(self, results: dict[str, str]) -> None:
        super().__init__()
        self.results = results
        self.calls = 0

    def _answer(self, request: ToolCallRequest) -> ToolMessage:
        self.calls += 1
        call = request.tool_call
        call_id = call.get("id") or ""
        return ToolMessage(self.results.get(call_id, "(no output)"), tool_call_id=call_id, name=call["name"])

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]
    ) -> ToolMessage | Command[Any]:
        return self._answer(request)

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Any) -> ToolMessage | Command[Any]:
        return self._answer(request)


def stub_tools(names: Sequence[str]) -> list[BaseTool]:
    """One tool per name, taking any arguments (`ScriptedTools` answers them, so they never run)."""
    schema: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
    return [
        StructuredTool(name=n, description=f"The recorded tool {n}.", args_schema=schema, func=_never)
        for n in dict.fromkeys(names)
    ]


def _never(**kwargs: Any) -> str:  # pragma: no cover - ScriptedTools answers instead
    raise RuntimeError("a stub tool ran: add ScriptedTools to the agent's middleware")


@dataclass(slots=True)
class Turn:
    """One user message and the model's answers until it stops calling tools."""

    user: str
    responses: list[AIMessage]


@dataclass(slots=True)
class LangChainScript:
    """A recorded conversation as LangChain messages, ready to replay through an agent."""

    system: str | None
    turns: list[Turn]
    results: dict[str, str]
    """Tool call id → the recorded result text."""
    tool_names: list[str]

    @property
    def responses(self) -> list[AIMessage]:
        """Every scripted answer, in order (what `ScriptedChatModel` is given)."""
        return [r for t in self.turns for r in t.responses]


def langchain_script(script: AgentScript) -> LangChainScript:
    """`script` (`chainsum.testing.agent_script`, framework-neutral) as LangChain messages, with call ids made
    unique (tau-bench reuses them)."""
    ids = (f"call_{n}" for n in itertools.count())
    results: dict[str, str] = {}
    turns: list[Turn] = []
    for run in script.runs:
        responses: list[AIMessage] = []
        for turn in run.turns:
            calls: list[dict[str, Any]] = []
            for step in turn.calls:
                call_id = next(ids)
                results[call_id] = step.output
                calls.append({"name": step.name, "args": _args(step.arguments), "id": call_id})
            responses.append(AIMessage(turn.text, tool_calls=calls))
        turns.append(Turn(run.user, responses))
    return LangChainScript(script.system or None, turns, results, list(script.tools))


def agent_script(messages: Sequence[Message], *, parallel: int = 1) -> LangChainScript:
    """A recorded conversation (canonical messages) as a LangChain script; `parallel` > 1 merges consecutive calls
    into parallel ones (see `script_from_messages`)."""
    return langchain_script(script_from_messages(messages, parallel=parallel))


def _args(arguments: str) -> dict[str, Any]:
    try:
        value: Any = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return {"input": arguments}
    return cast(dict[str, Any], value) if isinstance(value, dict) else {"input": value}
