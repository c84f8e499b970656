"""Per-message count caching, so a growing history costs O(new messages) per call.

Messages are frozen, but not hashable (``extras`` holds dicts), and hashing their content would cost as much as
counting it. So the cache is keyed by identity: ``id(message)``, with the message itself kept in the entry. Keeping
the reference is what makes identity sound: while the entry lives the object cannot be collected, so its id cannot
be reused by another message; a hit also checks ``entry.message is message``. The cache is a bounded LRU, so a
long-running process holds at most `maxsize` messages alive through it.

Callers that rebuild their messages on every request (parsing JSON each turn) get fresh objects and miss this
cache; counters that are expensive per string (tiktoken) also keep a bounded cache keyed by the string itself,
which catches those (a string's hash is much cheaper than its BPE encoding).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from ..messages import Message

__all__ = ["IdentityCache", "LRUCache"]

K = TypeVar("K", bound=Hashable)


class LRUCache(Generic[K]):
    """A bounded, thread-safe least-recently-used map to ints."""

    __slots__ = ("_data", "_lock", "maxsize")

    def __init__(self, maxsize: int) -> None:
        if maxsize < 0:
            raise ValueError("maxsize must be >= 0")
        self.maxsize = maxsize
        self._data: OrderedDict[K, int] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compute(self, key: K, compute: Callable[[], int]) -> int:
        if self.maxsize == 0:
            return compute()
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
                return value
        value = compute()
        with self._lock:
            self._data[key] = value
            if len(self._data) > self.maxsize:
                self._data.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class IdentityCache:
    """Counts of messages, keyed by object identity (see the module docstring for why that is sound)."""

    __slots__ = ("_data", "_lock", "maxsize")

    def __init__(self, maxsize: int) -> None:
        if maxsize < 0:
            raise ValueError("maxsize must be >= 0")
        self.maxsize = maxsize
        self._data: OrderedDict[int, tuple[Message, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compute(self, message: Message, compute: Callable[[Message], int]) -> int:
        if self.maxsize == 0:
            return compute(message)
        key = id(message)
        with self._lock:
            entry = self._data.get(key)
            if entry is not None and entry[0] is message:
                self._data.move_to_end(key)
                return entry[1]
        value = compute(message)
        with self._lock:
            self._data[key] = (message, value)
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
