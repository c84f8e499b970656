"""What a compaction kept: the identifiers of a conversation found in its output.

The matcher is deliberately independent of the extractive summarizer's own identifier patterns, so that a
retention figure measured with it (``bench/bench_retention.py``, ``bench/bench_budget.py``, the budget tests) is not
self-fulfilling: it counts file paths, URLs, ids such as ``ORD-7731``, numbers of three or more digits or with a
unit, and snake_case and CamelCase names, wherever they appear in the text of messages, tool calls and results.

Not counted: the line numbers a file-reading tool prints in front of each line (``   123→`` in Claude Code's
``Read``, ``   123<TAB>`` from ``cat -n``). They are the gutter of a listing, not something the conversation named,
and in agent logs they were a large part of what was counted: 463 of the 1,349 identifiers of one Claude Code
session of the corpora and 225 of 1,233 of the other were such numbers and appeared nowhere else, so a retention
figure there largely measured how many lines of old file listings were kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..messages import Message, Text, ToolCall, ToolResult

__all__ = ["GrowingIdentifiers", "identifiers", "kept_identifiers", "pieces", "texts"]

_IDENT = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+"  # paths
    r"|https?://[^\s\"'<>]+"  # URLs
    r"|\b[A-Z]{2,}[-_][A-Z0-9-]{2,}\b"  # ORD-7731, HTTP_404
    r"|\b\d+(?:\.\d+)?\s?(?:ms|s|KB|MB|GB|%|USD|\$)"  # numbers with units
    r"|\b\d{3,}\b"  # long numbers
    r"|\b[a-z]+_[a-z0-9_]+\b"  # snake_case
    r"|\b[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+\b"  # CamelCase
)


def texts(messages: Iterable[Message]) -> str:
    """The text of `messages`: text parts, tool calls (name and arguments) and tool results, one per line."""
    return "\n".join(pieces(messages))


def pieces(messages: Iterable[Message]) -> list[str]:
    """The lines `texts` joins: one per text part, tool call and tool result (what a library sends verbatim is
    compared piece by piece: it may split a message's tool results into one message each, as LangChain does)."""
    out: list[str] = []
    for m in messages:
        for p in m.parts:
            if isinstance(p, Text):
                out.append(p.text)
            elif isinstance(p, ToolCall):
                out.append(f"{p.name} {p.arguments}")
            elif isinstance(p, ToolResult):
                out.append(p.text)
    return out


_GUTTER = re.compile(r"^[ \t]*\d{1,7}(?:→|\t)", re.MULTILINE)
"""A listing's line number at the start of a line (see the module docstring)."""


def identifiers(text: str) -> set[str]:
    """The identifiers found in `text` (a listing's line numbers left out)."""
    return {m.group(0) for m in _IDENT.finditer(_GUTTER.sub(" ", text))}


def kept_identifiers(original: Iterable[Message], output: Iterable[Message]) -> set[str]:
    """The identifiers of `original` still present in `output`."""
    return identifiers(texts(original)) & identifiers(texts(output))


class GrowingIdentifiers:
    """``identifiers(texts(messages))`` of a history that only grows, kept up to date as messages are added, in time
    proportional to what is added instead of to the whole history.

    Why: a benchmark that asks for the identifiers of the history so far at every request (``bench/bench_cost.py``)
    rescanned the whole history each time; on a 4,500-message session that rescanning was most of its run time.

    Exact, not an approximation: what is added always starts a new line, so only a match attempt that reaches the
    end of the text can end otherwise later (the one pattern that crosses a line end, a number with its unit on the
    next line: ``250`` then ``ms``), and such an attempt starts on the last line. The matches before the last line
    are set aside, unless one runs into it (the scan then resumes inside the last line, so less is set aside); the
    rest is scanned again with what is added. The line-number gutter `identifiers` blanks is a pattern within one
    line, so blanking each added piece is blanking the whole."""

    def __init__(self) -> None:
        self._settled: set[str] = set()
        """Identifiers of the settled text: matches no later text can change."""
        self._open = ""
        """The text after the settled part (a line start), scanned again on every `add`."""
        self._open_found: set[str] = set()
        self._any = False
        """Whether a piece was added yet (`texts` puts a newline between pieces, none before the first)."""

    def add(self, messages: Iterable[Message]) -> None:
        """Add `messages` to the history."""
        new = pieces(messages)
        if not new:
            return
        added = _GUTTER.sub(" ", "\n".join(new))
        self._open = f"{self._open}\n{added}" if self._any else added
        self._any = True
        spans = [(m.start(), m.end(), m.group(0)) for m in _IDENT.finditer(self._open)]
        self._open_found = {g for _, _, g in spans}
        cut = self._open.rfind("\n") + 1  # the last line's start: what comes before it is settled
        while cut > 0 and any(s < cut < e for s, e, _ in spans):  # a match across it: settle less
            cut = self._open.rfind("\n", 0, cut - 1) + 1
        if cut > 0:
            self._settled.update(g for _, e, g in spans if e <= cut)
            self._open = self._open[cut:]

    @property
    def found(self) -> set[str]:
        """``identifiers(texts(every message added))``."""
        return self._settled | self._open_found
