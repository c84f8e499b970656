"""Anthropic's prompt cache as `chainsum replay` estimates it, from the ``cache_control`` marks a request carries.

Anthropic caches nothing by itself: a request writes the prefix up to each of its marked blocks, and reads the
longest prefix an earlier request wrote, found by looking back from each of its own marks (about 20 blocks). The
replay's other estimate (`ReplayReport`'s ``cached_input_tokens``) counts the whole prefix shared with the previous
request, as a provider that caches on its own would; this one counts only what the marks make cacheable, so it says
what the manager's breakpoints (`chainsum.manager._breakpoints`) are worth: a recording holds no client marks, so
without the manager's the figure is 0.

Simplified: whole messages, not blocks (a message with a mark writes the prefix through its end; the look-back is
20 messages); no expiry (the 5-minute lifetime is renewed by each read, and a replay's requests follow each other).
A prefix is identified by what the model reads (`visible_sha256`: provider data such as the marks left out).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Final

from ..messages import Message
from ._breakpoints import count_marks
from ._pins import visible_sha256

__all__ = ["LOOKBACK", "BreakpointCache"]

LOOKBACK: Final = 20
"""How far back from a mark a request looks for a prefix written earlier (Anthropic: about 20 blocks)."""


class BreakpointCache:
    """The prefixes written so far in one replay, and what each request reads of them."""

    def __init__(self) -> None:
        self._written: set[bytes] = set()
        self._keys: dict[int, tuple[Message, str]] = {}

    def _key(self, message: Message) -> str:
        hit = self._keys.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        key = visible_sha256(message)
        self._keys[id(message)] = (message, key)
        return key

    def read(self, sent: Sequence[Message], tokens: Callable[[Sequence[Message]], int]) -> int:
        """Tokens of `sent` read from the cache (counted by `tokens`), then the prefixes its marks write."""
        chain: list[bytes] = []
        h = b""
        for m in sent:
            h = hashlib.sha256(h + self._key(m).encode()).digest()
            chain.append(h)
        marks = [k for k, m in enumerate(sent) if count_marks(m)]
        best = 0
        for k in marks:
            for j in range(k, max(-1, k - LOOKBACK), -1):
                if chain[j] in self._written:
                    best = max(best, j + 1)
                    break
        self._written.update(chain[k] for k in marks)
        return tokens(sent[:best]) if best else 0
