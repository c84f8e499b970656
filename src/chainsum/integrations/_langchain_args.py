"""LangChain's ``SummarizationMiddleware`` arguments, read with LangChain's meaning for `ChainsumMiddleware`.

Kept apart from the middleware so that module stays about the hooks. What is here:

- `parse_trigger` / `parse_keep`: LangChain's ``("tokens"|"messages"|"fraction", n)`` sizes, a dict of them for AND,
  a list for OR, checked at construction with a one-line `ValueError` / `TypeError` (the phrases LangChain's users
  match on kept, since a drop-in raises what the original raised);
- `Trigger`: whether those clauses are met by a history (the middleware then compacts with ``force=True``: chainsum's
  compaction, LangChain's "when");
- `reported_tokens`, `model_provider`, `profile_window`: what a LangChain model and its messages say of tokens;
- `LangChainCounter`: a LangChain ``token_counter(messages) -> int`` as chainsum's `TokenCounter`;
- `langchain_config`, `deprecated`, `check_prompt`, `chat_model`: the constructor's mapping onto chainsum's
  configuration (the migration table in ``docs/integrations.md``); `user_error`, `marked`: a failure raised as
  LangChain raises it, a summary record marked as LangChain marks its own;
- `chat_summarizer` / `messages_summarizer`: the two kinds of LangChain summarizer (a chat model prompted with the
  transcript; a runnable or function handed the messages themselves) as chainsum summarizers, each call tagged
  ``nostream`` and marked internal so it never reaches the agent's stream (`summary_call_config`);
- `calling`: what one hook call tells the summarizer calls it causes (sync or async hook, the objects read), in a
  context variable (chainsum's event loop runs in the hook's thread, so the summarizer calls see it).
"""

from __future__ import annotations

import asyncio
import contextvars
import re
import threading
import warnings
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from langchain.agents.middleware.internal_call_transformer import internal_call_metadata
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.constants import TAG_NOSTREAM  # pyright: ignore[reportMissingTypeStubs]

from ..errors import ChainsumError, SummarizerError
from ..formats.langchain import to_objects
from ..manager import ManagerConfig
from ..messages import Message
from ..summarize import SummarizerUsage, parse_transcript, render_body
from ._summarizer import ModelReply, ModelSummarizer

__all__ = [
    "DEFAULT_KEEP",
    "DEFAULT_TRIM",
    "NO_WINDOW",
    "Clause",
    "LangChainCounter",
    "Size",
    "Trigger",
    "calling",
    "chat_model",
    "chat_name",
    "chat_summarizer",
    "check_prompt",
    "copy_trigger",
    "deprecated",
    "langchain_config",
    "marked",
    "messages_summarizer",
    "model_provider",
    "parse_keep",
    "parse_trigger",
    "profile_window",
    "reported_tokens",
    "summary_call_config",
    "user_error",
]

Kind = Literal["tokens", "messages", "fraction"]
Size = tuple[Kind, float]
"""One of LangChain's context sizes: ``("tokens", 3000)``, ``("messages", 50)``, ``("fraction", 0.8)``."""
Clause = dict[str, float]
"""Thresholds that must all be met (AND): ``{"tokens": 4000, "messages": 10}``."""

_KINDS = ("tokens", "messages", "fraction")


def _check_size(kind: object, value: object, name: str) -> None:
    if kind == "fraction":
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ValueError(f"Fraction {name} values must be numeric, got {value!r}")
        if not 0 < value <= 1:
            raise ValueError(f"Fractional {name} values must be between 0 and 1, got {value}")
    elif kind in ("tokens", "messages"):
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ValueError(f"{kind} {name} values must be integers, got {value!r}")
        if value <= 0:
            raise ValueError(f"{name} thresholds must be greater than 0, got {value}")
    else:
        raise ValueError(f"Unsupported context size type {kind!r} for {name}")


def _size(value: object, name: str) -> Size:
    if not isinstance(value, tuple) or len(cast(tuple[object, ...], value)) != 2:
        raise TypeError(f"{name} takes a (kind, value) tuple such as ('messages', 20), got {value!r}")
    kind, amount = cast(tuple[object, object], value)
    _check_size(kind, amount, name)
    return cast(Size, (kind, amount))


