"""The simplest baseline every compaction is measured against: plain truncation.

What most chat products do when a history outgrows the window: keep the system prompt, then the newest messages
that fit, and drop the rest for good. The benchmarks print chainsum's figures next to it at the same budget; a
result that is not clearly better than this is not worth its cost.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages import Message
from ..tokens import TokenCounter

__all__ = ["truncate"]


def truncate(messages: Sequence[Message], budget: int, counter: TokenCounter) -> list[Message]:
    """Every system message, then the newest other messages whose tokens (by `counter`) fit in what `budget` leaves;
    a tool result left first without its call is dropped too, as a careful truncation would. The result may still
    break a provider's rules (a user's tool call cut from its results): that is the baseline's own behaviour."""
    system = [m for m in messages if m.role == "system"]
    room = budget - counter.count_messages(system)
    kept: list[Message] = []
    for m in reversed([m for m in messages if m.role != "system"]):
        cost = counter.count_message(m)
        if cost > room:
            break
        kept.append(m)
        room -= cost
    kept.reverse()
    while kept and kept[0].role == "tool":
        kept.pop(0)
    return system + kept
