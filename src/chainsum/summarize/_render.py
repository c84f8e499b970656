"""Rendering an extractive summary: how items are ranked, how many fit, and the text they make.

Every section lists a prefix of its ranking, so a longer summary of the same span never lists less (DESIGN
invariant 9). Rankings: identifiers by weight and recency (a long one last: it would end the list early); the first
request (it states the task), then the requests that state facts; an agent's files written before files read, its
failed commands and their error lines before the rest, each then by recency; other items repeated and recent first.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ._items import ROOT_LINE, SECTIONS, TITLES, Extraction, Item, Section

__all__ = [
    "LEFT_OUT_CHARS",
    "MIN_SHORTENED",
    "PROSE_BASE",
    "all_ranked",
    "cost",
    "header",
    "identifier_prefix",
    "ladder",
    "ladder_steps",
    "render",
]

LEFT_OUT_CHARS = 40
_LEFT_OUT_SUFFIX = " more items left out for length)"
MIN_SHORTENED = 40
"""Characters below which an item is not shortened to fit: it would say too little."""
_LADDER_RATIO = 1.04
PROSE_BASE = 40
"""The smallest room the other sections are given beside the identifiers (the shortest item worth writing)."""
_LONG_IDENTIFIER = 60


def header(extraction: Extraction) -> str:
    return f"State snapshot (extractive) of {extraction.messages} message(s)."


def _ranked(items: Sequence[Item], name: Section) -> list[Item]:
    """A section's items, best first: identifiers by weight and recency, the first request (it states the task)
    and then the requests that state facts, other sections' repeated and recent items."""
    if name == "identifiers":  # a long one (a URL, a quoted phrase) last: it would end the list early
        # (`identifier_prefix`)
        return sorted(items, key=lambda i: (len(i.text) > _LONG_IDENTIFIER, -i.weight, -i.last, -len(i.text), i.first))
    if name == "requests":
        return sorted(items, key=lambda i: (i.first != 0, i.weight < 2, i.count < 2, -i.last))
    if name in ("files", "actions", "errors"):  # an agent's: what it wrote, what failed and why, first
        return sorted(items, key=lambda i: (-min(i.weight, 3), -i.last, -i.count, i.first))
    return sorted(items, key=lambda i: (i.count < 2, -i.last, -i.count, -len(i.text), i.first))


def identifier_prefix(ranked: Sequence[Item], room: int) -> list[Item]:
    """The identifiers listed in `room` characters: a prefix of the ranking (one contained in a listed one skipped:
    "file.py" adds nothing next to "src/file.py"), ending at the first that does not fit, so a larger room lists
    all that a smaller one did."""
    keep: list[Item] = []
    listed = ""  # the kept texts, each after a newline: a text with no newline is in one of them iff it is in this
    used = 0
    for item in ranked:
        text = item.text
        contained = text in listed if text and "\n" not in text else any(text in other.text for other in keep)
        if contained:
            continue
        spent = cost(item)
        if used + spent > room:
            break
        keep.append(item)
        listed += "\n" + item.text
        used += spent
    return keep


def render(extraction: Extraction, chosen: Mapping[Section, tuple[Sequence[Item], int]]) -> str:
    """The summary's text: the header, one section per kind of item, and how many items were left out."""
    lines = [header(extraction)]
    left_out = 0
    for name in SECTIONS:
        if name not in chosen:
            continue
        items, dropped = chosen[name]
        left_out += dropped
        if not items:  # a title with only "n more left out" under it spends the budget on nothing
            continue
        lines += ["", TITLES[name]]
        if name == "identifiers":
            lines += ["- " + item.text for item in items]
        else:
            lines += ["- " + item.text + (f" (x{item.count})" if item.count > 1 else "") for item in items]
        if name == "files" and extraction.root and any(not i.text.startswith("/") for i in items):
            lines.append(ROOT_LINE.format(root=extraction.root))
    if left_out:
        lines += ["", f"({left_out}{_LEFT_OUT_SUFFIX}"]
    if len(lines) == 1:
        lines.append("No text content.")
    return "\n".join(lines)


def all_ranked(extraction: Extraction) -> dict[Section, list[Item]]:
    """Every section's ranking. An agent span's identifiers leave out what its file list names in full (a path,
    the file name in it): the list says it already, with what was done to the file."""
    ranked: dict[Section, list[Item]] = {name: _ranked(extraction.sections[name], name) for name in SECTIONS}
    if extraction.agent and ranked["files"]:
        root = extraction.root + "/" if extraction.root else ""
        named = "\n".join(f"{item.text}\n{root}{item.text}" for item in ranked["files"])
        ranked["identifiers"] = [i for i in ranked["identifiers"] if i.text not in named]
    return ranked


def ladder(base: int, step: int) -> int:
    """The `step`-th character room of the ladder `_fit` searches for the prose (`base` times 1.04 to the `step`)."""
    return int(base * _LADDER_RATIO**step)


def ladder_steps(base: int, top: int) -> int:
    """The first step of the ladder at or above `top`."""
    return max(0, math.ceil(math.log(max(top, base) / base, _LADDER_RATIO)))


def cost(item: Item) -> int:
    """Characters an item takes in the output: the bullet, the text, a repeat count and the newline."""
    return len(item.text) + 4 + (len(str(item.count)) + 4 if item.count > 1 else 0)
