"""The part every concrete counter shares: the message walk, the per-message cache and the history sum."""

from __future__ import annotations

import operator
from abc import ABC, abstractmethod
from collections.abc import Sequence

from ..messages import Message
from ._cache import IdentityCache
from ._structure import message_cost, reply_priming

__all__ = ["DEFAULT_CACHE_SIZE", "CachedCounter"]

DEFAULT_CACHE_SIZE = 65_536
"""Messages remembered per counter: far beyond any context window, small in memory (one entry per message)."""


class CachedCounter(ABC):
    """A `TokenCounter` whose message counts are cached by identity; subclasses say how to count a string.

    Counting a history a second time with a few messages appended costs only those messages: everything else is
    a cache hit. The cache never changes a result, only its cost.
    """

    name: str

    def __init__(self, *, cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        self._messages = IdentityCache(cache_size)
        self._last: tuple[tuple[Message, ...], int] = ((), 0)

    @abstractmethod
    def count_text(self, text: str) -> int:
        """Tokens of a bare string, with no chat framing."""

    def _uncached_message(self, message: Message) -> int:
        return message_cost(message, self.count_text)

    def count_message(self, message: Message) -> int:
        """Tokens of one message including its framing (role, separators, tool-call JSON)."""
        return self._messages.get_or_compute(message, self._uncached_message)

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Tokens of a whole prompt: every message plus the reply priming.

        The common call is the previous history with messages appended. For it the counter keeps the last
        history and its running total: when the new one starts with the very same objects (checked by identity,
        in C, about 20 ns a message) only the appended messages are looked up; otherwise each message goes
        through the per-message cache.
        """
        last, last_total = self._last
        start, total = 0, 0
        if last and len(last) <= len(messages) and all(map(operator.is_, last, messages)):
            start, total = len(last), last_total
        for i in range(start, len(messages)):
            total += self.count_message(messages[i])
        if self._messages.maxsize:
            self._last = (tuple(messages), total)  # one assignment: concurrent callers see old or new, both valid
        return total + reply_priming(messages)

    def clear_cache(self) -> None:
        """Forget every cached count (they stay correct; this only frees memory)."""
        self._messages.clear()
        self._last = ((), 0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
