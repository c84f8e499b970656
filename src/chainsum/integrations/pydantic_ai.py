"""pydantic-ai v2: `ChainsumHistory`, a history processor that keeps an agent's history inside its context window.

Adoption (``pip install "chainsum[pydantic-ai]"``)::

    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from chainsum.integrations.pydantic_ai import ChainsumHistory

    agent = Agent("openai:gpt-4o", capabilities=[ProcessHistory(ChainsumHistory(model="gpt-4o"))])

pydantic-ai v2 removed ``history_processors=``: a processor goes into ``ProcessHistory``, a capability. A plain
callable put straight into ``capabilities=`` is taken for a capability *factory* (called with the run context
alone); `ChainsumHistory` answers that call with its own capability, `ChainsumCapability`, so
``capabilities=[ChainsumHistory(...)]`` works too. The capability is the more exact of the two: it sees the
request's tool definitions and resolved instructions and counts them against the window, where the processor only
sees the messages (it counts the run's tool definitions when the run context has them, the latest recorded
instructions, and ``reserved_tokens``).

Before every model request pydantic-ai hands over its whole history (``ModelRequest`` / ``ModelResponse`` objects),
stores what the processor returns as the run's history (``ctx.messages[:] = ...``), and sends it. This module:

1. reads each message object once into canonical messages (`chainsum.formats.pydantic_ai`, through pydantic-ai's
   own JSON) with the shared `chainsum.manager.ObjectReader`: an object seen before, with the same part objects,
   is not read again, and the list handed back with new messages is recognised by identity in C, so a request
   costs the conversion of what is new. Bookkeeping pydantic-ai fills in after a request was sent (its
   instructions, run id) does not make the object new: what it sends is its parts;
2. calls `ContextManager.prepare` with them (the system instructions kept outside the list counted, as are the tool
   definitions): below the trigger the caller's own list comes back, untouched, and so does pydantic-ai's list;
3. after a compaction, writes the result back as pydantic-ai objects: every wire message whose canonical messages
   came back exactly is the very object pydantic-ai gave (nothing re-created), any other is rebuilt (its parts
   through pydantic-ai's JSON; its own fields, such as timestamps, usage and instructions, taken from the live
   object when its first canonical message is still there).

pydantic-ai's rules hold: the processed history is never empty and ends with a ``ModelRequest`` (chainsum never
summarizes the current turn; a result that would break either rule is not used, and the history goes out as it came,
with a warning). A tool call whose result went missing would be answered by pydantic-ai with an "interrupted"
stand-in and the loss would go unnoticed; chainsum never separates a call from its results: a pair is kept, or
summarized and archived whole.

The summaries can come from a pydantic-ai model: ``ChainsumHistory(summarizer=...)`` takes a pydantic-ai ``Model``
(one request through ``pydantic_ai.direct.model_request``) or an ``Agent`` (run with the transcript as its prompt
and chainsum's system prompt added to its instructions: pydantic-ai's own summarizing processors call an agent). A
plain string keeps chainsum's meaning (``"openai:gpt-4.1-mini"`` is chainsum's own OpenAI summarizer);
`model_summarizer` takes pydantic-ai's model names (``model_summarizer("openai:gpt-4.1-mini")``, through
``infer_model``). See `chainsum.integrations._summarizer` for the rule, the fallback and the usage reported.

Removed originals go to the manager's archive as canonical messages; `ChainsumHistory.expand` gives them back as
pydantic-ai objects. One `ChainsumHistory` holds one `ContextManager`, which serves one session: an agent that serves
several conversations gets one per conversation (pass it at ``agent.run(..., capabilities=[...])``), each with its
own ``session=`` when they share an archive.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast, overload, runtime_checkable

from ..errors import MissingDependencyError, SummarizerError
from ..formats import pydantic_ai as wire
from ..formats._base import native
from ..manager import ContextManager, ObjectReader, Prepared, ToolTokens
from ..messages import Message
from ..summarize import SummarizerUsage
from ..summarize.llm import DEFAULT_SYSTEM_PROMPT
from ..tokens import TokenCounter, json_tokens
from ._common import check_manager_arguments, make_manager
from ._summarizer import ModelReply, ModelSummarizer, take_summarizer

try:
    from pydantic_ai import Agent, RunContext
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.exceptions import (
        ModelAPIError,
        ModelRateLimitError,
        ModelRequestRejectedError,
        UnexpectedModelBehavior,
        UsageLimitExceeded,
    )
    from pydantic_ai.messages import (
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelRequest,
        SystemPromptPart,
        UserPromptPart,
    )
    from pydantic_ai.models import Model, ModelRequestContext
    from pydantic_ai.tools import ToolDefinition
except ImportError as exc:  # a test hides pydantic-ai to check the message
    raise MissingDependencyError("pydantic-ai-slim", "pydantic-ai") from exc

__all__ = ["ChainsumCapability", "ChainsumHistory", "model_summarizer"]

logger = logging.getLogger(__name__)

_RECHECK = 2
"""The newest objects of the previous list, read again for changes: after sending a request pydantic-ai records on
it what it sent (instructions, run ids) and may add parts (capability loads)."""


def model_summarizer(
    model: Model | Agent[Any, Any] | str, *, system_prompt: str = DEFAULT_SYSTEM_PROMPT
) -> ModelSummarizer:
    """A pydantic-ai model or agent as chainsum's summarizer.

    A ``Model`` (or a model name as pydantic-ai spells it, ``"openai:gpt-4.1-mini"``, made by ``infer_model``) gets
    one request: chainsum's system prompt and the framed transcript, no tools. An ``Agent`` is run with the
    transcript as its prompt and the system prompt added to its own instructions (its tools and output type are its
    own: it should answer text). The usage pydantic-ai reports is reported."""
    given = cast(object, model)  # typed callers are checked by their type checker; the others here
    if not isinstance(given, Model | Agent | str):
        raise TypeError(
            f"model_summarizer() takes a pydantic-ai Model, an Agent or a model name; got {type(model).__name__}"
        )
    if isinstance(model, Agent):
        agent: Agent[Any, Any] = model
        name = f"pydantic-ai:agent:{agent.name or type(agent.model).__name__}"

        async def run_agent(system: str, transcript: str) -> ModelReply:
            result = await agent.run(transcript, instructions=system)
            usage = result.usage
            counted = SummarizerUsage(
                input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, requests=max(usage.requests, 1)
            )
            output: object = result.output
            return ModelReply(output if isinstance(output, str) else None, counted)

        return ModelSummarizer(name=name, call=run_agent, model=agent, classify=_classify, system_prompt=system_prompt)

    from pydantic_ai.direct import model_request
    from pydantic_ai.models import infer_model

    chosen = infer_model(model) if isinstance(model, str) else model
    name = f"pydantic-ai:{model if isinstance(model, str) else chosen.model_name}"

    async def request(system: str, transcript: str) -> ModelReply:
        response = await model_request(
            chosen, [ModelRequest(parts=[SystemPromptPart(system), UserPromptPart(transcript)])]
        )
        counted = SummarizerUsage(input_tokens=response.usage.input_tokens, output_tokens=response.usage.output_tokens)
        refused = "content filter" if response.finish_reason == "content_filter" else None
        return ModelReply(response.text, counted, refused)

    return ModelSummarizer(name=name, call=request, model=chosen, classify=_classify, system_prompt=system_prompt)


def _classify(exc: BaseException) -> SummarizerError | None:
    """pydantic-ai's error categories (its adapters sort provider errors into them): a rate limit (with the wait
    the provider asked for), a rejected request (authentication, a missing model, a prompt over the window: the
    same request cannot succeed), an answer it could not use or a usage limit (``invalid``: the next summarizer).
    Other API errors (timeouts, connection, overload, 5xx) are transport failures, left to `failure_of`'s status and
    name reading."""
    detail = f"{type(exc).__name__}: {exc}"[:200]
    if isinstance(exc, ModelRateLimitError):
        return SummarizerError(detail, kind="rate_limit", retry_after=exc.retry_after)
    if isinstance(exc, ModelRequestRejectedError | UnexpectedModelBehavior | UsageLimitExceeded):
        return SummarizerError(detail, kind="invalid")
    if isinstance(exc, ModelAPIError) and getattr(exc, "status_code", None) is None:
        return SummarizerError(detail, kind="transport")
    return None


_MODEL_METHODS = ("request", "request_stream")
_AGENT_METHODS = ("run", "run_stream")


def _posing(value: object) -> str | None:
    """What a non-pydantic-ai object passed where a model goes poses as (a test double such as
    ``unittest.mock.Mock()`` has every attribute): None for anything else. Called as a chainsum summarizer it would
    answer something that is not a summary, or hang, at the first compaction rather than now."""
    for role, methods in (("Model", _MODEL_METHODS), ("Agent", _AGENT_METHODS)):
        if all(callable(getattr(value, m, None)) for m in methods):
            return role
    return None


def _adapt(model: object) -> ModelSummarizer | None:
    if isinstance(model, Model | Agent):
        return model_summarizer(cast("Model | Agent[Any, Any]", model))
    if (role := _posing(model)) is not None:
        raise TypeError(f"summarizer= has a pydantic-ai {role}'s methods but is a {type(model).__name__}, not one")
    return None


def _convert(items: Sequence[ModelMessage], i: int) -> tuple[Message, ...]:
    """The canonical messages of one pydantic-ai message (through pydantic-ai's own JSON)."""
    docs: list[Any] = ModelMessagesTypeAdapter.dump_python([items[i]], mode="json")
    return wire.load(docs).messages


def _parts(obj: ModelMessage) -> tuple[Any, ...]:
    """The part objects a message holds, as they are now (pydantic-ai adds parts to its last request; what it sends
    is its parts). A tuple, not the message's own list: pydantic-ai 2.68 gives a message a new list when it adds to it,
    but a processor of the user's may append in place, and the list itself would compare equal to itself."""
    return tuple(obj.parts)


@runtime_checkable
class _Expandable(Protocol):
    def expand(self, summary_id: str) -> list[Message]: ...


class ChainsumHistory:
    """A pydantic-ai history processor backed by a `ContextManager`: ``ProcessHistory(ChainsumHistory(...))``.

    Takes `ContextManager`'s keyword arguments (``config``, ``context_window`` or ``model`` (a model name, for the
    window), ``summarizers``, ``archive``, ``session``, ``on_event``, ``provider``, ...), or ``manager=`` an existing
    one. ``reserved_tokens`` is room taken by something the processor cannot see (fixed instructions given some
    other way); `ChainsumCapability` counts tool definitions and instructions itself. ``summarizer=``: a pydantic-ai
    ``Model`` or ``Agent`` to write the summaries, a chainsum summarizer spec string, or a callable
    (`model_summarizer` for pydantic-ai's model names).

    When that summarizer fails, the processor raises (`chainsum.errors.SummarizerError`), as any history processor
    that raises does in pydantic-ai: the run raises, its history untouched (nothing archived), and the manager's
    `SummarizationFailedEvent` says ``aborted``. ``fail_open=True`` is chainsum's way instead: its extractive
    summarizer writes the summary the model could not, and the event lists the failure.

    A processor with or without the run context: ``ProcessHistory(history)`` passes it (the first parameter is a
    ``RunContext``, and the run's tool definitions are counted), ``ProcessHistory(history.process)`` does not;
    a processor of the user's may call either (`process`, or the history with the messages alone).
    """

    def __init__(
        self,
        *,
        manager: ContextManager | None = None,
        reserved_tokens: int = 0,
        fail_open: bool = False,
        **kwargs: Any,
    ) -> None:
        check_manager_arguments(manager, kwargs, framework="pydantic-ai", example="gpt-4o")
        take_summarizer(kwargs, _adapt, "pydantic-ai", fail_open=fail_open)
        self.manager: ContextManager = make_manager(manager, kwargs)
        self.reserved_tokens = reserved_tokens
        self.fail_open = fail_open
        """Whether a failing summarizer is followed by chainsum's extractive one (else it raises)."""
        self.last: Prepared[Any] | None = None
        """What the latest `prepare` returned (its event, records and token counts)."""
        self._reader: ObjectReader[ModelMessage] = ObjectReader(_convert, snapshot=_parts, recheck=_RECHECK)
        """pydantic-ai hands over the list it was given last time (what this processor returned) plus what came
        since, the very same objects: only the new ones and the last `_RECHECK` (whose parts are compared) are
        looked at."""
        self._tools = ToolTokens(_tool_tokens)

    # pydantic-ai's entry points ----------------------------------------------------------------------------------
    @overload
    async def __call__(self, ctx: RunContext[Any], messages: list[ModelMessage]) -> list[ModelMessage]: ...

    @overload
    async def __call__(self, ctx: RunContext[Any]) -> ChainsumCapability: ...

    async def __call__(
        self, ctx: RunContext[Any], messages: list[ModelMessage] | None = None
    ) -> list[ModelMessage] | ChainsumCapability:
        """As a history processor (``ProcessHistory`` calls it with the run context and the messages): the history
        to send. Called with the messages alone (a processor of the user's calling this one): the same, without
        the run's tool definitions to count. Called with the run context alone, pydantic-ai took it for a capability
        factory (it was put straight into ``capabilities=``): the capability that does the same, more exactly.

        The first parameter is annotated ``RunContext`` because that is how ``ProcessHistory`` decides to pass the
        context."""
        first: object = ctx
        if isinstance(first, list):
            return await self.process(
                cast(list[ModelMessage], first),
                system=_latest_instructions(cast(list[ModelMessage], first)),
                reserved_tokens=self.reserved_tokens,
            )
        if messages is None:
            return ChainsumCapability(self)
        tools: list[ToolDefinition] = []
        if ctx.tool_manager is not None:
            try:
                tools = ctx.tool_manager.tool_defs
            except ValueError:  # not prepared for this step: nothing to count
                tools = []
        reserved = self.reserved_tokens + self.tool_tokens(tools)
        return await self.process(messages, system=_latest_instructions(messages), reserved_tokens=reserved)

    def capability(self) -> ChainsumCapability:
        """This processor as a pydantic-ai capability (counts the request's tools and instructions)."""
        return ChainsumCapability(self)

    # the work ----------------------------------------------------------------------------------------------------
    async def process(
        self, messages: Sequence[ModelMessage], *, system: str | None = None, reserved_tokens: int = 0
    ) -> list[ModelMessage]:
        """The history to send instead of `messages` (the same list when nothing changes). `system` is the
        instructions text sent outside the history; `reserved_tokens` the tool definitions and anything else."""
        given = messages if isinstance(messages, list) else list(messages)
        canonical = self._reader.read(given)
        prepared = await self.manager.prepare(canonical, system=system, reserved_tokens=reserved_tokens)
        self.last = prepared
        if prepared.messages is canonical:
            return given
        out = self._write(prepared.messages)
        if not out or not isinstance(out[-1], ModelRequest):
            logger.warning(
                "messages=<%d>, kept=<%d> | compacted history breaks pydantic-ai's rules (empty, or not ending with a "
                "request); sending it unchanged",
                len(given),
                len(out),
            )
            return given
        return out

    def tool_tokens(self, tools: Sequence[ToolDefinition]) -> int:
        """Tokens of tool definitions as a model receives them (name, description, JSON schema), counted again only
        when the definition objects change."""
        return self._tools.count(tools, self.manager.counter)

    def _write(self, messages: Sequence[Message]) -> list[ModelMessage]:
        """pydantic-ai objects for the manager's output: the caller's own object for each wire message that came
        back whole, a rebuilt one for the others (registered, so that reading it next time gives these very
        canonical messages back)."""
        reader = self._reader
        out: list[ModelMessage] = []
        for segment in _segments(messages):
            origin = reader.origin(segment[0])
            if origin is not None and origin[1][0] is segment[0]:
                if len(origin[1]) == len(segment) and all(map(operator.is_, origin[1], segment)):
                    out.append(origin[0])
                    continue
            rebuilt = wire.dump_messages(segment)[0]
            if origin is not None and type(origin[0]) is type(rebuilt):
                rebuilt = replace(origin[0], parts=rebuilt.parts)  # the live object's own fields, new parts
            reader.remember(rebuilt, segment)
            out.append(rebuilt)
        return out

    # the archive -------------------------------------------------------------------------------------------------
    def expand(self, summary_id: str) -> list[ModelMessage]:
        """The originals summary record `summary_id` replaced, as pydantic-ai messages (checked against their
        SHA-256 by the archive). Needs an archive that can expand (`chainsum.store` ones can)."""
        archive = self.manager.archive
        if not isinstance(archive, _Expandable):
            raise TypeError(f"{type(archive).__name__} cannot expand summary records")
        return wire.dump_messages(archive.expand(summary_id))


def _tool_tokens(tools: Sequence[ToolDefinition], counter: TokenCounter) -> int:
    return sum(json_tokens(counter, [t.name, t.description, t.parameters_json_schema]) for t in tools)


def _segments(messages: Sequence[Message]) -> list[list[Message]]:
    """`messages` cut into the wire messages `chainsum.formats.pydantic_ai.dump` writes: an assistant message alone,
    a run of other messages, split where one carries its own request's fields."""
    out: list[list[Message]] = []
    for m in messages:
        starts = m.role == "assistant" or not out or out[-1][-1].role == "assistant"
        if starts or "request" in native(m.extras, wire.NAME):
            out.append([m])
        else:
            out[-1].append(m)
    return out


def _latest_instructions(messages: Sequence[ModelMessage]) -> str | None:
    for m in reversed(messages):
        if isinstance(m, ModelRequest) and m.instructions is not None:
            return m.instructions
    return None


@dataclass
class ChainsumCapability(AbstractCapability[Any]):
    """`ChainsumHistory` as a pydantic-ai capability: ``capabilities=[ChainsumCapability(ChainsumHistory(...))]``.

    Unlike ``ProcessHistory``, it counts the request's tool definitions (function and output tools) and its
    resolved instructions against the window, so the request the model gets is the one that fits."""

    history: ChainsumHistory

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        params = request_context.model_request_parameters
        instructions = "\n\n".join(p.content for p in params.instruction_parts or ()) or None
        reserved = self.history.reserved_tokens + self.history.tool_tokens(
            [*params.function_tools, *params.output_tools]
        )
        messages = await self.history.process(
            list(request_context.messages), system=instructions, reserved_tokens=reserved
        )
        request_context.messages = messages.copy()
        ctx.messages[:] = messages
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a live manager: not buildable from a spec
