"""Chat facts: what a person states in a message (names, dates, numbers, plans), for a request item that keeps it.

A chat summary that keeps only the start of each user message loses what was said at its end (a booking number
after two sentences of small talk), and one that lists every capitalized word spends its room on the assistant's
chatter. So a user message becomes one item (`digest`): its first sentence and the sentences that state
something checkable later, ranked by how much they state (`fact_score`).

A client's tag before what a person wrote (``[2023-05-05] Hi, ...``: the session's date, a channel) is no statement
of theirs (`split_tag`): it counts as the client's metadata, so the dates of every session of a long companion chat
do not outrank the names and plans the person stated in them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._identifiers import WINDOW, combined_matches

__all__ = ["digest", "fact_score", "head_of", "names", "sentences", "split_tag"]

_HEAD = 2048
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])")
_NAME = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]{1,30}(?: [A-Z][a-z]{1,30}){0,3}\b")
"""A capitalized word (or run of them) inside a sentence, after a lower-case word: a name, a place, a title."""
_TAG = re.compile(r"\[[^\[\]\n]{1,40}\] (?=\S)")
"""A short bracketed tag opening a line with text after it; a line that is only a bracketed note ("[image]",
"[Request interrupted by user]") is a placeholder, not a tag."""
_NOT_NAMES = frozenset(
    "My Our Your His Her Its Their The This That These Those We You He She It They Me Us Him Them And But Or So If "
    "Then When What Where Why How Who Which An In On At To For Of With By From Also Just Please Thanks Yes No Not "
    "Ok Okay Hi Hello Hey".split()
)
"""Capitalized words that are never a name on their own: a sentence that went on without its full stop ("... went
My cousin's dog") capitalizes them mid-sentence."""


def split_tag(line: str) -> tuple[str, str]:
    """A user line's leading tag (``[2023-05-05] ``, its space included) and what follows it; ``("", line)`` when the
    line opens with none. The tag is what a client put there (the date of a memorybank session), not what the person
    stated: its identifiers weigh like metadata, and the rest of the line is read as theirs (a line starting with
    "[" was read as a placeholder whole, and the names stated after the tag were lost)."""
    match = _TAG.match(line)
    return (match.group(), line[match.end() :]) if match else ("", line)


def sentences(line: str) -> list[str]:
    """The sentences of `line` (its first `WINDOW` characters)."""
    return [s for s in _SENTENCE.split(line[:WINDOW]) if s.strip()]


def head_of(lines: Sequence[str]) -> str:
    """The start of a message's text (placeholders left out), at most `_HEAD` characters, without joining it all."""
    kept: list[str] = []
    size = 0
    for line in lines:
        if size >= _HEAD:
            break
        if line and not (line.startswith("[") and line.endswith("]")):
            kept.append(line[: _HEAD - size])
            size += len(kept[-1]) + 1
    return " ".join(kept)


def names(line: str) -> list[str]:
    """The names in `line` (its first `WINDOW` characters): capitalized words, or runs of them, after a word in
    small letters ("my cousin Marguerite", "reading Great Gatsby"). Identifier patterns miss them, and they are
    most of what a person states in a chat.

    Left out: a run of words that are never names ("My", `_NOT_NAMES`), and the words an identifier of the line
    holds (the month of "on March 28", a date listed already): each mention of a name adds to its weight, so
    "March" from every date of a chat outranked the codes and numbers a user stated once."""
    window = line[:WINDOW]
    found = [m for m in _NAME.finditer(window) if not all(w in _NOT_NAMES for w in m.group().split(" "))]
    if not found:
        return []
    taken = [(m.start(), m.end()) for m in combined_matches(window)]
    out: list[str] = []
    for m in found:
        start, end = m.span()
        for a, b in taken:
            if a <= start < b:  # it starts inside an identifier: all of it, or its first words, are listed there
                start = end
            elif start < a < end:  # an identifier starts inside it: the words before that one are the name
                end = a
        name = window[start:end].rstrip()
        # what is left before an identifier may be words that are never names alone ("My My" of "My My March 28")
        if name and not all(w in _NOT_NAMES for w in name.split(" ")):
            out.append(name)
    return out


def fact_score(sentence: str) -> int:
    """How much a sentence states something checkable later: identifiers (numbers with separators, money, dates,
    codes) and names inside the sentence."""
    window = sentence[:WINDOW]
    return 2 * sum(1 for _ in combined_matches(window)) + len(_NAME.findall(window))


def digest(lines: Sequence[str]) -> tuple[str, int]:
    """What a user message says, for its item, and how much it states (`fact_score`): its head, or, when the head
    leaves out sentences stating facts (a booking number at the end of a long message), the first sentence and
    those, in order (the first one left out when it states nothing and does not ask: a greeting)."""
    head = head_of(lines)
    parts = sentences(head) if len(head) > 160 else [head]
    if len(parts) <= 2:
        return head, fact_score(head)
    scores = [fact_score(x) for x in parts]
    if not any(scores[1:]):
        return head, scores[0]
    # the first sentence when it states something (or asks: it is the request), else only those that do ("Hello,
    # companion. Today I want to talk about books." says nothing a later question asks about)
    rest = " ".join(x for x, score in zip(parts[1:], scores[1:], strict=True) if score)
    if not (scores[0] or parts[0].rstrip().endswith("?")):
        return "... " + rest, sum(scores)
    text = parts[0] + " " + rest
    return (text if len(text) >= len(head) else parts[0] + " ... " + rest), sum(scores)
