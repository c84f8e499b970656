"""The per-provider rule table, as data: what each provider accepts, and where we read it.

Checks and repair passes never test a provider's *name*; they read these flags, so a new OpenAI-compatible or
Anthropic-like endpoint is one more row. Each flag's docstring says which rule it drives, and `sources` gives,
per rule id, the documentation page or the exact error text users report when the rule is broken.

How canonical messages reach the wire matters as much as the rules: OpenAI Chat keeps every message (system
messages anywhere, one tool message per result). Anthropic, Gemini and Bedrock lift the leading system messages
into a top-level system prompt and merge consecutive canonical ``tool``/``user`` messages into one wire user turn
with the tool results first; each assistant message stays its own wire turn.

One rule is the same for every provider and so is not a flag: the results of an assistant's calls are the tool
messages directly after it (DESIGN invariant 1: answered "before the next assistant or user turn"). Anthropic,
Gemini and Bedrock would also take a result placed after a user message of the same wire turn (the writer puts
results first), but the chain tree pairs an assistant message with the tool messages that follow it, so chainsum
holds every provider to the stricter, common form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ._problem import UnknownProviderError

__all__ = ["PROFILES", "PROVIDERS", "RULES", "BlankText", "ProviderProfile", "get_profile"]

BlankText: TypeAlias = Literal["none", "empty", "whitespace"]

RULES: Mapping[str, str] = {
    "user-tool-calls": "tool calls on a user message (no provider accepts them)",
    "misplaced-tool-call": "tool calls on a system or tool message",
    "system-placement": "a system message after the conversation started, where only leading ones are expressible",
    "tool-message-content": "a tool message holding something besides tool results",
    "first-message-role": "the first non-system message is not a user message",
    "empty-content": "a message, text block or tool result with no content the provider accepts",
    "foreign-opaque": "a provider block carried from another format, which this provider cannot read",
    "reasoning-signature": "a thinking block without the signature the provider needs to accept it back",
    "tool-result-missing": "a tool call with no result before the next assistant or user turn",
    "orphan-tool-result": "a tool result that answers no call of the assistant turn just before it",
    "duplicate-tool-call-id": "two tool calls of one assistant message share an id",
    "tool-call-id-length": "a tool-call id shorter or longer than the provider allows",
    "tool-call-id-charset": "a tool-call id with characters the provider rejects",
    "tool-result-id-mismatch": "a tool result paired with its call by name whose id differs from the call's",
    "alternation": "two assistant turns in a row where the provider requires user and assistant to alternate",
    "tool-results-mixed": "a user turn holding tool results together with other content",
}
"""Every provider rule id `validate` can report, with what it means (the chain's structural rules, by number, are
`chainsum.chain.CHAIN_RULES`)."""


FRAMEWORK_FORMATS = frozenset({"langchain", "pydantic-ai"})
"""Agent-framework message formats: their opaque blocks go back to the framework, which writes them for whatever
provider it talks to, so every provider profile reads them back."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderProfile:
    """What one provider's chat API accepts in a history."""

    name: str
    title: str
    system_anywhere: bool
    """System messages may appear mid-conversation (``system-placement`` off)."""
    inline_system_formats: frozenset[str] = frozenset()
    """Formats whose system messages read from inside the message list (marked ``inline`` in their extras) this
    provider takes back there: Anthropic's ``mid-conversation-system`` beta. Such a message is the client's and
    the upstream's call, so it is neither a ``system-placement`` problem nor folded into user text (DESIGN
    invariant 12: chainsum never refuses or rewrites what the upstream would accept)."""
    first_user: bool
    """The first non-system message must be a user message (``first-message-role``)."""
    alternation: bool
    """No two assistant messages in a row (``alternation``); user runs merge on the wire so never clash."""
    results_alone: bool
    """A wire user turn holding tool results may hold nothing else (``tool-results-mixed``)."""
    blank_text: BlankText
    """Which message-level text blocks are rejected (``empty-content``): none, ``""`` only, or blank."""
    blank_result_text: bool
    """Blank text blocks inside a tool result's content are rejected too (``empty-content``)."""
    empty_error_result: bool
    """An error tool result must have content (``empty-content``)."""
    id_pattern: re.Pattern[str] | None
    """Full-match pattern for tool-call ids (``tool-call-id-charset``); None: any characters."""
    id_min_length: int
    """0: ids are optional (Gemini); otherwise results must also carry their call's exact id."""
    id_max_length: int | None
    reasoning_needs_signature: bool
    """A standalone reasoning part needs a signature or redacted data (``reasoning-signature``)."""
    reasoning_is_content: bool
    """A reasoning part alone makes a message non-empty (False where the wire has no field for it)."""
    opaque_formats: frozenset[str]
    """Formats whose `Opaque` blocks this provider reads back (``foreign-opaque``)."""
    sources: Mapping[str, str]
    """Per rule id, where the rule comes from: a documentation page or the provider's error text."""


