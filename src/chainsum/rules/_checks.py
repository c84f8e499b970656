"""The checks behind `validate`: each reads the provider's row of the rule table and yields `Problem`s.

Every check's docstring names where its rule comes from; the exact error texts are in
`ProviderProfile.sources`. A check never looks at a provider's name, only at its flags.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

from ..formats import as_messages
from ..messages import Message, Opaque, Reasoning, Text, ToolResult
from ._problem import Problem
from ._providers import ProviderProfile, get_profile
from ._turns import article, describe_call, is_blank, is_empty, pair_results

__all__ = ["CHECKS", "first_non_system", "placed_system", "validate"]

Check = Callable[[Sequence[Message], ProviderProfile], Iterator[Problem]]


def first_non_system(messages: Sequence[Message]) -> int | None:
    return next((i for i, m in enumerate(messages) if m.role != "system"), None)


def placed_system(message: Message, profile: ProviderProfile) -> bool:
    """True for a system message that may stay where it is: anywhere for a provider that takes system messages
    anywhere, and one its client sent inside the message list (see `ProviderProfile.inline_system_formats`)."""
    if message.role != "system":
        return False
    if profile.system_anywhere:
        return True
    for fmt in profile.inline_system_formats:
        hints = message.extras.get(fmt)
        if isinstance(hints, dict) and cast(dict[str, Any], hints).get("inline") is True:
            return True
    return False


def opaque_kind(part: Opaque) -> str:
    data: object = part.data
    kind = cast(dict[str, Any], data).get("type") if isinstance(data, dict) else None
    return f"{kind!r} block" if isinstance(kind, str) else "block"


def check_misplaced_calls(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``user-tool-calls`` / ``misplaced-tool-call``: no wire format has a tool call outside an assistant turn
    (OpenAI ``tool_calls`` exist only on assistant messages; Anthropic ``tool_use``, Gemini ``functionCall`` and
    Bedrock ``toolUse`` only in assistant/model content). tau2-bench's simulated user runs tools on its phone,
    so real histories have them; they are a problem for every provider."""
    for i, message in enumerate(messages):
        calls = message.tool_calls
        if message.role == "assistant" or not calls:
            continue
        rule = "user-tool-calls" if message.role == "user" else "misplaced-tool-call"
        names = ", ".join(describe_call(c) for c in calls)
        yield Problem(
            rule,
            i,
            f"{message.role} message makes tool calls {names}; {profile.title} only takes "
            "tool calls on assistant messages",
        )


