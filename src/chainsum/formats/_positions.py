"""Where each canonical message of a loaded conversation stands in its document, for what people are shown.

Loading may add or split messages: a system prompt the format keeps beside the message list becomes a leading
``system`` message, and a wire user turn holding tool results becomes a ``tool`` message and a ``user`` message.
An index into the canonical list is then not the one a person counting in the file finds; `wire_indexes` maps it
back, from the layout hints the loaders leave (see `chainsum.formats.anthropic` and `_split`).
"""

from __future__ import annotations

from ._base import Conversation, native

__all__ = ["wire_indexes"]

_SYSTEM_BESIDE = frozenset({"anthropic", "bedrock", "gemini"})
"""Formats whose system prompt is a top-level field, not an entry of the message list, and whose loaders split a
user turn into ``tool`` + ``user`` messages."""


def wire_indexes(conversation: Conversation) -> tuple[int | None, ...]:
    """For each canonical message of `conversation` (as loaded), the index of the wire message it came from in the
    document's message list (Anthropic and Bedrock ``messages``, Gemini ``contents``): None for the system prompt
    kept beside that list, the same index for both halves of a split user turn.

    Formats whose wire messages are the canonical ones one for one (OpenAI chat, tau2, chainsum JSON) count alike.
    OpenAI Responses items and Claude Code records are grouped into messages; their indexes are the canonical ones.
    """
    fmt = conversation.format
    if fmt not in _SYSTEM_BESIDE:
        return tuple(range(len(conversation.messages)))
    out: list[int | None] = []
    n = -1
    user_side = False
    for m in conversation.messages:
        if m.role == "system":  # only the top-level prompt: the wire lists hold user and assistant turns only
            out.append(None)
            continue
        hints = native(m.extras, fmt)
        if fmt == "anthropic":
            same = bool(hints.get("continues"))
        else:  # `_split`: a user-side message after another starts a new wire turn only when marked so
            same = user_side and m.role in ("user", "tool") and hints.get("turn") != "new"
        n += 0 if same else 1
        out.append(n)
        user_side = m.role in ("user", "tool")
    return tuple(out)