_OPENAI_SOURCES = {
    "tool-result-missing": "\"An assistant message with 'tool_calls' must be followed by tool messages responding "
    "to each 'tool_call_id'. (insufficient tool messages following tool_calls message)\"",
    "orphan-tool-result": "\"Messages with role 'tool' must be a response to a preceding message with 'tool_calls'\"; "
    "\"Invalid parameter: Duplicate value for 'tool_call_id' of 'call_...' in messages[7] and messages[8]\"",
    "tool-call-id-length": "\"Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum "
    'length 40, but got a string with length 43 instead." (code string_above_max_length)',
    "empty-content": 'Chat Completions reference: assistant `content` is "required unless `tool_calls` or '
    '`function_call` is specified"; an empty string is accepted',
    "duplicate-tool-call-id": '"Duplicate value for \'tool_call_id\'" / "Duplicate call_ids submitted"',
}

_ANTHROPIC_SOURCES = {
    "first-message-role": '"messages: first message must use the \\"user\\" role"',
    "tool-result-missing": '"messages.N: `tool_use` ids were found without `tool_result` blocks immediately after: '
    'toolu_.... Each `tool_use` block must have a corresponding `tool_result` block in the next message."',
    "orphan-tool-result": '"messages.N.content.M: unexpected `tool_use_id` found in `tool_result` blocks: toolu_.... '
    'Each `tool_result` block must have a corresponding `tool_use` block in the previous message."',
    "duplicate-tool-call-id": '"messages.1.content.1: `tool_use` ids must be unique"',
    "tool-call-id-charset": "\"messages.1.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'\"",
    "empty-content": '"messages: text content blocks must contain non-whitespace text"; "messages.0: all messages '
    'must have non-empty content except for the optional final assistant message"',
    "reasoning-signature": '"messages.1.content.0.thinking.signature: Field required" (extended thinking docs: '
    "thinking blocks are passed back unmodified, with their signature)",
    "system-placement": "Messages API: system prompts go in the top-level `system` parameter; `messages` roles are "
    "only user and assistant",
    "alternation": 'Messages API reference: "Consecutive user or assistant turns in your request will be combined '
    'into a single turn." (so no alternation rule)',
}

_GEMINI_SOURCES = {
    "first-message-role": '"Please ensure that function call turn comes immediately after a user turn or after a '
    'function response turn." (400 INVALID_ARGUMENT when contents start with a model turn)',
    "alternation": "the same error for a functionCall model turn that follows another model turn",
    "tool-result-missing": '"Please ensure that the number of function response parts is equal to the number of '
    'function call parts of the function call turn."',
    "orphan-tool-result": "same error as tool-result-missing (counts must match)",
    "empty-content": '"Unable to submit request because it has an empty text parameter. Add a value to the '
    'parameter and try again."',
    "system-placement": "generateContent: system text goes in `systemInstruction`; content roles are user and model",
    "duplicate-tool-call-id": "functionCall.id pairs a response with its call; two calls sharing one are ambiguous",
}

