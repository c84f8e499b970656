"""Strands Agents: `ChainsumConversationManager`, a `ConversationManager` backed by chainsum's `ContextManager`.

Adoption (``pip install "chainsum[strands]"``)::

    from chainsum.integrations.strands import ChainsumConversationManager

    agent = Agent(model=model, tools=tools, conversation_manager=ChainsumConversationManager(context_window=200_000))

Which Strands argument to use: ``conversation_manager=``. Strands 1.62 also has ``context_manager=`` (``"auto"``,
``"agentic"``, a config dict or its own experimental ``ContextManager`` plugin, from ``strands._context_manager``);
when it is set, Strands replaces any ``conversation_manager`` by a no-op one (with a warning), so do not pass both:
leave ``context_manager`` unset (its default, ``None``) or ``False``. ``context_manager=`` takes only Strands' own
strategies; the ``ConversationManager`` interface is the stable, public extension point, and the one Strands'
sessions persist (`get_state` / `restore_from_session`).

How it maps onto Strands (what its source does, 1.62):

- **Proactive compression** runs in an async ``BeforeModelCallEvent`` hook (`register_hooks`, which calls the
  base's first, as Strands requires): before every model call, `ContextManager.prepare` reads ``agent.messages``
  (the new user message or tool results are already in it), counts ``agent.system_prompt`` (``system=``) and the
  tool specs (``reserved_tokens=``) against the window, and when it compacts, ``agent.messages`` is replaced in
  place (Strands deep-copies it for the model right after the hooks). Below the trigger ratio nothing happens, in
  about 0.1 ms on a 300-message history (`_reader` reads only what is new).
- **Overflow**: Strands calls `reduce_context` with the ``ContextWindowOverflowException`` and retries the model
  call by recursing, with no bound (its issue #3338). `reduce_context` therefore always shrinks the history or
  raises. A refusal of a request the manager counted as fitting means the configured window is larger than the
  provider's (or the counter undercounts for this model), so the manager's window is first lowered to 90 % of what
  was refused, with a warning, for the rest of its life; then a compaction is forced (to ``1 - summary_ratio`` of
  the current size, whatever the trigger; the current turn's tool output is clipped when it alone is over the
  window). When nothing could be removed (the system prompt, tool specs and the current turn alone are too large),
  the overflow is raised again instead of returning, so the agent fails once rather than looping.
  `SummarizingConversationManager` does not: when the newest messages alone overflow it summarizes its own summary
  again and again.
- `apply_management` (after each invocation, in its ``finally``) runs the same non-forced `prepare`, so a history
  given to ``Agent(messages=...)`` or restored from a session is brought under the trigger before it grows further.
- Both are synchronous calls made from inside Strands' running event loop; `ContextManager.prepare_sync` runs its
  async work on a worker thread there (`chainsum._sync.run_sync`), never a second loop in the same thread.
- **Sessions**: a Strands session stores every message ever appended, and restores ``prepend + stored[offset:]``
  where ``prepend`` is what `restore_from_session` returns and ``offset`` is ``removed_message_count``. After each
  compaction, ``agent.messages`` is split into a *prefix* (the summary record, masked or clipped results: messages
  the session never stored) and a *verbatim tail* (the newest messages, unchanged and still stored); the prefix goes
  into `get_state`, and ``removed_message_count`` counts the stored messages before the tail. So a restored agent
  gets exactly the history it had, and the originals are in chainsum's archive (`ContextManager.archive`, e.g. a
  `SQLiteStore`; the in-memory default does not outlive the process).
- **The request** goes through an ``InvokeModelStage.Input`` middleware, installed when the agent is initialized:
  it adds this request's **recall** block (archived originals relevant to the newest user message,
  `ManagerConfig.recall_token_ratio`), which is never written into ``agent.messages`` or the session, and it merges
  adjacent user messages holding no tool results (the summary record before a kept user message, the recall block
  before the prompt) into one, since the Bedrock Converse API requires user and assistant turns to alternate and
  Strands sends ``agent.messages`` as they are.

**The summarizer** can be a Strands model, as in Strands' ``SummarizingConversationManager(summarization_agent=...)``
(and the spec's wiring: a dedicated, cheaper model such as Nova Micro): ``summarization_agent=`` takes a Strands
``Agent`` and ``summarizer=`` a Strands ``Model`` (or chainsum's own spec string, or a callable). Only the agent's
model is called, with chainsum's system prompt and framed transcript, never the agent itself: its messages, tools
and hooks stay as they were (Strands' manager writes into its summarization agent's state and restores it after),
and a Bedrock model id string goes through `model_summarizer`. See `chainsum.integrations._summarizer` for the
rule, the fallback and the usage reported.

One instance serves one agent (one conversation): its `ContextManager` holds that session's mapping. Pass
``session=`` (chainsum's key in the archive) when several conversations share one archive.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import operator
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from ..errors import MissingDependencyError, SummarizerError
from ..formats import bedrock
from ..manager import (
    ContextManager,
    ManagerConfig,
    ObjectReader,
    Prepared,
    ToolTokens,
    is_recall_message,
    starts_with,
)
from ..messages import Message
from ..summarize import SummarizerUsage
from ..summarize.llm import DEFAULT_SYSTEM_PROMPT
from ..tokens import TokenCounter, json_tokens
from ._common import make_manager
from ._summarizer import ModelReply, ModelSummarizer, take_summarizer

try:
    from strands.agent.conversation_manager import ConversationManager
    from strands.hooks import AgentInitializedEvent, BeforeModelCallEvent, HookRegistry
    from strands.middleware import InvokeModelContext, InvokeModelStage
    from strands.models import Model
    from strands.tools.tools import normalize_tool_spec
    from strands.types.content import Message as StrandsMessage
    from strands.types.exceptions import ContextWindowOverflowException, ModelThrottledException
    from strands.types.tools import AgentTool
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("strands-agents", "strands") from exc

if TYPE_CHECKING:
    from strands.agent.agent import Agent

__all__ = ["ChainsumConversationManager", "model_summarizer"]

logger = logging.getLogger(__name__)

_STATE_PREFIX = "chainsum_prefix"
"""Key of the prefix messages in `get_state` (the session's ``conversation_manager_state``)."""

_LEARNED_WINDOW_SHARE = 0.9
"""After a refusal of a request counted at N tokens, the window becomes this share of N."""

_DECLINED = ("content_filtered", "guardrail_intervened")
"""Stop reasons of a model that would not answer."""


def model_summarizer(model: Model | Agent | str, *, system_prompt: str = DEFAULT_SYSTEM_PROMPT) -> ModelSummarizer:
    """A Strands model as chainsum's summarizer: one ``model.stream`` request with chainsum's system prompt and the
    framed transcript as the user message, no tools; the text deltas make the summary and the stream's usage
    metadata is reported. An ``Agent`` gives its model (the agent itself is not run, so not changed). A string is
    what Strands' ``Agent(model="...")`` takes: a Bedrock model id (``"us.amazon.nova-micro-v1:0"``)."""
    if isinstance(model, str):
        from strands.models import BedrockModel

        chosen: Model = BedrockModel(model_id=model)
        name = f"strands:{model}"
    else:
        chosen = model if isinstance(model, Model) else model.model
        name = f"strands:{type(chosen).__name__}"

    async def call(system: str, transcript: str) -> ModelReply:
        texts: list[str] = []
        usage: SummarizerUsage | None = None
        stop: object = None
        request: list[StrandsMessage] = [{"role": "user", "content": [{"text": transcript}]}]
        async for event in chosen.stream(request, None, system):
            raw = cast(dict[str, Any], event)  # read as the plain dicts they are: a provider may leave keys out
            delta = _section(_section(raw, "contentBlockDelta"), "delta")
            if isinstance(delta.get("text"), str):
                texts.append(delta["text"])
            stop = _section(raw, "messageStop").get("stopReason", stop)
            reported = _section(_section(raw, "metadata"), "usage")
            if reported:
                usage = SummarizerUsage(
                    input_tokens=int(reported.get("inputTokens") or 0),
                    output_tokens=int(reported.get("outputTokens") or 0),
                )
        refused = f"stop reason {stop}" if stop in _DECLINED else None
        return ModelReply("".join(texts) if texts else None, usage, refused)

    return ModelSummarizer(name=name, call=call, model=chosen, classify=_classify, system_prompt=system_prompt)


def _section(event: dict[str, Any], key: str) -> dict[str, Any]:
    """``event[key]`` when it is a dict, else an empty one."""
    value = event.get(key)
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _classify(exc: BaseException) -> SummarizerError | None:
    """Strands' own exceptions: its providers raise ``ModelThrottledException`` for a throttled request and
    ``ContextWindowOverflowException`` for a prompt over the model's window (the same request cannot succeed)."""
    if isinstance(exc, ModelThrottledException):
        return SummarizerError(str(exc)[:200], kind="rate_limit")
    if isinstance(exc, ContextWindowOverflowException):
        return SummarizerError(str(exc)[:200], kind="invalid")
    return None


def _adapt(model: object) -> ModelSummarizer | None:
    from strands.agent.agent import Agent

    return model_summarizer(model) if isinstance(model, Model | Agent) else None


class ChainsumConversationManager(ConversationManager):
    """A Strands ``ConversationManager`` that keeps the agent inside its context window with chainsum.

    Takes `ContextManager`'s arguments (``config``, ``context_window`` or ``model``, ``summarizers``, ``archive``,
    ``session``, ``on_event``, ...; the provider defaults to ``"bedrock"``, whose rules Strands' message lists follow)
    or a ready ``manager=``, made without ``format=``: it is given chainsum `Message`s (`_reader`). `count_tool_specs`
    counts the agent's tool specs against the window (they are sent with every request). The summaries come from
    ``summarization_agent=`` (a Strands ``Agent``, whose model is called) or ``summarizer=`` (a Strands ``Model``, a
    chainsum summarizer spec string or a callable), then the extractive fallback. See the module docstring for how
    each Strands call is served.
    """

    def __init__(
        self,
        config: ManagerConfig | None = None,
        *,
        manager: ContextManager | None = None,
        count_tool_specs: bool = True,
        summarization_agent: Agent | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(proactive_compression=None)  # the hook below is chainsum's trigger, not Strands' threshold
        if config is not None:
            kwargs["config"] = config
        if summarization_agent is not None:
            if kwargs.get("summarizer") is not None:
                raise TypeError("pass summarization_agent= or summarizer=, not both")
            kwargs["summarizer"] = summarization_agent
        take_summarizer(kwargs, _adapt, "Strands", fail_open=True)
        if manager is None:
            kwargs.setdefault("provider", "bedrock")
        self.manager: ContextManager = make_manager(manager, kwargs)
        """The `ContextManager` doing the work: its archive holds every original taken out of ``agent.messages``."""
        self.count_tool_specs = count_tool_specs
        self._prefix: list[StrandsMessage] = []
        """The messages at the head of ``agent.messages`` that the session did not store (see the module doc)."""
        self._recall: dict[int, tuple[int, list[tuple[int, StrandsMessage]]]] = {}
        """Per agent (by id): the history length the recall block was made for, and its items with their index."""
        self._agents: weakref.WeakSet[Agent] = weakref.WeakSet()
        self._reader = _reader()
        self._tools = ToolTokens(_tool_tokens)
        self._turns = _UserTurns()
        self._warned = False

    # Strands' interface ------------------------------------------------------------------------------------------
    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """The base's hooks (Strands requires it), then chainsum's: compaction before each model call and the
        recall middleware when the agent is initialized."""
        super().register_hooks(registry, **kwargs)
        registry.add_callback(BeforeModelCallEvent, self._before_model_call)
        registry.add_callback(AgentInitializedEvent, self._agent_initialized)

    def apply_management(self, agent: Agent, **kwargs: Any) -> None:
        """After an invocation: compact when the history is over the trigger (nothing to do is the common case)."""
        messages = self._reader.read(agent.messages)
        prepared = self.manager.prepare_sync(
            messages, system=agent.system_prompt, reserved_tokens=self._reserved(agent)
        )
        self._apply(agent, messages, prepared, recall=False)

    def reduce_context(self, agent: Agent, e: Exception | None = None, **kwargs: Any) -> None:
        """Compact now, whatever the ratio. With an overflow `e`, the history shrinks or `e` is raised again: never
        a return without progress, which would make Strands retry the same request forever."""
        system, reserved = agent.system_prompt, self._reserved(agent)
        messages = self._reader.read(agent.messages)
        if e is not None:
            self._learn_window(messages, system, reserved)
        before = len(agent.messages)
        prepared = self.manager.prepare_sync(messages, system=system, reserved_tokens=reserved, force=True)
        shrank = bool(prepared.records) and self._apply(agent, messages, prepared, recall=False)
        logger.debug(
            "messages_before=<%d>, messages_after=<%d>, tokens_before=<%d>, shrank=<%s>, overflow=<%s> | reduced",
            before,
            len(agent.messages),
            prepared.tokens_before,
            shrank,
            e is not None,
        )
        if not shrank and e is not None:
            raise ContextWindowOverflowException(
                "chainsum could not shrink the history further: the system prompt, tool specs and the current turn "
                f"alone are {prepared.tokens_after} tokens (window {self.manager.window})"
            ) from e

    def get_state(self) -> dict[str, Any]:
        """Strands' state (``__name__``, ``removed_message_count``) and the prefix messages, for the session."""
        return {**super().get_state(), _STATE_PREFIX: self._prefix}

    def restore_from_session(self, state: dict[str, Any]) -> list[StrandsMessage] | None:
        """Take the state back; the prefix messages are returned for Strands to put before the stored tail."""
        super().restore_from_session(state)
        self._prefix = list(state.get(_STATE_PREFIX) or [])
        return list(self._prefix) or None

    # hooks -------------------------------------------------------------------------------------------------------
    async def _before_model_call(self, event: BeforeModelCallEvent) -> None:
        agent = event.agent
        messages = self._reader.read(agent.messages)
        prepared = await self.manager.prepare(
            messages, system=agent.system_prompt, reserved_tokens=self._reserved(agent)
        )
        self._apply(agent, messages, prepared, recall=True)

    def _agent_initialized(self, event: AgentInitializedEvent) -> None:
        agent = event.agent
        if agent not in self._agents:
            self._agents.add(agent)
            agent.add_middleware(InvokeModelStage.Input, self._request)

    def _request(self, context: InvokeModelContext) -> InvokeModelContext:
        """The model's copy of the history, made ready to send: this request's recall block put in (never into
        ``agent.messages``), then adjacent user messages without tool results merged (`_merge_user_turns`)."""
        messages: list[StrandsMessage] = context.messages
        pending = self._recall.pop(id(context.agent), None)
        if pending is not None and len(messages) >= pending[0]:  # else the history changed since the hook
            messages = list(messages)
            for index, item in pending[1]:
                messages.insert(index, copy.deepcopy(item))
        merged = self._turns.merge(messages)
        return context if merged is context.messages else context.replace(messages=merged)

    def _learn_window(self, messages: list[Message], system: str | None, reserved: int) -> None:
        """The provider refused this history although the manager counted it as fitting: the provider's window is
        smaller than the manager's, at most 90 % of what was refused. (A request already over the window, whose
        floor could not be brought under it, teaches nothing.)"""
        counter = self.manager.counter
        refused = counter.count_messages(messages) + reserved
        refused += counter.count_text(system) if system else 0
        learned = max(1, int(refused * _LEARNED_WINDOW_SHARE))
        if refused <= self.manager.window:
            logger.warning(
                "refused_tokens=<%d>, window=<%d>, learned_window=<%d> | the provider refused a request that was "
                "counted as fitting; lowering the window (set context_window= to the model's real window)",
                refused,
                self.manager.window,
                learned,
            )
            self.manager.window = learned

    # helpers -----------------------------------------------------------------------------------------------------
    def _reserved(self, agent: Agent) -> int:
        """Tokens of the tool specs sent with every request, counted again only when the agent's tools change."""
        return self._tools.count(_tools_of(agent), self.manager.counter) if self.count_tool_specs else 0

    def _apply(self, agent: Agent, given: list[Message], prepared: Prepared[Any], *, recall: bool) -> bool:
        """Write what `prepare` returned for `given` into ``agent.messages`` (in place), without its recall block,
        which is kept for this request's middleware when `recall`. True when the history changed."""
        self._recall.pop(id(agent), None)
        output = prepared.messages
        if output is given or (len(output) == len(given) and all(map(operator.is_, output, given))):
            return False
        history, block = self._write(output)
        if block and recall:
            self._recall[id(agent)] = (len(history), block)
        current = agent.messages
        if len(history) == len(current) and all(map(operator.is_, history, current)):
            return False
        self._account(current, history)
        current[:] = history
        return True

    def _write(self, output: Sequence[Message]) -> tuple[list[StrandsMessage], list[tuple[int, StrandsMessage]]]:
        """The history as Strands dicts, and the recall block's dicts with their index in history + block.
        `Message`s that came from one dict, in order and unchanged, become that very dict again (so the session's
        messages stay verbatim); anything else (a summary record, masked results) is written as Bedrock dicts."""
        reader = self._reader
        history: list[StrandsMessage] = []
        block: list[tuple[int, StrandsMessage]] = []
        run: list[Message] = []

        def flush() -> None:
            if run:
                written = self._dump(run)
                if len(written) == len(run):  # one dict per message: read them back as these very messages
                    for d, m in zip(written, run, strict=True):
                        reader.remember(d, (m,))
                history.extend(written)
                run.clear()

        i = 0
        while i < len(output):
            message = output[i]
            origin = reader.origin(message)
            if origin is not None and origin[1][0] is message and len(origin[1]) <= len(output) - i:
                item, group = origin
                if all(map(operator.is_, output[i : i + len(group)], group)):
                    flush()
                    history.append(item)
                    i += len(group)
                    continue
            if is_recall_message(message):
                flush()
                block.append((len(history) + len(block), self._dump([message])[0]))
            else:
                run.append(message)
            i += 1
        flush()
        return history, block

    def _dump(self, messages: Sequence[Message]) -> list[StrandsMessage]:
        if any(m.role == "system" for m in messages):
            if not self._warned:
                self._warned = True
                logger.warning(
                    "summary_role=<system> | Strands keeps its system prompt outside agent.messages; the summary "
                    "record goes into the history as a user-role message"
                )
            messages = [dataclasses.replace(m, role="user") if m.role == "system" else m for m in messages]
        wire: Any = bedrock.dump(messages)
        items = cast(list[StrandsMessage], wire["messages"] if isinstance(wire, dict) else wire)
        return list(items)

    def _account(self, old: list[StrandsMessage], new: list[StrandsMessage]) -> None:
        """Update the prefix and ``removed_message_count`` for `old` becoming `new`: the stored messages of `old`
        that `new` does not end with, verbatim, are removed; everything before that verbatim tail is the prefix."""
        held = 0
        for mine, theirs in zip(self._prefix, old, strict=False):
            if mine is not theirs and mine != theirs:
                break
            held += 1
        if held < len(self._prefix):
            logger.warning(
                "prefix=<%d>, matched=<%d> | agent.messages no longer starts with the messages chainsum put there; "
                "counting from the first that differs",
                len(self._prefix),
                held,
            )
        stored = len(old) - held
        kept = 0
        while kept < min(stored, len(new)):
            a, b = new[-1 - kept], old[-1 - kept]
            if a is not b and a != b:
                break
            kept += 1
        self.removed_message_count += stored - kept
        self._prefix = new[: len(new) - kept]
        logger.debug(
            "removed=<%d>, removed_message_count=<%d>, prefix=<%d>, tail=<%d> | session accounting",
            stored - kept,
            self.removed_message_count,
            len(self._prefix),
            kept,
        )


def _convert(items: Sequence[StrandsMessage], i: int) -> tuple[Message, ...]:
    """The messages of Strands dict ``items[i]``: a tool result message is read with the call message before it, for
    the tools' names (an assistant dict is one message)."""
    item = items[i]
    if i and items[i - 1].get("role") == "assistant" and any("toolResult" in b for b in item["content"]):
        return tuple(bedrock.load([items[i - 1], item]).messages[1:])
    return tuple(bedrock.load([item]).messages)


def _reader() -> ObjectReader[StrandsMessage]:
    """Strands' message dicts as chainsum `Message`s, each dict converted once (`ObjectReader`).

    The manager could read Bedrock dicts itself, but it converts a Bedrock list again from its last user turn on
    every call (a tool result is named after the call before it), and a Strands turn is one prompt followed by
    every tool step of the agent's work: hundreds of messages, converted and counted again before each model call.
    Here each dict keeps its `Message` objects while it stays in the list, so the manager sees the same objects
    again, compares them by identity and counts only what is new. The last dict is converted again on every call
    (Strands edits the newest message in place: redaction, cancellation); a dict changed in place elsewhere is not
    seen, as with the manager's own reading of a list."""
    return ObjectReader(_convert, recheck=1, reread_last=True)


def _tool_tokens(tools: Sequence[AgentTool], counter: TokenCounter) -> int:
    """Tokens of the tool specs as Strands sends them (each normalized, as its registry does)."""
    return json_tokens(counter, [normalize_tool_spec(t.tool_spec.copy()) for t in tools])


def _tools_of(agent: Agent) -> list[AgentTool]:
    """The agent's tools, in the order its registry lists their specs (registered, then dynamic ones not shadowed);
    read from the registry's dicts, not ``agent.tool_names``, which normalizes and validates every spec."""
    registry = agent.tool_registry
    tools = list(registry.registry.values())
    if registry.dynamic_tools:
        tools.extend(t for name, t in registry.dynamic_tools.items() if name not in registry.registry)
    return tools


class _UserTurns:
    """`_merge_user_turns` for a request that is the previous one plus new messages: a history found to need no
    merge is remembered, and the next request that starts with its messages (compared in C: the very dicts, or equal
    ones, which hold the same roles and blocks) is looked at only from its last one on, so that a request with
    nothing to merge costs its new messages, not a pass over the history. (A dict edited in place deep inside the
    history is not looked at again, as the reader does not read it again: Strands replaces what it changes.)"""

    def __init__(self) -> None:
        self._checked: list[StrandsMessage] = []
        """The last history that needed no merge (its dicts, in order)."""

    def merge(self, messages: list[StrandsMessage]) -> list[StrandsMessage]:
        """`_merge_user_turns(messages)`."""
        checked = self._checked
        k = len(checked)
        if k and starts_with(messages, checked):
            tail = messages[k - 1 :]  # the last message checked, for the pair it makes with the first new one
            if _merge_user_turns(tail) is tail:
                checked.extend(messages[k:])
                return messages
        merged = _merge_user_turns(messages)
        self._checked = list(messages) if merged is messages else []
        return merged


def _merge_user_turns(messages: list[StrandsMessage]) -> list[StrandsMessage]:
    """`messages` with each run of adjacent user messages that hold no tool results merged into one (Bedrock
    refuses two user turns in a row, and a turn mixing tool results with other blocks, so runs that include tool
    results are left alone: chainsum never puts text next to them). `messages` itself when there is no such run
    (two equal roles in a row looked for in C first: a request without any costs one pass over the roles)."""
    roles = [m["role"] for m in messages]
    if True not in map(operator.eq, roles, roles[1:]):
        return messages
    out: list[StrandsMessage] | None = None
    for i, message in enumerate(messages):
        previous = None if not i else out[-1] if out is not None else messages[i - 1]
        if (
            previous is not None
            and previous["role"] == message["role"] == "user"
            and not any("toolResult" in b for b in previous["content"])
            and not any("toolResult" in b for b in message["content"])
        ):
            if out is None:
                out = list(messages[:i])
            out[-1] = {"role": "user", "content": [*previous["content"], *message["content"]]}
        elif out is not None:
            out.append(message)
    return messages if out is None else out
