"""Repair passes that rewrite what messages *hold*: fold what no provider can express into text, drop what this
provider cannot read, and remove what is empty. They run before the tool-structure passes (`_tool_passes`),
because each of them can remove or re-role a message, and the pairing of calls with results must be computed on
the list as it will be sent.

Every pass is pure: ``(messages, profile) -> (messages, actions)``, returning the very input tuple and no
actions when it has nothing to do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..messages import Message, Opaque, Part, Reasoning, Text, ToolCall, ToolResult, utf8_len
from ._checks import first_non_system, opaque_kind, placed_system, result_is_empty
from ._problem import RepairAction
from ._providers import ProviderProfile
from ._turns import ResultRef, is_blank, is_empty, match_refs, preview, splice

__all__ = [
    "EMPTY_ERROR_RESULT",
    "PassResult",
    "drop_empty",
    "drop_foreign_opaque",
    "drop_unsigned_reasoning",
    "fold_misplaced_calls",
    "fold_system_messages",
    "split_tool_messages",
]

PassResult = tuple[tuple[Message, ...], tuple[RepairAction, ...]]

EMPTY_ERROR_RESULT = "(the tool reported an error without a message)"
"""Content given to an error tool result that has none, for providers that reject it empty (Bedrock)."""


def _fold_call(role: str, call: ToolCall, result: ToolResult | None) -> list[Part]:
    """The text a call made outside an assistant turn becomes, with its result inline; images and files the
    result carried follow as their own parts, so nothing of the result is lost."""
    head = f"[{role} ran tool {call.name}({call.arguments})"
    if result is None:
        return [Text(text=f"{head} → no result recorded]")]
    label = "error" if result.is_error else "result"
    extra: list[Part] = []
    if isinstance(result.content, tuple):
        extra = [p for p in result.content if not isinstance(p, Text)]
    return [Text(text=f"{head} → {label}: {result.text}]"), *extra]


def fold_misplaced_calls(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``fold-misplaced-calls``: tool calls on a user (or system, or tool) message become text on that message,
    each with the result that answered it, e.g. ``[user ran tool toggle_airplane_mode({"on": true}) → result:
    done]``; the folded results leave the tool messages right after it, which are removed once empty.

    First, because those results would otherwise look like orphans (and be dropped) and those calls like
    unanswered assistant calls (and get placeholder results) to the passes after it. No content is lost: the
    call's name and arguments and the result's text, images and files all stay in the conversation.
    """
    del profile  # every provider needs it
    work = list(messages)
    removed: set[int] = set()
    actions: list[RepairAction] = []
    for i in range(len(work)):
        message = work[i]
        calls = [p for p in message.parts if isinstance(p, ToolCall)]
        if message.role == "assistant" or not calls or i in removed:
            continue
        refs: list[ResultRef] = []
        k = i + 1
        while k < len(work) and work[k].role == "tool":
            if k not in removed:
                refs.extend(ResultRef(k, j, p) for j, p in enumerate(work[k].parts) if isinstance(p, ToolResult))
            k += 1
        answers, _ = match_refs(calls, refs)
        taken: dict[int, set[int]] = {}
        parts: list[Part] = []
        n = 0
        for part in message.parts:
            if not isinstance(part, ToolCall):
                parts.append(part)
                continue
            answer = answers[n]
            n += 1
            parts.extend(_fold_call(message.role, part, None if answer is None else answer.result))
            where = "no result followed it" if answer is None else f"with its result from message {answer.message}"
            if answer is not None:
                taken.setdefault(answer.message, set()).add(answer.part)
            actions.append(
                RepairAction(
                    "fold-misplaced-calls",
                    i,
                    f"tool call {part.name} (id {part.id!r}) on the {message.role} message folded into text, {where}",
                )
            )
        work[i] = message.with_parts(parts)
        for k, gone in sorted(taken.items()):
            rest = [p for j, p in enumerate(work[k].parts) if j not in gone]
            if rest:
                work[k] = work[k].with_parts(rest)
            else:
                removed.add(k)
                actions.append(
                    RepairAction(
                        "fold-misplaced-calls", k, f"removed tool message {k}: its results were folded into message {i}"
                    )
                )
    if not actions:
        return messages, ()
    return tuple(m for k, m in enumerate(work) if k not in removed), tuple(actions)


