"""Building the chain from a flat message list: strict (each violated rule raised with the message index) or
repairing (each fix recorded). The same builder appends one message to an existing chain, touching only the
last section, so a growing conversation costs O(1) sections per message.

The seven rules of ``specs/chain-ast.md``:

1. the first message is a system or human message;
2. no two human messages in a row;
3. every tool call has a response;
4. every tool response answers a call of the message just before it;
5. no system message in the middle of the chain;
6. an assistant message with calls gets its responses before the next assistant message;
7. a summarization pair has exactly one tool message.

Repair, instead of raising: merges consecutive human messages (2), adds the spec's fallback response to
unanswered calls (3, 6), drops responses that answer nothing (4), opens a header-less section for a leading
assistant message (1), starts a new section at a mid-chain system message (5: kept, never dropped), and merges
the tool messages of a summarization pair (7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ChainError
from ..messages import Message, Part, ToolCall, ToolResult
from ._constants import FALLBACK_RESPONSE_CONTENT
from ._nodes import BodyPair, Header, PairKind, Section, answers
from ._summaries import is_record_message

__all__ = ["CHAIN_RULES", "Builder", "ChainRepair"]

CHAIN_RULES = {
    1: "rule 1 (first message must be system or human)",
    2: "rule 2 (no consecutive human messages)",
    3: "rule 3 (tool calls must have responses)",
    4: "rule 4 (tool responses must answer a call)",
    5: "rule 5 (no system message in the middle)",
    6: "rule 6 (responses before the next assistant message)",
    7: "rule 7 (a summarization pair has exactly one tool message)",
}
"""The chain's structural rules (``specs/chain-ast.md``), by number, as `ChainError` and `ChainRepair` name them.
Not the provider rules: those are `chainsum.rules.RULES`, by kebab-case id."""


@dataclass(frozen=True, slots=True)
class ChainRepair:
    """One structural fix made by a repairing chain build (`Chain.build(repair=True)`), listed in `Chain.repairs`.

    The chain's own record, keyed by a numbered rule of ``specs/chain-ast.md`` (`CHAIN_RULES`). Not the same thing
    as `chainsum.rules.RepairAction`: that is one change a *provider* repair pass made (`chainsum.rules.repair`),
    keyed by pass name, with an index relative to that pass's input."""

    rule: int
    """The chain rule fixed: a key of `CHAIN_RULES` (1 to 7)."""
    index: int
    """Index, in the input list, of the message the fix concerns."""
    detail: str
    """What was done, for people."""

    def __str__(self) -> str:
        return f"message {self.index}: {CHAIN_RULES[self.rule]}: {self.detail}"


class _Open:
    """A message with tool calls whose responses are still being collected (an assistant turn, or a human
    message that made calls)."""

    __slots__ = ("answers", "calls", "index", "message", "tool_messages")

    def __init__(self, message: Message, index: int, tool_messages: Sequence[Message] = ()) -> None:
        self.message = message
        self.index = index
        self.calls: tuple[ToolCall, ...] = message.tool_calls
        self.answers: list[bool] = [False] * len(self.calls)
        self.tool_messages: list[Message] = []
        for m in tool_messages:
            self.tool_messages.append(m)
            for r in m.tool_results:
                self.take(r)

    def take(self, result: ToolResult) -> bool:
        """Mark the call `result` answers; False when it answers none (see `match_results` for the order)."""
        for i, call in enumerate(self.calls):
            if not self.answers[i] and answers(call, result):
                self.answers[i] = True
                return True
        return False

    def pending(self) -> list[ToolCall]:
        return [c for c, done in zip(self.calls, self.answers, strict=True) if not done]


