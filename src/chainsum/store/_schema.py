"""Table layouts for both backends and the helpers they share (indexed text, query words, lock keys).

Both backends keep the same tables so that behaviour, and a dump of one, match:

- ``archive``: one row per original message (session, message id, position, role, canonical JSON, SHA-256, time).
  The JSON is stored as *text*, not ``jsonb``: the exact bytes that were hashed must come back to be verified.
- ``summaries`` + ``summary_messages``: each `SummaryRecord` as JSON with indexed columns, and the ids it replaced.
- ``session_state``: the manager's small JSON document with a version for compare-and-set.
- ``session_locks`` (SQLite only): leases; PostgreSQL uses advisory locks instead, freed when a process dies.
- ``chainsum_schema``: one row, the schema version (`chainsum.store._migrations`). The DDL below is version 1;
  a later layout is a new migration step, never an edit here (an edit would not reach existing databases).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from ..messages import Message, Reasoning, Text, ToolCall, ToolResult

__all__ = [
    "MAX_INDEXED_CHARS",
    "POSTGRES_DDL",
    "SQLITE_DDL",
    "lock_key",
    "query_words",
    "searchable_text",
    "snippet_of",
]

MAX_INDEXED_CHARS = 100_000
"""Only the first this many characters of a message are indexed for search: PostgreSQL refuses a ``tsvector`` over
1 MiB, and both backends must find the same things. The archived JSON itself is always complete."""

SQLITE_DDL = """
CREATE TABLE IF NOT EXISTS archive (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    message_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    json TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    UNIQUE (session, message_id),
    UNIQUE (session, position)
);
CREATE VIRTUAL TABLE IF NOT EXISTS archive_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS summaries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    session TEXT NOT NULL,
    parent_id TEXT,
    depth INTEGER NOT NULL,
    timestamp_ms INTEGER NOT NULL,
    record_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS summaries_session ON summaries (session, seq);
