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

__all__ = ["identifiers", "kept_identifiers", "texts"]

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
    out: list[str] = []
    for m in messages:
        for p in m.parts:
            if isinstance(p, Text):
                out.append(p.text)
            elif isinstance(p, ToolCall):
                out.append(f"{p.name} {p.arguments}")
            elif isinstance(p, ToolResult):
                out.append(p.text)
    return "\n".join(out)


_GUTTER = re.compile(r"^[ \t]*\d{1,7}(?:→|\t)", re.MULTILINE)
"""A listing's line number at the start of a line (see the module docstring)."""


def identifiers(text: str) -> set[str]:
    """The identifiers found in `text` (a listing's line numbers left out)."""
    return {m.group(0) for m in _IDENT.finditer(_GUTTER.sub(" ", text))}


def kept_identifiers(original: Iterable[Message], output: Iterable[Message]) -> set[str]:
    """The identifiers of `original` still present in `output`."""
    return identifiers(texts(original)) & identifiers(texts(output))
