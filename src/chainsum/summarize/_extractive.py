"""The embedded default summarizer: extractive, deterministic, no model, no network, linear time.

It reads the transcript `render_transcript` wrote (parsing its own blocks back) and keeps what model summaries
most often lose. Users of comparable tools measured it: summaries keep most decisions but drop almost every file
path, command and measured number the decisions rest on. So this summarizer is a state snapshot of exactly that:

- what the user asked for (each request, shortened),
- the assistant's decisions and conclusions (sentences with decision cues; else the last sentence of a message),
- the actions taken (tool calls with their arguments, shell commands),
- errors seen (tool results flagged as errors, lines that say error/exception/failed/...),
- every identifier it can find: paths, URLs, emails, function/class/constant names, ids, hashes, error codes,
  versions, numbers with units, quoted names.

Over budget, the identifiers come first (`ExtractiveSummarizer.identifier_share`), as a prefix of their ranking, so
a longer summary lists every identifier a shorter one did; repeated items come first, then the most recent;
narrative sections are printed in conversation order. A length asked for is measured with the default counter.
Linear time: every line is cut into windows of bounded size before pattern matching, and every pattern has bounded
quantifiers, so the work per character is bounded. `Extraction.scanned` counts the characters matched over, which
the tests use to check linearity without timing anything.

Consolidation (merging partial summaries) works too: a ``summary`` block written in this module's own format is read
section by section, so identifiers survive every level of map-reduce.
"""

from __future__ import annotations

import asyncio
import functools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, TypeAlias

from ..messages import Message
from ..tokens import HeuristicCounter
from ._transcript import TranscriptCase, parse_transcript, parse_transcript_target, render_transcript

__all__ = ["Extraction", "ExtractiveSummarizer", "Item", "Section", "key_identifiers"]

Section: TypeAlias = Literal["requests", "decisions", "actions", "errors", "identifiers"]
SECTIONS: tuple[Section, ...] = ("requests", "decisions", "actions", "errors", "identifiers")
_TITLES: dict[Section, str] = {
    "requests": "User requests:",
    "decisions": "Assistant decisions and conclusions:",
    "actions": "Actions taken:",
    "errors": "Errors:",
    "identifiers": "Identifiers:",
}
_BY_TITLE: dict[str, Section] = {title.lower(): name for name, title in _TITLES.items()}
_SHARES: dict[Section, float] = {
    "requests": 0.2,
    "decisions": 0.27,
    "actions": 0.13,
    "errors": 0.13,
}

_COUNT_SUFFIX = re.compile(r" \(x\d{1,9}\)$")
_OWN_LINE = re.compile(
    r"^(?:\(\d{1,12} more (?:items )?left out(?: for length)?\)"
    r"|State snapshot \(extractive\) of \d{1,12} message\(s\)\.)$"
)
"""The lines a summary of ours writes about itself (its header, what it left out): never content."""
_HEADER_COUNT = re.compile(r"^State snapshot \(extractive\) of (\d{1,12}) message\(s\)\.$", re.MULTILINE)
_WINDOW = 4096
_HEAD = 2048
_WS = re.compile(r"\s+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])")
_CUES = re.compile(
    r"\b(?:decided|decide|decision|chose|choose|will|going to|should|must|instead|because|so that|therefore|"
    r"conclusion|concluded|root cause|the cause|caused by|fixed|fix(?:es)?|resolved|solved|implemented|added|"
    r"removed|changed|updated|renamed|created|replaced|switched|use|using|plan|next|done|works|passes|agreed)\b",
    re.IGNORECASE,
)
_ERROR = re.compile(
    r"\b(?:error|errors|exception|traceback|failed|failure|fatal|panic|denied|refused|not found|timed out|timeout|"
    r"segmentation fault|cannot|can't|unable to|invalid)\b",
    re.IGNORECASE,
)
_PROSE_ERROR = re.compile(
    r"\b(?:\w+(?:Error|Exception)\b|(?i:error:|errors:|traceback|failed|failure|fatal|panic|denied|refused|"
    r"not found|timed out|segmentation fault|crash(?:ed|es)?|(?:HTTP |status )?[45]\d\d (?:error|response)))"
)
"""What marks an error in what people and assistants write: tool output saying "error" usually reports one, but
prose mostly talks about them ("I'll look at the error logs", "invalid input is rejected"), so there the bare words
"error", "invalid", "cannot" do not count; error names, "error:", failures and status codes do."""
_ERROR_LOWER = re.compile(_ERROR.pattern)
"""`_ERROR` without ignoring case (its words are in small letters), for text in small letters."""