def check_system_placement(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``system-placement``: Anthropic (top-level ``system``), Gemini (``systemInstruction``) and Bedrock
    (top-level ``system``) only express system text before the conversation; OpenAI Chat takes a system message
    anywhere, and Anthropic one its client sent inside ``messages`` (the ``mid-conversation-system`` beta)."""
    first = first_non_system(messages)
    if profile.system_anywhere or first is None:
        return
    for i in range(first + 1, len(messages)):
        if messages[i].role == "system" and not placed_system(messages[i], profile):
            yield Problem(
                "system-placement",
                i,
                f"system message in the middle of the conversation (after message "
                f"{first}); {profile.title} only takes system text at the start",
            )


def check_tool_messages(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``tool-message-content``: a canonical tool message holds tool results only (see `Message`). OpenAI's
    tool message is exactly one result (``tool_call_id`` and ``content``), with nowhere to put anything else;
    elsewhere the writer would merge the extra parts into the user turn, but the chain tree and the pairing
    rules treat tool messages as result containers, so every provider is held to it."""
    for i, message in enumerate(messages):
        if message.role != "tool":
            continue
        other = sorted({p.kind for p in message.parts if not isinstance(p, ToolResult)})
        if other:
            yield Problem(
                "tool-message-content",
                i,
                f"tool message holds {', '.join(other)} parts besides tool results; {profile.title} takes only "
                "results there",
            )


def check_first_role(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``first-message-role``: Anthropic "messages: first message must use the "user" role"; Bedrock "A
    conversation must start with a user message"; Gemini rejects a leading function-call model turn ("function
    call turn comes immediately after a user turn..."). OpenAI accepts any first role. A history with no
    non-system message at all is left to the caller (it is not a conversation yet)."""
    first = first_non_system(messages)
    if profile.first_user and first is not None and messages[first].role != "user":
        yield Problem(
            "first-message-role",
            first,
            f"the first non-system message is {article(messages[first].role)} "
            f"message; {profile.title} requires a user message first",
        )


def check_empty_content(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``empty-content``: Anthropic "all messages must have non-empty content except for the optional final
    assistant message" (we also hold the final one to it) and "text content blocks must contain non-whitespace
    text" (inside tool results too); Gemini "Unable to submit request because it has an empty text parameter";
    Bedrock "The text field in the ContentBlock object ... is blank" and "The content field at ...toolResult
    cannot be empty when status value is error" (a blank *non-error* tool result is accepted: measured against
    Converse, reported in NousResearch/hermes-agent#55092); OpenAI only needs a message to have content or tool
    calls (an empty string is accepted)."""
    for i, message in enumerate(messages):
        if is_empty(message, profile):
            kinds = ", ".join(sorted({p.kind for p in message.parts})) or "none"
            yield Problem(
                "empty-content", i, f"{message.role} message has no content {profile.title} accepts (parts: {kinds})"
            )
            continue
        for j, part in enumerate(message.parts):
            if isinstance(part, Text) and is_blank(part.text, profile.blank_text):
                yield Problem("empty-content", i, f"text part {j} of the {message.role} message is blank")
            elif isinstance(part, ToolResult):
                yield from _empty_result(i, part, profile)


def _empty_result(i: int, result: ToolResult, profile: ProviderProfile) -> Iterator[Problem]:
    if profile.blank_result_text and isinstance(result.content, tuple):
        for part in result.content:
            if isinstance(part, Text) and is_blank(part.text, "whitespace"):
                yield Problem(
                    "empty-content", i, f"the tool result for call id {result.call_id!r} holds a blank text block"
                )
                break
    if profile.empty_error_result and result.is_error and result_is_empty(result):
        yield Problem("empty-content", i, f"the error tool result for call id {result.call_id!r} has no content")


def result_is_empty(result: ToolResult) -> bool:
    if isinstance(result.content, str):
        return not result.content.strip()
    return all(isinstance(p, Text) and not p.text.strip() for p in result.content)


def check_foreign_opaque(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``foreign-opaque``: an `Opaque` block is the wire block of the format it came from (an Anthropic server
    tool block, an OpenAI Responses item, ...); only that format can write it back (see `Opaque`)."""
    for i, message in enumerate(messages):
        for j, part in enumerate(message.parts):
            if isinstance(part, Opaque) and part.format not in profile.opaque_formats:
                yield Problem(
                    "foreign-opaque",
                    i,
                    f"part {j} is {article(part.format)} {opaque_kind(part)} that {profile.title} cannot read",
                )


def check_reasoning(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``reasoning-signature``: Anthropic "messages.1.content.0.thinking.signature: Field required"; Bedrock's
    ReasoningTextBlock: "If you pass a reasoning block back to the API in a multi-turn conversation, include the
    text and its signature unmodified." Redacted reasoning (``data``) needs no signature."""
    if not profile.reasoning_needs_signature:
        return
    for i, message in enumerate(messages):
        for j, part in enumerate(message.parts):
            if isinstance(part, Reasoning) and not part.signature and part.data is None:
                yield Problem(
                    "reasoning-signature",
                    i,
                    f"reasoning part {j} ({len(part.text)} characters) has "
                    f"neither a signature nor redacted data; {profile.title} rejects it",
                )


def check_tool_pairing(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``tool-result-missing`` / ``orphan-tool-result`` / ``tool-result-id-mismatch``, by position.

    OpenAI "An assistant message with 'tool_calls' must be followed by tool messages responding to each
    'tool_call_id'" and "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'";
    Anthropic "`tool_use` ids were found without `tool_result` blocks immediately after" and "unexpected
    `tool_use_id` found in `tool_result` blocks"; Gemini "the number of function response parts is equal to the
    number of function call parts of the function call turn"; Bedrock "Expected toolResult blocks at
    messages.2.content for the following Ids" and "The number of toolResult blocks ... exceeds the number of
    toolUse blocks of previous turn". Pending calls at the very end count as missing too: no provider takes a
    request whose last assistant calls are unanswered.

    The results must be the tool messages directly after the assistant message for every provider (see
    `_providers`): stricter than the Anthropic-like wire, where the writer would merge a later user message into
    the same turn, and the form the chain tree builds on.
    """
    pairing = pair_results(messages)
    for ex in pairing.exchanges:
        for n in ex.pending:
            yield Problem(
                "tool-result-missing",
                ex.assistant,
                f"tool call {describe_call(ex.calls[n])} has no result in the tool messages right after it",
            )
        if profile.id_min_length == 0:
            continue
        for call, answer in zip(ex.calls, ex.answers, strict=True):
            if answer is not None and answer.result.call_id != call.id:
                yield Problem(
                    "tool-result-id-mismatch",
                    answer.message,
                    f"the result answering {describe_call(call)} carries id {answer.result.call_id!r}",
                )
    for orphan in pairing.orphans:
        result = orphan.ref.result
        name = f" ({result.name})" if result.name else ""
        yield Problem(
            "orphan-tool-result",
            orphan.ref.message,
            f"tool result for call id {result.call_id!r}{name} answers nothing: {orphan.reason}",
        )


def check_tool_call_ids(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``duplicate-tool-call-id`` (within one assistant message; ids reused across turns are fine, tau-bench
    does it), ``tool-call-id-length`` and ``tool-call-id-charset``.

    Anthropic "`tool_use` ids must be unique" and "tool_use.id: String should match pattern
    '^[a-zA-Z0-9_-]+$'"; Bedrock ToolUseBlock.toolUseId "Minimum length of 1. Maximum length of 64. Pattern:
    ^[a-zA-Z0-9_-]+$" and "The toolUse blocks at messages.2.content contain duplicate Ids"; OpenAI "Invalid
    'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length 40" and "Duplicate
    value for 'tool_call_id'". Gemini ids are optional (empty ids pair by name), so only non-empty duplicates
    count there.
    """
    for a, message in enumerate(messages):
        if message.role != "assistant":
            continue
        seen: set[str] = set()
        for call in message.tool_calls:
            cid = call.id
            if cid and cid in seen:
                yield Problem(
                    "duplicate-tool-call-id",
                    a,
                    f"tool call {call.name} reuses the id {cid!r} of an earlier call in the same message",
                )
            seen.add(cid)
            bound = profile.id_max_length
            if len(cid) < profile.id_min_length or (bound is not None and len(cid) > bound):
                limits = (
                    f"{profile.id_min_length} to {bound}" if bound is not None else f"at least {profile.id_min_length}"
                )
                yield Problem(
                    "tool-call-id-length",
                    a,
                    f"tool-call id {cid!r} of {call.name} has {len(cid)} characters; {profile.title} takes {limits}",
                )
            elif cid and profile.id_pattern is not None and not profile.id_pattern.fullmatch(cid):
                yield Problem(
                    "tool-call-id-charset",
                    a,
                    f"tool-call id {cid!r} of {call.name} has characters outside {profile.id_pattern.pattern}",
                )


def check_alternation(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``alternation``: Bedrock "A conversation must alternate between user and assistant roles"; Gemini takes a
    function-call model turn only "immediately after a user turn or after a function response turn". Runs of
    user and tool messages merge into one wire user turn, so only assistant runs can break it. Anthropic combines
    consecutive turns itself ("Consecutive user or assistant turns in your request will be combined into a single
    turn"); OpenAI has no such rule."""
    if not profile.alternation:
        return
    for i in range(1, len(messages)):
        if messages[i].role == "assistant" and messages[i - 1].role == "assistant":
            yield Problem(
                "alternation",
                i,
                f"assistant message follows assistant message {i - 1}; "
                f"{profile.title} requires user and assistant turns to alternate",
            )


def check_results_alone(messages: Sequence[Message], profile: ProviderProfile) -> Iterator[Problem]:
    """``tool-results-mixed``: Bedrock "messages.2.content: Conversation blocks and tool result blocks cannot be
    provided in the same turn." The wire user turn is the whole run of canonical user and tool messages."""
    if not profile.results_alone:
        return
    start = 0
    while start < len(messages):
        if messages[start].role not in ("user", "tool"):
            start += 1
            continue
        end = start
        while end < len(messages) and messages[end].role in ("user", "tool"):
            end += 1
        run = range(start, end)
        has_results = any(isinstance(p, ToolResult) for k in run for p in messages[k].parts)
        other = [k for k in run if any(not isinstance(p, ToolResult) for p in messages[k].parts)]
        if has_results and other:
            yield Problem(
                "tool-results-mixed",
                other[0],
                f"the user turn of messages {start}-{end - 1} holds tool "
                f"results and other content; {profile.title} takes tool results alone in their turn",
            )
        start = end


CHECKS: tuple[Check, ...] = (
    check_misplaced_calls,
    check_system_placement,
    check_tool_messages,
    check_first_role,
    check_empty_content,
    check_foreign_opaque,
    check_reasoning,
    check_tool_pairing,
    check_tool_call_ids,
    check_alternation,
    check_results_alone,
)


def validate(messages: Sequence[Message], provider: str) -> list[Problem]:
    """Every way `messages` breaks `provider`'s rules (``openai``, ``anthropic``, ``gemini``, ``bedrock``),
    ordered by message index; empty when the provider would accept the history.

    `messages` may also be wire message dicts of any format (read by `chainsum.formats.as_messages`; a
    `FormatError` names the index and field it cannot read). Raises `UnknownProviderError` (a `ValueError`) for
    any other provider.
    """
    profile = get_profile(provider)
    messages = as_messages(messages)
    problems = [p for check in CHECKS for p in check(messages, profile)]
    problems.sort(key=lambda p: p.index)
    return problems