class Builder:
    """Feeds messages one by one into sections. Not thread-safe; one per build or append."""

    def __init__(self, *, repair: bool, allow_pending_tail: bool) -> None:
        self.repair = repair
        self.allow_pending_tail = allow_pending_tail
        self.repairs: list[ChainRepair] = []
        self.sections: list[Section] = []
        self.has_section = False
        self.system: Message | None = None
        self.human: Message | None = None
        self.human_open: _Open | None = None
        self.human_index = -1
        self.body: list[BodyPair] = []
        self.pair: _Open | None = None

    # resuming ----------------------------------------------------------------------------------------------
    @classmethod
    def resume(cls, sections: Sequence[Section], next_index: int, *, repair: bool) -> Builder:
        """A builder positioned after `sections`, with the last section (and its last pair) open again."""
        b = cls(repair=repair, allow_pending_tail=True)
        if not sections:
            return b
        b.sections = list(sections[:-1])
        last = sections[-1]
        b.has_section = True
        b.system, b.human = last.header.system, last.header.human
        base = next_index - last.count
        if b.human is not None:
            b.human_index = base + (1 if b.system is not None else 0)
            if b.human.tool_calls:
                b.human_open = _Open(b.human, b.human_index, last.header.human_tool_messages)
        b.body = list(last.body)
        if b.body:
            tail = b.body.pop()
            b.pair = _Open(tail.ai, next_index - 1 - len(tail.tool_messages), tail.tool_messages)
            b.human_open = None
        return b

    # feeding -----------------------------------------------------------------------------------------------
    def _fail(self, rule: int, index: int, detail: str) -> None:
        if not self.repair:
            raise ChainError(CHAIN_RULES[rule], index, detail)
        self.repairs.append(ChainRepair(rule, index, detail))

    def _close_section(self) -> None:
        self._close_pair(last=False)
        self._close_human(last=False)
        if self.has_section:
            header = Header(self.system, self.human, tuple(self.human_open.tool_messages) if self.human_open else ())
            self.sections.append(Section(header, tuple(self.body)))
        self.has_section = False
        self.system = self.human = None
        self.human_open = None
        self.body = []

    def _answer_missing(self, open_: _Open, *, last: bool) -> None:
        pending = open_.pending()
        if not pending or (last and self.allow_pending_tail):
            return
        for call in pending:
            rule = 3 if last else 6
            self._fail(rule, open_.index, f"tool call {call.id!r} ({call.name}) has no response; added the fallback")
            result = ToolResult(call_id=call.id, name=call.name, content=FALLBACK_RESPONSE_CONTENT)
            open_.tool_messages.append(Message(role="tool", parts=(result,)))
        open_.answers = [True] * len(open_.calls)

    def _close_pair(self, *, last: bool) -> None:
        if self.pair is None:
            return
        self._answer_missing(self.pair, last=last)
        pair = BodyPair(self.pair.message, tuple(self.pair.tool_messages))
        if pair.kind is PairKind.SUMMARIZATION and len(pair.tool_messages) > 1:
            self._fail(7, self.pair.index, f"summarization pair has {len(pair.tool_messages)} tool messages; merged")
            merged = Message(role="tool", parts=tuple(p for m in pair.tool_messages for p in m.parts))
            pair = BodyPair(pair.ai, (merged,))
        self.body.append(pair)
        self.pair = None

    def _close_human(self, *, last: bool) -> None:
        if self.human_open is not None:
            self._answer_missing(self.human_open, last=last)

    def feed(self, index: int, message: Message) -> None:
        role = message.role
        if role == "tool":
            self._feed_tool(index, message)
            return
        self._close_pair(last=False)
        if role == "system":
            if self.has_section or self.sections:
                self._fail(5, index, "system message in the middle of the chain; it starts a new section")
            self._close_section()
            self.has_section = True
            self.system = message
        elif role == "user":
            self._close_human(last=False)
            if self.has_section and not self.body and self.human is None:
                self.human, self.human_index = message, index
            elif (
                self.has_section
                and not self.body
                and self.human is not None
                and self.human_open is None
                and not is_record_message(self.human)  # chainsum's record before a kept user message: two turns
            ):
                self._fail(2, index, f"follows the human message at index {self.human_index}; merged into it")
                self.human = self.human.with_parts(self.human.parts + message.parts)
            else:
                self._close_section()
                self.has_section = True
                self.human, self.human_index = message, index
            if self.human.tool_calls:
                tool_messages = self.human_open.tool_messages if self.human_open else []
                self.human_open = _Open(self.human, self.human_index, tool_messages)
        else:  # assistant
            self._close_human(last=False)
            if not self.has_section:
                self._fail(1, index, "assistant message with nothing before it; kept in a section without header")
                self.has_section = True
            self.pair = _Open(message, index)

    def _feed_tool(self, index: int, message: Message) -> None:
        target = self.pair if self.pair is not None else (self.human_open if not self.body else None)
        if target is None:
            self._fail(4, index, "tool message with no message making calls before it; dropped")
            return
        kept: list[Part] = []
        dropped = False
        for part in message.parts:
            if not isinstance(part, ToolResult) or target.take(part):
                kept.append(part)
                continue
            dropped = True
            self._fail(
                4,
                index,
                f"response to {part.call_id or part.name!r} answers no call of message {target.index}; dropped",
            )
        if not dropped:
            target.tool_messages.append(message)
        elif any(isinstance(p, ToolResult) for p in kept):
            target.tool_messages.append(message.with_parts(kept))

    def finish(self) -> list[Section]:
        self._close_pair(last=True)
        self._close_human(last=not self.body)
        if self.has_section:
            header = Header(self.system, self.human, tuple(self.human_open.tool_messages) if self.human_open else ())
            self.sections.append(Section(header, tuple(self.body)))
            self.has_section = False
        return self.sections
