"""Role alternation after a safe split (the spec's ``ensure_alternating_roles``), without mutating anything.

Summarizing can leave two user messages in a row (a user-role context restoration, then the kept part starting
with a prompt) or two assistant messages in a row (a kept part that starts mid-turn), which strict providers reject.
This pass merges such runs into one message. It returns a new tuple; messages it does not merge are the very same
objects, merged ones are new `Message` values built with `Message.with_parts` (no input is ever changed).

Canonical ``tool`` messages are left alone: they are never merged (each may be one OpenAI tool message, and their
position right after the calling message is what pairs them), and they break a same-role run, so ``user, tool,
user`` stays as it is. Formats that fold results into user turns (Anthropic, Gemini, Bedrock) do that when they
dump. System messages are never merged either (they survive verbatim).

A message carrying tool calls is never merged with the one after it: its results must come right after it, and a
merge would put the next message's content between the calls and their results (or give one message two runs of
calls). A message *without* calls does absorb a following one with calls (text then calls, as every provider
writes it), so results still follow the merged message directly.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages import Message, ToolCall

__all__ = ["ensure_alternating_roles"]

_MERGEABLE = frozenset({"user", "assistant"})


def _has_calls(message: Message) -> bool:
    return any(isinstance(p, ToolCall) for p in message.parts)


def _merge(first: Message, second: Message) -> Message:
    """One message with both messages' parts, in order. The first message's id and name win; the second's extras
    are carried for format keys the first lacks, so no provider data is dropped silently."""
    merged = first.with_parts((*first.parts, *second.parts))
    if second.extras and any(k not in first.extras for k in second.extras):
        merged = Message(
            role=merged.role,
            parts=merged.parts,
            id=merged.id,
            name=merged.name,
            extras={**second.extras, **first.extras},
        )
    return merged


def ensure_alternating_roles(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Merge consecutive user/user and assistant/assistant messages (see the module docstring for what is never
    merged). Idempotent; returns its input's messages unchanged (same objects) when there is nothing to merge."""
    out: list[Message] = []
    for message in messages:
        if out:
            last = out[-1]
            if last.role == message.role and message.role in _MERGEABLE and not _has_calls(last):
                out[-1] = _merge(last, message)
                continue
        out.append(message)
    return tuple(out)
