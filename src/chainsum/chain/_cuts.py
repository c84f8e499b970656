"""The one safe-cut function every strategy uses to decide where a history may be split.

A *cut* at index ``i`` splits ``messages`` into ``messages[:i]`` (to summarize or drop) and ``messages[i:]`` (to
keep). It is *safe* when no tool call and its result end up on different sides: the results that answer an
assistant turn (or a human turn that made calls) are the tool messages right after it, so every index inside such
a run is unsafe. Orphaned results (tool messages answering nothing before them) are never a safe place to start the
kept part either: a kept history must not begin with a result. Copies of this logic per strategy are how other
libraries got orphaned-tool-result bugs; chainsum has exactly one.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages import Message

__all__ = ["current_turn_start", "newest_turn_start", "safe_cuts", "turn_starts"]


def safe_cuts(messages: Sequence[Message]) -> list[bool]:
    """``out[i]`` tells whether cutting before message ``i`` is safe, for ``i`` in ``0..len(messages)``.

    Cutting at 0 (keep everything) and at ``len`` (keep nothing) are always safe. A cut is unsafe right before a
    ``tool`` message (it would separate the result from its call, or keep an orphan first).
    """
    n = len(messages)
    out = [True] * (n + 1)
    for i in range(1, n):
        if messages[i].role == "tool":
            out[i] = False
    return out


def turn_starts(messages: Sequence[Message]) -> list[int]:
    """Safe cuts that also start a conversational turn: right before a user message (or a leading system message
    block), where a kept history reads naturally."""
    cuts = safe_cuts(messages)
    return [i for i, m in enumerate(messages) if m.role == "user" and cuts[i]]


def current_turn_start(messages: Sequence[Message]) -> int:
    """Index where the current turn starts: the last assistant message (the last body pair, whose calls may be
    pending or signed), or the end when there is none. Nothing from here on is ever masked, clipped or summarized
    by chainsum's own strategies (except the over-the-window last resort that clips its tool output)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "assistant":
            return i
    return len(messages)


def newest_turn_start(messages: Sequence[Message]) -> int:
    """Index where the newest turn starts when the pair before it may give way: the last user message, when it
    comes after the last assistant message (a turn the assistant has not answered yet), else `current_turn_start`.

    The last body pair is kept verbatim as the current turn (`current_turn_start`); once a user message follows it,
    its calls are answered and its reasoning signature no longer required, so what no plan may ever remove is only
    the user's newest message and what follows it (DESIGN invariant 8: no request goes over the window unless the
    system messages and the newest user message alone exceed it). `chainsum.strategies.TailGuard` lets a plan reach
    that far only when nothing else is left to bring the history under its budget."""
    last = current_turn_start(messages)
    for i in range(len(messages) - 1, last, -1):
        if messages[i].role == "user":
            return i
    return last