def _clause(mapping: Mapping[object, object]) -> Clause:
    if not mapping:
        raise ValueError("a trigger clause must set at least one of 'tokens', 'messages', 'fraction'")
    out: Clause = {}
    for kind, value in mapping.items():
        if kind not in _KINDS:
            raise ValueError(f"Unsupported trigger metric: {kind!r} (one of {', '.join(_KINDS)})")
        if isinstance(value, bool):  # an int subclass: {"messages": True} is no threshold of 1
            raise ValueError(f"{kind} trigger value must be numeric, got {value!r}")
        if kind != "fraction" and not isinstance(value, int):
            raise ValueError(f"{kind} trigger values must be integers, got {value!r}")
        _check_size(kind, value, "trigger")
        out[cast(str, kind)] = cast(float, value)
    return out


def copy_trigger(trigger: object) -> object:
    """The trigger as given, its dicts and list copied, so a caller's later edits change nothing here."""
    if isinstance(trigger, Mapping):
        return dict(cast(Mapping[object, object], trigger))
    if isinstance(trigger, list):
        items = cast(list[object], trigger)
        return [dict(cast(Mapping[object, object], i)) if isinstance(i, Mapping) else i for i in items]
    return trigger


def parse_trigger(trigger: object) -> list[Clause]:
    """LangChain's `trigger` as OR-ed AND clauses: a tuple is one clause of one threshold, a dict one clause, a
    list any of them; None or ``[]``: no clause (LangChain never summarizes then)."""
    if trigger is None:
        return []
    if isinstance(trigger, Mapping):
        return [_clause(cast(Mapping[object, object], trigger))]
    if isinstance(trigger, tuple):
        kind, value = _size(cast(object, trigger), "trigger")
        return [{kind: value}]
    if isinstance(trigger, list):
        clauses: list[Clause] = []
        for item in cast(list[object], trigger):
            if isinstance(item, Mapping):
                clauses.append(_clause(cast(Mapping[object, object], item)))
            elif isinstance(item, tuple):
                kind, value = _size(cast(object, item), "trigger")
                clauses.append({kind: value})
            else:
                raise TypeError(f"Unsupported trigger item type: {type(item).__name__} (a tuple or a dict)")
        return clauses
    raise TypeError(f"Unsupported trigger type: {type(trigger).__name__} (a tuple, a dict or a list of them)")


def parse_keep(keep: object) -> Size:
    """LangChain's `keep`: one size (no list)."""
    return _size(keep, "keep")


@dataclass(frozen=True, slots=True)
class Trigger:
    """LangChain's trigger clauses over a window (`window`: the model's input tokens, for fractions; None when
    unknown, which construction refuses for a fraction)."""

    clauses: Sequence[Clause]
    window: int | None

    def threshold(self, kind: str, value: float) -> int:
        if kind == "fraction":
            return max(1, int((self.window or 0) * value))
        return int(value)

    def fires(self, n_messages: int, tokens: Callable[[], int], reported: int | None) -> bool:
        """Whether any clause has every threshold met: message count, or tokens counted (`tokens`, called once at
        most) or reported by the provider on the newest AI message (`reported`)."""
        counted: int | None = None
        for clause in self.clauses:
            met = True
            for kind, value in clause.items():
                if kind == "messages":
                    met = n_messages >= value
                else:
                    limit = self.threshold(kind, value)
                    if counted is None:
                        counted = tokens()
                    met = counted >= limit or (reported is not None and reported >= limit)
                if not met:
                    break
            if met:
                return True
        return False


def profile_window(model: object) -> int | None:
    """The model profile's ``max_input_tokens`` (where LangChain reads a model's window), None without one."""
    profile: object = getattr(model, "profile", None)
    if not isinstance(profile, Mapping):
        return None
    tokens = cast(Mapping[str, object], profile).get("max_input_tokens")
    return tokens if isinstance(tokens, int) and tokens > 0 else None


def model_provider(model: object) -> str | None:
    """The provider a LangChain model traces under (``ls_provider``), to tell its own reported usage from another's."""
    params = getattr(model, "_get_ls_params", None)
    if params is None:
        return None
    try:
        provider = cast(Mapping[str, object], params()).get("ls_provider")
    except Exception:  # a model whose params need arguments: no provider to compare
        return None
    return provider if isinstance(provider, str) else None


