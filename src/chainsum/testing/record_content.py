"""What a summary record carries, for the property that no record written carries nothing (issue 21).

A block of the record (`chain.record_blocks`) *carries nothing* when, once the lines chainsum writes about the record
itself are taken out (an extractive summary's header and its "(n more items left out for length)" line, the note
that messages were moved to the archive, the section titles), none of its words is a word of the messages it stands
for: ``"4 earlier message(s) were moved to the archive without a summary."`` and ``"State snapshot (extractive) of 2
message(s). (4 more items left out for length)"`` carry nothing; a block naming one command of the span carries
something. A word is a run of at least three letters, digits or underscores, compared case-insensitively.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..messages import Message, Reasoning, Text, ToolCall, ToolResult

__all__ = ["BOILERPLATE", "carries_nothing", "content_words", "message_words", "words_of"]

BOILERPLATE = re.compile(
    r"^\s*(?:State snapshot \(extractive\) of \d+ message\(s\)\.(?: \(\d+ more items left out for length\))?"
    r"|\(\d+ more (?:items )?left out(?: for length)?\)"
    r"|\d+ earlier message\(s\) were moved to the archive without a summary\..*?"
    r"|(?:User requests|Assistant decisions and conclusions|Actions taken|Files read and written|Errors|Identifiers"
    r"|Messages|Summary|Summaries)\s*:"
    r")\s*$",
    re.MULTILINE,
)
"""The lines a record writes about itself: never content (the archive note's header with what may follow it on the
same line, which is chainsum's own wording too)."""

_WORD = re.compile(r"\w{3,}")


def words_of(texts: Iterable[str]) -> set[str]:
    """Every word (`_WORD`, lower-cased) of `texts`."""
    return {w.lower() for text in texts for w in _WORD.findall(text)}


def message_words(messages: Sequence[Message]) -> set[str]:
    """Every word of `messages`: their text, reasoning, tool calls (name and arguments) and tool output."""
    texts: list[str] = []
    for m in messages:
        for p in m.parts:
            if isinstance(p, Text | Reasoning):
                texts.append(p.text)
            elif isinstance(p, ToolCall):
                texts += [p.name, p.arguments]
            elif isinstance(p, ToolResult):
                texts.append(p.text)
    return words_of(texts)


def content_words(block_text: str) -> set[str]:
    """The words of a block's text outside its `BOILERPLATE` lines."""
    return words_of([BOILERPLATE.sub("", block_text)])


def carries_nothing(block_text: str, source_words: set[str]) -> bool:
    """True when no word of the block beyond its boilerplate is one of `source_words` (the words of the messages it
    stands for)."""
    return not (content_words(block_text) & source_words)
