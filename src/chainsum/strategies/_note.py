"""The note that stands for what left the context without a summary (`Evict`, `DropBlocks`), and what it says.

A note that only counted the messages ("4 earlier message(s) were moved to the archive without a summary.") carried
nothing: the user's task of a Claude Code session at a 16K window was in no request after its first compaction but
through recall (issue 21). A note now says, in the words of what it stands for, what the user asked (the first words
of each request), and what the agent did (each tool call's command or path), within `NOTE_CHARS`: the session's
first request first, then the newest ones that fit. Notes standing for summaries carry on the requests those
summaries listed (an extractive summary's ``User requests:``, an earlier note's lines, else a summary's first line),
and their ``Identifiers:`` in the order listed: at a 1,000-token window a chat's record reaches the depth cap every
few compactions, and a note keeping only requests lost the names, places and dates the summaries had kept
(memorybank kept fewer facts than plain truncation).

A planner sets what a note may say (`note_chars`, on the `Evict` or `DropBlocks` step) and counts it at
`note_tokens` (the most it may cost); the executor writes it with `archive_note`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from ..chain import RecordBlock, block_id, is_record_message, record_blocks
from ..messages import Message, ToolCall

__all__ = [
    "NOTE_CHARS",
    "Carried",
    "archive_note",
    "blocks_lines",
    "messages_lines",
    "note_chars",
    "note_text",
    "note_tokens",
]

NOTE_CHARS = 600
"""The most a note's lines may take beyond its first (about 150 tokens): enough for a few requests and calls. A
planner gives a small budget's note less (`note_chars`)."""
_LEAST_NOTE_CHARS = 120

_REQUEST_WORDS = 16
_CALL_CHARS = 70
_SPACE = re.compile(r"\s+")
_REQUESTS = "User requests:"
_ACTIONS = "Actions taken:"
_IDENTIFIERS = "Identifiers:"
_DENSE = 2
_MORE = re.compile(r"^\(\d+ more\)$")
_SUMMARY = "(summary) "
"""Marks a summary's first line carried on among the requests (a summary that lists none)."""
_SELF_LINE = re.compile(
    r"^(?:State snapshot \(extractive\) of \d+ message\(s\)\.|\(\d+ more (?:items )?left out(?: for length)?\)|"
    r"\[chainsum[^\]]*\]|No text content\.)$"
)
_TITLE = re.compile(r"^[A-Z][A-Za-z ]{2,40}:$")
_PATH_KEYS = ("file_path", "notebook_path", "path", "file", "filename", "filepath", "target_file")
_COMMAND_KEYS = ("command", "cmd", "script", "query", "pattern", "url")
_HARNESS = (
    "<task-notification>",
    "<system-reminder>",
    "<command-",
    "<local-command-",
    "<environment_context>",
    "Base directory for this skill:",
)
"""How the user messages an agent's harness writes begin (Claude Code's notices, reminders, commands and skills,
Codex's environment): not requests, and a note's room goes to the requests."""


def note_chars(room_tokens: int) -> int:
    """What a note may say beyond its first line where the record has `room_tokens` for its blocks: as many
    characters as that has tokens (a quarter of it, about), from 120 up to `NOTE_CHARS`. A 150-token note in a
    1K window's record would take all of the summaries' share."""
    return max(_LEAST_NOTE_CHARS, min(NOTE_CHARS, room_tokens))


def note_tokens(chars: int) -> int:
    """What a note of at most `chars` characters beyond its first line costs at most, its framing included."""
    return chars * 2 // 7 + 50


@dataclass(frozen=True, slots=True)
class Carried:
    """What a note carries on of what it stands for: the user's requests, the actions (tool calls), and the
    identifiers earlier summaries listed, each in its order."""

    requests: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()


def _words(text: str, n: int) -> str:
    words = _SPACE.split(text.strip())
    return " ".join(words[:n]) + (" ..." if len(words) > n else "")


def _call_text(call: ToolCall) -> str:
    """The tool's name with its command or path (the first of them the arguments have), cut to `_CALL_CHARS`."""
    try:
        args: object = json.loads(call.arguments) if call.arguments else None
    except ValueError:
        args = None
    what = ""
    if isinstance(args, dict):
        found = cast("dict[str, object]", args)
        for key in (*_COMMAND_KEYS, *_PATH_KEYS):
            value = found.get(key)
            if isinstance(value, list) and value:
                value = " ".join(str(v) for v in cast("list[object]", value))
            if isinstance(value, str) and value.strip():
                what = _SPACE.sub(" ", value.strip())
                break
    text = f"{call.name} {what}".strip()
    return text if len(text) <= _CALL_CHARS else text[: _CALL_CHARS - 3] + "..."