CREATE TABLE IF NOT EXISTS summary_messages (
    summary_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    session TEXT NOT NULL,
    message_id TEXT NOT NULL,
    PRIMARY KEY (summary_id, ordinal)
);
CREATE TABLE IF NOT EXISTS session_state (
    session TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    data TEXT NOT NULL,
    updated_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS session_locks (
    session TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_ms INTEGER NOT NULL
);
"""

POSTGRES_DDL = """
CREATE TABLE IF NOT EXISTS archive (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session TEXT NOT NULL,
    message_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    role TEXT NOT NULL,
    json TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    created_ms BIGINT NOT NULL,
    search_text TEXT NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', search_text)) STORED,
    UNIQUE (session, message_id),
    UNIQUE (session, position)
);
CREATE INDEX IF NOT EXISTS archive_tsv ON archive USING GIN (tsv);
CREATE TABLE IF NOT EXISTS summaries (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session TEXT NOT NULL,
    parent_id TEXT,
    depth INTEGER NOT NULL,
    timestamp_ms BIGINT NOT NULL,
    record_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS summaries_session ON summaries (session, seq);
CREATE TABLE IF NOT EXISTS summary_messages (
    summary_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    session TEXT NOT NULL,
    message_id TEXT NOT NULL,
    PRIMARY KEY (summary_id, ordinal)
);
CREATE TABLE IF NOT EXISTS session_state (
    session TEXT PRIMARY KEY,
    version BIGINT NOT NULL,
    data TEXT NOT NULL,
    updated_ms BIGINT NOT NULL
);
"""

_WORD = re.compile(r"\w+")


def searchable_text(message: Message) -> str:
    """The words of a message that search should find: text, reasoning text, tool names, arguments and results.
    NUL characters are dropped (PostgreSQL text cannot hold them) and the result is capped at `MAX_INDEXED_CHARS`."""
    pieces: list[str] = []
    for part in message.parts:
        if isinstance(part, Text):
            pieces.append(part.text)
        elif isinstance(part, Reasoning):
            pieces.append(part.text)
        elif isinstance(part, ToolCall):
            pieces.extend((part.name, part.arguments))
        elif isinstance(part, ToolResult):
            pieces.append(part.text)
    return "\n".join(p for p in pieces if p).replace("\x00", " ")[:MAX_INDEXED_CHARS]


def query_words(query: str) -> list[str]:
    """The plain words of a user query. Everything else (quotes, ``*``, ``-``, parentheses, ``:``) is dropped, and
    each word is later quoted (SQLite) or passed to ``plainto_tsquery`` (PostgreSQL), so ``NEAR``/``OR``/``AND`` are
    words, never operators: an agent's query can neither fail to parse nor change the search. All words must
    match."""
    return _WORD.findall(query.replace("\x00", " "))[:64]


def snippet_of(text: str, words: Sequence[str], size: int = 16) -> str:
    """About `size` words of `text` around the first word of `words` it holds, each matching word in brackets and
    ``…`` where text was cut: what FTS5's ``snippet()`` shows, made for the few hits a search returns rather than
    for every row it ranks (``snippet()`` in the ranking query costs ten times the search on a large archive).
    Only a window around the first match is split into words, so a long message costs no more than a short one."""
    wanted = {w.lower() for w in words}
    if not wanted:
        return text[:160]
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(wanted)) + r")\b", re.IGNORECASE)
    found = pattern.search(text, 0, MAX_INDEXED_CHARS)
    around = found.start() if found else 0
    lo = max(0, around - 12 * size)
    window = text[lo : around + 24 * size]
    tokens = list(_WORD.finditer(window))
    first = next((i for i, t in enumerate(tokens) if t.start() + lo >= around), 0)
    start = max(0, min(first - size // 4, len(tokens) - size))
    shown = tokens[start : start + size]
    if not shown:
        return text[:160]
    cut_before = start > 0 or lo > 0
    out: list[str] = ["…" if cut_before else ""]
    at = shown[0].start() if cut_before else 0
    for token in shown:
        out.append(window[at : token.start()])
        word = token.group()
        out.append(f"[{word}]" if word.lower() in wanted else word)
        at = token.end()
    cut_after = start + len(shown) < len(tokens) or lo + len(window) < len(text)
    out.append("…" if cut_after else window[at:])
    return "".join(out).replace("\n", " ")


def indexed_words(message: Message) -> frozenset[str]:
    """Every word of `message` that a search can match (lower-cased, from `searchable_text`): what an in-memory
    index keys a message by (`query_words` keeps only a query's first 64 words)."""
    # Ten times faster than the regular expression over the whole text: every ASCII character that is not a word
    # character ([a-z0-9_] once lower-cased) becomes a space in the UTF-8 bytes, and one split gives the words;
    # only the few pieces holding other characters (where Unicode decides what a word character is) go through the
    # expression.
    spaced = searchable_text(message).lower().encode("utf-8", "surrogatepass").translate(_ASCII_NON_WORD)
    text = spaced.decode("utf-8", "surrogatepass")
    pieces = set(text.split())
    if text.isascii():
        return frozenset(pieces)
    words: set[str] = set()
    for piece in pieces:
        if piece.isascii():
            words.add(piece)
        else:
            words.update(_WORD.findall(piece))
    return frozenset(words)


_ASCII_NON_WORD = bytes(c if c >= 128 or chr(c).isalnum() or chr(c) == "_" else ord(" ") for c in range(256))
"""Maps every ASCII byte that ``\\w`` does not match to a space and keeps the others, and every byte of a
multi-byte character (`indexed_words`' fast path)."""


def lock_key(purpose: str, session: str) -> int:
    """A signed 64-bit key for PostgreSQL advisory locks, from a hash of the session (any string, any length)."""
    digest = hashlib.sha256(f"chainsum:{purpose}:{session}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
