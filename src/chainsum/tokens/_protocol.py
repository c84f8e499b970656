"""What a token counter is. Strategies and the manager only ever see this protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ..messages import Message

__all__ = ["TokenCounter"]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens the way a provider bills a prompt.

    ``count_messages`` must cost O(new messages) on a growing history (implementations cache per message), and
    include the per-message overhead of the chat format, not only the text.
    """

    name: str

    def count_text(self, text: str) -> int: ...

    def count_message(self, message: Message) -> int: ...

    def count_messages(self, messages: Sequence[Message]) -> int: ...
