"""LangChain v1: `ChainsumMiddleware`, an ``AgentMiddleware`` for ``create_agent(middleware=[...])``.

Five lines to switch from LangChain's ``SummarizationMiddleware``::

    from chainsum.integrations.langchain import ChainsumMiddleware

    agent = create_agent(
        model, tools, system_prompt=..., checkpointer=InMemorySaver(),
        middleware=[ChainsumMiddleware(model="gpt-4o")],  # or context_window=N, config=..., archive=...
    )

It takes `ContextManager`'s keyword arguments (``config``, ``model`` or ``context_window``, ``summarizers``,
``strategy``, ``provider``, ``archive``, ``session``, ``on_event``, ...) or a ready ``manager=``, and works two ways:

- ``mode="state"`` (the default, what ``SummarizationMiddleware`` does): ``before_model`` / ``abefore_model`` compact
  the agent's saved messages, answering with ``RemoveMessage(REMOVE_ALL_MESSAGES)`` and the new list, so the
  LangGraph checkpoint holds the compacted history.
- ``mode="request"``: the saved messages are never touched; ``wrap_model_call`` / ``awrap_model_call`` hand the
  model a compacted copy through ``request.override(messages=...)``.

The summaries can come from the agent's own kind of model: ``summarizer=`` takes a LangChain chat model (any
``BaseChatModel``: ``ChainsumMiddleware(context_window=..., summarizer=ChatOpenAI(model="gpt-4.1-mini"))``), or
`model_summarizer` with LangChain's ``"provider:model"`` string (``init_chat_model``). A plain string keeps
chainsum's meaning (``"extractive"``, ``"openai:gpt-4.1-mini"`` for chainsum's own OpenAI summarizer); see
`chainsum.integrations._summarizer` for the rule, the fallback and the usage reported.

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
from collections.abc import Awaitable, Callable, Sequence
from operator import is_
from typing import TYPE_CHECKING, Any, Literal, cast

from ..chain import is_record_message
from ..formats._base import native
from ..formats.langchain import from_object, to_objects
from ..manager import ContextManager, ObjectReader, Prepared, ToolTokens, is_recall_message
from ..messages import Message
from ..store import Archive, MemoryArchive
from ..summarize import SummarizerUsage
from ..summarize.llm import DEFAULT_SYSTEM_PROMPT
from ..tokens import TokenCounter, json_tokens
from ._common import make_manager, require
from ._summarizer import ModelReply, ModelSummarizer, take_summarizer

require("langchain.agents.middleware", package="langchain", extra="langchain")

from langchain.agents.middleware import AgentMiddleware, AgentState  # noqa: E402
from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import (  # noqa: E402
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
)
from langchain_core.runnables import Runnable  # noqa: E402
from langchain_core.tools import BaseTool  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from langgraph.graph.message import REMOVE_ALL_MESSAGES  # noqa: E402  # pyright: ignore[reportMissingTypeStubs]

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest, ModelResponse
    from langgraph.runtime import Runtime

__all__ = ["ChainsumMiddleware", "model_summarizer", "to_objects"]

logger = logging.getLogger(__name__)

Mode = Literal["state", "request"]


def model_summarizer(
    model: BaseChatModel | Runnable[Any, Any] | str, *, system_prompt: str = DEFAULT_SYSTEM_PROMPT
) -> ModelSummarizer:
    """A LangChain chat model as chainsum's summarizer: ``model.ainvoke([SystemMessage, HumanMessage])`` with
    chainsum's system prompt and framed transcript; its ``usage_metadata`` is reported. A string is LangChain's
    ``"provider:model"`` (``init_chat_model``, which needs that provider's LangChain package), the explicit way to
    use LangChain's naming where ``summarizer="..."`` means chainsum's."""
    chat: Runnable[Any, Any]
    if isinstance(model, str):
        from langchain.chat_models import init_chat_model

        chat = init_chat_model(model)
        name = f"langchain:{model}"
    else:
        chat = model
        name = f"langchain:{type(model).__name__}"

    async def call(system: str, transcript: str) -> ModelReply:
        reply: object = await chat.ainvoke([SystemMessage(system), HumanMessage(transcript)])
        if not isinstance(reply, BaseMessage):
            return ModelReply(None)  # a runnable answering something else: no text
        usage = reply.usage_metadata if isinstance(reply, AIMessage) else None
        counted = (
            None
            if usage is None
            else SummarizerUsage(input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"])
        )
        refusal = reply.additional_kwargs.get("refusal")  # OpenAI's refusal, as langchain-openai carries it
        if reply.response_metadata.get("finish_reason") == "content_filter":
            refusal = refusal or "content filter"
        return ModelReply(str(reply.text), counted, refusal if isinstance(refusal, str) and refusal else None)

    return ModelSummarizer(name=name, call=call, model=chat, system_prompt=system_prompt)


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
    conversations keep a manager in memory. ``summarizer=``: a LangChain chat model to write the summaries, a
    chainsum summarizer spec string, or a callable (then the extractive fallback; `model_summarizer` for
    LangChain's ``"provider:model"`` strings). Every other keyword argument is `ContextManager`'s (or pass
    ``manager=``)."""

    def __new__(cls, *args: Any, mode: Mode = "state", **kwargs: Any) -> ChainsumMiddleware:
        """In request mode, an instance of `_RequestOnly`: LangChain adds a graph node for every middleware whose
        class defines ``before_model``, and a node that does nothing still costs about a millisecond a model call."""
        return object.__new__(_RequestOnly if cls is ChainsumMiddleware and mode == "request" else cls)

    def __init__(
        self,
        *,
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
        self.mode: Mode = mode
        self.reserved_tokens = reserved_tokens
        self.count_tools = count_tools
        self.max_threads = max_threads
        self._kwargs = dict(kwargs)
        take_summarizer(
            self._kwargs, _adapt, "LangChain", fail_open=True
        )  # once: every thread's manager shares the summarizers
        self._prefix: str | None = kwargs.get("session")
        self._single: ContextManager | None = None
        if manager is not None:
            self._single = make_manager(manager, self._kwargs)  # raises when given ContextManager's arguments too
        else:
            self._kwargs.pop("session", None)
            self._kwargs.setdefault("archive", MemoryArchive())
            make_manager(None, {**self._kwargs, "session": self.session_of(None)})  # bad arguments fail here
        self.archive: Archive = self._single.archive if self._single is not None else self._kwargs["archive"]
        """The archive every thread's originals go to."""
        self._threads: OrderedDict[str, _Thread] = OrderedDict()
        self._lock = threading.Lock()
        self._tools = ToolTokens(_tool_tokens)

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
    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """State mode: compact the saved messages (a no-op in request mode)."""
        if self.mode != "state":
            return None
        thread = self._thread(self._thread_id(runtime))
        read = thread.read = thread.reader.read(state["messages"])
        prepared = thread.manager.prepare_sync(read, system=thread.system, reserved_tokens=thread.reserved)
        return self._state_update(thread, read, prepared)

    async def abefore_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        if self.mode != "state":
            return None
        thread = self._thread(self._thread_id(runtime))
        read = thread.read = thread.reader.read(state["messages"])
        prepared = await thread.manager.prepare(read, system=thread.system, reserved_tokens=thread.reserved)
        return self._state_update(thread, read, prepared)

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
            output = thread.manager.prepare_sync(read, system=system, reserved_tokens=reserved).messages
        return handler(self._request(thread, request, read, output))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelResponse[Any]:
        thread = self._thread(self._thread_id(request.runtime))
        system, reserved = self._outside(thread, request)
        read = thread.reader.read(request.messages)
        output = self._stashed(thread, read, system, reserved)
        if output is None:
            output = (await thread.manager.prepare(read, system=system, reserved_tokens=reserved)).messages
        return await handler(self._request(thread, request, read, output))

    # for callers -----------------------------------------------------------------------------------------------------
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
