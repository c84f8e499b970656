"""Tool-call id templates: ``prefix{r:N:charset}suffix``, as in ``call_{r:24:x}`` or ``toolu_{r:24:b}``.

A template both *validates* an id (does it match?) and *generates* one. Generation is deterministic (derived
from a seed by SHA-256), so the same chain normalizes to the same ids every time: chainsum's output is a function
of its input.

Charsets: ``x`` lowercase hex, ``X`` uppercase hex, ``d`` digits, ``l`` lowercase letters, ``u`` uppercase
letters, ``a`` lowercase letters and digits, ``b`` letters and digits (base62).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from ..errors import TemplateError

__all__ = ["CHARSETS", "IdTemplate", "id_from_template", "parse_template"]

_DIGITS = "0123456789"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
CHARSETS: dict[str, str] = {
    "x": _DIGITS + "abcdef",
    "X": _DIGITS + "ABCDEF",
    "d": _DIGITS,
    "l": _LOWER,
    "u": _UPPER,
    "a": _DIGITS + _LOWER,
    "b": _DIGITS + _UPPER + _LOWER,
}

_PLACEHOLDER = re.compile(r"\{r:(\d+):([^}]*)\}")
_MAX_LENGTH = 256


@dataclass(frozen=True, slots=True)
class IdTemplate:
    """A parsed template: literal pieces and random runs, in order."""

    source: str
    pieces: tuple[str | tuple[int, str], ...]
    pattern: re.Pattern[str]

    def matches(self, value: str) -> bool:
        return self.pattern.fullmatch(value) is not None

    def generate(self, seed: str, attempt: int = 0) -> str:
        stream = _random_stream(f"{self.source}\x00{seed}\x00{attempt}")
        out: list[str] = []
        for piece in self.pieces:
            if isinstance(piece, str):
                out.append(piece)
            else:
                length, chars = piece
                out.extend(chars[next(stream) % len(chars)] for _ in range(length))
        return "".join(out)


def _random_stream(seed: str) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(f"{seed}\x00{counter}".encode()).digest()
        # Bytes >= 248 would bias the modulo for 62 symbols a little; skipping them keeps the output uniform.
        yield from (b for b in block if b < 248)
        counter += 1


@lru_cache(maxsize=64)
def parse_template(template: str) -> IdTemplate:
    """Parse `template`; `TemplateError` says what is wrong and where."""
    if not isinstance(template, str) or not template:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TemplateError("an id template must be a non-empty string")
    pieces: list[str | tuple[int, str]] = []
    regex: list[str] = []
    pos = 0
    total = 0
    for m in _PLACEHOLDER.finditer(template):
        literal = template[pos : m.start()]
        if "{" in literal or "}" in literal:
            raise TemplateError(f"stray brace in template {template!r} at offset {pos + literal.find('{')}")
        if literal:
            pieces.append(literal)
            regex.append(re.escape(literal))
            total += len(literal)
        length, code = int(m.group(1)), m.group(2)
        if code not in CHARSETS:
            raise TemplateError(f"unknown charset {code!r} in {template!r} (known: {', '.join(CHARSETS)})")
        if not 1 <= length <= _MAX_LENGTH:
            raise TemplateError(f"random run length {length} in {template!r} is outside 1..{_MAX_LENGTH}")
        pieces.append((length, CHARSETS[code]))
        regex.append(f"[{re.escape(CHARSETS[code])}]{{{length}}}")
        total += length
        pos = m.end()
    tail = template[pos:]
    if "{" in tail or "}" in tail:
        raise TemplateError(f"malformed placeholder in template {template!r} (expected {{r:N:charset}})")
    if tail:
        pieces.append(tail)
        regex.append(re.escape(tail))
        total += len(tail)
    if not any(isinstance(p, tuple) for p in pieces):
        raise TemplateError(f"template {template!r} has no {{r:N:charset}} placeholder, so ids would collide")
    if total > _MAX_LENGTH:
        raise TemplateError(f"template {template!r} makes ids of {total} characters (max {_MAX_LENGTH})")
    return IdTemplate(template, tuple(pieces), re.compile("".join(regex)))


def id_from_template(template: str, seed: str, attempt: int = 0) -> str:
    """A deterministic id for `seed` following `template`."""
    return parse_template(template).generate(seed, attempt)