_IDENTIFIERS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\b(?:https?|ftp|file|s3|gs|ws|wss)://[^\s<>\"'`)\]]{1,300}"),
    re.compile(r"\b[\w.+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}\b"),
    re.compile(r"(?<![\w/:.@-])(?:~|\.{1,2})?/?[\w@+-][\w.@+-]{0,100}(?:/[\w.@+-]{1,100}){1,30}/?"),
    re.compile(r"\b[A-Za-z]:\\[^\s\"'<>|]{1,300}"),
    re.compile(
        r"\b[\w-]{1,100}\.(?i:py|pyi|js|mjs|ts|tsx|jsx|go|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|swift|md|rst|json|"
        r"jsonl|ya?ml|toml|ini|cfg|conf|env|txt|csv|tsv|sql|sh|bash|ps1|html|css|scss|xml|lock|log|ipynb|pdf|png|"
        r"jpe?g|gif|svg|zip|tar|gz|parquet|proto|tf|dockerfile)\b"
    ),
    re.compile(r"\b[A-Za-z_][\w]{0,60}(?:\.[A-Za-z_]\w{0,60}){0,6}(?=\()"),
    re.compile(r"\b[A-Z][a-z0-9]{1,30}(?:[A-Z][a-z0-9]{0,30}){1,8}\b"),
    re.compile(r"\b[a-z][a-z0-9]{0,30}(?:_[a-z0-9]{1,30}){1,8}\b"),
    re.compile(r"\b[A-Z][A-Z0-9]{1,20}(?:_[A-Z0-9]{1,20}){1,6}\b"),
    re.compile(r"\b[A-Za-z_]\w{1,40}(?:\.[A-Za-z_]\w{1,40}){1,6}\b"),
    re.compile(
        r"(?<![\w.])\d{1,12}(?:\.\d{1,6})?\s?(?:%|(?:ms|us|ns|s|sec|secs|seconds|min|mins|minutes|h|hrs|hours|"
        r"days|B|KB|MB|GB|TB|KiB|MiB|GiB|TiB|bytes|tokens|req/s|rps|qps|px|Hz|kHz|MHz|GHz|x|fps|°C|k|M)\b)"
    ),
    re.compile(r"\bv\d{1,4}(?:\.\d{1,6}){1,3}(?:[-+][\w.]{1,30})?\b|\b\d{1,4}\.\d{1,6}\.\d{1,6}(?:[-+][\w.]{1,30})?\b"),
    re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    re.compile(r"\b(?=[0-9a-f]{0,39}[a-f])(?=[0-9a-f]{0,39}\d)[0-9a-f]{7,40}\b"),
    re.compile(r"\b[A-Z]{1,6}-?\d{2,6}\b|(?<!\w)#\d{1,7}\b"),
    re.compile(r"\b[a-z]{2,20}_[A-Za-z0-9]{6,40}\b"),
    # what people state in a chat: codes and numbers with separators (a booking or phone number, a date), money,
    # and dates by month name
    re.compile(r"(?<![\w./-])\d{2,6}(?:[-/]\d{2,6}){1,3}(?![\w/-]|\.\d)"),
    re.compile(
        r"(?:[$€£¥]\s?\d[\d,]{0,12}(?:\.\d{1,2})?|(?<![\w.])\d[\d,]{0,12}(?:\.\d{1,2})?\s?"
        r"(?i:euros?|eur|dollars?|usd|pounds?|gbp|yen|francs?|chf|kronor|krona|kr|sek|nok|dkk|rupees?|yuan)\b)"
    ),
    re.compile(
        r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December|"
        r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.? \d{1,2}(?:st|nd|rd|th)?(?:,? \d{4})?\b"
        r"|\b\d{1,2}(?:st|nd|rd|th)? (?:of )?(?:January|February|March|April|May|June|July|August|September|"
        r"October|November|December)(?:,? \d{4})?\b"
    ),
    re.compile(r"`[^`\n]{1,80}`"),
    re.compile(r"(?<![\w\"])\"[^\"\n]{2,60}\"(?![\w\"])"),
)
_COMBINED = re.compile("|".join(f"(?:{p.pattern})" for p in _IDENTIFIERS[:-2]))
"""One pass for all but the quote patterns: leftmost match wins, in the order above (a URL before the path inside
it, a path before the file name inside it), which is both faster and less noisy than one pass per pattern."""
_BACKTICKS, _QUOTES = _IDENTIFIERS[-2], _IDENTIFIERS[-1]
_CAPITAL = re.compile(r"[A-Z]")
_DIGIT = re.compile(r"\d")
_ASCII_DIGIT = re.compile(r"[0-9]")
# What some patterns need a text to hold (`_features`, `_NEEDS`): one bit each.
_SCHEME, _AT, _SLASH, _DRIVE, _DOT, _PAREN, _UPPER, _UNDERSCORE, _NUMBER, _DASH = (1 << bit for bit in range(10))
_NEEDS: tuple[int, ...] = (
    _SCHEME,  # "://"
    _AT,
    _SLASH,
    _DRIVE,  # ":\\"
    _DOT,
    _PAREN,  # the call pattern looks ahead at it
    _UPPER,
    _UNDERSCORE,
    _UPPER | _UNDERSCORE,
    _DOT,
    _NUMBER,
    _DOT | _NUMBER,
    _DASH,
    _NUMBER,
    _NUMBER,
    _UNDERSCORE,
    _NUMBER,
    _NUMBER,
    _UPPER | _NUMBER,  # month names are capitalized, and both forms hold the day
)
"""Per pattern of `_COMBINED`, in its order, what every match of it holds (or, for the call pattern, what follows
it): in a text without it the pattern cannot match, so leaving it out of the alternation changes nothing."""


