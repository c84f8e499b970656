"""What `chainsum.integrations.strands` needs besides its conversation manager: a Strands model as chainsum's
summarizer, reading Strands' message dicts, counting what an agent sends outside them, the durable ids Strands
requires, the request's user-turn merge, and the checks of the arguments `SummarizingConversationManager` takes
(with its meaning: see the migration table in ``docs/integrations.md``). Package-private: the adapter module
re-exports `model_summarizer` from here, and nothing else."""

from __future__ import annotations

import math
import operator
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from ..errors import MissingDependencyError, SummarizerError
from ..formats import bedrock
from ..manager import ObjectReader, starts_with
from ..messages import Message
from ..summarize import SummarizerUsage
from ..summarize.llm import DEFAULT_SYSTEM_PROMPT
from ..tokens import TokenCounter, json_tokens
from ._summarizer import ModelReply, ModelSummarizer

try:
    from strands.models import Model
    from strands.types.content import Message as StrandsMessage
    from strands.types.exceptions import ContextWindowOverflowException, ModelThrottledException
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError("strands-agents", "strands") from exc

if TYPE_CHECKING:
    from strands.agent.agent import Agent
    from strands.types.tools import AgentTool

__all__ = [
    "DEFAULT_THRESHOLD",
    "STRANDS_DEFAULT_WINDOW",
    "UserTurns",
    "adapt",
    "check_agent",
    "check_pin_first",
    "check_preserve_recent",
    "check_threshold",
    "clamp_summary_ratio",
    "classify",
    "give_tracking_ids",
    "merge_user_turns",
    "model_summarizer",
    "new_tracking_id",
    "strands_reader",
    "stream_reply",
    "system_text",
    "tool_tokens",
    "tools_of",
]

STRANDS_DEFAULT_WINDOW = 200_000
"""The window Strands assumes for a model whose config gives no ``context_window_limit`` (its utilization
estimate's fallback): the manager's window when neither the manager's arguments nor the agent's model say one."""

DEFAULT_THRESHOLD = 0.7
"""``proactive_compression=True``: compress at this share of the window, as Strands does."""


# the model --------------------------------------------------------------------------------------------------------
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
        return await stream_reply(chosen, system, transcript)

    return ModelSummarizer(name=name, call=call, model=chosen, classify=classify, system_prompt=system_prompt)


async def stream_reply(model: Any, system: str, transcript: str) -> ModelReply:
    """One ``model.stream`` request (keyword arguments, as Strands calls its own summarizing model) read into a
    reply. `model` is a Strands ``Model``, or whatever stands for one on the agent (Strands' tests use mocks)."""
    texts: list[str] = []
    usage: SummarizerUsage | None = None
    stop: object = None
    request: list[StrandsMessage] = [{"role": "user", "content": [{"text": transcript}]}]
    async for event in model.stream(request, tool_specs=None, system_prompt=system):
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


def _section(event: dict[str, Any], key: str) -> dict[str, Any]:
    """``event[key]`` when it is a dict, else an empty one."""
    value = event.get(key)
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def classify(exc: BaseException) -> SummarizerError | None:
    """Strands' own exceptions: its providers raise ``ModelThrottledException`` for a throttled request and
    ``ContextWindowOverflowException`` for a prompt over the model's window (the same request cannot succeed)."""
    if isinstance(exc, ModelThrottledException):
        return SummarizerError(str(exc)[:200], kind="rate_limit")
    if isinstance(exc, ContextWindowOverflowException):
        return SummarizerError(str(exc)[:200], kind="invalid")
    return None


def adapt(model: object) -> ModelSummarizer | None:
    from strands.agent.agent import Agent

    if isinstance(model, ModelSummarizer):
        return model
    return model_summarizer(model) if isinstance(model, Model | Agent) else None