def fold_system_messages(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``fold-system-messages``: where only leading system messages are expressible, a system message in the
    middle of the conversation becomes a user message whose text starts with ``[system] ``; the writer then
    merges it into the adjacent user turn. Never dropped: system text must survive verbatim. A system message the
    client sent inside the list where the provider takes it there (`placed_system`) stays as it is.

    Before the structural passes, which must see roles as they will be sent: the new user message may sit
    between calls and their results (`gather-displaced-results` moves the results up), follow tool results
    (`separate-tool-results` gives it its own turn on Bedrock) or end an assistant run.
    """
    first = first_non_system(messages)
    if profile.system_anywhere or first is None:
        return messages, ()
    out = list(messages)
    actions: list[RepairAction] = []
    for i in range(first + 1, len(messages)):
        message = messages[i]
        if message.role != "system" or placed_system(message, profile):
            continue
        parts = list(message.parts)
        k = next((j for j, p in enumerate(parts) if isinstance(p, Text)), None)
        if k is None:
            parts.insert(0, Text(text="[system]"))
        else:
            text = parts[k]
            assert isinstance(text, Text)
            parts[k] = dataclasses.replace(text, text=f"[system] {text.text}")
        out[i] = Message(role="user", parts=tuple(parts), id=message.id, name=message.name, extras=message.extras)
        actions.append(
            RepairAction(
                "fold-system-messages",
                i,
                f"mid-conversation system message turned into a "
                f"user message marked [system] ({profile.title} only takes system text first)",
            )
        )
    if not actions:
        return messages, ()
    return tuple(out), tuple(actions)


def _strip(
    messages: tuple[Message, ...],
    profile: ProviderProfile,
    pass_name: str,
    reason: Callable[[Part], str | None],
) -> PassResult:
    """Drop the parts `reason` names a reason for; a message left empty goes too (what else it held is named)."""
    out: list[Message] = []
    actions: list[RepairAction] = []
    for i, message in enumerate(messages):
        keep: list[Part] = []
        for j, part in enumerate(message.parts):
            why = reason(part)
            if why is None:
                keep.append(part)
            else:
                actions.append(RepairAction(pass_name, i, f"dropped part {j} of the {message.role} message: {why}"))
        if len(keep) == len(message.parts):
            out.append(message)
            continue
        stripped = message.with_parts(keep)
        if not is_empty(stripped, profile):
            out.append(stripped)
            continue
        rest = f" (with its {', '.join(p.kind for p in keep)} parts)" if keep else ""
        actions.append(RepairAction(pass_name, i, f"removed the {message.role} message, left with no content{rest}"))
    if not actions:
        return messages, ()
    return tuple(out), tuple(actions)


def drop_foreign_opaque(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``drop-foreign-opaque``: removes provider blocks from another format (an Anthropic server-tool block
    sent to OpenAI, ...). Only their own format can write them; the action names the block and its size."""

    def reason(part: Part) -> str | None:
        if not isinstance(part, Opaque) or part.format in profile.opaque_formats:
            return None
        return f"{part.format} {opaque_kind(part)} ({utf8_len(repr(part.data))} characters), unreadable here"

    return _strip(messages, profile, "drop-foreign-opaque", reason)


def drop_unsigned_reasoning(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``drop-unsigned-reasoning``: removes standalone reasoning with neither signature nor redacted data where
    the provider rejects it (Anthropic, Bedrock). The action quotes the start of the reasoning text."""
    if not profile.reasoning_needs_signature:
        return messages, ()

    def reason(part: Part) -> str | None:
        if isinstance(part, Reasoning) and not part.signature and part.data is None:
            return f"reasoning without signature ({len(part.text)} characters: {preview(part.text)})"
        return None

    return _strip(messages, profile, "drop-unsigned-reasoning", reason)


def _clean_result(result: ToolResult, profile: ProviderProfile) -> tuple[ToolResult, str | None]:
    content = result.content
    what: str | None = None
    if profile.blank_result_text and isinstance(content, tuple):
        kept = tuple(p for p in content if not (isinstance(p, Text) and not p.text.strip()))
        if len(kept) != len(content):
            content = kept or ""
            what = "dropped its blank text blocks"
    if profile.empty_error_result and result.is_error and result_is_empty(dataclasses.replace(result, content=content)):
        content = EMPTY_ERROR_RESULT
        what = f"gave the empty error result the text {EMPTY_ERROR_RESULT!r}"
    if what is None:
        return result, None
    return dataclasses.replace(result, content=content), what


def drop_empty(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``drop-empty``: removes blank text parts (per provider: none, ``""``, or whitespace-only), blank text
    inside tool results where rejected, fills empty error results where rejected, then removes messages left
    with no content. Only blank text is ever removed, so no text content is lost.

    Before the structural passes: an empty assistant message between a call and its results would otherwise end
    the zone and turn real results into orphans.
    """
    out: list[Message] = []
    actions: list[RepairAction] = []
    for i, message in enumerate(messages):
        parts: list[Part] = []
        for j, part in enumerate(message.parts):
            if isinstance(part, Text) and is_blank(part.text, profile.blank_text):
                actions.append(
                    RepairAction(
                        "drop-empty",
                        i,
                        f"dropped blank text part {j} of the {message.role} message ({len(part.text)} characters)",
                    )
                )
                continue
            if isinstance(part, ToolResult):
                cleaned, what = _clean_result(part, profile)
                if what is not None:
                    actions.append(RepairAction("drop-empty", i, f"tool result for call id {part.call_id!r}: {what}"))
                part = cleaned
            parts.append(part)
        current = message if parts == list(message.parts) else message.with_parts(parts)
        if is_empty(current, profile):
            kinds = ", ".join(p.kind for p in current.parts)
            rest = f" (dropping its {kinds} parts)" if kinds else ""
            actions.append(RepairAction("drop-empty", i, f"removed the empty {message.role} message{rest}"))
            continue
        out.append(current)
    if not actions:
        return messages, ()
    return tuple(out), tuple(actions)


def split_tool_messages(messages: tuple[Message, ...], profile: ProviderProfile) -> PassResult:
    """``split-tool-messages``: what a tool message holds besides tool results (text, images, reasoning...)
    moves into a user message placed right after its run of tool messages; a tool message left without parts
    goes. The results stay where they were. Only parts that could not be sent alone anyway (reasoning, where the
    wire has no field for it) are dropped, and reported.

    Last of the content passes, after ``drop-empty`` (so no blank text becomes a user message of its own) and
    before the structural passes, which treat every tool message as a container of results.
    """
    before: dict[int, list[Message]] = {}
    replace: dict[int, Message | None] = {}
    actions: list[RepairAction] = []
    for i, message in enumerate(messages):
        if message.role != "tool":
            continue
        other = [p for p in message.parts if not isinstance(p, ToolResult)]
        if not other:
            continue
        end = i + 1
        while end < len(messages) and messages[end].role == "tool":
            end += 1
        results = [p for p in message.parts if isinstance(p, ToolResult)]
        replace[i] = message.with_parts(results) if results else None
        moved = Message(role="user", parts=tuple(other), id=None if results else message.id, name=message.name)
        kinds = ", ".join(p.kind for p in other)
        if is_empty(moved, profile):
            what = f"dropped the {kinds} parts of the tool message: {profile.title} cannot send them on their own"
        else:
            before.setdefault(end, []).append(moved)
            what = f"moved the {kinds} parts of the tool message into a user message after its tool messages"
        actions.append(RepairAction("split-tool-messages", i, what))
    if not actions:
        return messages, ()
    return splice(messages, before, replace), tuple(actions)
