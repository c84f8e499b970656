"""`Chain`: the whole conversation as a tree of sections, with the spec's constructors and edits.

Edits never mutate: they return a new `Chain` that shares every untouched section with the old one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ..errors import ToolCallError
from ..messages import Message, Part, Reasoning, Text, ToolCall, ToolResult
from ._build import Builder, ChainRepair
from ._ids import parse_template
from ._nodes import BodyPair, Header, Section, match_results

__all__ = ["Chain", "contains_tool_call_reasoning"]


@dataclass(frozen=True, slots=True)
class Chain:
    """A conversation as sections of (header, body pairs). Build one with `Chain.build`."""

    sections: tuple[Section, ...] = ()
    repairs: tuple[ChainRepair, ...] = field(default=(), compare=False)
    """What a repairing build changed, one `ChainRepair` per structural fix (empty for a strict build)."""
    size: int = field(init=False, compare=False)
    """Bytes of content in the whole chain; always the sum of its sections' sizes."""
    count: int = field(init=False, compare=False)
    """Number of messages."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", sum(s.size for s in self.sections))
        object.__setattr__(self, "count", sum(s.count for s in self.sections))

    @classmethod
    def _derived(cls, sections: tuple[Section, ...], repairs: tuple[ChainRepair, ...], size: int, count: int) -> Chain:
        """A chain whose size and count the caller already knows (an append): skips the O(sections) sums."""
        chain = object.__new__(cls)
        object.__setattr__(chain, "sections", sections)
        object.__setattr__(chain, "repairs", repairs)
        object.__setattr__(chain, "size", size)
        object.__setattr__(chain, "count", count)
        return chain

    # building ----------------------------------------------------------------------------------------------
    @classmethod
    def build(cls, messages: Iterable[Message], *, repair: bool = False, allow_pending_tail: bool = False) -> Chain:
        """The chain of `messages`.

        Strict (default): the first broken rule raises `ChainError` naming the rule and the message index.
        With ``repair=True`` every problem is fixed as the spec says and listed in `repairs`.
        ``allow_pending_tail`` accepts unanswered calls in the very last turn (an agent between calling tools and
        receiving their results).
        """
        builder = Builder(repair=repair, allow_pending_tail=allow_pending_tail)
        for i, m in enumerate(messages):
            builder.feed(i, m)
        return cls(tuple(builder.finish()), tuple(builder.repairs))

    def messages(self) -> list[Message]:
        """The flat message list, in order."""
        out: list[Message] = []
        for s in self.sections:
            out.extend(s.messages())
        return out

    def __len__(self) -> int:
        return self.count

    def pairs(self) -> Iterator[tuple[int, int, BodyPair]]:
        """Every body pair with its section and pair index."""
        for si, s in enumerate(self.sections):
            for pi, p in enumerate(s.body):
                yield si, pi, p

    # the spec's edits ---------------------------------------------------------------------------------------
    def add_section(self, section: Section) -> Chain:
        return Chain((*self.sections, section))

    def add_body_pair(self, pair: BodyPair) -> Chain:
        """Append `pair` to the last section (a header-less section when the chain is empty)."""
        if not self.sections:
            return Chain((Section(Header(), (pair,)),))
        last = self.sections[-1]
        return Chain((*self.sections[:-1], Section(last.header, (*last.body, pair))))

    def append(self, message: Message, *, repair: bool = False) -> Chain:
        """The chain with one more message, following the build rules; only the last section is rebuilt.

        Unanswered calls in the last turn are allowed (their results come next). Strict by default.
        """
        builder = Builder.resume(self.sections, self.count, repair=repair)
        builder.feed(self.count, message)
        sections = tuple(builder.finish())
        kept = len(self.sections) - 1 if self.sections else 0
        size = self.size - (self.sections[-1].size if self.sections else 0)
        count = self.count - (self.sections[-1].count if self.sections else 0)
        for s in sections[kept:]:
            size += s.size
            count += s.count
        return Chain._derived(sections, (*self.repairs, *builder.repairs), size, count)

    def append_human(self, content: str | Message) -> Chain:
        """The spec's AppendHumanMessage: (1) empty chain: a new section; (2) the last section has body pairs: a new
        section; (3) the last section has no body and no human: the message becomes its human; (4) it has a
        human and no body: the content is appended to that human message."""
        message = Message.of("user", content) if isinstance(content, str) else content
        if not self.sections:
            return Chain((Section(Header(None, message)),))
        last = self.sections[-1]
        if last.body:
            return Chain((*self.sections, Section(Header(None, message))))
        header = last.header
        if header.human is None:
            new_header = Header(header.system, message)
        else:
            new_header = Header(
                header.system, header.human.with_parts(header.human.parts + message.parts), header.human_tool_messages
            )
        return Chain((*self.sections[:-1], Section(new_header, last.body)))

    def _locate_call(self, call_id: str) -> tuple[int, int, ToolCall]:
        # The latest call with this id: ids are reused in long histories, and the one being answered now is the
        # most recent.
        for si in range(len(self.sections) - 1, -1, -1):
            body = self.sections[si].body
            for pi in range(len(body) - 1, -1, -1):
                for call in body[pi].ai.tool_calls:
                    if call.id == call_id:
                        return si, pi, call
        raise ToolCallError(f"no tool call with id {call_id!r} in the chain")

    def add_tool_response(self, call_id: str, name: str, content: str, *, is_error: bool = False) -> Chain:
        """The spec's AddToolResponse: answer the (latest) call `call_id`, or replace its existing answer.
        Raises `ToolCallError` when no such call exists."""
        si, pi, call = self._locate_call(call_id)
        section = self.sections[si]
        pair = section.body[pi]
        new_result = ToolResult(call_id=call_id, name=name or call.name, content=content, is_error=is_error)
        calls = pair.ai.tool_calls
        results = [r for m in pair.tool_messages for r in m.tool_results]
        answers, _ = match_results(calls, results)
        target = next(i for i, c in enumerate(calls) if c is call)
        existing = answers[target]
        if existing is None:
            tool_messages = (*pair.tool_messages, Message(role="tool", parts=(new_result,)))
        else:
            tool_messages = tuple(
                m.with_parts(tuple(new_result if p is existing else p for p in m.parts))
                if any(p is existing for p in m.parts)
                else m
                for m in pair.tool_messages
            )
        new_pair = BodyPair(pair.ai, tool_messages)
        body = (*section.body[:pi], new_pair, *section.body[pi + 1 :])
        return Chain((*self.sections[:si], Section(section.header, body), *self.sections[si + 1 :]))

    def find_tool_call_responses(self, call_id: str) -> list[ToolResult]:
        """Every result anywhere in the chain that answers a call with this id."""
        out: list[ToolResult] = []
        for m in self.messages():
            out.extend(r for r in m.tool_results if r.call_id == call_id)
        return out

    # provider switching -------------------------------------------------------------------------------------
    def normalize_tool_call_ids(self, template: str) -> Chain:
        """Give every call whose id does not match `template` a new id from it, and its result the same id.

        Ids that already match are kept. Calls and results are paired by position within their turn, so reused
        ids are renamed per call, not globally. Generated ids are deterministic and unique in the chain.
        """
        tpl = parse_template(template)
        used = {c.id for m in self.messages() for c in m.tool_calls}
        counter = 0

        def fresh(old: str) -> str:
            nonlocal counter
            attempt = 0
            while True:
                candidate = tpl.generate(f"{old}\x00{counter}", attempt)
                if candidate not in used:
                    used.add(candidate)
                    counter += 1
                    return candidate
                attempt += 1

        def rename(caller: Message, tool_messages: Sequence[Message]) -> tuple[Message, tuple[Message, ...]]:
            calls = caller.tool_calls
            if all(tpl.matches(c.id) for c in calls):
                return caller, tuple(tool_messages)
            results = [r for m in tool_messages for r in m.tool_results]
            answers, _ = match_results(calls, results)
            new_ids = {id(c): (c.id if tpl.matches(c.id) else fresh(c.id)) for c in calls}
            by_result = {id(r): new_ids[id(c)] for c, r in zip(calls, answers, strict=True) if r is not None}

            def call_part(p: Part) -> Part:
                if isinstance(p, ToolCall) and id(p) in new_ids and new_ids[id(p)] != p.id:
                    return ToolCall(
                        id=new_ids[id(p)], name=p.name, arguments=p.arguments, reasoning=p.reasoning, extras=p.extras
                    )
                return p

            def result_part(p: Part) -> Part:
                if isinstance(p, ToolResult) and id(p) in by_result and by_result[id(p)] != p.call_id:
                    return ToolResult(
                        call_id=by_result[id(p)], name=p.name, content=p.content, is_error=p.is_error, extras=p.extras
                    )
                return p

            new_caller = caller.with_parts([call_part(p) for p in caller.parts])
            new_tools = tuple(m.with_parts([result_part(p) for p in m.parts]) for m in tool_messages)
            return new_caller, new_tools

        sections: list[Section] = []
        for s in self.sections:
            header = s.header
            if header.human is not None and header.human.tool_calls:
                human, tools = rename(header.human, header.human_tool_messages)
                header = Header(header.system, human, tools)
            body = tuple(BodyPair(*rename(p.ai, p.tool_messages)) if p.ai.tool_calls else p for p in s.body)
            sections.append(Section(header, body))
        return Chain(tuple(sections))

    def clear_reasoning(self) -> Chain:
        """Remove provider-signed reasoning: the reasoning on text and tool-call parts, and standalone reasoning
        parts. Signatures are only valid with the provider that made them, so a history moving to another
        provider must lose them; all other content is kept."""
        return Chain.build_unchecked([_without_reasoning(m) for m in self.messages()], like=self)

    @classmethod
    def build_unchecked(cls, messages: Sequence[Message], *, like: Chain) -> Chain:
        """Rebuild with the same section shape after an edit that changes parts but not structure."""
        it = iter(messages)
        sections: list[Section] = []
        for s in like.sections:
            h = s.header
            header = Header(
                next(it) if h.system is not None else None,
                next(it) if h.human is not None else None,
                tuple(next(it) for _ in h.human_tool_messages),
            )
            body = tuple(BodyPair(next(it), tuple(next(it) for _ in p.tool_messages)) for p in s.body)
            sections.append(Section(header, body))
        return cls(tuple(sections))


def _without_reasoning(m: Message) -> Message:
    changed = False
    parts: list[Part] = []
    for p in m.parts:
        if isinstance(p, Reasoning):
            changed = True
            continue
        if isinstance(p, Text) and p.reasoning is not None:
            p = Text(text=p.text, extras=p.extras)
            changed = True
        elif isinstance(p, ToolCall) and p.reasoning is not None:
            p = ToolCall(id=p.id, name=p.name, arguments=p.arguments, extras=p.extras)
            changed = True
        parts.append(p)
    return m.with_parts(parts) if changed else m


def contains_tool_call_reasoning(messages: Iterable[Message]) -> bool:
    """True when a tool call carries reasoning (a signature): then a summary replacing these messages needs the
    fake signature. Text reasoning does not count, as the spec says."""
    return any(isinstance(p, ToolCall) and p.reasoning is not None for m in messages for p in m.parts)