def _features(text: str) -> int:
    """What `text` holds of what some patterns need (`_NEEDS`), as bits."""
    return (
        ("://" in text) * _SCHEME
        | ("@" in text) * _AT
        | ("/" in text) * _SLASH
        | (":\\" in text) * _DRIVE
        | ("." in text) * _DOT
        | ("(" in text) * _PAREN
        | (_CAPITAL.search(text) is not None) * _UPPER
        | ("_" in text) * _UNDERSCORE
        | (_DIGIT.search(text) is not None) * _NUMBER
        | ("-" in text) * _DASH
    )


_NO_START = (
    r"(?!\B\w|[^\w.+\-~/@#$€£¥]"
    r"|[a-z]{1,100}(?:[^\w.@+\-/:(]|\Z)|[A-Z][a-z]{1,100}(?:[^\w.@+\-/:(\s]|\s(?!\d)|\Z))"
)
"""Where no pattern of `_COMBINED` can start a match, checked before trying them all (most positions of a line are
one of these, and the check costs a fraction of trying 10 to 19 patterns): inside a word (every pattern starts at a
word boundary or after a non-word character), at a character no pattern starts with (a space, a colon, ...), and at
a word of small letters, or a capitalized one (a month name can be followed by a space and a day), that nothing a
pattern needs follows (a dot, a slash, an underscore, a digit, an opening parenthesis, ...). Each pattern would fail
there, so the matches are the same."""


@functools.cache
def _combined_for(bits: int) -> re.Pattern[str] | None:
    """`_COMBINED` less the patterns that cannot match in a text with the features `bits` (None: none can), after
    `_NO_START`. Same matches, in the same order: an alternative that matches nowhere never decides which one wins.
    At most 1,024 variants, each compiled on first use."""
    kept = [p.pattern for p, needs in zip(_IDENTIFIERS[:-2], _NEEDS, strict=True) if needs & bits == needs]
    return re.compile(_NO_START + "(?:" + "|".join(f"(?:{p})" for p in kept) + ")") if kept else None


def _combined_matches(text: str) -> Iterator[re.Match[str]]:
    """`_COMBINED.finditer(text)`, faster: the alternation holds only the patterns that can match in `text` (most
    lines of tool output have no capital, no "@", no "(", ...), and each pattern costs about as much as the others
    at every word."""
    pattern = _combined_for(_features(text))
    return iter(()) if pattern is None else pattern.finditer(text)


def _scan_window(window: str, mode: int) -> tuple[tuple[str, int], ...]:
    """The identifiers of one window, each once (however many patterns match it), in the order found:
    `_COMBINED`'s matches, then (`mode` 1 or 2) backticked text, then (`mode` 2) quoted text; each with 1 when it
    holds a digit (it weighs more), else 0."""
    found: dict[str, None] = {}
    for match in _combined_matches(window):
        token = match.group().rstrip(_TRAILING)
        if len(token) >= 3 and token.lower() not in _NOISE:
            found[token] = None
    for pattern, quote in ((_BACKTICKS, "`"), (_QUOTES, '"'))[:mode]:
        if quote not in window:  # each pattern starts with its quote
            continue
        for match in pattern.finditer(window):
            token = match.group()
            if len(token) >= 3 and token.lower() not in _NOISE:
                found[token] = None
    return tuple((token, _has_digit(token)) for token in found)


def _has_digit(token: str) -> int:
    """1 when a character of `token` is a digit (`str.isdigit`), else 0."""
    if token.isascii():
        return 0 if _ASCII_DIGIT.search(token) is None else 1
    return 1 if any(c.isdigit() for c in token) else 0


_cached_scan = functools.lru_cache(maxsize=8192)(_scan_window)
"""`_scan_window`, remembered (for windows up to `_CACHED_WINDOW` characters): compaction reads the same lines
again (the next request's span, a consolidation's partial summaries), and scanning costs about 0.2 us a character.
At most 8,192 windows of 1,024 characters."""
_CACHED_WINDOW = 1024
_TRAILING = ".,;:!?)]}'\""
_PLAIN_WORD = re.compile(r"`?[A-Za-z][a-z]*`?")
_NOISE = frozenset({"e.g", "i.e", "etc", "vs", "a.m", "p.m"})


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
    """Characters of message content in the transcript (instructions and delimiters excluded)."""
    read_tokens: int = 0
    """Tokens of every block read, summaries being consolidated included (the default counter's estimate)."""


