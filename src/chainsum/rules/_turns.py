"""Reading a history the way a provider will: which parts carry content, and which results answer which calls.

Calls and results are paired *by position*, never globally by id: the results that answer an assistant message
are those in its zone, the tool messages directly after it, matched with `chainsum.chain.match_results` (by id,
the first unanswered call with that id, so reused ids pair in order; by name and order when the result has no
id). The chain layer pairs the same way, so a history the rules accept builds into the same tree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..chain import match_results
from ..messages import File, Image, Message, Opaque, Part, Reasoning, Text, ToolCall, ToolResult
from ._providers import BlankText, ProviderProfile

__all__ = [
    "Exchange",
    "Orphan",
    "Pairing",
    "ResultRef",
    "article",
    "carries_content",
    "describe_call",
    "is_blank",
    "is_empty",
    "match_refs",
    "pair_results",
    "preview",
    "splice",
    "zone_end",
]


def is_blank(text: str, rule: BlankText) -> bool:
    """Whether `text` is a text block the provider rejects as empty."""
    match rule:
        case "none":
            return False
        case "empty":
            return text == ""
        case "whitespace":
            return not text.strip()


def carries_content(part: Part, profile: ProviderProfile) -> bool:
    """Whether `part` alone keeps its message from being empty on the provider's wire."""
    match part:
        case Text():
            return not is_blank(part.text, profile.blank_text)
        case Reasoning():
            return profile.reasoning_is_content
        case ToolCall() | ToolResult() | Image() | File() | Opaque():
            return True


def is_empty(message: Message, profile: ProviderProfile) -> bool:
    """A message with nothing the provider accepts as content (no parts, or only blank text)."""
    return not any(carries_content(p, profile) for p in message.parts)


def preview(text: str, limit: int = 80) -> str:
    """A short quoted excerpt for problem and action details."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")


def article(word: str) -> str:
    """`word` with its indefinite article: ``an assistant``, ``a user`` (a leading "u" is read "you" in every
    role and format name chainsum has)."""
    return f"{'an' if word[:1].lower() in 'aeio' else 'a'} {word}"


def describe_call(call: ToolCall) -> str:
    return f"{call.name} (id {call.id!r})"


def zone_end(messages: Sequence[Message], start: int) -> int:
    """End (exclusive) of the zone that begins at `start`, just after an assistant message: its run of tool
    messages."""
    end = start
    while end < len(messages) and messages[end].role == "tool":
        end += 1
    return end


@dataclass(frozen=True, slots=True)
class ResultRef:
    """A tool result and where it sits."""

    message: int
    part: int
    result: ToolResult


@dataclass(frozen=True, slots=True)
class Exchange:
    """An assistant message with tool calls, and the results its zone holds for them."""

    assistant: int
    call_parts: tuple[int, ...]
    """Part index of each call within the assistant message."""
    calls: tuple[ToolCall, ...]
    zone: range
    answers: tuple[ResultRef | None, ...]
    """Per call, the result answering it, or None."""

    @property
    def pending(self) -> tuple[int, ...]:
        """Positions (in `calls`) of the calls nothing answers."""
        return tuple(n for n, a in enumerate(self.answers) if a is None)


@dataclass(frozen=True, slots=True)
class Orphan:
    """A tool result that answers nothing, and why."""

    ref: ResultRef
    reason: str


@dataclass(frozen=True, slots=True)
class Pairing:
    exchanges: tuple[Exchange, ...]
    orphans: tuple[Orphan, ...]


def match_refs(calls: Sequence[ToolCall], refs: Sequence[ResultRef]) -> tuple[list[ResultRef | None], list[ResultRef]]:
    """`match_results` over refs. It hands back the result objects it was given, in order, so each answer maps
    back to the first not-yet-used ref holding that very object (equal objects are interchangeable)."""
    answers, unmatched = match_results(calls, [r.result for r in refs])
    used: set[int] = set()

    def ref_of(result: ToolResult) -> ResultRef:
        for k, ref in enumerate(refs):
            if k not in used and ref.result is result:
                used.add(k)
                return ref
        raise AssertionError("match_results returned a result it was not given")  # pragma: no cover

    mapped = [None if a is None else ref_of(a) for a in answers]
    return mapped, [ref_of(u) for u in unmatched]


def pair_results(messages: Sequence[Message]) -> Pairing:
    """Every assistant message with calls and its answers, and every result that answers nothing."""
    exchanges: list[Exchange] = []
    orphans: list[Orphan] = []
    zoned: set[int] = set()
    after_plain: dict[int, int] = {}  # tool message index -> the call-less assistant message it follows
    for a, message in enumerate(messages):
        if message.role != "assistant":
            continue
        end = zone_end(messages, a + 1)
        call_parts = tuple(j for j, p in enumerate(message.parts) if isinstance(p, ToolCall))
        if not call_parts:
            for k in range(a + 1, end):
                after_plain[k] = a
            continue
        calls = tuple(p for p in message.parts if isinstance(p, ToolCall))
        refs = [
            ResultRef(k, j, p)
            for k in range(a + 1, end)
            if messages[k].role == "tool"
            for j, p in enumerate(messages[k].parts)
            if isinstance(p, ToolResult)
        ]
        zoned.update(range(a + 1, end))
        answers, unmatched = match_refs(calls, refs)
        exchanges.append(Exchange(a, call_parts, calls, range(a + 1, end), tuple(answers)))
        orphans.extend(Orphan(r, f"it answers none of the calls of assistant message {a}") for r in unmatched)
    for k, message in enumerate(messages):
        for j, part in enumerate(message.parts):
            if not isinstance(part, ToolResult):
                continue
            if message.role != "tool":
                reason = f"it sits on {article(message.role)} message, not a tool message"
            elif k in zoned:
                continue
            elif k in after_plain:
                reason = f"assistant message {after_plain[k]} before it makes no tool calls"
            else:
                reason = "no assistant message with tool calls comes right before it"
            orphans.append(Orphan(ResultRef(k, j, part), reason))
    orphans.sort(key=lambda o: (o.ref.message, o.ref.part))
    return Pairing(tuple(exchanges), tuple(orphans))


def splice(
    messages: tuple[Message, ...],
    before: Mapping[int, Sequence[Message]],
    replace: Mapping[int, Message | None],
) -> tuple[Message, ...]:
    """The list with `before[i]` inserted ahead of message i (``i == len`` appends) and message i replaced by
    `replace[i]` (None removes it)."""
    out: list[Message] = []
    for i, message in enumerate(messages):
        out.extend(before.get(i, ()))
        if i not in replace:
            out.append(message)
        elif (new := replace[i]) is not None:
            out.append(new)
    out.extend(before.get(len(messages), ()))
    return tuple(out)
