"""The default counter: no dependency, within a few percent of o200k on real transcripts."""

from __future__ import annotations

from ._base import DEFAULT_CACHE_SIZE, CachedCounter
from ._text import Coefficients, estimate_text

__all__ = ["HeuristicCounter"]

_SHORT = 40
"""Strings up to this length (roles, tool names, ids, short replies) are memoized by value: they recur constantly
and the fixed cost of the class passes dominates their estimate."""
_SHORT_CACHE = 4096
_LONG_CACHE_CHARS = 8_000_000
"""Longer strings are memoized too, up to this many characters in all: a client that resends its history sends the
same tool output again in a new message object (Claude Code moves its ``cache_control`` marker to the newest
message on every request, so the message before it reads as changed), and hashing a string costs a hundredth of
its class passes."""


class HeuristicCounter(CachedCounter):
    """Estimates tokens from character classes (see `chainsum.tokens._text` for the model and why it beats
    chars/4), with the same message framing as the exact counters.

    Use it when no tokenizer is installed, or for speed; wrap it in `CalibratedCounter` to track a provider whose
    tokenizer is not public (Anthropic, Gemini) from the usage it reports.
    """

    def __init__(self, coefficients: Coefficients | None = None, *, cache_size: int = DEFAULT_CACHE_SIZE) -> None:
        super().__init__(cache_size=cache_size)
        self.coefficients = coefficients or Coefficients()
        self._weights = self.coefficients.as_tuple()
        self.name = "heuristic"
        self._short: dict[str, int] = {}
        self._long: dict[str, int] = {}
        self._long_chars = 0

    def count_text(self, text: str) -> int:
        if len(text) > _SHORT:
            n = self._long.get(text)
            if n is None:
                n = estimate_text(text, self._weights)
                if self._long_chars + len(text) > _LONG_CACHE_CHARS:  # crude bound, as for the short ones
                    self._long.clear()
                    self._long_chars = 0
                if len(text) <= _LONG_CACHE_CHARS:
                    self._long[text] = n
                    self._long_chars += len(text)
            return n
        n = self._short.get(text)
        if n is None:
            n = estimate_text(text, self._weights)
            if len(self._short) >= _SHORT_CACHE:  # crude bound: a reset costs a few recounts, never a wrong one
                self._short.clear()
            self._short[text] = n
        return n

    def clear_cache(self) -> None:
        super().clear_cache()
        self._short.clear()
        self._long.clear()
        self._long_chars = 0