class _Collector:
    """Counts items per section; local to one extraction, never shared."""

    def __init__(self, max_item_chars: int) -> None:
        self.max_item_chars = max_item_chars
        self.seen: dict[Section, dict[str, list[int]]] = {name: {} for name in SECTIONS}
        self.scanned = 0

    def add(self, section: Section, text: str, where: int, weight: int = 1) -> None:
        text = _WS.sub(" ", text[: self.max_item_chars * 4]).strip()
        if len(text) > self.max_item_chars:
            text = text[: self.max_item_chars - 3].rstrip() + "..."
        if len(text) < 2:
            return
        stats = self.seen[section].get(text)
        if stats is None:
            self.seen[section][text] = [1, where, where, weight]
        else:
            stats[0] += 1
            stats[2] = where
            stats[3] += weight

    def identifiers(self, line: str, where: int, *, quotes: bool, phrases: bool = True, weight: int = 1) -> None:
        """Identifiers of `line`. `quotes`: quoted names count too; `phrases` False (tool output) leaves out both
        quoted and backticked text, the two patterns that can carry a whole sentence: what a tool returned may
        hold instructions aimed at the model, and a summary must not repeat them as facts."""
        mode = (2 if quotes else 1) if phrases else 0
        for start in range(0, len(line), _WINDOW):
            window = line[start : start + _WINDOW]
            self.scanned += len(window) * (mode + 1)  # a pass per pattern group, counted whether cached or not
            found = _cached_scan(window, mode) if len(window) <= _CACHED_WINDOW else _scan_window(window, mode)
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
    if len(text) > _SAMPLE_HEAD + _SAMPLE_TAIL:
        # a bounded sample: a one-line list needs the most frequent identifiers, which the head and tail of a long
        # output show about as well as the whole (the patterns cost about 0.25 us a character)
        text = text[:_SAMPLE_HEAD] + "\n" + text[-_SAMPLE_TAIL:]
    out = _Collector(max_item_chars)
    for at, line in enumerate(_lines(text)):
        out.identifiers(line, at, quotes=False)
    # stable: ties keep the order of appearance within a line
    items = sorted(out.result(0).sections["identifiers"], key=lambda i: (-i.count, i.first))
    kept: list[str] = []
    used = 0
    for item in items:
        if len(item.text) > max_item_chars or _PLAIN_WORD.fullmatch(item.text) or any(item.text in k for k in kept):
            continue
        cost = len(item.text) + (2 if kept else 0)
        if used + cost > max_chars:
            continue
        kept.append(item.text)
        used += cost
    return kept


_COUNTER = HeuristicCounter()
"""Counts a summary's tokens against the length a transcript asked for (stateless; its cache is bounded)."""
_LEFT_OUT_CHARS = 40
_LEFT_OUT_SUFFIX = " more items left out for length)"
_MIN_SHORTENED = 40
"""Characters below which an item is not shortened to fit: it would say too little."""
_SAMPLE_HEAD = 3_000
_SAMPLE_TAIL = 1_000


def _header(extraction: Extraction) -> str:
    return f"State snapshot (extractive) of {extraction.messages} message(s)."


def _ranked(items: Sequence[Item], name: Section) -> list[Item]:
    """A section's items, best first: identifiers by weight and recency, the first request (it states the task)
    and then the requests that state facts, other sections' repeated and recent items."""
    if name == "identifiers":  # a long one (a URL, a quoted phrase) last: it would end the list early
        # (`_identifier_prefix`)
        return sorted(items, key=lambda i: (len(i.text) > _LONG_IDENTIFIER, -i.weight, -i.last, -len(i.text), i.first))
    if name == "requests":
        return sorted(items, key=lambda i: (i.first != 0, i.weight < 2, i.count < 2, -i.last))
    return sorted(items, key=lambda i: (i.count < 2, -i.last, -i.count, -len(i.text), i.first))


def _identifier_prefix(ranked: Sequence[Item], room: int) -> list[Item]:
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
        if used + _cost(item) > room:
            break
        keep.append(item)
        listed += "\n" + item.text
        used += _cost(item)
    return keep


