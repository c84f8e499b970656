"""The nodes of the chain tree: `Header`, `BodyPair`, `Section`.

Every node is immutable and knows its size in bytes (computed once, at construction, from its messages, per
`chainsum.messages.message_size`); edits build new nodes and reuse the untouched ones, so sizes stay exact and an
append touches only the last section.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ..messages import Message, Reasoning, Text, ToolCall, ToolResult, message_size
from ._constants import (
    FAKE_REASONING_SIGNATURE,
    SUMMARIZATION_TOOL_ARGS,
    SUMMARIZATION_TOOL_NAME,
    SUMMARIZED_CONTENT_PREFIX,
)
from ._ids import id_from_template

__all__ = [
    "BodyPair",
    "CompletedCall",
    "Header",
    "PairKind",
    "Section",
    "ToolCallsInfo",
    "match_results",
    "tool_calls_info",
]


class PairKind(StrEnum):
    """What a body pair is: a plain answer, a tool round trip, or a summary standing in for older pairs."""

    COMPLETION = "completion"
    REQUEST_RESPONSE = "request_response"
    SUMMARIZATION = "summarization"


def _sizes(messages: Sequence[Message | None]) -> int:
    return sum(message_size(m) for m in messages if m is not None)


@dataclass(frozen=True, slots=True)
class CompletedCall:
    call: ToolCall
    result: ToolResult


@dataclass(frozen=True, slots=True)
class ToolCallsInfo:
    """How the calls of one message are answered by the tool messages that follow it.

    Lists, not maps keyed by id: ids are reused in real data (tau-bench) and may be empty (Gemini).
    """

    pending: tuple[ToolCall, ...]
    """Calls with no result."""
    unmatched: tuple[ToolResult, ...]
    """Results that answer none of the calls."""
    completed: tuple[CompletedCall, ...]

    @property
    def pending_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.pending)

    @property
    def unmatched_ids(self) -> tuple[str, ...]:
        return tuple(r.call_id for r in self.unmatched)


def answers(call: ToolCall, result: ToolResult) -> bool:
    """Whether `result` can answer `call`: the same id, or, for a result without an id, the same name (or no name).
    The one pairing rule of chainsum; `match_results` and the chain builder apply it in call order."""
    if result.call_id:
        return call.id == result.call_id
    return result.name is None or call.name == result.name


def match_results(
    calls: Sequence[ToolCall], results: Sequence[ToolResult]
) -> tuple[list[ToolResult | None], list[ToolResult]]:
    """Pair results with calls of one turn: by id where the result has one (the first still unanswered call with
    that id, so reused ids pair in order), else by name and order (Gemini's id-less responses).

    Returns, per call, its result or None, and the results that matched nothing.
    """
    found: list[ToolResult | None] = [None] * len(calls)
    unmatched: list[ToolResult] = []
    for result in results:
        slot = -1
        for i, call in enumerate(calls):
            if found[i] is None and answers(call, result):
                slot = i
                break
        if slot < 0:
            unmatched.append(result)
        else:
            found[slot] = result
    return found, unmatched


def tool_calls_info(message: Message, tool_messages: Sequence[Message]) -> ToolCallsInfo:
    """The spec's GetToolCallsInfo for a message with calls and the tool messages answering it."""
    calls = message.tool_calls
    results = [p for m in tool_messages for p in m.parts if isinstance(p, ToolResult)]
    found, unmatched = match_results(calls, results)
    completed = tuple(CompletedCall(c, r) for c, r in zip(calls, found, strict=True) if r is not None)
    pending = tuple(c for c, r in zip(calls, found, strict=True) if r is None)
    return ToolCallsInfo(pending, tuple(unmatched), completed)


@dataclass(frozen=True, slots=True)
class Header:
    """What opens a section: an optional system message, an optional human message, and the results of tool
    calls the human message itself made.

    Human tool calls exist in simulations where the user acts on a device (tau2-bench telecom). chainsum keeps
    them where they happened, in the header, so nothing is lost; `chainsum.rules` turns them into text for
    providers, since none accepts tool calls on a user message.
    """

    system: Message | None = None
    human: Message | None = None
    human_tool_messages: tuple[Message, ...] = ()
    size: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", _sizes((self.system, self.human, *self.human_tool_messages)))

    def messages(self) -> list[Message]:
        """System first, then human, then the human's tool results."""
        out = [m for m in (self.system, self.human) if m is not None]
        out.extend(self.human_tool_messages)
        return out

    @property
    def is_empty(self) -> bool:
        return self.system is None and self.human is None


def _pair_kind(ai: Message) -> PairKind:
    calls = ai.tool_calls
    if not calls:
        return PairKind.COMPLETION
    if len(calls) == 1 and calls[0].name == SUMMARIZATION_TOOL_NAME:
        return PairKind.SUMMARIZATION
    return PairKind.REQUEST_RESPONSE


@dataclass(frozen=True, slots=True)
class BodyPair:
    """One assistant message and the tool messages answering its calls. The kind follows from the content."""

    ai: Message
    tool_messages: tuple[Message, ...] = ()
    kind: PairKind = field(init=False)
    size: int = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _pair_kind(self.ai))
        object.__setattr__(self, "size", _sizes((self.ai, *self.tool_messages)))

    def messages(self) -> list[Message]:
        """The assistant message first, then its tool messages."""
        return [self.ai, *self.tool_messages]

    def tool_calls_info(self) -> ToolCallsInfo:
        return tool_calls_info(self.ai, self.tool_messages)

    def is_valid(self) -> bool:
        """The spec's per-kind rules: a Completion has no tool messages; a RequestResponse at least one; a
        Summarization exactly one; and every call has its result and every result its call."""
        if self.kind is PairKind.COMPLETION:
            return not self.tool_messages
        if self.kind is PairKind.SUMMARIZATION and len(self.tool_messages) != 1:
            return False
        if not self.tool_messages:
            return False
        info = self.tool_calls_info()
        return not info.pending and not info.unmatched

    @classmethod
    def from_messages(cls, messages: Sequence[Message]) -> BodyPair:
        """A pair from [assistant, tool...]; raises ValueError on any other shape."""
        if not messages or messages[0].role != "assistant":
            raise ValueError("a body pair starts with an assistant message")
        rest = tuple(messages[1:])
        if any(m.role != "tool" for m in rest):
            raise ValueError("a body pair continues with tool messages only")
        return cls(messages[0], rest)

    @classmethod
    def from_completion(cls, text: str) -> BodyPair:
        return cls(Message(role="assistant", parts=(Text(text=text),)))

    @classmethod
    def from_summarization(
        cls,
        summary: str,
        tool_call_id: str | None = None,
        *,
        add_fake_signature: bool = False,
        id_template: str = "call_{r:24:x}",
    ) -> BodyPair:
        """The spec's synthetic summary pair: a call to `execute_task_and_return_summary` and its result.

        `add_fake_signature` puts Gemini's placeholder thought signature on the call; pass
        `contains_tool_call_reasoning(replaced_messages)` so a summary of signed content stays acceptable.
        The call id comes from `id_template` (deterministically, from the summary text) unless given.
        """
        call_id = tool_call_id or id_from_template(id_template, summary)
        reasoning = Reasoning(signature=FAKE_REASONING_SIGNATURE) if add_fake_signature else None
        call = ToolCall(
            id=call_id, name=SUMMARIZATION_TOOL_NAME, arguments=SUMMARIZATION_TOOL_ARGS, reasoning=reasoning
        )
        result = ToolResult(call_id=call_id, name=SUMMARIZATION_TOOL_NAME, content=summary)
        return cls(Message(role="assistant", parts=(call,)), (Message(role="tool", parts=(result,)),))

    def summary_text(self) -> str | None:
        """The summary this pair carries, when it is a summary (see `contains_summarized_content`)."""
        if self.kind is PairKind.SUMMARIZATION:
            return "\n".join(r.text for m in self.tool_messages for r in m.tool_results)
        if self.kind is PairKind.COMPLETION and self.ai.parts:
            first = self.ai.parts[0]
            if isinstance(first, Text) and first.text.startswith(SUMMARIZED_CONTENT_PREFIX):
                return first.text[len(SUMMARIZED_CONTENT_PREFIX) :]
        return None


def contains_summarized_content(pair: BodyPair) -> bool:
    """True for a summary pair, by kind (Summarization) or by prefix (a Completion whose first text starts with
    `SUMMARIZED_CONTENT_PREFIX`): what must not be summarized again."""
    return pair.summary_text() is not None


@dataclass(frozen=True, slots=True)
class Section:
    """A header and the body pairs that answer it."""

    header: Header
    body: tuple[BodyPair, ...] = ()
    size: int = field(init=False, compare=False)
    count: int = field(init=False, compare=False)
    """Number of messages in the section."""

    def __post_init__(self) -> None:
        size = self.header.size
        count = (
            (self.header.system is not None) + (self.header.human is not None) + len(self.header.human_tool_messages)
        )
        for p in self.body:
            size += p.size
            count += 1 + len(p.tool_messages)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "count", count)

    def messages(self) -> list[Message]:
        out = self.header.messages()
        for pair in self.body:
            out.extend(pair.messages())
        return out

    def with_body(self, body: Sequence[BodyPair]) -> Section:
        return Section(self.header, tuple(body))


def summary_arguments() -> dict[str, str]:
    """The summarization call's arguments as a dict (for formats that want objects)."""
    return json.loads(SUMMARIZATION_TOOL_ARGS)