def messages_lines(messages: Sequence[Message]) -> Carried:
    """What messages moved to the archive held, in their words: the first words of each user request, and each
    tool call's name with its command or path (repeats once); a record among them carries on what its blocks did."""
    requests: list[str] = []
    tools: list[str] = []
    identifiers: list[str] = []
    for m in messages:
        if is_record_message(m):
            inner = blocks_lines(record_blocks(m) or ())
            requests += inner.requests
            tools += inner.actions
            identifiers += inner.identifiers
        elif m.role == "user" and m.text.strip() and not m.text.lstrip().startswith(_HARNESS):
            if not m.text.lstrip().startswith("[chainsum"):  # a recall block or another note of ours
                requests.append(_words(m.text, _REQUEST_WORDS))
        for call in m.tool_calls:
            text = _call_text(call)
            if text not in tools:
                tools.append(text)
    return Carried(tuple(requests), tuple(tools), tuple(identifiers))


def blocks_lines(blocks: Sequence[RecordBlock]) -> Carried:
    """What summary blocks (or notes) moved to the archive carried on: the requests, the actions and the
    identifiers an extractive summary (or a note) listed, else a summary's first line of content among the requests
    (marked as such). The newest block's identifiers come first: a fold reads the first listed as the most recent."""
    requests: list[str] = []
    tools: list[str] = []
    identifiers: list[str] = []
    for block in blocks:
        lines = [line.strip() for line in block.text.splitlines() if line.strip()]
        listed = [r for r in _section(lines, _REQUESTS) if not r.startswith(_HARNESS)]
        actions = _section(lines, _ACTIONS)
        requests += [r if r.startswith("(") else _words(r, _REQUEST_WORDS) for r in listed]
        tools += [a if len(a) <= _CALL_CHARS else a[: _CALL_CHARS - 3] + "..." for a in actions]
        identifiers[:0] = _section(lines, _IDENTIFIERS)
        if listed or actions or any(_TITLE.match(line) for line in lines):
            continue
        first = next((line for line in lines if not _SELF_LINE.match(line)), None)
        if first is not None:
            requests.append(_SUMMARY + _words(first.removeprefix("- "), _REQUEST_WORDS))
    return Carried(tuple(requests), tuple(tools), tuple(identifiers))


def _section(lines: Sequence[str], title: str) -> list[str]:
    """The ``- `` items of an extractive summary's (or a note's) section `title`, a count of those left out
    (``(3 more)``) skipped."""
    if title not in lines:
        return []
    out: list[str] = []
    for line in lines[lines.index(title) + 1 :]:
        if not line.startswith("- "):
            break
        if not _MORE.match(line[2:]):
            out.append(line[2:])
    return out


def _fit(items: Sequence[str], room: int) -> list[str]:
    """The first item and then the newest that fit `room` characters (each on a ``- `` line), in their order, with
    a line saying how many were left out between them."""
    if not items or room <= 0:
        return []
    first = items[0][:room]
    chosen: list[str] = [first]
    used = len(first) + 3
    later: list[str] = []
    for item in reversed(items[1:]):
        if used + len(item) + 3 + 14 > room:
            break
        later.insert(0, item)
        used += len(item) + 3
    left = len(items) - 1 - len(later)
    return [*chosen, *([f"({left} more)"] if left else []), *later]


def _leading(items: Sequence[str], room: int) -> list[str]:
    """The first `items` that fit `room` characters together (each on a ``- `` line), in their order. Identifiers
    are dense text (digits, dashes, short words: about a token for every two or three characters where prose has
    one for every four), so each counts at `_DENSE` times its length: the note stays within `note_tokens`."""
    out: list[str] = []
    for item in items:
        cost = (len(item) + 3) * _DENSE
        if cost > room:
            break
        out.append(item)
        room -= cost
    return out


def note_text(count: int, carried: Carried, chars: int = NOTE_CHARS) -> str:
    """The note for `count` messages: its header, then what it carries that fits `chars`: the requests first, then
    the identifiers (half of what is left when there are actions too) and the actions, in the sections an
    extractive summary writes, so a summary folding the note in reads them as such."""
    header = f"{count} earlier message(s) were moved to the archive without a summary."
    lines = [header]
    room = chars
    kept = _fit(list(dict.fromkeys(r for r in carried.requests if r)), room - len(_REQUESTS))
    if kept:
        lines += [_REQUESTS, *(f"- {r}" for r in kept)]
        room -= len(_REQUESTS) + sum(len(r) + 3 for r in kept)
    actions = list(dict.fromkeys(t for t in carried.actions if t))
    share = room // 2 if actions else room
    names = _leading(list(dict.fromkeys(i for i in carried.identifiers if i)), share - len(_IDENTIFIERS))
    if names:
        room -= len(_IDENTIFIERS) + sum(len(i) + 3 for i in names) * _DENSE
    kept_tools = _fit(actions, room - len(_ACTIONS))
    if kept_tools and room > len(_ACTIONS) + 20:
        lines += [_ACTIONS, *(f"- {t}" for t in kept_tools)]
    if names:
        lines += [_IDENTIFIERS, *(f"- {i}" for i in names)]
    return "\n".join(lines)


def archive_note(count: int, carried: Carried, chars: int = NOTE_CHARS) -> RecordBlock:
    """The depth-0 block standing for `count` messages moved to the archive without a summary (`note_text`)."""
    text = note_text(count, carried, chars)
    return RecordBlock(id=block_id(text, 0, count), depth=0, messages=count, text=text)