def _render(extraction: Extraction, chosen: Mapping[Section, tuple[Sequence[Item], int]]) -> str:
    """The summary's text: the header, one section per kind of item, and how many items were left out."""
    lines = [_header(extraction)]
    left_out = 0
    for name in SECTIONS:
        if name not in chosen:
            continue
        items, dropped = chosen[name]
        left_out += dropped
        if not items:  # a title with only "n more left out" under it spends the budget on nothing
            continue
        lines += ["", _TITLES[name]]
        if name == "identifiers":
            lines += ["- " + item.text for item in items]
        else:
            lines += ["- " + item.text + (f" (x{item.count})" if item.count > 1 else "") for item in items]
    if left_out:
        lines += ["", f"({left_out}{_LEFT_OUT_SUFFIX}"]
    if len(lines) == 1:
        lines.append("No text content.")
    return "\n".join(lines)


def _all_ranked(extraction: Extraction) -> dict[Section, list[Item]]:
    return {name: _ranked(extraction.sections[name], name) for name in SECTIONS}


_LADDER_RATIO = 1.04
_PROSE_BASE = 40
"""The smallest room the other sections are given beside the identifiers (the shortest item worth writing)."""
_LONG_IDENTIFIER = 60


def _ladder(base: int, step: int) -> int:
    """The `step`-th character room of the ladder `_fit` searches for the prose (`base` times 1.04 to the `step`)."""
    return int(base * _LADDER_RATIO**step)


def _ladder_steps(base: int, top: int) -> int:
    """The first step of the ladder at or above `top`."""
    return max(0, math.ceil(math.log(max(top, base) / base, _LADDER_RATIO)))


def _cost(item: Item) -> int:
    """Characters an item takes in the output: the bullet, the text, a repeat count and the newline."""
    return len(item.text) + 4 + (len(str(item.count)) + 4 if item.count > 1 else 0)


def _sentences(line: str) -> list[str]:
    return [s for s in _SENTENCE.split(line[:_WINDOW]) if s.strip()]


def _assistant_lines(out: _Collector, lines: Sequence[str], where: int) -> None:
    found = False
    last_sentence, last_at = "", where
    for offset, line in enumerate(lines):
        at = where + offset
        if line.startswith("[tool call: "):
            out.add("actions", line[len("[tool call: ") :].replace("] ", " ", 1), at)
            continue
        if (line.startswith("[") and line.endswith("]")) or line.startswith(("{", '"')):
            continue  # a placeholder, or tool call arguments an excerpt cut from their call: identifiers only
        text = line[len("[reasoning] ") :] if line.startswith("[reasoning] ") else line
        for sentence in _sentences(text):
            last_sentence, last_at = sentence, at
            if _CUES.search(sentence[:_WINDOW]):
                out.add("decisions", sentence, at)
                found = True
    if not found and last_sentence:
        out.add("decisions", last_sentence, last_at)


def _tool_error(text: str) -> bool:
    """Whether `_ERROR` finds something in `text`. An ASCII text is searched in small letters, with the same
    result (ignoring case, an ASCII letter matches only itself in either case) and a third of the time: a pattern
    that ignores case cannot skip the words whose first letter starts none of its words."""
    if text.isascii():
        return _ERROR_LOWER.search(text.lower()) is not None
    return _ERROR.search(text) is not None


def _prose_error(text: str) -> bool:
    return _PROSE_ERROR.search(text) is not None


_RESULT_HEAD = re.compile(r"^\[tool result(?: ([^\s\]]{1,80}))? for ")


def _source(line: str) -> str | None:
    """The tool named by a ``[tool result NAME for ID]`` line, "tool" when it names none; None for other lines."""
    match = _RESULT_HEAD.match(line)
    if match is None:
        return None
    return f"tool {match.group(1)}" if match.group(1) else "tool"


def _tool_lines(out: _Collector, lines: Sequence[str], where: int) -> None:
    """A tool message: only its errors are kept as items, each attributed to the tool that returned it (tool text
    is never a decision; its identifiers are collected separately)."""
    error_result = False
    source = "tool"
    for offset, line in enumerate(lines):
        named = _source(line)
        if named is not None:
            source = named
            error_result = line.endswith(" error]")
            continue
        if error_result and line.strip():
            out.add("errors", f"({source}) {line}", where + offset)
            error_result = False


def _summary_lines(out: _Collector, lines: Sequence[str], where: int) -> None:
    """A partial summary: read our own section format back; other lines are treated as assistant prose."""
    section: Section | None = None
    prose: list[str] = []
    for offset, line in enumerate(lines):
        heading = _BY_TITLE.get(line.strip().lower())
        if heading is not None:
            section = heading
        elif section is not None and line.startswith("- "):
            out.add(section, _COUNT_SUFFIX.sub("", line[2:]), where + offset)
        elif _OWN_LINE.match(line):
            continue
        elif line.strip():
            section = None
            prose.append(line)
            if _PROSE_ERROR.search(line[:_WINDOW]):
                out.add("errors", line, where + offset)
    _assistant_lines(out, prose, where)


def _head(lines: Sequence[str]) -> str:
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


