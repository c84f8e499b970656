"""The items an extractive summary is made of, and the collector that counts them while a transcript is read.

A summary has one section per kind of item (`SECTIONS`): what the user asked for, the assistant's decisions, the
actions taken (commands with their outcome, searches), the files read and written, the errors seen, and the
identifiers; an agent's span also has the code it wrote (the lines its edits added). `Collector` counts each
distinct item per section with where it was first and last seen and how much its mentions weigh; `Extraction` is
what it found, before any budget is applied.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ._filler import is_filler
from ._identifiers import CACHED_WINDOW, PLAIN_WORD, WINDOW, cached_scan, scan_window

__all__ = [
    "BY_TITLE",
    "ROOT_LINE",
    "ROOT_PATTERN",
    "SECTIONS",
    "TITLES",
    "Collector",
    "Extraction",
    "Item",
    "Section",
    "key_identifiers",
    "lines_of",
]

Section: TypeAlias = Literal["requests", "decisions", "actions", "files", "changes", "errors", "identifiers"]
SECTIONS: tuple[Section, ...] = ("requests", "decisions", "actions", "files", "changes", "errors", "identifiers")
"""In the order a summary prints them."""
TITLES: dict[Section, str] = {
    "requests": "User requests:",
    "decisions": "Assistant decisions and conclusions:",
    "actions": "Actions taken:",
    "files": "Files read and written:",
    "changes": "Code written:",
    "errors": "Errors:",
    "identifiers": "Identifiers:",
}
ROOT_LINE = "(paths relative to {root}/)"
"""The line after a list of files naming the directory its relative paths are under."""
ROOT_PATTERN = re.compile(r"^\(paths relative to (\S[^\n]{0,400})/\)$")
BY_TITLE: dict[str, Section] = {title.lower(): name for name, title in TITLES.items()}
"""A section by its title in small letters: how a summary being consolidated is read back."""
_WS = re.compile(r"\s+")
SAMPLE_HEAD = 3_000
SAMPLE_TAIL = 1_000
"""How much of a long tool output is read for its identifiers: its first and last characters. The identifiers worth
keeping of a long output (the paths, ids and codes it keeps repeating, the summary line at its end) show in its
head and tail about as well as in the whole, and the patterns cost about 0.2 us a character: a 40 KB log read whole
cost a compaction 8 ms for a list that keeps a dozen."""


def sampled_lines(lines: Sequence[tuple[int, str]]) -> Sequence[tuple[int, str]]:
    """The (offset, line) pairs of one tool output within `SAMPLE_HEAD` characters of its start or `SAMPLE_TAIL` of
    its end (all of them when it is no longer than both): the lines read for identifiers, in order."""
    total = sum(len(line) + 1 for _, line in lines)
    if total <= SAMPLE_HEAD + SAMPLE_TAIL:
        return lines
    out: list[tuple[int, str]] = []
    at = 0
    for pair in lines:
        size = len(pair[1]) + 1
        if at < SAMPLE_HEAD or at + size > total - SAMPLE_TAIL:
            out.append(pair)
        at += size
    return out


@dataclass(frozen=True, slots=True)
class Item:
    """One extracted item: its text, how often it was seen, and where (first and last line of the transcript's
    blocks, counted from 0: recency is by line, so the latest of many items in one huge message wins)."""

    text: str
    count: int
    first: int
    last: int
    weight: int = 1
    """How much its mentions count: an identifier a person or the assistant wrote (an order id in the user's
    request, the error the assistant names) weighs more than one read off tool output."""


@dataclass(frozen=True, slots=True)
class Extraction:
    """What the extractive pass found, per section, before any budget is applied."""

    messages: int
    sections: dict[Section, tuple[Item, ...]]
    scanned: int
    """Characters the patterns were run over (an operation count: bounded by a small multiple of the input)."""
    content_chars: int = 0
    """Characters of message content in the transcript (instructions and delimiters excluded), the earlier
    summaries being consolidated aside (`summary_chars`)."""
    summary_chars: int = 0
    """Characters of the earlier summaries being consolidated: a consolidation may keep them whole (they were
    shortened once already), so they are room the summary may take, not content it must shrink."""
    read_tokens: int = 0
    """Tokens of every block read, summaries being consolidated included (the default counter's estimate)."""
    root: str = ""
    """The directory most of an agent's files are under (``/home/me/project``), written once after the list of
    files, which names them relative to it (`ROOT_LINE`); empty when there is none worth naming."""
    agent: bool = False
    """The span is a coding agent's (it read or wrote files or ran commands, or a partial summary being read back
    lists files): its summary's room goes first to the work (requests, commands, files, errors), not to the list
    of identifiers."""


class Collector:
    """Counts items per section; local to one extraction, never shared."""

    def __init__(self, max_item_chars: int) -> None:
        self.max_item_chars = max_item_chars
        self.seen: dict[Section, dict[str, list[int]]] = {name: {} for name in SECTIONS}
        self.scanned = 0

    def add(self, section: Section, text: str, where: int, weight: int = 1) -> None:
        text = text[: self.max_item_chars * 4]
        # whitespace is a space or a character str.isprintable refuses (separators, controls): most items (an
        # identifier) have none, and the pattern and strip are skipped for them
        if " " in text or not text.isprintable():
            text = _WS.sub(" ", text).strip()
        if len(text) > self.max_item_chars:
            text = text[: self.max_item_chars - 3].rstrip() + "..."
        if len(text) < 2 or (section != "identifiers" and is_filler(text)):
            return  # a placeholder, "No text content.": it says nothing (`_filler`)
        stats = self.seen[section].get(text)
        if stats is None:
            self.seen[section][text] = [1, where, where, weight]
        else:
            stats[0] += 1
            stats[2] = where
            stats[3] += weight

    def put(self, section: Section, item: Item) -> None:
        """An item made elsewhere (the agent facts, `_agent`), counted as it comes; its text is cut like `add`'s."""
        text = item.text if len(item.text) <= self.max_item_chars else item.text[: self.max_item_chars - 3] + "..."
        if is_filler(text):
            return
        self.seen[section][text] = [item.count, item.first, item.last, item.weight]

    def identifiers(self, line: str, where: int, *, quotes: bool, phrases: bool = True, weight: int = 1) -> None:
        """Identifiers of `line`. `quotes`: quoted names count too; `phrases` False (tool output) leaves out both
        quoted and backticked text, the two patterns that can carry a whole sentence: what a tool returned may
        hold instructions aimed at the model, and a summary must not repeat them as facts."""
        mode = (2 if quotes else 1) if phrases else 0
        for start in range(0, len(line), WINDOW):
            window = line[start : start + WINDOW]
            self.scanned += len(window) * (mode + 1)  # a pass per pattern group, counted whether cached or not
            found = cached_scan(window, mode) if len(window) <= CACHED_WINDOW else scan_window(window, mode)
            for token, digit in found:
                self.add("identifiers", token, where, weight + digit)

    def result(self, messages: int) -> Extraction:
        sections: dict[Section, tuple[Item, ...]] = {}
        for name in SECTIONS:
            sections[name] = tuple(Item(text, s[0], s[1], s[2], s[3]) for text, s in self.seen[name].items())
        return Extraction(messages=messages, sections=sections, scanned=self.scanned)


def key_identifiers(text: str, max_chars: int, *, max_item_chars: int = 80) -> list[str]:
    """The identifiers of `text` worth keeping when the text itself goes (a masked tool result), within
    `max_chars` in all (joined by ", ").

    Same patterns as the summaries (paths, URLs, names, ids, codes, numbers with units), ranked by how often they
    occur, then by first appearance, so the list is deterministic. Skipped: plain words ("len", "isinstance":
    a call pattern matches them, but in a one-line placeholder only something with structure, a separator, digit or
    inner capital, identifies anything), one contained in a kept one ("file.py" next to "src/file.py"), and one
    longer than `max_item_chars` (a long URL costs more than it helps). A text over 4,000 characters is read in its
    first 3,000 and last 1,000 only.
    """
    if max_chars <= 0:
        return []
    if len(text) > SAMPLE_HEAD + SAMPLE_TAIL:
        # a bounded sample: a one-line list needs the most frequent identifiers, which the head and tail of a long
        # output show about as well as the whole (the patterns cost about 0.25 us a character)
        text = text[:SAMPLE_HEAD] + "\n" + text[-SAMPLE_TAIL:]
    out = Collector(max_item_chars)
    for at, line in enumerate(lines_of(text)):
        out.identifiers(line, at, quotes=False)
    # stable: ties keep the order of appearance within a line
    items = sorted(out.result(0).sections["identifiers"], key=lambda i: (-i.count, i.first))
    kept: list[str] = []
    used = 0
    for item in items:
        if len(item.text) > max_item_chars or PLAIN_WORD.fullmatch(item.text) or any(item.text in k for k in kept):
            continue
        cost = len(item.text) + (2 if kept else 0)
        if used + cost > max_chars:
            continue
        kept.append(item.text)
        used += cost
    return kept


def lines_of(body: str) -> Iterator[str]:
    """The lines of `body`, lazily (a huge tool output is not split all at once)."""
    start = 0
    while start <= len(body):
        end = body.find("\n", start)
        if end < 0:
            end = len(body)
        yield body[start:end]
        start = end + 1