_BEDROCK_SOURCES = {
    "first-message-role": '"ValidationException: A conversation must start with a user message. Try again with a '
    'conversation that starts with a user message."',
    "alternation": '"ValidationException: A conversation must alternate between user and assistant roles. Make sure '
    'the conversation alternates between user and assistant roles and try again."',
    "tool-result-missing": '"Expected toolResult blocks at messages.2.content for the following Ids: tooluse_..."',
    "orphan-tool-result": '"The number of toolResult blocks at messages.2.content exceeds the number of toolUse '
    'blocks of previous turn."',
    "tool-results-mixed": '"messages.2.content: Conversation blocks and tool result blocks cannot be provided in the '
    'same turn."',
    "duplicate-tool-call-id": '"The toolUse blocks at messages.2.content contain duplicate Ids: tooluse_..."',
    "tool-call-id-charset": "API reference, ToolUseBlock.toolUseId: Pattern ^[a-zA-Z0-9_-]+$",
    "tool-call-id-length": "API reference, ToolUseBlock.toolUseId: Length Constraints: Minimum length of 1. Maximum "
    "length of 64.",
    "empty-content": '"The text field in the ContentBlock object at messages.15.content.0 is blank."; "text content '
    'blocks must contain non-whitespace text"; "The content field at messages.N.content.0.toolResult cannot be '
    'empty when status value is error."; "The content field in the Message object at messages.N is empty."',
    "reasoning-signature": 'API reference, ReasoningTextBlock.signature: "If you pass a reasoning block back to the '
    'API in a multi-turn conversation, include the text and its signature unmodified."',
    "system-placement": "Converse API: system prompts go in the top-level `system` field; message roles are user "
    "and assistant",
}

_ID_CHARSET = re.compile(r"[a-zA-Z0-9_-]+")

PROFILES: Mapping[str, ProviderProfile] = {
    "openai": ProviderProfile(
        name="openai",
        title="OpenAI Chat Completions",
        system_anywhere=True,
        first_user=False,
        alternation=False,
        results_alone=False,
        blank_text="none",
        blank_result_text=False,
        empty_error_result=False,
        id_pattern=None,
        id_min_length=1,
        id_max_length=40,
        reasoning_needs_signature=False,
        reasoning_is_content=False,
        # OpenAI serves both of its wire formats (`formats.FORMAT_PROVIDERS`): a Responses item (web search call,
        # file search call, ...) goes back to the Responses API it came from, so it is not foreign there.
        opaque_formats=frozenset({"openai", "openai-responses"}) | FRAMEWORK_FORMATS,
        sources=_OPENAI_SOURCES,
    ),
    "anthropic": ProviderProfile(
        name="anthropic",
        title="Anthropic Messages",
        system_anywhere=False,
        inline_system_formats=frozenset({"anthropic"}),
        first_user=True,
        alternation=False,
        results_alone=False,
        blank_text="whitespace",
        blank_result_text=True,
        empty_error_result=False,
        id_pattern=_ID_CHARSET,
        id_min_length=1,
        id_max_length=None,
        reasoning_needs_signature=True,
        reasoning_is_content=True,
        opaque_formats=frozenset({"anthropic", "claude-code"}) | FRAMEWORK_FORMATS,
        sources=_ANTHROPIC_SOURCES,
    ),
    "gemini": ProviderProfile(
        name="gemini",
        title="Gemini generateContent",
        system_anywhere=False,
        first_user=True,
        alternation=True,
        results_alone=False,
        blank_text="empty",
        blank_result_text=False,
        empty_error_result=False,
        id_pattern=None,
        id_min_length=0,
        id_max_length=None,
        reasoning_needs_signature=False,
        reasoning_is_content=True,
        opaque_formats=frozenset({"gemini"}) | FRAMEWORK_FORMATS,
        sources=_GEMINI_SOURCES,
    ),
    "bedrock": ProviderProfile(
        name="bedrock",
        title="Amazon Bedrock Converse",
        system_anywhere=False,
        first_user=True,
        alternation=True,
        results_alone=True,
        blank_text="whitespace",
        blank_result_text=False,
        empty_error_result=True,
        id_pattern=_ID_CHARSET,
        id_min_length=1,
        id_max_length=64,
        reasoning_needs_signature=True,
        reasoning_is_content=True,
        opaque_formats=frozenset({"bedrock"}) | FRAMEWORK_FORMATS,
        sources=_BEDROCK_SOURCES,
    ),
}

PROVIDERS: tuple[str, ...] = tuple(PROFILES)
"""The providers `validate` and `repair` know."""


def get_profile(provider: str) -> ProviderProfile:
    """The rule table row for `provider`; `UnknownProviderError` names the known ones otherwise."""
    try:
        return PROFILES[provider]
    except KeyError:
        raise UnknownProviderError(provider, PROVIDERS) from None