_NAME = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]{1,30}(?: [A-Z][a-z]{1,30}){0,3}\b")
"""A capitalized word (or run of them) inside a sentence, after a lower-case word: a name, a place, a title."""


def _fact_score(sentence: str) -> int:
    """How much a sentence states something checkable later: identifiers (numbers with separators, money, dates,
    codes) and names inside the sentence."""
    window = sentence[:_WINDOW]
    return 2 * sum(1 for _ in _combined_matches(window)) + len(_NAME.findall(window))


def _digest(lines: Sequence[str]) -> tuple[str, int]:
    """What a user message says, for its item, and how much it states (`_fact_score`): its head, or, when the head
    leaves out sentences stating facts (a booking number at the end of a long message), the first sentence and
    those, in order. A chat summary that keeps only the start of each message loses what was said at its end."""
    head = _head(lines)
    sentences = _sentences(head) if len(head) > 160 else [head]
    if len(sentences) <= 2:
        return head, _fact_score(head)
    scores = [_fact_score(x) for x in sentences]
    if not any(scores[1:]):
        return head, scores[0]
    picked = [sentences[0], *(x for x, score in zip(sentences[1:], scores[1:], strict=True) if score)]
    text = " ".join(picked)
    if len(text) < len(head):
        text = picked[0] + " ... " + " ".join(picked[1:])
    return text, sum(scores)


def _lines(body: str) -> Iterator[str]:
    start = 0
    while start <= len(body):
        end = body.find("\n", start)
        if end < 0:
            end = len(body)
        yield body[start:end]
        start = end + 1


