"""Strands Agents: `ChainsumConversationManager`, a `ConversationManager` backed by chainsum's `ContextManager`,
and a drop-in for Strands' ``SummarizingConversationManager``.

Adoption (``pip install "chainsum[strands]"``)::

    from chainsum.integrations.strands import ChainsumConversationManager

    # what SummarizingConversationManager(summary_ratio=0.3, preserve_recent_messages=10) was
    agent = Agent(model=model, tools=tools, conversation_manager=ChainsumConversationManager(0.3, 10))

It takes ``SummarizingConversationManager``'s arguments with their meaning (``summary_ratio``,
``preserve_recent_messages``, ``summarization_agent``, ``summarization_system_prompt``, ``pin_first``,
``proactive_compression``; the migration table in ``docs/integrations.md`` says where chainsum differs) beside
`ContextManager`'s, and as Strands does it summarizes with the agent's own model (``agent.aux_model``, else
``agent.model``) when no summarizer is named, and raises when that model fails (see *Failures*). Without
``context_window=`` or ``model=``, the window is the agent's model's ``context_window_limit`` (Strands' 200,000 when
its config has none).

Which Strands argument to use: ``conversation_manager=``. Strands 1.62 also has ``context_manager=`` (``"auto"``,
``"agentic"``, a config dict or its own experimental ``ContextManager`` plugin, from ``strands._context_manager``);
when it is set, Strands replaces any ``conversation_manager`` by a no-op one (with a warning), so do not pass both.

How it maps onto Strands (what its source does, 1.62):

- **Proactive compression** runs in an async ``BeforeModelCallEvent`` hook (`register_hooks`, which calls the
  base's first, as Strands requires): before every model call, `ContextManager.prepare` reads ``agent.messages``,
  counts the agent's system prompt and tool specs against the window when it has them (Strands' own managers read
  neither, so a test double without them is served too), and when it compacts, ``agent.messages`` is replaced in
  place. ``proactive_compression=False`` turns it off (only `reduce_context` compacts, as in Strands' default);
  a threshold is chainsum's trigger ratio.
- **Overflow**: Strands calls `reduce_context` with the ``ContextWindowOverflowException`` and retries the model
  call by recursing, with no bound (its issue #3338). `reduce_context` therefore always shrinks the history or
  raises. A refusal of a request the manager counted as fitting may mean the provider's window is smaller: the
  window is lowered to 90 % of what was refused for this reduction, and goes back after the next model call that
  succeeds; only a second refusal at about that size keeps it lowered (a warning says so). When nothing could be
  removed the window goes back at once and the error says why (a history too short to summarize, or what is never
  compacted, the system prompt, tool specs and the current turn, over the window alone).
- **Failures**: with the model summarizer (the agent's, ``summarization_agent=``'s or ``summarizer=``'s),
  ``fail_open=False`` (the default) raises as Strands does: in `reduce_context` after an overflow, the
  summarizer's error (`chainsum.errors.SummarizerError`, whose message carries the model's) is raised from the
  overflow, the history untouched; a proactive compaction that fails logs a warning and the model call goes ahead
  (Strands' best effort). ``fail_open=True`` keeps chainsum's extractive fallback, which cannot fail.
- **Ids**: every message chainsum writes into ``agent.messages`` (the summary record, masked or clipped results)
  carries a durable ``tracking_id`` (a clipped result keeps its original's), as Strands 1.62 requires of every
  history message; the session state keeps them.
- `apply_management` (after each invocation) runs the same non-forced `prepare`, so a history given to
  ``Agent(messages=...)`` or restored from a session is brought under the trigger before it grows further. Both it
  and `reduce_context` are synchronous calls from inside Strands' running event loop; `ContextManager.prepare_sync`
  runs its async work on a worker thread there.
- **Sessions**: a Strands session stores every message ever appended, and restores ``prepend + stored[offset:]``
  where ``prepend`` is what `restore_from_session` returns and ``offset`` is ``removed_message_count``. After each
  compaction ``agent.messages`` is split into a *prefix* (the summary record, masked or clipped results, pinned
  messages: what the session does not hold in place) and a *verbatim tail*; the prefix goes into `get_state`, and
  ``removed_message_count`` counts the stored messages before the tail. So a restored agent gets exactly the
  history it had; the originals are in chainsum's archive (`ContextManager.archive`).
- **The request** goes through an ``InvokeModelStage.Input`` middleware: it adds this request's **recall** block
  (archived originals relevant to the newest user message), never written into ``agent.messages``, and merges
  adjacent user messages holding no tool results, since the Bedrock Converse API wants turns to alternate.

**The summarizer**: ``summarization_agent=`` takes a Strands ``Agent`` (only its model is called, with chainsum's
system prompt and framed transcript: the agent is not run, so its messages, tools and hooks stay as they were) and
``summarizer=`` a Strands ``Model``, chainsum's own spec string (``"extractive"``: chainsum's model-free
summarizer) or a callable. See `chainsum.integrations._summarizer` for the rule and the usage reported.

One instance serves one agent (one conversation). Pass ``session=`` (chainsum's key in the archive) when several
conversations share one archive.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import operator
import weakref
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..chain import is_record_message
from ..errors import MissingDependencyError, SummarizerError
from ..formats import bedrock
from ..manager import ContextManager, ManagerConfig, Prepared, ToolTokens, is_recall_message
from ..messages import Message
from ..summarize.llm import DEFAULT_SYSTEM_PROMPT
from ._common import make_manager
from ._strands import (
    STRANDS_DEFAULT_WINDOW,
    UserTurns,
    adapt,
    check_agent,
    check_pin_first,
    check_preserve_recent,
    check_threshold,
    clamp_summary_ratio,
    classify,
    give_tracking_ids,
    model_summarizer,
    new_tracking_id,
    strands_reader,
    stream_reply,
    system_text,
    tool_tokens,
    tools_of,
)
from ._summarizer import ModelReply, ModelSummarizer, take_summarizer

try:
    from strands.agent.conversation_manager import ConversationManager
    from strands.hooks import AfterModelCallEvent, AgentInitializedEvent, BeforeModelCallEvent, HookRegistry
    from strands.middleware import InvokeModelContext, InvokeModelStage
    from strands.models import Model
    from strands.types.content import Message as StrandsMessage
    from strands.types.exceptions import ContextWindowOverflowException
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("strands-agents", "strands") from exc

if TYPE_CHECKING:
    from strands.agent.agent import Agent
    from strands.agent.conversation_manager import ProactiveCompressionConfig

__all__ = ["ChainsumConversationManager", "model_summarizer"]

logger = logging.getLogger(__name__)

_STATE_PREFIX = "chainsum_prefix"
"""Key of the prefix messages in `get_state` (the session's ``conversation_manager_state``)."""

_LEARNED_WINDOW_SHARE = 0.9
"""After a refusal of a request counted at N tokens, the window becomes this share of N."""

_SAME_REFUSAL = 1.1
"""A second refusal at most this share of the first one's size confirms the lowered window."""

_MIN_RECENT = 2
"""The fewest recent messages chainsum's configuration keeps verbatim (``preserve_recent``'s floor)."""


@dataclass(frozen=True, slots=True)
class _Frame:
    """What one `prepare` of an agent's history is given: the pinned head held out, the rest read as `Message`s,
    and what the agent sends besides (counted against the window)."""

    pinned: list[StrandsMessage]
    messages: list[Message]
    system: str | None
    reserved: int


class ChainsumConversationManager(ConversationManager):
    """A Strands ``ConversationManager`` that keeps the agent inside its context window with chainsum.

    The first four arguments and ``pin_first`` / ``proactive_compression`` are ``SummarizingConversationManager``'s
    (None: the configuration's, 0.3 and 10 by default), read and set as attributes of the same names; ``fail_open``
    opts into chainsum's extractive fallback; the rest are `ContextManager`'s (``config``, ``context_window`` or
    ``model``, ``summarizers``, ``archive``, ``session``, ``on_event``, ...; the provider defaults to ``"bedrock"``)
    or a ready ``manager=``, made without ``format=``. `count_tool_specs` counts the agent's tool specs against the
    window. See the module docstring for how each Strands call is served.
    """

    def __init__(
        self,
        summary_ratio: float | None = None,
        preserve_recent_messages: int | None = None,
        summarization_agent: Agent | None = None,
        summarization_system_prompt: str | None = None,
        *,
        pin_first: int | None = None,
        proactive_compression: bool | ProactiveCompressionConfig | None = None,
        fail_open: bool = False,
        summarizer: object = None,
        config: ManagerConfig | None = None,
        manager: ContextManager | None = None,
        count_tool_specs: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(proactive_compression=None)  # chainsum's hook below does it, with chainsum's trigger
        threshold = check_threshold(proactive_compression)
        ratio = None if summary_ratio is None else clamp_summary_ratio(summary_ratio)
        recent = None if preserve_recent_messages is None else check_preserve_recent(preserve_recent_messages)
        self.pin_first: int | None = check_pin_first(pin_first)
        """The first messages of the history kept as they are, in front, whatever is compacted (Strands' meaning)."""
        self.proactive_compression: bool | ProactiveCompressionConfig | None = proactive_compression
        """As given: None, chainsum's trigger; False, no compaction before a model call; else Strands' threshold."""
        self.summarization_agent: Agent | None = summarization_agent
        self.summarization_system_prompt: str | None = summarization_system_prompt
        self.fail_open = fail_open
        """Whether a failing model summarizer falls back to chainsum's extractive one (else it raises)."""
        summarizer = self._summarizer(summarization_agent, summarization_system_prompt, summarizer, fail_open)
        self._preserve_recent = recent
        self._window_from_agent = False
        self._by_agent_model = False
        """Whether the agent's own model writes the summaries (Strands' default)."""
        if manager is not None:
            tuned = ratio is not None or recent is not None or isinstance(threshold, float)
            if tuned or summarizer is not None or config is not None:
                raise TypeError("with manager= pass the summarizer and the ratios to that manager's config")
            self.manager: ContextManager = make_manager(manager, kwargs)
            """The `ContextManager` doing the work: its archive holds every original taken out of
            ``agent.messages``."""
        else:
            config = _tuned(config or ManagerConfig.from_env(), ratio, recent, threshold)
            kwargs["config"] = config
            self._by_agent_model = (
                summarizer is None and kwargs.get("summarizers") is None and not _configured_model(config)
            )
            if self._by_agent_model:
                summarizer = self._agent_model_summarizer(summarization_system_prompt)
            kwargs["summarizer"] = summarizer
            take_summarizer(kwargs, adapt, "Strands", fail_open=fail_open)
            kwargs.setdefault("provider", "bedrock")
            if kwargs.get("context_window") is None and kwargs.get("model") is None and config.context_window is None:
                kwargs["context_window"] = STRANDS_DEFAULT_WINDOW
                self._window_from_agent = True
            if self._by_agent_model:
                window = kwargs.get("context_window") or kwargs["config"].context_window
                kwargs["config"] = _fit_summarizer_input(kwargs["config"], window)
            self.manager = make_manager(None, kwargs)
        self.count_tool_specs = count_tool_specs
        self._proactive = threshold is not False
        self._prefix: list[StrandsMessage] = []
        """The messages at the head of ``agent.messages`` that the session did not store (see the module doc)."""
        self._summary: StrandsMessage | None = None
        self._recall: dict[int, tuple[int, list[tuple[int, StrandsMessage]]]] = {}
        """Per agent (by id): the history length the recall block was made for, and its items with their index."""
        self._agents: weakref.WeakSet[Agent] = weakref.WeakSet()
        self._serving_agent: Any = None
        """The agent whose history is being prepared: its model writes the summaries by default."""
        self._restore_window: int | None = None
        """The window to go back to after a provisional lowering (see `_lower_window`)."""
        self._suspect: int | None = None
        """Tokens of the last request refused although counted as fitting."""
        self._reader = strands_reader()
        self._tools = ToolTokens(tool_tokens)
        self._turns = UserTurns()
        self._warned = False

    # Strands' attributes -----------------------------------------------------------------------------------------
    @property
    def summary_ratio(self) -> float:
        """Share of the messages summarized at once (0.1 to 0.8): the manager configuration's ``summary_ratio``."""
        return self.manager.config.summary_ratio

    @summary_ratio.setter
    def summary_ratio(self, value: float) -> None:
        self.manager.config = dataclasses.replace(self.manager.config, summary_ratio=clamp_summary_ratio(value))

    @property
    def preserve_recent_messages(self) -> int:
        """Most recent messages kept verbatim: the manager configuration's ``preserve_recent``, or the 0 or 1 given
        (chainsum keeps 2 at least: the current turn is never summarized)."""
        return self.manager.config.preserve_recent if self._preserve_recent is None else self._preserve_recent

    @preserve_recent_messages.setter
    def preserve_recent_messages(self, value: int) -> None:
        self._preserve_recent = check_preserve_recent(value)
        recent = max(_MIN_RECENT, self._preserve_recent)
        self.manager.config = dataclasses.replace(self.manager.config, preserve_recent=recent)

    @property
    def summary_message(self) -> StrandsMessage | None:
        """The newest summary record chainsum wrote into the history (None before the first compaction)."""
        return self._summary

    # Strands' interface ------------------------------------------------------------------------------------------
    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """The base's hooks (Strands requires it), then chainsum's: compaction before each model call, the window
        check after it, and the recall middleware when the agent is initialized."""
        super().register_hooks(registry, **kwargs)
        registry.add_callback(BeforeModelCallEvent, self._before_model_call)
        registry.add_callback(AfterModelCallEvent, self._after_model_call)
        registry.add_callback(AgentInitializedEvent, self._agent_initialized)

    def apply_management(self, agent: Agent, **kwargs: Any) -> None:
        """After an invocation: compact when the history is over the trigger (nothing to do is the common case)."""
        if not self._proactive:
            return
        with self._serving(agent):
            frame = self._frame(agent)
            try:
                prepared = self.manager.prepare_sync(
                    frame.messages, system=frame.system, reserved_tokens=frame.reserved
                )
            except SummarizerError as failure:
                logger.warning("error=<%s> | compaction after the invocation failed; history kept", failure)
                return
            self._apply(agent, frame, prepared, recall=False)

    def reduce_context(self, agent: Agent, e: Exception | None = None, **kwargs: Any) -> None:
        """Compact now, whatever the ratio. With an overflow `e`, the history shrinks or an error is raised from `e`
        (never a return without progress, which would make Strands retry the same request forever): the
        summarizer's when it failed, else a ``ContextWindowOverflowException`` saying why nothing could go. Without
        `e` (a best-effort call) a failure is logged."""
        with self._serving(agent):
            frame = self._frame(agent)
            window = self.manager.window
            if e is not None:
                self._lower_window(frame)
            before = len(agent.messages)
            try:
                prepared = self.manager.prepare_sync(
                    frame.messages, system=frame.system, reserved_tokens=frame.reserved, force=True
                )
            except SummarizerError as failure:
                self._undo_lowering()
                if e is None:
                    logger.warning("error=<%s> | best-effort compaction failed; history kept", failure)
                    return
                logger.error("error=<%s> | summarization failed after a context overflow; history kept", failure)
                raise failure from e
            shrank = bool(prepared.records) and self._apply(agent, frame, prepared, recall=False)
            logger.debug(
                "messages_before=<%d>, messages_after=<%d>, tokens_before=<%d>, shrank=<%s>, overflow=<%s> | reduced",
                before,
                len(agent.messages),
                prepared.tokens_before,
                shrank,
                e is not None,
            )
            if shrank:
                return
            self._undo_lowering()
            if e is not None:
                raise ContextWindowOverflowException(self._why_not(frame, prepared.tokens_after, window)) from e

    def get_state(self) -> dict[str, Any]:
        """Strands' state (``__name__``, ``removed_message_count``) and the prefix messages, for the session."""
        return {**super().get_state(), _STATE_PREFIX: self._prefix}

    def restore_from_session(self, state: dict[str, Any]) -> list[StrandsMessage] | None:
        """Take the state back; the prefix messages are returned for Strands to put before the stored tail."""
        super().restore_from_session(state)
        self._prefix = list(state.get(_STATE_PREFIX) or [])
        records = [m for m in self._prefix if any(map(is_record_message, bedrock.load([m]).messages))]
        self._summary = records[-1] if records else None
        return list(self._prefix) or None

    # hooks -------------------------------------------------------------------------------------------------------
    async def _before_model_call(self, event: BeforeModelCallEvent) -> None:
        """Compact before the model call when over the trigger. Async (Strands' agent awaits it), so that a
        compaction waiting on its summarizer model does not block the agent's event loop, as a synchronous hook
        would (Strands' own proactive hook is synchronous: ``invoke_callbacks`` refuses this one)."""
        if not self._proactive:
            return
        agent = event.agent
        with self._serving(agent):
            frame = self._frame(agent)
            try:
                prepared = await self.manager.prepare(
                    frame.messages, system=frame.system, reserved_tokens=frame.reserved
                )
            except SummarizerError as failure:  # Strands' proactive compression is best effort: the call goes on
                logger.warning("error=<%s> | compaction before the model call failed; history kept", failure)
                return
            self._apply(agent, frame, prepared, recall=True)

    def _after_model_call(self, event: AfterModelCallEvent) -> None:
        """A model call that succeeded with a provisionally lowered window: the refusal was not the window's."""
        if event.exception is None and self._restore_window is not None:
            logger.debug("window=<%d> | a model call succeeded; the provisional window is lifted", self._restore_window)
            self._undo_lowering()

    def _agent_initialized(self, event: AgentInitializedEvent) -> None:
        agent = event.agent
        self._adopt_window(agent)
        if agent not in self._agents:
            self._agents.add(agent)
            agent.add_middleware(InvokeModelStage.Input, self._request)

    def _request(self, context: InvokeModelContext) -> InvokeModelContext:
        """The model's copy of the history, made ready to send: this request's recall block put in (never into
        ``agent.messages``), then adjacent user messages without tool results merged (`merge_user_turns`)."""
        messages: list[StrandsMessage] = context.messages
        pending = self._recall.pop(id(context.agent), None)
        if pending is not None and len(messages) >= pending[0]:  # else the history changed since the hook
            messages = list(messages)
            for index, item in pending[1]:
                messages.insert(index, copy.deepcopy(item))
        merged = self._turns.merge(messages)
        return context if merged is context.messages else context.replace(messages=merged)

    # the window --------------------------------------------------------------------------------------------------
    def _adopt_window(self, agent: Agent) -> None:
        """Without a window given, the agent's model's ``context_window_limit`` is the window (once)."""
        if not self._window_from_agent:
            return
        self._window_from_agent = False
        limit = getattr(getattr(agent, "model", None), "context_window_limit", None)
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            self.manager.window = limit

    def _lower_window(self, frame: _Frame) -> None:
        """The provider refused this history although the manager counted it as fitting: its window may be smaller
        than the manager's, at most 90 % of what was refused. The first such refusal lowers the window only until a
        model call succeeds (`_after_model_call`) or the reduction finds nothing to remove (`_undo_lowering`): a
        provider refuses for other reasons too, and one refusal of a three-message history must not leave the
        manager with a window of 81 tokens. A second refusal at about the same size keeps it. (A request already
        over the window teaches nothing.)"""
        counter = self.manager.counter
        refused = counter.count_messages(frame.messages) + frame.reserved
        refused += counter.count_text(frame.system) if frame.system else 0
        window = self.manager.window
        if refused > window:
            return
        learned = max(1, int(refused * _LEARNED_WINDOW_SHARE))
        if self._suspect is not None and refused <= self._suspect * _SAME_REFUSAL:
            logger.warning(
                "refused_tokens=<%d>, window=<%d>, learned_window=<%d> | the provider refused requests counted as "
                "fitting twice; lowering the window (set context_window= to the model's real window)",
                refused,
                window,
                learned,
            )
            self._restore_window = None
        else:
            logger.info(
                "refused_tokens=<%d>, window=<%d>, provisional_window=<%d> | the provider refused a request counted "
                "as fitting; lowering the window until a model call succeeds",
                refused,
                window,
                learned,
            )
            if self._restore_window is None:
                self._restore_window = window
        self._suspect = refused
        self.manager.window = learned

    def _undo_lowering(self) -> None:
        if self._restore_window is not None:
            self.manager.window = self._restore_window
            self._restore_window = None

    def _why_not(self, frame: _Frame, tokens: int, window: int) -> str:
        """Why `reduce_context` removed nothing, for the error raised from the overflow: what chainsum never
        compacts (the system prompt, the tool specs and the current turn, from the newest user prompt on) when that
        alone is over the window; else a refusal of what fits the window, with nothing to compact."""
        floor = self._floor(frame)
        count = len(frame.pinned) + len(frame.messages)
        if floor > window:
            return (
                f"chainsum could not shrink the history: what it never compacts (the system prompt, the tool specs "
                f"and the current turn) is {floor} tokens alone, over the window of {window}"
            )
        return (
            f"chainsum could not shrink the history: the model refused {tokens} tokens in {count} messages, within "
            f"the window of {window}; {floor} of them are what chainsum never compacts (the system prompt, the tool "
            "specs and the current turn), and for the rest there are insufficient messages for summarization (the "
            f"newest {self.preserve_recent_messages} stay verbatim, and a summary of the older ones would not be "
            "smaller); if the model's window is smaller, pass context_window="
        )

    def _floor(self, frame: _Frame) -> int:
        counter = self.manager.counter
        messages = frame.messages
        start = next((i for i in range(len(messages) - 1, -1, -1) if _is_prompt(messages[i])), 0)
        floor = counter.count_messages(messages[start:]) + frame.reserved
        return floor + (counter.count_text(frame.system) if frame.system else 0)

    # helpers -----------------------------------------------------------------------------------------------------
    def _summarizer(self, agent: Agent | None, system_prompt: object, summarizer: object, fail_open: object) -> object:
        """The summarizer given (``summarization_agent=`` or ``summarizer=``), a Strands one as a `ModelSummarizer`
        with `system_prompt`; None when neither is given. Checks the arguments as Strands does, in one line."""
        if not isinstance(fail_open, bool):
            raise TypeError(f"fail_open must be a bool, got {type(fail_open).__name__}")
        if system_prompt is not None and not isinstance(system_prompt, str):
            raise TypeError(f"summarization_system_prompt must be a str, got {type(system_prompt).__name__}")
        prompt = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
        if agent is not None:
            if system_prompt is not None:  # Strands' rule and words: an agent comes with its own prompt
                raise ValueError("Cannot provide both summarization_agent and summarization_system_prompt: pass one")
            check_agent(agent)
            if summarizer is not None:
                raise TypeError("pass summarization_agent= or summarizer=, not both")
            return model_summarizer(agent)
        if isinstance(summarizer, Model):
            return model_summarizer(summarizer, system_prompt=prompt)
        if system_prompt is not None and summarizer is not None:
            raise TypeError("summarization_system_prompt= is for a Strands model summarizer, not for this summarizer=")
        return summarizer

    def _agent_model_summarizer(self, system_prompt: str | None) -> ModelSummarizer:
        """Strands' default: the model of the agent being served (``aux_model``, else ``model``) writes the summary."""

        async def call(system: str, transcript: str) -> ModelReply:
            agent = self._serving_agent
            if agent is None:
                raise SummarizerError(
                    "no Strands agent is being served: its model writes the summaries", kind="invalid"
                )
            model = getattr(agent, "aux_model", None) or agent.model
            return await stream_reply(model, system, transcript)

        prompt = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
        return ModelSummarizer(name="strands:agent model", call=call, classify=classify, system_prompt=prompt)

    @contextmanager
    def _serving(self, agent: Agent) -> Generator[None]:
        self._adopt_window(agent)
        self._serving_agent = agent
        try:
            yield
        finally:
            self._serving_agent = None

    def _frame(self, agent: Agent) -> _Frame:
        """The agent's history as `prepare` gets it: the pinned head held out (`_pinned`), the rest read."""
        items = agent.messages
        pinned = self._pinned(items)
        rest = items[pinned:] if pinned else items
        reserved = self._tools.count(tools_of(agent), self.manager.counter) if self.count_tool_specs else 0
        head = list(items[:pinned])
        if head:
            reserved += self.manager.counter.count_messages(bedrock.load(head).messages)
        return _Frame(head, self._reader.read(rest), system_text(agent), reserved)

    def _pinned(self, items: list[StrandsMessage]) -> int:
        """How many messages at the head are pinned: ``pin_first``, taken on to the end of a tool call's results and
        to a user message after it, so that the rest still starts a valid history."""
        k = min(self.pin_first or 0, len(items))
        if not k:
            return 0
        while k < len(items) and (items[k]["role"] != "user" or any("toolResult" in b for b in items[k]["content"])):
            k += 1
        return k

    def _apply(self, agent: Agent, frame: _Frame, prepared: Prepared[Any], *, recall: bool) -> bool:
        """Write what `prepare` returned for the frame into ``agent.messages`` (in place), without its recall block,
        which is kept for this request's middleware when `recall`. True when the history changed."""
        self._recall.pop(id(agent), None)
        output, given = prepared.messages, frame.messages
        if output is given or (len(output) == len(given) and all(map(operator.is_, output, given))):
            return False
        history, block = self._write(output, frame.pinned)
        if block and recall:
            self._recall[id(agent)] = (len(history), block)
        current = agent.messages
        if len(history) == len(current) and all(map(operator.is_, history, current)):
            return False
        self._account(current, history)
        current[:] = history
        return True

    def _write(
        self, output: Sequence[Message], pinned: list[StrandsMessage]
    ) -> tuple[list[StrandsMessage], list[tuple[int, StrandsMessage]]]:
        """The history as Strands dicts (the pinned head first), and the recall block's dicts with their index in
        history + block. `Message`s that came from one dict, in order and unchanged, become that very dict again (so
        the session's messages stay verbatim); anything else (a summary record, masked results) is written as
        Bedrock dicts, each with a ``tracking_id`` (`give_tracking_ids`)."""
        reader = self._reader
        history: list[StrandsMessage] = list(pinned)
        block: list[tuple[int, StrandsMessage]] = []
        run: list[Message] = []
        written: list[StrandsMessage] = []

        def flush() -> None:
            if run:
                dicts = self._dump(run)
                if len(dicts) == len(run):  # one dict per message: read them back as these very messages
                    for d, m in zip(dicts, run, strict=True):
                        reader.remember(d, (m,))
                        if is_record_message(m):
                            self._summary = d
                written.extend(dicts)
                history.extend(dicts)
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
                recalled = self._dump([message])[0]
                recalled["tracking_id"] = new_tracking_id()
                block.append((len(history) + len(block), recalled))
            else:
                run.append(message)
            i += 1
        flush()
        new = {id(d) for d in written}
        taken = {t for d in history if id(d) not in new and isinstance(t := d.get("tracking_id"), str) and t}
        give_tracking_ids(written, taken)
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


def _is_prompt(message: Message) -> bool:
    """A user message that is not tool results: where a turn starts."""
    return message.role == "user" and not any(p.kind == "tool_result" for p in message.parts)


def _tuned(config: ManagerConfig, ratio: float | None, recent: int | None, threshold: object) -> ManagerConfig:
    """`config` with the Strands arguments given: ``summary_ratio``, ``preserve_recent_messages`` (chainsum's floor
    of 2 kept) and a ``proactive_compression`` threshold as the trigger (the reset below it)."""
    if ratio is not None:
        config = dataclasses.replace(config, summary_ratio=ratio)
    if recent is not None:
        config = dataclasses.replace(config, preserve_recent=max(_MIN_RECENT, recent))
    if isinstance(threshold, float):
        reset = min(config.reset_token_ratio, threshold * 7 / 8)
        config = dataclasses.replace(config, trigger_token_ratio=threshold, reset_token_ratio=reset)
    return config


def _fit_summarizer_input(config: ManagerConfig, window: object) -> ManagerConfig:
    """When the agent's own model summarizes, its transcripts must fit that model's window too: the input cap goes
    down to half of a window given (chunked beyond it, as any long span is). A window adopted from the agent's model
    later is one of a real model, far above the cap."""
    if not isinstance(window, int) or isinstance(window, bool):
        return config
    cap = max(100, min(config.summarizer_input_cap_tokens, window // 2))
    return dataclasses.replace(config, summarizer_input_cap_tokens=cap)


def _configured_model(config: ManagerConfig) -> bool:
    """Whether the configuration names chainsum's own summarizer (``SUMMARIZATION_MODEL_ID``, ...): then that is
    the user's choice, not the agent's model."""
    return bool(config.model_id or config.model_preference)