# arguments ------------------------------------------------------------------------------------------------------
def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def clamp_summary_ratio(value: object) -> float:
    """``summary_ratio`` as Strands takes it: a number, clamped to 0.1..0.8 (Strands clamps rather than refusing)."""
    if not _number(value) or math.isnan(cast(float, value)):
        raise TypeError(f"summary_ratio must be a number (0.1 to 0.8), got {value!r}")
    return max(0.1, min(0.8, float(cast(float, value))))


def check_preserve_recent(value: object) -> int:
    """``preserve_recent_messages``: a count of messages, 0 or more."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"preserve_recent_messages must be an int (messages), got {value!r}")
    if value < 0:
        raise ValueError(f"preserve_recent_messages must be 0 or more, got {value}")
    return value


def check_pin_first(value: object) -> int | None:
    """``pin_first``: None, or a count of messages (a negative one is 0, as Strands makes it)."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"pin_first must be an int (messages) or None, got {value!r}")
    return max(0, value)


def check_threshold(proactive_compression: object) -> float | bool | None:
    """``proactive_compression`` as Strands takes it: None (chainsum's trigger), False (none), True (0.7) or
    ``{"compression_threshold": r}`` with ``0 < r <= 1``; the share of the window to compact at, or None / False."""
    if proactive_compression is None or proactive_compression is False:
        return proactive_compression
    if proactive_compression is True:
        return DEFAULT_THRESHOLD
    if not isinstance(proactive_compression, dict):
        raise TypeError(
            "proactive_compression must be None, a bool or {'compression_threshold': float}, got "
            f"{type(proactive_compression).__name__}"
        )
    threshold: object = cast(dict[str, object], proactive_compression).get("compression_threshold", DEFAULT_THRESHOLD)
    if not _number(threshold):
        raise TypeError(f"proactive_compression: compression_threshold must be a number, got {threshold!r}")
    ratio = float(cast(float, threshold))
    if not 0 < ratio <= 1:
        raise ValueError(f"proactive_compression: compression_threshold must be in (0, 1], got {threshold}")
    return ratio


def check_agent(agent: object) -> None:
    """``summarization_agent`` must be a Strands ``Agent``: anything else is refused now, in one line (a mock
    agent used to be taken for a callable summarizer and hang the constructor)."""
    from strands.agent.agent import Agent

    if not isinstance(agent, Agent):
        raise TypeError(f"summarization_agent must be a strands Agent, got {type(agent).__name__}")


# what an agent sends besides its messages -------------------------------------------------------------------------
def system_text(agent: object) -> str | None:
    """The agent's system prompt when it has one to count (a string, or its text blocks); a test double without
    one, or with something else there, has none: Strands' own managers never read it."""
    prompt = getattr(agent, "system_prompt", None)
    if isinstance(prompt, str):
        return prompt or None
    if isinstance(prompt, list):
        blocks = [cast(dict[str, object], b) for b in cast(list[object], prompt) if isinstance(b, dict)]
        joined = "\n".join(t for b in blocks if isinstance(t := b.get("text"), str))
        return joined or None
    return None


def tools_of(agent: object) -> list[AgentTool]:
    """The agent's tools, in the order its registry lists their specs (registered, then dynamic ones not shadowed);
    read from the registry's dicts, not ``agent.tool_names``, which normalizes and validates every spec. None for an
    agent without a Strands ``ToolRegistry`` (a test double): nothing to count."""
    from strands.tools.registry import ToolRegistry

    registry = getattr(agent, "tool_registry", None)
    if not isinstance(registry, ToolRegistry):
        return []
    tools = list(registry.registry.values())
    if registry.dynamic_tools:
        tools.extend(t for name, t in registry.dynamic_tools.items() if name not in registry.registry)
    return tools


def tool_tokens(tools: Sequence[AgentTool], counter: TokenCounter) -> int:
    """Tokens of the tool specs as Strands sends them (each normalized, as its registry does)."""
    from strands.tools.tools import normalize_tool_spec

    return json_tokens(counter, [normalize_tool_spec(t.tool_spec.copy()) for t in tools])


# durable ids -------------------------------------------------------------------------------------------------------
def new_tracking_id() -> str:
    """A durable message id in the form Strands asks of one a caller supplies: a UUID v4 string."""
    return str(uuid.uuid4())


