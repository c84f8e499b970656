"""The identifier patterns of the extractive summarizer and the scanner that runs them.

What a summary must keep verbatim (paths, URLs, emails, function/class/constant names, ids, hashes, error codes,
versions, numbers with units, dates, money, quoted names) is found here, by one combined pattern whose alternation
holds only the patterns a text can match (`_features`), after a cheap check for positions where none can start
(`_NO_START`). Linear time: a caller cuts every line into windows of bounded size (`WINDOW`) before scanning, and
every pattern has bounded quantifiers. Scanned windows are remembered (`cached_scan`): compaction reads the same
lines again.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

__all__ = ["CACHED_WINDOW", "NOISE", "PLAIN_WORD", "WINDOW", "cached_scan", "combined_matches", "scan_window"]

WINDOW = 4096
"""Characters a line is scanned in at a time."""

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


def combined_matches(text: str) -> Iterator[re.Match[str]]:
    """`_COMBINED.finditer(text)`, faster: the alternation holds only the patterns that can match in `text` (most
    lines of tool output have no capital, no "@", no "(", ...), and each pattern costs about as much as the others
    at every word."""
    pattern = _combined_for(_features(text))
    return iter(()) if pattern is None else pattern.finditer(text)


def scan_window(window: str, mode: int) -> tuple[tuple[str, int], ...]:
    """The identifiers of one window, each once (however many patterns match it), in the order found:
    `_COMBINED`'s matches, then (`mode` 1 or 2) backticked text, then (`mode` 2) quoted text; each with 1 when it
    holds a digit (it weighs more), else 0."""
    found: dict[str, None] = {}
    for match in combined_matches(window):
        token = match.group().rstrip(_TRAILING)
        if len(token) >= 3 and token.lower() not in NOISE:
            found[token] = None
    for pattern, quote in ((_BACKTICKS, "`"), (_QUOTES, '"'))[:mode]:
        if quote not in window:  # each pattern starts with its quote
            continue
        for match in pattern.finditer(window):
            token = match.group()
            if len(token) >= 3 and token.lower() not in NOISE:
                found[token] = None
    return tuple((token, _has_digit(token)) for token in found)


def _has_digit(token: str) -> int:
    """1 when a character of `token` is a digit (`str.isdigit`), else 0."""
    if token.isascii():
        return 0 if _ASCII_DIGIT.search(token) is None else 1
    return 1 if any(c.isdigit() for c in token) else 0


cached_scan = functools.lru_cache(maxsize=8192)(scan_window)
"""`scan_window`, remembered (for windows up to `CACHED_WINDOW` characters): compaction reads the same lines
again (the next request's span, a consolidation's partial summaries), and scanning costs about 0.2 us a character.
At most 8,192 windows of 1,024 characters."""
CACHED_WINDOW = 1024
_TRAILING = ".,;:!?)]}'\""
PLAIN_WORD = re.compile(r"`?[A-Za-z][a-z]*`?")
NOISE = frozenset({"e.g", "i.e", "etc", "vs", "a.m", "p.m"})
