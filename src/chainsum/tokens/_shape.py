"""Text shapes: the heuristic estimator's features of a text plus what its two ends look like, so that the features
of texts joined together follow from theirs, exactly, without reading the joined text again.

Why: compaction measures the same content in several wrappings. A chunk's transcript is its messages' bodies
between marker lines; the manager counts it again with a header line in front; the extractive summarizer counts
the bodies it read back, joined. Each count read every character (all of them, a few times, on a Claude Code-sized
compaction). The features (`chainsum.tokens._text.text_features`) are counts of character classes and of runs of a
class, so those of ``a + b`` are those of ``a`` plus those of ``b``, corrected at the seam: a run that goes on
across it (a word, digits, punctuation, newlines) was counted twice, a lower-to-upper case change that spans it was
counted by neither, and a run of spaces split by it was counted in two halves (`join_shapes`). Exact: the estimate
of the joined shapes is the estimate of the joined text, whatever the pieces (the tests check it on random texts).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import dataclass

from ._text import FEATURE_NAMES, text_classes, text_features

__all__ = ["EMPTY_SHAPE", "Shape", "estimate_shape", "join_shapes", "text_shape"]

_WORD_CLASSES = frozenset(b"aAl2")
_WORDS = FEATURE_NAMES.index("words")
_CAMEL = FEATURE_NAMES.index("camel")
_DIGIT_RUNS = FEATURE_NAMES.index("digit_runs")
_PUNCT_RUNS = FEATURE_NAMES.index("punct_runs")
_NEWLINE_RUNS = FEATURE_NAMES.index("newline_runs")
_INDENT = FEATURE_NAMES.index("indent")
_SPACE, _LOWER, _UPPER, _DIGIT, _PUNCT, _NEWLINE = b" aA0.n"


@dataclass(frozen=True, slots=True)
class Shape:
    """A text's features (`text_features`) and its ends: the class of its first and last character (-1 when
    empty), and how many spaces it starts and ends with (the spaces' pairs are a feature: a run split in two may
    lose one)."""

    features: tuple[int, ...]
    length: int
    """Characters (class bytes) of the text."""
    first: int
    last: int
    lead: int
    trail: int


EMPTY_SHAPE = Shape((0,) * len(FEATURE_NAMES), 0, -1, -1, 0, 0)


def text_shape(text: str) -> Shape:
    """The shape of `text` (one pass more than `text_features`: the class string's two ends)."""
    if not text:
        return EMPTY_SHAPE
    classes = text_classes(text)
    lead = len(classes) - len(classes.lstrip(b" "))
    trail = len(classes) - len(classes.rstrip(b" "))
    return Shape(text_features(text, classes), len(classes), classes[0], classes[-1], lead, trail)


def join_shapes(shapes: Iterable[Shape]) -> Shape:
    """The shape of the texts of `shapes` joined in order (`text_shape` of the joined text, without it).

    The features are summed column by column (in C: a transcript joins a few hundred shapes, and adding them one
    by one was most of the time a compaction spent counting), then each seam corrects them."""
    parts = [shape for shape in shapes if shape.length]
    if not parts:
        return EMPTY_SHAPE
    if len(parts) == 1:
        return parts[0]
    total = list(map(sum, zip(*(shape.features for shape in parts), strict=True)))
    head = parts[0]
    length, lead, trail, last = head.length, head.lead, head.trail, head.last
    for shape in parts[1:]:
        a, b = last, shape.first
        if a in _WORD_CLASSES and b in _WORD_CLASSES:
            total[_WORDS] -= 1  # one word across the seam
        elif a == b == _DIGIT:
            total[_DIGIT_RUNS] -= 1
        elif a == b == _PUNCT:
            total[_PUNCT_RUNS] -= 1
        elif a == b == _NEWLINE:
            total[_NEWLINE_RUNS] -= 1
        if a == _LOWER and b == _UPPER:
            total[_CAMEL] += 1
        if trail and shape.lead:  # one run of spaces: its pairs counted as one
            total[_INDENT] += (trail + shape.lead) // 2 - trail // 2 - shape.lead // 2
        if lead == length:  # all spaces so far: the run starting the text goes on
            lead += shape.lead
        trail = trail + shape.length if shape.trail == shape.length else shape.trail
        length += shape.length
        last = shape.last
    return Shape(tuple(total), length, head.first, last, lead, trail)


def estimate_shape(shape: Shape, coefficients: tuple[float, ...]) -> int:
    """`estimate_text` of the text `shape` is the shape of (the same weighted sum, rounded, at least 1)."""
    if not shape.length:
        return 0
    return max(1, round(sum(map(operator.mul, coefficients, shape.features))))