def give_tracking_ids(written: Sequence[StrandsMessage], taken: set[str]) -> None:
    """Give each dict chainsum wrote a ``tracking_id`` (Strands 1.62 keeps one on every history message, its
    sessions prune their records by it, and it survives save and restore): a dict keeps the id of the message it
    came from (a clipped result carries its original's, read back from the Bedrock fields), unless another message
    in the history holds it already; a new one (a summary record) gets a fresh id. `taken` holds the ids in use and
    is updated."""
    for item in written:
        held = item.get("tracking_id")
        if not isinstance(held, str) or not held or held in taken:
            held = new_tracking_id()
            item["tracking_id"] = held
        taken.add(held)


# reading ------------------------------------------------------------------------------------------------------------
def _convert(items: Sequence[StrandsMessage], i: int) -> tuple[Message, ...]:
    """The messages of Strands dict ``items[i]``: a tool result message is read with the call message before it, for
    the tools' names (an assistant dict is one message)."""
    item = items[i]
    if i and items[i - 1].get("role") == "assistant" and any("toolResult" in b for b in item["content"]):
        return tuple(bedrock.load([items[i - 1], item]).messages[1:])
    return tuple(bedrock.load([item]).messages)


def strands_reader() -> ObjectReader[StrandsMessage]:
    """Strands' message dicts as chainsum `Message`s, each dict converted once (`ObjectReader`).

    The manager could read Bedrock dicts itself, but it converts a Bedrock list again from its last user turn on
    every call (a tool result is named after the call before it), and a Strands turn is one prompt followed by
    every tool step of the agent's work: hundreds of messages, converted and counted again before each model call.
    Here each dict keeps its `Message` objects while it stays in the list, so the manager sees the same objects
    again, compares them by identity and counts only what is new. The last dict is converted again on every call
    (Strands edits the newest message in place: redaction, cancellation); a dict changed in place elsewhere is not
    seen, as with the manager's own reading of a list."""
    return ObjectReader(_convert, recheck=1, reread_last=True)


# the request -------------------------------------------------------------------------------------------------------
class UserTurns:
    """`merge_user_turns` for a request that is the previous one plus new messages: a history found to need no
    merge is remembered, and the next request that starts with its messages (compared in C: the very dicts, or equal
    ones, which hold the same roles and blocks) is looked at only from its last one on, so that a request with
    nothing to merge costs its new messages, not a pass over the history. (A dict edited in place deep inside the
    history is not looked at again, as the reader does not read it again: Strands replaces what it changes.)"""

    def __init__(self) -> None:
        self._checked: list[StrandsMessage] = []
        """The last history that needed no merge (its dicts, in order)."""

    def merge(self, messages: list[StrandsMessage]) -> list[StrandsMessage]:
        """`merge_user_turns(messages)`."""
        checked = self._checked
        k = len(checked)
        if k and starts_with(messages, checked):
            tail = messages[k - 1 :]  # the last message checked, for the pair it makes with the first new one
            if merge_user_turns(tail) is tail:
                checked.extend(messages[k:])
                return messages
        merged = merge_user_turns(messages)
        self._checked = list(messages) if merged is messages else []
        return merged


def merge_user_turns(messages: list[StrandsMessage]) -> list[StrandsMessage]:
    """`messages` with each run of adjacent user messages that hold no tool results merged into one (Bedrock
    refuses two user turns in a row, and a turn mixing tool results with other blocks, so runs that include tool
    results are left alone: chainsum never puts text next to them). `messages` itself when there is no such run
    (two equal roles in a row looked for in C first: a request without any costs one pass over the roles). A merged
    message keeps the first one's ``tracking_id``."""
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
            merged: StrandsMessage = {"role": "user", "content": [*previous["content"], *message["content"]]}
            if "tracking_id" in previous:
                merged["tracking_id"] = previous["tracking_id"]
            out[-1] = merged
        elif out is not None:
            out.append(message)
    return messages if out is None else out
