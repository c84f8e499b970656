"""A summary you can check: what a model's summary of a span dropped, put back from the extractive digest.

A model asked to summarize a span may write "The user and assistant talked." (a weak or lazy model does), and the
record that replaces the span then says nothing of the work: the user's requests, the files read and written, the
commands run and how they ended, the errors met. A second model call would cost as much and could fail the same
way; the span's messages are at hand, so the check is deterministic: `check_summary` reads the span as the
extractive summarizer does (`_extract`: its items, independent of what the model wrote) and looks, leniently, for
each of these in the summary:

- each user request (half of its words of four letters or more, or its identifiers, present: a paraphrase counts);
- each file read or written (its path, or its last two components, or its file name);
- each command run (the command, or its first three words, with its redirections and pipes to ``tail`` aside);
- each error line (its error name or code, or its first 40 characters);
- each identifier of the span that the newest turn (the messages after the span) names again: what the
  conversation is about now.

What is missing is appended, in the extractive summary's own section format (so a later consolidation reads the
items back), in that order of priority (requests, failed commands and their errors, other commands, files written,
files read, identifiers), each item whole, as many as fit in the room: the length target the strategy gave the
summary, and never as large as what the summary replaces. A summary already over its room is left as it is. The
check never runs on the extractive summarizer's own output (`is_extractive`): that is the digest already, nor
for a summarizer that calls no model (`chainsum.summarize.is_local`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..messages import Message
from ._extract import COUNTER, extract
from ._filler import CHECKED_TITLE
from ._items import TITLES, Item, Section
from ._render import all_ranked
from ._transcript import TranscriptCase, render_transcript

__all__ = ["CHECKED_TITLE", "CheckResult", "check_summary", "is_extractive"]

_EXTRACTIVE_HEADER = re.compile(r"^State snapshot \(extractive\) of \d{1,12} message\(s\)\.", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z0-9_][\w./-]{3,}")
_ERROR_NAME = re.compile(
    r"\b\w{0,60}(?:Error|Exception)\b|\b(?:ERR(?:OR)?[-_][A-Z0-9][A-Z0-9_-]{1,40}|(?:E|TS|CS|ORA-)\d{3,5})\b"
)
_NOISE = re.compile(r"\s+(?:2>&1|>\s?/dev/null|\|\s?(?:tail|head)(?:\s+-n?\s?\d+)?)(?=\s|$)")
_MAX_CANDIDATES = 80
"""Items tried at most: each try measures the text, and a record's room holds far fewer."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What `check_summary` found and did."""

    text: str
    """The summary, with what was missing appended as far as the room allows (the summary itself when nothing was
    missing or nothing fits)."""
    missing: tuple[str, ...]
    """The digest's items the summary did not say, in order of priority."""
    added: tuple[str, ...]
    """The items appended (a prefix of `missing` less those that did not fit)."""


def is_extractive(summary: str) -> bool:
    """Whether `summary` is the extractive summarizer's own (it opens with its header): the digest already."""
    return _EXTRACTIVE_HEADER.match(summary.lstrip()) is not None


def _fold(text: str) -> str:
    return " ".join(text.split()).lower()


def _request_said(item: str, said: str) -> bool:
    words = {w.lower().rstrip(".,;:") for w in _WORD.findall(item)}
    words = {w for w in words if len(w) >= 4}
    if not words:
        return _fold(item)[:30] in said
    return sum(w in said for w in words) * 2 >= len(words)


def _path_said(path: str, said: str) -> bool:
    parts = [p for p in path.lower().split("/") if p]
    return bool(parts) and ("/".join(parts[-2:]) in said or parts[-1] in said)


def _command_said(command: str, said: str) -> bool:
    plain = _fold(_NOISE.sub("", command))
    return plain in said or " ".join(plain.split(" ")[:3]) in said


def _error_said(line: str, said: str) -> bool:
    names = [m.group(0).lower() for m in _ERROR_NAME.finditer(line[:400])]
    if names:
        return any(n in said for n in names)
    return _fold(line)[:40] in said


def _path_of(item: Item) -> str:
    return item.text.rsplit(" (", 1)[0] if item.text.endswith(")") else item.text


def _command_of(item: Item) -> str:
    text = item.text[2:]
    at = text.rfind(" (")
    return text[:at] if text.endswith(")") and at > 0 else text


def _error_line(item: Item) -> str:
    text = item.text
    return text.split(") ", 1)[1] if text.startswith("(") and ") " in text else text


def _missing(ranked: dict[Section, list[Item]], said: str, newest: str) -> list[tuple[Section, Item]]:
    """The digest's items `said` (the folded summary) does not say, in order of priority."""
    commands = [i for i in ranked["actions"] if i.text.startswith("$ ")]
    errors = ranked["errors"]
    files = ranked["files"]
    groups: list[tuple[Section, list[Item]]] = [
        ("requests", [i for i in ranked["requests"] if not _request_said(i.text, said)]),
        ("actions", [i for i in commands if i.weight >= 3 and not _command_said(_command_of(i), said)]),
        ("errors", [i for i in errors if i.weight >= 3 and not _error_said(_error_line(i), said)]),
        ("actions", [i for i in commands if i.weight < 3 and not _command_said(_command_of(i), said)]),
        ("errors", [i for i in errors if i.weight < 3 and not _error_said(_error_line(i), said)]),
        ("files", [i for i in files if not i.text.endswith("(read)") and not _path_said(_path_of(i), said)]),
        ("files", [i for i in files if i.text.endswith("(read)") and not _path_said(_path_of(i), said)]),
    ]
    if newest:
        named = [i for i in ranked["identifiers"] if len(i.text) >= 3 and i.text in newest]
        groups.append(("identifiers", [i for i in named if i.text.lower() not in said]))
    return [(name, item) for name, items in groups for item in items]


def _appendix(chosen: Sequence[tuple[Section, Item]]) -> str:
    lines = ["", CHECKED_TITLE]
    for name in TITLES:
        items = [i for n, i in chosen if n == name]
        if items:
            lines += ["", TITLES[name], *("- " + i.text for i in items)]
    return "\n".join(lines)


def check_summary(
    summary: str,
    span: Sequence[Message],
    *,
    room_tokens: int,
    newest: Sequence[Message] = (),
    case: TranscriptCase = "context",
    context: Sequence[Message] = (),
    count: Callable[[str], int] = COUNTER.count_text,
    max_item_chars: int = 240,
) -> CheckResult:
    """`summary` of `span` checked against the span (see the module docstring): what it left out appended, within
    `room_tokens` (by `count`) and under what the span costs. `newest`: the messages after the span (the newest
    turn), whose identifiers the summary must keep; `case` and `context` as the span was rendered for the model.
    Pure: the same inputs give the same text."""
    transcript = render_transcript(span, case, context)
    extraction = extract(transcript, max_item_chars)
    said = _fold(summary)
    newest_text = "\n".join(m.text for m in newest)
    missing = _missing(all_ranked(extraction), said, newest_text)
    texts = tuple(i.text for _, i in missing)
    if not missing:
        return CheckResult(summary, (), ())
    limit = min(room_tokens, count(transcript) - 1)
    if count(summary) >= limit:
        return CheckResult(summary, texts, ())
    chosen: list[tuple[Section, Item]] = []
    best = summary
    for entry in missing[:_MAX_CANDIDATES]:
        candidate = summary.rstrip() + "\n" + _appendix([*chosen, entry])
        if count(candidate) <= limit:
            chosen.append(entry)
            best = candidate
    return CheckResult(best, texts, tuple(i.text for _, i in chosen))