def _family(provider: str) -> str:
    """A provider's family name: ``amazon_bedrock`` and ``bedrock_converse`` are Bedrock, ``openai-mantle`` is
    OpenAI (a provider tags its messages with one spelling, its model's tracing params with another)."""
    name = provider.lower().removeprefix("amazon_")
    return re.split(r"[-_:]", name, maxsplit=1)[0]


def reported_tokens(messages: Sequence[BaseMessage], provider: str | None) -> int | None:
    """The total tokens the provider reported on the newest AI message, when that message came from the model's
    own provider (another model's count is not this one's)."""
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            usage = message.usage_metadata
            source = message.response_metadata.get("model_provider")
            if usage is None or provider is None or not isinstance(source, str):
                return None
            if _family(source) != _family(provider):
                return None
            return int(usage.get("total_tokens", 0)) or None
    return None


class LangChainCounter:
    """A LangChain ``token_counter(messages) -> int`` as chainsum's `TokenCounter`: a message is counted as the
    LangChain message it is, a text as a human message holding it."""

    def __init__(self, count: Callable[[Iterable[Any]], int]) -> None:
        self.count = count
        self.name = f"langchain:{getattr(count, '__name__', type(count).__name__)}"
        self._cache: dict[int, tuple[Message, int]] = {}

    def count_text(self, text: str) -> int:
        return int(self.count([HumanMessage(text)]))

    def count_message(self, message: Message) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        n = int(self.count(to_objects([message])))
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[id(message)] = (message, n)
        return n

    def count_messages(self, messages: Sequence[Message]) -> int:
        return sum(self.count_message(m) for m in messages)


def summary_call_config() -> RunnableConfig:
    """The config of every summarizer call: tagged ``nostream`` (LangGraph's ``stream_mode="messages"`` skips the
    run) and marked internal (LangChain's ``astream_events`` projection drops it), with ``lc_source`` saying what
    it is, the marks LangChain's own summarizing middleware puts on its call."""
    return {"metadata": {"lc_source": "summarization", **internal_call_metadata()}, "tags": [TAG_NOSTREAM]}


@dataclass(slots=True)
class _Call:
    """What the hook call under way tells the summarizer calls it causes."""

    sync: bool
    """A sync hook (``invoke``): the user's model or runnable is called with ``invoke``, as LangChain calls it."""
    objects: Sequence[BaseMessage] = ()
    read: Sequence[Message] = ()
    by_body: dict[str, BaseMessage] | None = field(default=None)

    def original(self, body: str) -> BaseMessage | None:
        """The caller's own message whose transcript body is `body` (bodies rendered once, on first need)."""
        if self.by_body is None:
            self.by_body = {}
            for obj, message in zip(self.objects, self.read, strict=False):
                self.by_body.setdefault(render_body(message), obj)
        return self.by_body.get(body)


_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("chainsum_langchain_call", default=None)


@contextmanager
def calling(*, sync: bool, objects: Sequence[BaseMessage] = (), read: Sequence[Message] = ()) -> Generator[None]:
    token = _CALL.set(_Call(sync, objects, read))
    try:
        yield
    finally:
        _CALL.reset(token)


