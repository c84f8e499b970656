"""The default counter: no dependency, within a few percent of o200k on real transcripts."""

from __future__ import annotations

from collections.abc import Sequence

from ._base import DEFAULT_CACHE_SIZE, CachedCounter
from ._shape import Shape, estimate_shape, join_shapes, text_shape
from ._text import Coefficients, estimate_text

__all__ = ["HeuristicCounter", "ShapeMemo"]

_SHORT = 40
"""Strings up to this length (roles, tool names, ids, short replies) are memoized by value: they recur constantly
and the fixed cost of the class passes dominates their estimate."""
_SHORT_CACHE = 4096
_LONG_CACHE_CHARS = 8_000_000
"""Longer strings are memoized too (their shapes, `ShapeMemo`), up to this many characters in all: a client that
resends its history sends the same tool output again in a new message object (Claude Code moves its
``cache_control`` marker to the newest message on every request, so the message before it reads as changed), and
hashing a string costs a hundredth of its class passes."""
_HEAD_LINE = 512
"""How far into a long text `ShapeMemo.shape` looks for the end of a first line put before a text it knows."""


class ShapeMemo:
    """Shapes (`chainsum.tokens._shape`) of long texts, by value, within `max_chars` characters in all.

    One memo serves every `HeuristicCounter` (a shape does not depend on the coefficients): the manager's counter
    measures a transcript's bodies and the extractive summarizer's (`chainsum.summarize._extract.COUNTER`) the
    same bodies read back. A text it does not know but that is one it knows with a line put before it (the
    manager's meta header before a transcript) is shaped from that one's shape and the line's, without reading
    it again. Thread-safe as dict operations are: a race costs a recount, never a wrong count."""

    def __init__(self, max_chars: int = _LONG_CACHE_CHARS) -> None:
        self.max_chars = max_chars
        self._shapes: dict[str, Shape] = {}
        self._chars = 0

    def __len__(self) -> int:
        return len(self._shapes)

    def shape(self, text: str) -> Shape:
        """`text_shape(text)`, remembered."""
        shape = self._shapes.get(text)
        if shape is not None:
            return shape
        shape = self._after_line(text)
        if shape is None:
            shape = text_shape(text)
        self.remember(text, shape)
        return shape

    def _after_line(self, text: str) -> Shape | None:
        end = text.find("\n", 0, _HEAD_LINE)
        if end < 0 or len(text) - end <= _HEAD_LINE:
            return None
        known = self._shapes.get(text[end + 1 :])
        return None if known is None else join_shapes((text_shape(text[: end + 1]), known))

    def remember(self, text: str, shape: Shape) -> None:
        """Keep `shape` as `text`'s (the caller made it: `HeuristicCounter.count_joined`)."""
        if len(text) > self.max_chars:
            return
        if text in self._shapes:  # known already (counted as a whole before): its characters are counted
            self._shapes[text] = shape
            return
        if self._chars + len(text) > self.max_chars:  # crude bound: a reset costs a few recounts, never a wrong one
            self._shapes.clear()
            self._chars = 0
        self._shapes[text] = shape
        self._chars += len(text)

    def clear(self) -> None:
        self._shapes.clear()
        self._chars = 0


_SHAPES = ShapeMemo()


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
        self._shapes = _SHAPES

    def count_text(self, text: str) -> int:
        if len(text) > _SHORT:
            return estimate_shape(self._shapes.shape(text), self._weights)
        n = self._short.get(text)
        if n is None:
            n = estimate_text(text, self._weights)
            if len(self._short) >= _SHORT_CACHE:  # crude bound: a reset costs a few recounts, never a wrong one
                self._short.clear()
            self._short[text] = n
        return n

    def count_joined(self, pieces: Sequence[str], separator: str = "", *, joined: str | None = None) -> int:
        """``count_text(separator.join(pieces))``, exactly, from the pieces' shapes: a long piece counted before
        (a message's body) is not read again, nor is the joined text. `joined`, when the caller has the joined
        text (and it is that), is remembered with its count, so counting it later costs a lookup."""
        between = text_shape(separator) if separator else None
        shapes: list[Shape] = []
        for i, piece in enumerate(pieces):
            if between is not None and i:
                shapes.append(between)
            shapes.append(self._shapes.shape(piece) if len(piece) > _SHORT else text_shape(piece))
        shape = join_shapes(shapes)
        if joined is not None and len(joined) > _SHORT:
            self._shapes.remember(joined, shape)
        return estimate_shape(shape, self._weights)

    def clear_cache(self) -> None:
        super().clear_cache()
        self._short.clear()
        self._shapes.clear()