@dataclass(frozen=True, slots=True)
class ExtractiveSummarizer:
    """The default summarizer: ``await ExtractiveSummarizer()(transcript)``, or `summarize_messages` when sync.

    `max_chars` bounds the output; `max_tokens`, when given, bounds it too at about 4 characters a token.
    """

    max_chars: int = 4000
    max_tokens: int | None = None
    ratio: float = 0.3
    """The summary is at most this share of the content it replaces (never below `min_chars`), so a summary of a
    short span cannot come out longer than the span: compaction must save space. 1.0 turns the limit off."""
    asked_ratio: float = 0.9
    """When the transcript asks for a length, the summary may take up to that length or this share of the content,
    whichever is less: the caller planned the room (``auto`` fills the budget with it), and a summary held to
    `ratio` of a short span left most of that room empty and listed fewer of the span's identifiers than a
    smaller budget's summary of a longer span (``bench/bench_budget.py``)."""
    min_chars: int = 300
    max_item_chars: int = 240
    """Longer requests, sentences and errors are shortened to this (identifiers are never cut below it)."""
    identifier_share: float = 0.5
    """Share of the budget the identifiers get at least (all the others do not need, when more): paths, ids, dates
    and codes are what a conversation comes back to, and their room grows with the budget whatever the prose takes
    (`_fit`, `select`)."""
    shares: dict[Section, float] = field(default_factory=lambda: dict(_SHARES), hash=False)
    """How the rest of the budget is split between the other sections; what a section does not use goes to the
    others."""
    local: bool = field(default=True, init=False)
    """Runs here, deterministically, with no model: a dry run may run it (`chainsum.executor.compact`)."""

    def __post_init__(self) -> None:
        if self.max_chars < 200 or (self.max_tokens is not None and self.max_tokens < 50):
            raise ValueError("budget too small for a summary: max_chars >= 200 and max_tokens >= 50")
        if not 0.0 < self.ratio <= 1.0 or not 0.0 < self.asked_ratio <= 1.0 or self.min_chars < 100:
            raise ValueError("ratio and asked_ratio must be in (0, 1] and min_chars >= 100")
        if not 0.0 <= self.identifier_share <= 1.0:
            raise ValueError("identifier_share must be in [0, 1]")

    async def __call__(self, transcript: str) -> str:
        return self.summarize_text(transcript)

    def summarize_messages(
        self, messages: Sequence[Message], case: TranscriptCase = "context", context: Sequence[Message] = ()
    ) -> str:
        """Render `messages` as a transcript and summarize it, synchronously."""
        return self.summarize_text(render_transcript(messages, case, context))

    async def summarize_messages_async(
        self, messages: Sequence[Message], case: TranscriptCase = "context", context: Sequence[Message] = ()
    ) -> str:
        await asyncio.sleep(0)
        return self.summarize_messages(messages, case, context)

    def extract(self, transcript: str) -> Extraction:
        """Parse the transcript's blocks and collect items per section (no budget applied)."""
        parsed = parse_transcript(transcript)
        # The context case shows the user messages around the span only so the summary knows what was asked (its
        # instructions say not to summarize them): they stay in the history, and listing them again spent the
        # summary's room on what is kept verbatim.
        blocks = [b for b in parsed.blocks if not (parsed.kind == "context" and b.section == "context")]
        out = _Collector(self.max_item_chars)
        where = 0
        for block in blocks:
            lines = list(_lines(block.body))
            tool = block.role == "tool"
            source = "tool" if tool else block.role
            for offset, line in enumerate(lines):
                at = where + offset
                if block.role == "summary":
                    if not _OWN_LINE.match(line):
                        out.identifiers(line, at, quotes=True)
                    continue
                named = _source(line)
                if named is not None:
                    source = named
                    continue
                code_like = line.startswith(("[tool call: ", "{", "["))
                weight = 1 if tool or code_like else 3
                out.identifiers(line, at, quotes=not code_like, phrases=not tool, weight=weight)
                if line.startswith("$ ") and not tool:
                    out.add("actions", line, at)
                if not line.startswith("[tool call: ") and (_tool_error if tool else _prose_error)(line[:_WINDOW]):
                    out.add("errors", line if block.role == "assistant" else f"({source}) {line}", at)
            if block.role == "user" or block.section == "context":
                text, facts = _digest(lines)
                out.add("requests", text, where, 1 + facts)
            elif block.role == "assistant" or block.role == "unknown":
                _assistant_lines(out, lines, where)
            elif block.role == "tool":
                _tool_lines(out, lines, where)
            elif block.role == "summary":
                _summary_lines(out, lines, where)
            where += len(lines)
        # A partial summary being consolidated stands for the messages its header counts, not for one.
        stood_for = sum(
            int(m.group(1)) if b.role == "summary" and (m := _HEADER_COUNT.search(b.body, 0, 200)) else 1
            for b in blocks
        )
        result = out.result(stood_for)
        # Earlier summaries being consolidated do not count: a consolidation is not asked to shrink by `ratio`.
        return replace(
            result,
            content_chars=sum(len(b.body) for b in blocks if b.role != "summary"),
            read_tokens=_COUNTER.count_text("\n".join(b.body for b in blocks)),
        )

    def summarize_text(self, transcript: str) -> str:
        """The summary of a transcript (any text works; a chainsum transcript works best). A transcript asking for
        a length (``target_tokens``) gets at most about that many tokens (3.5 characters a token)."""
        extraction = self.extract(transcript)
        target = parse_transcript_target(transcript)
        if target is None:
            return self.format(extraction)
        return self._fit(extraction, target)

    def _fit(self, extraction: Extraction, target: int) -> str:
        """The summary asked for `target` tokens (by the default counter's estimate: characters a token differ,
        3.5 for prose and fewer for a list of ids, dates and codes, so lengths are measured, not assumed).

        The identifiers come first, in tokens: `identifier_share` of what the header leaves, or all that the other
        sections' items do not need, as a prefix of their ranking. So a larger target lists all that a smaller one
        did, whatever the prose around them does; a summary of a shorter span (a larger budget keeps more of the
        conversation verbatim) lists its identifiers at least as far down. The other sections then take the longest
        of one fixed ladder of character rooms (4 % apart) that fits beside them."""
        count = _COUNTER.count_text
        if extraction.read_tokens > 0 and self.ratio < 1.0:
            # at most `asked_ratio` of what it read, in tokens: a consolidation asked for more than its partial
            # summaries hold came out as long as they were, and the manager rejects a summary no smaller than its
            # input
            target = min(target, max(self.min_chars // 4, int(extraction.read_tokens * self.asked_ratio)))
        ranked = _all_ranked(extraction)
        present: list[Section] = [n for n in SECTIONS if ranked[n]]
        others: list[Section] = [n for n in present if n != "identifiers"]
        cap = self.budget_for(extraction, limit=max(target * 6, self.min_chars))  # at most asked_ratio of the content
        nothing: dict[Section, tuple[Sequence[Item], int]] = {n: ((), len(ranked[n])) for n in present}
        fixed = count(_render(extraction, nothing))
        room = max(0, target - fixed)
        prose_need = count(_render(extraction, {**nothing, **self._prose(ranked, others, 10**9)})) - fixed
        ids_tokens = min(room, max(int(room * self.identifier_share), room - prose_need))
        listed = _identifier_prefix(ranked["identifiers"], 10**9)

        def with_ids(n: int) -> dict[Section, tuple[Sequence[Item], int]]:
            return {**nothing, "identifiers": (listed[:n], len(ranked["identifiers"]) - n)}

        low, high = 0, len(listed)  # the most identifiers within their tokens: a prefix, found by bisection
        while low < high:
            middle = (low + high + 1) // 2
            text = _render(extraction, with_ids(middle))
            if count(text) - fixed <= ids_tokens and len(text) <= cap:
                low = middle
            else:
                high = middle - 1
        chosen = with_ids(low)
        best = _render(extraction, chosen)
        if not others:
            return best
        top = _ladder_steps(_PROSE_BASE, cap)
        low, high = -1, top  # the longest prose that fits: the rungs up to `low` fit, those above `high` do not
        texts: dict[int, str] = {}
        while low < high:
            middle = (low + high + 1) // 2
            texts[middle] = _render(extraction, {**chosen, **self._prose(ranked, others, _ladder(_PROSE_BASE, middle))})
            if count(texts[middle]) <= target and len(texts[middle]) <= cap:
                low = middle
            else:
                high = middle - 1
        return texts[low] if low >= 0 else best

    @property
    def budget(self) -> int:
        if self.max_tokens is None:
            return self.max_chars
        return min(self.max_chars, self.max_tokens * 4)

    def budget_for(self, extraction: Extraction, *, limit: int | None = None) -> int:
        """The budget for this input: `budget` (or `limit`, a length the caller asked for, which may be larger),
        narrowed to `ratio` of the content (`asked_ratio` when a length was asked for), but at least `min_chars`."""
        budget = self.budget if limit is None else limit
        if extraction.content_chars <= 0 or self.ratio >= 1.0:
            return budget
        share = self.ratio if limit is None else max(self.ratio, self.asked_ratio)
        return min(budget, max(self.min_chars, int(extraction.content_chars * share)))

    def select(self, extraction: Extraction, *, limit: int | None = None) -> dict[Section, tuple[list[Item], int]]:
        """The items each section keeps within the budget in characters (no length asked for; `_fit` measures one
        in tokens), and how many it leaves out.

        Every section keeps a prefix of its ranking that grows with the budget, so a longer summary of the same span
        never lists less: the identifiers get `identifier_share` of the budget, or all that the other sections do not
        need, and their list ends at the first that does not fit; the other sections share the rest (`_prose`)."""
        ranked = _all_ranked(extraction)
        # the header line (its real length) and one "(n more items left out for length)" line
        budget = self.budget_for(extraction, limit=limit) - len(_header(extraction)) - 2 - _LEFT_OUT_CHARS
        present: list[Section] = [n for n in SECTIONS if ranked[n]]
        needs = {n: sum(_cost(i) for i in ranked[n]) + len(_TITLES[n]) + 2 for n in present}
        others: list[Section] = [n for n in present if n != "identifiers"]
        ids_room = 0
        if "identifiers" in needs:
            wanted = max(int(budget * self.identifier_share), budget - sum(needs[n] for n in others))
            ids_room = max(0, min(needs["identifiers"], wanted))
        chosen: dict[Section, tuple[list[Item], int]] = {}
        if "identifiers" in needs:
            keep = _identifier_prefix(ranked["identifiers"], ids_room - len(_TITLES["identifiers"]) - 2)
            chosen["identifiers"] = (keep, len(ranked["identifiers"]) - len(keep))
        chosen.update(self._prose(ranked, others, budget - ids_room))
        return {name: chosen[name] for name in present}

    def _prose(
        self, ranked: Mapping[Section, Sequence[Item]], others: Sequence[Section], room: int
    ) -> dict[Section, tuple[list[Item], int]]:
        """The items of the sections other than the identifiers within `room` characters: water-filling by
        `shares` (small sections take what they need), each a prefix of its ranking whose next item is cut to the
        room left, so a section grows smoothly as the room does."""
        needs = {n: sum(_cost(i) for i in ranked[n]) + len(_TITLES[n]) + 2 for n in others}
        left = room
        allowance: dict[Section, int] = {}
        share_left = sum(self.shares.get(n, 0.0) for n in others)
        for name in sorted(others, key=lambda n: (needs[n], SECTIONS.index(n))):  # water-filling
            fair = int(left * (self.shares.get(name, 0.0) / share_left)) if share_left > 0 else 0
            allowance[name] = min(needs[name], max(fair, 0))
            left -= allowance[name]
            share_left -= self.shares.get(name, 0.0)
        chosen: dict[Section, tuple[list[Item], int]] = {}
        for name in others:
            keep: list[Item] = []
            used = len(_TITLES[name]) + 2
            for item in ranked[name]:
                if used + _cost(item) > allowance[name]:
                    room_left = allowance[name] - used - 8
                    if room_left >= _MIN_SHORTENED:  # the next item, cut to the room left: it grows with the room
                        keep.append(replace(item, text=item.text[: room_left - 3].rstrip() + "..."))
                    break
                keep.append(item)
                used += _cost(item)
            keep.sort(key=lambda i: (i.first, i.last))
            chosen[name] = (keep, len(ranked[name]) - len(keep))
        return chosen

    def format(self, extraction: Extraction, *, limit: int | None = None) -> str:
        """Plain text with one section per kind of item, within the budget (and within `limit` characters)."""
        text = _render(extraction, self.select(extraction, limit=limit))
        budget = self.budget_for(extraction, limit=limit)
        return text if len(text) <= budget else text[: budget - 3] + "..."
