"""LangChain v1: `ChainsumMiddleware`, an ``AgentMiddleware`` for ``create_agent(middleware=[...])``.

A drop-in for LangChain's ``SummarizationMiddleware``: change the class name and nothing else::

    from chainsum.integrations.langchain import ChainsumMiddleware

    agent = create_agent(
        model, tools, system_prompt=..., checkpointer=InMemorySaver(),
        middleware=[ChainsumMiddleware("openai:gpt-4.1-mini", trigger=("fraction", 0.8), keep=("messages", 20))],
    )

LangChain's arguments keep LangChain's meaning (issue 33): ``model`` is the summarization model (its profile's
``max_input_tokens`` the window), ``trigger`` / ``keep`` LangChain's sizes (the middleware checks the trigger and
compacts with ``force``; `chainsum.integrations._langchain_args` reads them), ``summary_prompt``,
``trim_tokens_to_summarize`` (chainsum's summarizer input cap), ``token_counter``, and ``summarizer`` LangChain's
protocol (a chat model or its name, or a runnable or function handed the messages). A failing model raises its own
error with the state untouched, as LangChain's does, unless ``fail_open=True``; every summary call is tagged
``nostream`` and marked internal, so it never reaches the agent's stream. ``docs/integrations.md`` has the migration
table (what differs). Beside them it takes `ContextManager`'s keyword arguments (``config``, ``context_window``,
``summarizers``, ``strategy``, ``provider``, ``archive``, ``session``, ``on_event``, ...; chainsum's window table is
``window_model=``) or a ready ``manager=``, and works two ways:

- ``mode="state"`` (the default, what ``SummarizationMiddleware`` does): ``before_model`` / ``abefore_model`` compact
  the agent's saved messages, answering with ``RemoveMessage(REMOVE_ALL_MESSAGES)`` and the new list, so the
  LangGraph checkpoint holds the compacted history.
- ``mode="request"``: the saved messages are never touched; ``wrap_model_call`` / ``awrap_model_call`` hand the
  model a compacted copy through ``request.override(messages=...)``.

chainsum's own summarizers (its specs, ``transcript -> summary`` callables, `model_summarizer`) go in
``summarizers=[...]``; see `chainsum.integrations._summarizer` for the fallback and the usage reported.

Either way the originals of everything compacted are in chainsum's archive (``middleware.archive``, shared by every
thread of the agent; ``archive.expand(record_id)`` gives them back, and `to_objects` turns them into LangChain
messages again), and the model call itself always goes through ``wrap_model_call``, which is where what LangChain
keeps apart is measured: ``request.system_message`` is not in ``request.messages`` but is counted against the window
(passed as ``system=``), and so are the tool definitions the model is bound to. ``invoke`` runs the sync hooks,
``ainvoke`` the async ones; a sync hook called inside a running event loop is safe (`chainsum._sync`).

What it guarantees, where ``SummarizationMiddleware`` (langchain 1.5) does not: no ``ToolMessage`` is ever left
without the ``AIMessage`` whose call it answers (LangChain's cut point can keep one: its issue #38352), a
``SystemMessage`` kept in the message list stays (LangChain's summarizes it into the summary), a parallel call's
results stay together, the current turn is never summarized, and a failing summarizer loses nothing.

One ``ContextManager`` serves one conversation, so the middleware keeps one per LangGraph thread (its
``thread_id``), named after it (``session`` as a prefix when given: ``"user-42/<thread_id>"``), all sharing one
archive; the least recently used beyond `max_threads` are let go (their state is in the archive). Without a
checkpointer there is no thread id, and every call counts as the same conversation: give each conversation its
``thread_id`` (or its own middleware). A ``manager=`` given serves every call, for an agent with one conversation.
Calls for one thread are expected one at a time, as a conversation's turns are.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from operator import is_
from typing import TYPE_CHECKING, Any, Literal, cast

from .._sync import run_sync
from ..chain import is_record_message
from ..errors import SummarizerError
from ..formats._base import native
from ..formats.langchain import from_object, to_objects
from ..manager import (
    ContextManager,
    ManagerConfig,
    ObjectReader,
    Prepared,
    ToolTokens,
    context_window,
    is_recall_message,
)
from ..messages import Message
from ..store import Archive, MemoryArchive
from ..summarize import SummarizerLike, call_summarizer, render_transcript
from ..summarize.llm import DEFAULT_SYSTEM_PROMPT
from ..tokens import TokenCounter, json_tokens
from ._common import make_manager, require
from ._summarizer import ModelSummarizer, take_summarizer

require("langchain.agents.middleware", package="langchain", extra="langchain")

from langchain.agents.middleware import AgentMiddleware, AgentState  # noqa: E402
from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AnyMessage,
    BaseMessage,
    RemoveMessage,
)
from langchain_core.messages.utils import count_tokens_approximately  # noqa: E402
from langchain_core.runnables import Runnable  # noqa: E402
from langchain_core.runnables.base import coerce_to_runnable  # noqa: E402
from langchain_core.tools import BaseTool  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langgraph.graph.message import REMOVE_ALL_MESSAGES  # noqa: E402  # pyright: ignore[reportMissingTypeStubs]

from ._langchain_args import (  # noqa: E402
    DEFAULT_KEEP,
    DEFAULT_TRIM,
    NO_WINDOW,
    Clause,
    LangChainCounter,
    Size,
    Trigger,
    calling,
    chat_model,
    chat_name,
    chat_summarizer,
    check_prompt,
    copy_trigger,
    deprecated,
    langchain_config,
    marked,
    messages_summarizer,
    model_provider,
    parse_keep,
    parse_trigger,
    profile_window,
    reported_tokens,
    user_error,
)

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest, ModelResponse
    from langgraph.runtime import Runtime

__all__ = ["ChainsumMiddleware", "model_summarizer", "to_objects"]

logger = logging.getLogger(__name__)

Mode = Literal["state", "request"]


def model_summarizer(
    model: BaseChatModel | Runnable[Any, Any] | str, *, system_prompt: str = DEFAULT_SYSTEM_PROMPT
) -> ModelSummarizer:
    """A LangChain chat model as chainsum's summarizer, for ``summarizers=[...]`` or `chainsum.compact`:
    ``model.ainvoke([SystemMessage, HumanMessage])`` with chainsum's system prompt and framed transcript, tagged so
    it never reaches an agent's stream; its ``usage_metadata`` is reported. A string is LangChain's
    ``"provider:model"`` (``init_chat_model``, which needs that provider's LangChain package)."""
    chat = chat_model(model, "model")
    name = f"langchain:{model}" if isinstance(model, str) else chat_name(chat)
    return chat_summarizer(cast(Runnable[Any, Any], chat), name, system_prompt, None)


def _adapt(model: object) -> ModelSummarizer | None:
    return model_summarizer(model) if isinstance(model, BaseChatModel) else None


def _convert(items: Sequence[BaseMessage], i: int) -> tuple[Message]:
    return (from_object(items[i]),)


def _fields(obj: BaseMessage) -> tuple[object, ...]:
    """What a LangChain message holds (messages are mutable: an assigned field is a new value)."""
    return tuple(obj.__dict__.values())


def _key(obj: BaseMessage) -> tuple[type, str] | None:
    """A message's id (LangGraph's ``add_messages`` gives each one): a checkpoint loads new objects, same ids."""
    return None if obj.id is None else (type(obj), obj.id)


def _same_fields(a: BaseMessage, b: BaseMessage) -> bool:
    return a.__dict__ == b.__dict__


def _reader() -> ObjectReader[BaseMessage]:
    """LangChain objects → canonical messages, converting only objects not seen before (`ObjectReader`).

    Within one run LangGraph hands the same message objects from step to step; after a checkpoint load they are new
    objects with the same ids and fields, found by that id and compared field by field (about a tenth of converting
    them). A message whose fields were assigned since it was read (a retried question edited in place) is read
    again: the last one of the previous call is always compared field by field."""
    return ObjectReader(_convert, snapshot=_fields, key=_key, same=_same_fields, recheck=1)


def _tool_tokens(tools: Sequence[BaseTool | dict[str, Any]], counter: TokenCounter) -> int:
    """Tokens of the tool definitions as OpenAI-style JSON schemas (what most providers are sent)."""
    total = 0
    for tool in tools:
        try:
            schema: Any = convert_to_openai_tool(tool)
        except Exception:  # a provider-specific tool dict: its JSON is what is sent
            schema = tool if isinstance(tool, dict) else {"name": str(getattr(tool, "name", ""))}
        total += json_tokens(counter, schema)
    return total


class _Thread:
    """One conversation: its manager, its reader, what was written for it, and the last request's outside sizes."""

    def __init__(self, manager: ContextManager) -> None:
        self.manager = manager
        self.reader = _reader()
        self.written: dict[int, tuple[Message, Any]] = {}
        """id(Message) → (Message, object) for messages the manager made (records, masked results)."""
        self.system: Message | None = None
        self.system_source: object = None
        self.reserved = 0
        self.stash: tuple[Sequence[Message], Sequence[Message], Message | None, int] | None = None
        """State mode: (the messages ``before_model`` left in the state, the history it prepared for them, the system
        prompt and reserve it counted), so that the model call that follows reuses it instead of preparing again."""
        self.read: list[Message] | None = None
        """State mode: what ``before_model`` read (the reader's read before the model call's own)."""


class ChainsumMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Keeps a LangChain agent's model calls inside the context window (see the module docstring).

    `mode`: ``"state"`` compacts the saved messages, ``"request"`` only what the model receives. `reserved_tokens`:
    room kept free besides the system prompt and the tools (the answer, if your window counts it). `count_tools`:
    count the tool definitions bound to the model against the window (default True). `max_threads`: how many
    conversations keep a manager in memory. `model`, `trigger`, `keep`, `token_counter`, `summary_prompt`,
    `trim_tokens_to_summarize`, `summarizer` and the deprecated `max_tokens_before_summary` / `messages_to_keep`:
    LangChain's ``SummarizationMiddleware`` arguments, with its meaning. `fail_open`: chainsum's extractive summary
    when the model fails, instead of raising. `window_model`: a model name for chainsum's window table. Every other
    keyword argument is `ContextManager`'s (or pass ``manager=``)."""

    def __new__(cls, *args: Any, mode: Mode = "state", **kwargs: Any) -> ChainsumMiddleware:
        """In request mode, an instance of `_RequestOnly`: LangChain adds a graph node for every middleware whose
        class defines ``before_model``, and a node that does nothing still costs about a millisecond a model call."""
        return object.__new__(_RequestOnly if cls is ChainsumMiddleware and mode == "request" else cls)

    def __init__(
        self,
        model: BaseChatModel | Runnable[Any, Any] | str | None = None,
        *,
        trigger: object = None,
        keep: tuple[str, float] = ("messages", DEFAULT_KEEP),
        token_counter: Callable[[Iterable[Any]], int] = count_tokens_approximately,
        summary_prompt: str | None = None,
        trim_tokens_to_summarize: int | None = DEFAULT_TRIM,
        summarizer: object = None,
        max_tokens_before_summary: int | None = None,
        messages_to_keep: int | None = None,
        fail_open: bool = False,
        window_model: str | None = None,
        mode: Mode = "state",
        manager: ContextManager | None = None,
        reserved_tokens: int = 0,
        count_tools: bool = True,
        max_threads: int = 1024,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        if mode not in ("state", "request"):
            raise ValueError(f"mode must be 'state' or 'request', got {mode!r}")
        if "format" in kwargs:
            raise TypeError("the LangChain middleware reads LangChain messages; format= does not apply")
        trigger, keep = deprecated(trigger, keep, max_tokens_before_summary, messages_to_keep)
        self.mode: Mode = mode
        self.reserved_tokens = reserved_tokens
        self.count_tools = count_tools
        self.max_threads = max_threads
        self.fail_open = fail_open
        self.model: BaseChatModel | Runnable[Any, Any] | None = chat_model(model, "model")
        """LangChain's ``model``: the summarization model (a string resolved with ``init_chat_model``); its
        profile's ``max_input_tokens`` is the window when none is given."""
        self.trigger: object = copy_trigger(trigger)
        """LangChain's ``trigger`` as given (copied)."""
        self.trigger_clauses: list[Clause] = parse_trigger(self.trigger)
        """The trigger as OR-ed AND clauses (``[{"messages": 5}, {"tokens": 2000, "messages": 10}]``)."""
        self.keep: Size = parse_keep(keep)
        self.summary_prompt: str = summary_prompt if summary_prompt is not None else DEFAULT_SYSTEM_PROMPT
        """The prompt the summarization model gets: chainsum's system prompt unless one with ``{messages}`` was
        given (then sent as the human message, the transcript in place of ``{messages}``)."""
        if summary_prompt is not None:
            check_prompt(summary_prompt)
        self.trim_tokens_to_summarize = trim_tokens_to_summarize
        self._token_counter = token_counter
        self.summarizer: Runnable[Any, Any] | None = None
        """LangChain's ``summarizer`` when it replaces the model call (a runnable, a function made one); None when
        a chat model (or ``model``) writes the summaries."""
        self._kwargs = dict(kwargs)
        self._prefix: str | None = kwargs.get("session")
        self._single: ContextManager | None = None
        if manager is not None:
            if self._langchain_given(model, trigger, keep, summarizer, summary_prompt):
                raise TypeError("pass either manager= or the LangChain arguments (model, trigger, ...), not both")
            self._single = make_manager(manager, self._kwargs)  # raises when given ContextManager's arguments too
            self.window: int | None = manager.window
        else:
            self.window = self._window_of(window_model)
            self._configure(summarizer, summary_prompt)
            self._kwargs.pop("session", None)
            self._kwargs.setdefault("archive", MemoryArchive())
            make_manager(None, {**self._kwargs, "session": self.session_of(None)})  # bad arguments fail here
        if any("fraction" in c for c in self.trigger_clauses) or self.keep[0] == "fraction":
            if self.window is None:
                raise ValueError(
                    "Model profile information is required to use fractional token limits, and is unavailable "
                    "for the specified model: give the model a profile with max_input_tokens, or context_window="
                )
        self._trigger = Trigger(self.trigger_clauses, self.window)
        self.archive: Archive = self._single.archive if self._single is not None else self._kwargs["archive"]
        """The archive every thread's originals go to."""
        self._threads: OrderedDict[str, _Thread] = OrderedDict()
        self._lock = threading.Lock()
        self._tools = ToolTokens(_tool_tokens)

    # LangChain's arguments -------------------------------------------------------------------------------------------
    @staticmethod
    def _langchain_given(*values: object) -> bool:
        model, trigger, keep, summarizer, prompt = values
        return any(v is not None for v in (model, trigger, summarizer, prompt)) or keep != ("messages", DEFAULT_KEEP)

    def _window_of(self, window_model: str | None) -> int | None:
        """The window the trigger's fractions and chainsum's own guard read: ``context_window=``, else chainsum's
        table for ``window_model=``, else the model's profile (``max_input_tokens``, as LangChain reads it)."""
        given = self._kwargs.get("context_window")
        if given is not None:
            return int(given)
        if window_model is not None:
            self._kwargs["model"] = window_model  # ContextManager's name for it
            return context_window(window_model)
        profiled = profile_window(self.model)
        if profiled is not None:
            self._kwargs["context_window"] = profiled
        return profiled

    def _configure(self, summarizer: object, summary_prompt: str | None) -> None:
        """Map LangChain's arguments onto chainsum's (the migration table in ``docs/integrations.md``)."""
        kwargs = self._kwargs
        if self._token_counter is not count_tokens_approximately:
            kwargs.setdefault("counter", LangChainCounter(self._token_counter))
        base = kwargs.get("config")
        config: ManagerConfig = base if isinstance(base, ManagerConfig) else ManagerConfig.from_env()
        # LangChain's defaults apply where LangChain's arguments are used (a model or a trigger), not under a
        # chainsum configuration that only names a summarizer
        drop_in = self.model is not None or bool(self.trigger_clauses)
        keep = self.keep if drop_in or self.keep != ("messages", DEFAULT_KEEP) else None
        trim = self.trim_tokens_to_summarize
        config = langchain_config(
            config, self.trigger_clauses, keep, trim if drop_in or trim != DEFAULT_TRIM else "chainsum", self.window
        )
        if self.window is None and (self.model is not None or self.trigger_clauses):
            # LangChain measures no window then: only its trigger compacts (chainsum's own guard has none to keep)
            kwargs["context_window"] = NO_WINDOW
            if not self.trigger_clauses:
                config = replace(config, enabled=False)  # LangChain's trigger=None: never
        kwargs["config"] = config
        # chainsum's summarizers= given beside model=: they write the summaries, the model is the profile only (as
        # LangChain's summarizer= leaves it)
        mine = summarizer is None and kwargs.get("summarizers") is not None
        writer = None if mine else self._writer(summarizer, summary_prompt)
        if writer is not None:
            kwargs["summarizer"] = writer
        take_summarizer(kwargs, _adapt, "LangChain", fail_open=self.fail_open)

    def _writer(self, summarizer: object, summary_prompt: str | None) -> ModelSummarizer | None:
        """The summarizer LangChain's arguments name: `summarizer` (a chat model or its name prompted like
        ``model``; a runnable or function handed the messages), else ``model``; None: chainsum's own."""
        if summarizer is None:
            if self.model is None:
                return None
            return chat_summarizer(self.model, chat_name(self.model), DEFAULT_SYSTEM_PROMPT, summary_prompt)
        if isinstance(summarizer, str | BaseChatModel):
            chat = chat_model(summarizer, "summarizer")
            return chat_summarizer(
                cast(Runnable[Any, Any], chat), chat_name(chat), DEFAULT_SYSTEM_PROMPT, summary_prompt
            )
        if isinstance(summarizer, ModelSummarizer):
            return summarizer
        if isinstance(summarizer, Runnable) or callable(summarizer):
            runnable: Runnable[Any, Any] = coerce_to_runnable(cast(Any, summarizer))
            self.summarizer = runnable
            return messages_summarizer(runnable, f"langchain:{type(cast(object, summarizer)).__name__}")
        raise TypeError(
            "summarizer= takes a LangChain chat model, a 'provider:model' name, a Runnable or a function "
            f"messages -> str; got {type(summarizer).__name__}"
        )

    @property
    def token_counter(self) -> Callable[[Iterable[Any]], int]:
        """LangChain's ``token_counter(messages) -> int``; its default (``count_tokens_approximately``) means
        chainsum's own counter. Assigning one applies to the conversations that start after it."""
        return self._token_counter

    @token_counter.setter
    def token_counter(self, counter: Callable[[Iterable[Any]], int]) -> None:
        self._token_counter = counter
        if self._single is None:
            if counter is count_tokens_approximately:
                self._kwargs.pop("counter", None)
            else:
                self._kwargs["counter"] = LangChainCounter(counter)
            with self._lock:
                self._threads.clear()

    @property
    def name(self) -> str:
        return "ChainsumMiddleware"

    # threads -------------------------------------------------------------------------------------------------------
    def session_of(self, thread_id: str | None) -> str:
        """The archive session of a LangGraph thread."""
        if thread_id is None:
            return self._prefix or "default"
        return f"{self._prefix}/{thread_id}" if self._prefix else thread_id

    def manager_for(self, thread_id: str | None = None) -> ContextManager:
        """The `ContextManager` serving a thread (made on first use)."""
        return self._thread(thread_id).manager

    def _thread(self, thread_id: str | None) -> _Thread:
        key = "" if self._single is not None else thread_id or ""
        with self._lock:
            thread = self._threads.get(key)
            if thread is None:
                if self._single is not None:
                    manager = self._single
                else:
                    manager = make_manager(None, {**self._kwargs, "session": self.session_of(thread_id)})
                thread = self._threads[key] = _Thread(manager)
                while len(self._threads) > self.max_threads:
                    self._threads.popitem(last=False)
            else:
                self._threads.move_to_end(key)
            return thread

    @staticmethod
    def _thread_id(runtime: Runtime[Any] | None) -> str | None:
        info = getattr(runtime, "execution_info", None)
        thread_id = getattr(info, "thread_id", None)
        return thread_id if isinstance(thread_id, str) else None

    # reading and writing -------------------------------------------------------------------------------------------
    def _objects(self, thread: _Thread, output: Sequence[Message]) -> list[BaseMessage]:
        """LangChain objects for the manager's output: the caller's own object for each message it kept, a new one
        (made once, then reused) for each message the manager made. A masked result keeps the fields of its
        original that are not JSON (a tool's ``artifact`` object)."""
        reader = thread.reader
        out: list[BaseMessage | None] = []
        for m in output:
            origin = reader.origin(m)
            out.append(origin[0] if origin is not None else None)
        for k, m in enumerate(output):
            hit = thread.written.get(id(m)) if out[k] is None else None
            if hit is not None and hit[0] is m:
                out[k] = hit[1]
        made = [k for k, obj in enumerate(out) if obj is None]
        if made:
            originals: dict[str | None, BaseMessage] = {o.id: o for o in reader.latest if o.id is not None}
            for k, obj in zip(made, to_objects([output[k] for k in made]), strict=True):
                odd = native(output[k].extras, "langchain").get("unjsonable")
                original = originals.get(output[k].id)
                if odd and original is not None:
                    obj = obj.model_copy(update={key: getattr(original, key) for key in odd})
                elif is_record_message(output[k]):
                    obj = marked(obj)
                out[k] = obj
        done = cast(list[BaseMessage], out)
        thread.written = {id(m): (m, o) for m, o in zip(output, done, strict=True) if reader.origin(m) is None}
        return done

    def _outside(self, thread: _Thread, request: ModelRequest[Any]) -> tuple[Message | None, int]:
        """The system prompt as a canonical message (counted by the manager, never changed) and the tokens of the
        tool definitions plus `reserved_tokens`; remembered for the state hook, which runs before the request
        exists."""
        source = request.system_message
        if source is not thread.system_source:
            thread.system_source = source
            thread.system = from_object(source) if source is not None else None
        tools = self._tools.count(request.tools, thread.manager.counter) if self.count_tools else 0
        reserved = self.reserved_tokens + tools
        thread.reserved = reserved
        return thread.system, reserved

    @staticmethod
    def _kept(prepared: Prepared[Any]) -> Sequence[Message]:
        """The output less its recall block (recalled originals are for one request, not for the saved state)."""
        if not prepared.recalled:
            return prepared.messages
        return [m for m in prepared.messages if not is_recall_message(m)]

    @staticmethod
    def _unchanged(thread: _Thread, read: list[Message]) -> None:
        """State mode, nothing compacted: the model call that follows sends this read as it is."""
        thread.stash = (read, read, thread.system, thread.reserved)

    def _state_update(self, thread: _Thread, read: list[Message], prepared: Prepared[Any]) -> dict[str, Any] | None:
        kept = self._kept(prepared)
        thread.stash = (kept, prepared.messages, thread.system, thread.reserved)
        if _same(kept, read):
            return None
        objects = self._objects(thread, kept)
        for obj, message in zip(objects, kept, strict=True):
            thread.reader.remember(obj, (message,))
        logger.debug(
            "session=<%s>, messages_before=<%d>, messages_after=<%d> | state compacted",
            thread.manager.session,
            len(read),
            len(kept),
        )
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *objects]}

    @staticmethod
    def _stashed(
        thread: _Thread, read: list[Message], system: Message | None, reserved: int
    ) -> Sequence[Message] | None:
        """What ``before_model`` prepared, when the model call is about exactly what it left in the state (no other
        middleware changed the messages, and the system prompt and tools are the ones it counted)."""
        stash, thread.stash = thread.stash, None
        if stash is None or stash[2] is not system or stash[3] != reserved:
            return None
        # the state hook's read, read again unchanged (`ObjectReader.repeated`): no need to compare it object by object
        repeated = stash[0] is thread.read and thread.reader.repeated
        if not repeated and not _same(stash[0], read):
            return None
        return read if stash[1] is stash[0] else stash[1]  # nothing compacted: this read is the history to send

    def _request(
        self, thread: _Thread, request: ModelRequest[Any], read: list[Message], prepared: Sequence[Message]
    ) -> ModelRequest[Any]:
        if _same(prepared, read):
            return request
        output = list(prepared)
        system = request.system_message
        if output and output[0].role == "system" and is_record_message(output[0]) and system is not None:
            # a system-role summary record (summary_role="system") joins the one system prompt LangChain sends
            record = output.pop(0).text
            content: str | list[str | dict[str, Any]] = (
                f"{system.content}\n\n{record}"
                if isinstance(system.content, str)
                else [*system.content, {"type": "text", "text": record}]
            )
            merged = system.model_copy(update={"content": content})
            return request.override(messages=self._any(thread, output), system_message=merged)
        return request.override(messages=self._any(thread, output))

    def _any(self, thread: _Thread, output: Sequence[Message]) -> list[AnyMessage]:
        return cast(list[AnyMessage], self._objects(thread, output))

    # the hooks -----------------------------------------------------------------------------------------------------
    def _force(self, thread: _Thread, objects: Sequence[BaseMessage], read: Sequence[Message]) -> bool:
        """Whether LangChain's trigger is met (then chainsum compacts now, whatever its own trigger says)."""
        if not self.trigger_clauses:
            return False
        if self._token_counter is count_tokens_approximately:
            return self._trigger.fires(
                len(objects), lambda: thread.manager.counter.count_messages(read), self._reported(objects)
            )
        return self.trigger_fires(objects)

    def _force_view(self, thread: _Thread, objects: Sequence[BaseMessage], view: Sequence[Message]) -> bool:
        """Request mode: whether LangChain's trigger is met by the history the model would be sent now."""
        if not self.trigger_clauses:
            return False
        if self._token_counter is count_tokens_approximately:
            tokens = thread.manager.counter.count_messages
            return self._trigger.fires(len(view), lambda: tokens(view), self._reported(objects))
        counter = self._token_counter
        return self._trigger.fires(len(view), lambda: int(counter(to_objects(list(view)))), self._reported(objects))

    def trigger_fires(self, messages: Sequence[BaseMessage], tokens: int | None = None) -> bool:
        """Whether LangChain's `trigger` is met by `messages` (`tokens`: their count, when known; else
        `token_counter` counts them, or chainsum's own counter for LangChain's default one). A met trigger makes the
        next model call compact; chainsum's own window guard acts besides."""
        if not self.trigger_clauses:
            return False

        def counted() -> int:
            if tokens is not None:
                return tokens
            if self._token_counter is count_tokens_approximately:
                return self.manager_for(None).counter.count_messages(self._readable(messages))
            return int(self._token_counter(messages))

        return self._trigger.fires(len(messages), counted, self._reported(messages))

    def _reported(self, messages: Sequence[BaseMessage]) -> int | None:
        return reported_tokens(messages, model_provider(self.model))

    def _prepare_sync(
        self, thread: _Thread, objects: Sequence[Any], read: list[Message], system: Message | None, reserved: int
    ) -> Prepared[Any] | None:
        """The manager's answer (None: unchanged, the summary refused as not smaller), with LangChain's trigger as
        ``force`` and what the summarizer calls need to know in context. In request mode the trigger reads what the
        model would be sent (the state keeps growing there: read on it, a met trigger would compact every call)."""
        manager = thread.manager
        with calling(sync=True, objects=objects, read=read):
            try:
                if self.mode == "state":
                    force = self._force(thread, objects, read)
                    return manager.prepare_sync(read, system=system, reserved_tokens=reserved, force=force)
                prepared = manager.prepare_sync(read, system=system, reserved_tokens=reserved)
                if not self._force_view(thread, objects, prepared.messages):
                    return prepared
                return manager.prepare_sync(read, system=system, reserved_tokens=reserved, force=True)
            except SummarizerError as exc:
                self._failed(thread, read, exc)
                return None

    async def _prepare(
        self, thread: _Thread, objects: Sequence[Any], read: list[Message], system: Message | None, reserved: int
    ) -> Prepared[Any] | None:
        """The manager's answer (None: unchanged, the summary refused as not smaller), with LangChain's trigger as
        ``force`` and what the summarizer calls need to know in context. In request mode the trigger reads what the
        model would be sent (the state keeps growing there: read on it, a met trigger would compact every call)."""
        manager = thread.manager
        with calling(sync=False, objects=objects, read=read):
            try:
                if self.mode == "state":
                    force = self._force(thread, objects, read)
                    return await manager.prepare(read, system=system, reserved_tokens=reserved, force=force)
                prepared = await manager.prepare(read, system=system, reserved_tokens=reserved)
                if not self._force_view(thread, objects, prepared.messages):
                    return prepared
                return await manager.prepare(read, system=system, reserved_tokens=reserved, force=True)
            except SummarizerError as exc:
                self._failed(thread, read, exc)
                return None

    @staticmethod
    def _failed(thread: _Thread, read: list[Message], error: SummarizerError) -> None:
        """A compaction that raised: the user's model's (or summarizer's) own error is raised, as LangChain lets it
        propagate, the state untouched. A summary chainsum's check refused as not smaller than what it replaced is
        not the model failing: the history goes on unchanged, as when there is nothing to gain."""
        if error.kind != "too_long" or error.__cause__ is not None:
            raise user_error(error) from None
        logger.debug("session=<%s> | summary not smaller than its span; history unchanged", thread.manager.session)

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """State mode: compact the saved messages (a no-op in request mode). When the user's model or summarizer
        fails, its error is raised with the state untouched (``fail_open=True``: chainsum's fallback instead)."""
        if self.mode != "state":
            return None
        thread = self._thread(self._thread_id(runtime))
        objects = state["messages"]
        read = thread.read = thread.reader.read(objects)
        prepared = self._prepare_sync(thread, objects, read, thread.system, thread.reserved)
        return self._unchanged(thread, read) if prepared is None else self._state_update(thread, read, prepared)

    async def abefore_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        if self.mode != "state":
            return None
        thread = self._thread(self._thread_id(runtime))
        objects = state["messages"]
        read = thread.read = thread.reader.read(objects)
        prepared = await self._prepare(thread, objects, read, thread.system, thread.reserved)
        return self._unchanged(thread, read) if prepared is None else self._state_update(thread, read, prepared)

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        """What the model receives: compacted to the window with the system prompt and tools counted, with the
        recall block of archived originals relevant to the newest question."""
        thread = self._thread(self._thread_id(request.runtime))
        system, reserved = self._outside(thread, request)
        read = thread.reader.read(request.messages)
        output = self._stashed(thread, read, system, reserved)
        if output is None:
            prepared = self._prepare_sync(thread, request.messages, read, system, reserved)
            output = read if prepared is None else prepared.messages
        return handler(self._request(thread, request, read, output))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelResponse[Any]:
        thread = self._thread(self._thread_id(request.runtime))
        system, reserved = self._outside(thread, request)
        read = thread.reader.read(request.messages)
        output = self._stashed(thread, read, system, reserved)
        if output is None:
            prepared = await self._prepare(thread, request.messages, read, system, reserved)
            output = read if prepared is None else prepared.messages
        return await handler(self._request(thread, request, read, output))

    # for callers ---------------------------------------------------------------------------------------------------
    async def summarize(self, messages: Sequence[BaseMessage]) -> str:
        """A summary of `messages` written now by the summarizers a compaction uses (the user's model first; an
        error of it raised as a compaction raises it, unless ``fail_open``): for a caller that wants one outside a
        compaction, or to check a summarizer before an agent runs."""
        with calling(sync=False, objects=messages, read=self._readable(messages)):
            return await self._summary(self._readable(messages))

    def summarize_sync(self, messages: Sequence[BaseMessage]) -> str:
        """`summarize` from synchronous code: the user's model and runnable are called with ``invoke``."""
        read = self._readable(messages)
        with calling(sync=True, objects=messages, read=read):
            return run_sync(lambda: self._summary(read))

    @staticmethod
    def _readable(messages: Sequence[BaseMessage]) -> list[Message]:
        return [from_object(m) for m in messages]

    async def _summary(self, read: Sequence[Message]) -> str:
        if not read:
            raise ValueError("summarize() needs at least one message")
        transcript = render_transcript(read)
        last: SummarizerError | None = None
        for summarizer in self.manager_for(None).summarizers:
            try:
                return await call_summarizer(cast("SummarizerLike", summarizer), transcript)
            except SummarizerError as exc:
                last = exc
                if not self.fail_open:
                    raise user_error(exc) from None
        raise last if last is not None else SummarizerError("no summarizer configured", kind="invalid")

    # -----------------------------------------------------------------------------------------------------
    def expand(self, record_id: str) -> list[BaseMessage]:
        """The LangChain messages a summary record replaced, from the archive (each verified by its SHA-256)."""
        expand: Callable[[str], list[Message]] | None = getattr(self.archive, "expand", None)
        if expand is None:
            raise TypeError(f"{type(self.archive).__name__} cannot expand records")
        return to_objects(expand(record_id))


def _same(a: Sequence[Message], b: Sequence[Message]) -> bool:
    """The very same messages (identity: equal messages read from other objects are not the same history)."""
    return a is b or (len(a) == len(b) and all(map(is_, a, b)))


class _RequestOnly(ChainsumMiddleware):
    """`ChainsumMiddleware` in request mode: the state hooks are LangChain's own (absent), so no node is added."""

    before_model = AgentMiddleware.before_model  # pyright: ignore[reportAssignmentType]
    abefore_model = AgentMiddleware.abefore_model  # pyright: ignore[reportAssignmentType]