async def _in_thread(work: Callable[[], object]) -> object:
    """`work()` on a daemon thread of its own, with this context: a model that hangs is abandoned by chainsum's
    timeout without holding up the event loop's shutdown (which waits for its executor's threads)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[object] = loop.create_future()
    context = contextvars.copy_context()

    def settle(result: object, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(result)

    def run() -> None:
        try:
            result = context.run(work)
        except BaseException as exc:  # handed to the awaiting coroutine, as a call in place would raise it
            if not loop.is_closed():
                loop.call_soon_threadsafe(settle, None, exc)
            return
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=run, name="chainsum-langchain-invoke", daemon=True).start()
    return await done


async def _invoke(runnable: Runnable[Any, Any], given: object) -> object:
    """The user's model or runnable called as LangChain calls it: ``invoke`` from a sync hook (on a thread, so
    chainsum's loop keeps its timeout), ``ainvoke`` from an async one, with the summary call's config."""
    call = _CALL.get()
    config = summary_call_config()
    if call is not None and call.sync:
        return await _in_thread(lambda: runnable.invoke(given, config))
    return await runnable.ainvoke(given, config)


def _usage(reply: AIMessage) -> SummarizerUsage | None:
    usage = reply.usage_metadata
    if usage is None:
        return None
    return SummarizerUsage(input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"])


def _reply(reply: object) -> ModelReply:
    if not isinstance(reply, BaseMessage):
        return ModelReply(None)  # a runnable answering something else: no text
    refusal = reply.additional_kwargs.get("refusal")  # OpenAI's refusal, as langchain-openai carries it
    if reply.response_metadata.get("finish_reason") == "content_filter":
        refusal = refusal or "content filter"
    usage = _usage(reply) if isinstance(reply, AIMessage) else None
    return ModelReply(str(reply.text), usage, refusal if isinstance(refusal, str) and refusal else None)


def chat_summarizer(
    chat: BaseChatModel | Runnable[Any, Any], name: str, system_prompt: str, summary_prompt: str | None
) -> ModelSummarizer:
    """A chat model prompted with chainsum's system prompt and the framed transcript (`summary_prompt`, when
    given, is the human message with the transcript in place of ``{messages}``); its usage is reported."""

    async def call(system: str, transcript: str) -> ModelReply:
        human = transcript if summary_prompt is None else summary_prompt.format(messages=transcript)
        return _reply(await _invoke(chat, [SystemMessage(system), HumanMessage(human)]))

    return ModelSummarizer(name=name, call=call, model=chat, system_prompt=system_prompt)


_ROLES: dict[str, type[BaseMessage]] = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}


def _messages_of(transcript: str) -> list[AnyMessage]:
    """The messages a transcript summarizes: the caller's own objects where a block is one of them as it was read, a
    message of the block's role holding its text otherwise (a summary record, a clipped tool output)."""
    call = _CALL.get()
    out: list[AnyMessage] = []
    for block in parse_transcript(transcript).blocks:
        if block.section != "content":
            continue  # what chainsum shows beside the span (the question asked), not a message to summarize
        original = call.original(block.body) if call is not None else None
        if original is None:
            original = _ROLES.get(block.role, HumanMessage)(block.body)
        out.append(cast(AnyMessage, original))
    return out


def messages_summarizer(runnable: Runnable[Any, Any], name: str) -> ModelSummarizer:
    """LangChain's summarizer protocol: the runnable (a function is made one, as LangChain does) is invoked with
    the messages to summarize and answers the summary text; anything but a string is a `TypeError`."""

    async def call(system: str, transcript: str) -> ModelReply:
        answer = await _invoke(runnable, _messages_of(transcript))
        if not isinstance(answer, str):
            raise TypeError(f"`summarizer` must return a str, got {type(answer).__name__}")
        return ModelReply(answer)

    return ModelSummarizer(name=name, call=call, model=runnable)


def chat_name(chat: object) -> str:
    return f"langchain:{type(chat).__name__}"


def chat_model(model: object, where: str) -> BaseChatModel | Runnable[Any, Any] | None:
    """LangChain's model argument: a chat model or runnable as it is, a string through ``init_chat_model``;
    anything else refused at once."""
    if model is None or isinstance(model, BaseChatModel | Runnable):
        return cast("BaseChatModel | Runnable[Any, Any] | None", model)
    if isinstance(model, str):
        from langchain.chat_models import init_chat_model

        return init_chat_model(model)
    raise TypeError(f"{where}= takes a LangChain chat model or a 'provider:model' name, got {type(model).__name__}")


DEFAULT_KEEP = 20
"""LangChain's default ``keep=("messages", 20)``."""
DEFAULT_TRIM = 4000
"""LangChain's default ``trim_tokens_to_summarize``: chainsum's summarizer input cap."""
NO_WINDOW = 1 << 40
"""The window when none is known (no ``context_window``, no ``window_model``, no profile): only LangChain's trigger
compacts, as in LangChain; chainsum's emergency guard has nothing to guard."""
KEEP_MESSAGES_SHARE = 0.5
"""With ``keep=("messages", n)``: chainsum's ``summary_ratio`` (see `langchain_config`)."""
NO_CAP = 1 << 40
"""``trim_tokens_to_summarize=None``: no input cap (nothing chunked)."""
MIN_CAP = 100
"""chainsum's smallest summarizer input cap."""


def deprecated(
    trigger: object, keep: tuple[str, float], max_tokens: int | None, to_keep: int | None
) -> tuple[object, tuple[str, float]]:
    """LangChain's deprecated ``max_tokens_before_summary`` and ``messages_to_keep``, with its warning."""
    if max_tokens is not None:
        warnings.warn(
            "max_tokens_before_summary is deprecated: use trigger=('tokens', n)", DeprecationWarning, stacklevel=3
        )
        if trigger is None:
            trigger = ("tokens", max_tokens)
    if to_keep is not None:
        warnings.warn("messages_to_keep is deprecated: use keep=('messages', n)", DeprecationWarning, stacklevel=3)
        if keep == ("messages", DEFAULT_KEEP):
            keep = ("messages", to_keep)
    return trigger, keep


def check_prompt(prompt: str) -> None:
    try:
        prompt.format(messages="")
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(f"summary_prompt must format with {{messages}} alone: {type(exc).__name__}: {exc}") from None


def langchain_config(
    config: ManagerConfig,
    clauses: Sequence[Clause],
    keep: Size | None,
    trim: int | Literal["chainsum"] | None,
    window: int | None,
) -> ManagerConfig:
    """chainsum's configuration with LangChain's meaning of `trigger`, `keep` and `trim_tokens_to_summarize` (None
    and ``"chainsum"``: left as the configuration has them).

    With a trigger, LangChain's clauses decide when (the middleware compacts with ``force``), so chainsum's own
    ratio trigger stands back to its emergency (the request would overflow), its gates for short histories and its
    cooldown with it. `keep` messages is the verbatim tail (chainsum's smallest is 2), and a compaction summarizes at
    least `KEEP_MESSAGES_SHARE` of the messages before it, landing at about that share of the tokens below where it
    started (chainsum's cut, not "everything before the tail": a budget smaller than the tail would make the tail
    give way); tokens or a fraction is what a compaction leaves (its budget, the reset ratio)."""
    changes: dict[str, Any] = {}
    if trim != "chainsum":
        changes["summarizer_input_cap_tokens"] = NO_CAP if trim is None else max(MIN_CAP, trim)
    if clauses:
        changes |= {"trigger_token_ratio": 1.0, "emergency_token_ratio": max(1.0, config.emergency_token_ratio)}
        changes |= {"min_messages": 0, "cooldown_messages": 0, "cache_aware": False}
    if keep is None:
        return replace(config, **changes)
    changes["cache_aware"] = False
    kind, value = keep
    reference = window or NO_WINDOW
    recall = config.recall_token_ratio if window is not None else 0.0  # no window: no room to share out for recall
    changes["recall_token_ratio"] = recall
    trigger_ratio = float(changes.get("trigger_token_ratio", config.trigger_token_ratio))
    if kind == "messages":
        changes |= {"preserve_recent": max(2, int(value)), "summary_ratio": KEEP_MESSAGES_SHARE}
    else:
        # the compaction's budget is the reset ratio's tokens less the recall room: the room is added back
        tokens = value * reference if kind == "fraction" else value
        ratio = min(max(tokens / reference + recall, 1e-9), trigger_ratio - 1e-6)
        changes |= {"preserve_recent": 2, "summary_ratio": 0.1, "reset_token_ratio": ratio}
    if "reset_token_ratio" not in changes and config.reset_token_ratio >= trigger_ratio:
        changes["reset_token_ratio"] = trigger_ratio * 0.875
    return replace(config, **changes)


def marked(record: BaseMessage) -> BaseMessage:
    """A summary record marked ``lc_source="summarization"``, as LangChain marks its own summary message, so a chat
    front end that hides or badges summaries finds chainsum's too."""
    return record.model_copy(update={"additional_kwargs": {**record.additional_kwargs, "lc_source": "summarization"}})


def user_error(error: SummarizerError) -> BaseException:
    """What the user's model or summarizer raised, as LangChain lets it propagate (chainsum's error when the failure
    was chainsum's own: a timeout, an empty answer)."""
    cause = error.__cause__
    while isinstance(cause, SummarizerError) and cause.__cause__ is not None:
        cause = cause.__cause__
    if isinstance(cause, Exception) and not isinstance(cause, ChainsumError):
        return cause
    return error
