"""The note that stands for what left the context without a summary (`Evict`, `DropBlocks`), and what it says.

A note that only counted the messages ("4 earlier message(s) were moved to the archive without a summary.") carried
nothing: the user's task of a Claude Code session at a 16K window was in no request after its first compaction but
through recall (issue 21). A note now says, in the words of what it stands for, what the user asked (the first words
of each request), and what the agent did (each tool call's command or path, with its exit status, and the error
lines of a failed one), within `NOTE_CHARS`: the session's first request first, then the newest ones that fit.
Notes standing for summaries carry on what those summaries listed (an extractive summary's ``User requests:``,
``Actions taken:``, ``Errors:``, ``Files read and written:``, an earlier note's lines, else a summary's first line),
and their ``Identifiers:`` in the order listed: at a 1,000-token window a chat's record reaches the depth cap every
few compactions, and a note keeping only requests lost the names, places and dates the summaries had kept
(memorybank kept fewer facts than plain truncation). Where none of that is there, the note says what the messages
were in their own words (`Carried.others`: a harness notice, the assistant's words, a summary's decisions): a Codex
session at a 12K window (seed 33) dropped a summary that listed only an error line, and its note, carrying on
requests, actions and identifiers only, was its header alone.

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
from ..messages import Message, Reasoning, Text, ToolCall
from ..summarize import SECTION_TITLES, error_lines, exit_status

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
_OTHER_WORDS = 10
_CALL_CHARS = 70
_ERROR_CHARS = 100
_ERRORS_PER_RESULT = 1
"""Error lines a note carries of one failed command: the first says what failed."""
_SPACE = re.compile(r"\s+")
# the extractive summary's section titles, so that a note and a summary read each other's sections
_REQUESTS = SECTION_TITLES["requests"]
_ACTIONS = SECTION_TITLES["actions"]
_ERRORS = SECTION_TITLES["errors"]
_FILES = SECTION_TITLES["files"]
_DECISIONS = SECTION_TITLES["decisions"]
_IDENTIFIERS = SECTION_TITLES["identifiers"]
_MESSAGES = "Messages:"
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
    """What a note carries on of what it stands for: the user's requests, the actions (tool calls with their
    outcome), the identifiers earlier summaries listed, the error lines and the files, each in its order; and
    what else the messages were (`others`), said only where none of the rest is."""

    requests: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    others: tuple[str, ...] = ()
    """The first words of what is neither a request nor a call: a harness notice (Codex's
    ``<environment_context>``), the assistant's text or reasoning, a summary's decisions."""

    def __add__(self, other: Carried) -> Carried:
        return Carried(
            self.requests + other.requests,
            self.actions + other.actions,
            self.identifiers + other.identifiers,
            self.errors + other.errors,
            self.files + other.files,
            self.others + other.others,
        )


def _words(text: str, n: int) -> str:
    words = _SPACE.split(text.strip())
    return " ".join(words[:n]) + (" ..." if len(words) > n else "")


def _call_text(call: ToolCall) -> str:
    """The tool's name with its command or path (the first of them the arguments have), cut to `_CALL_CHARS`."""
    what = _call_what(call)
    text = f"{call.name} {what}".strip()
    return text if len(text) <= _CALL_CHARS else text[: _CALL_CHARS - 3] + "..."


def _call_what(call: ToolCall) -> str:
    """The command or path of a call's arguments (the first of them it has), else their first string value (an
    order id of a customer-service tool), "" where they have none."""
    try:
        args: object = json.loads(call.arguments) if call.arguments else None
    except ValueError:
        args = None
    if not isinstance(args, dict):
        return ""
    found = cast("dict[str, object]", args)
    for key in (*_COMMAND_KEYS, *_PATH_KEYS):
        value = found.get(key)
        if isinstance(value, list) and value:
            value = " ".join(str(v) for v in cast("list[object]", value))
        if isinstance(value, str) and value.strip():
            return _SPACE.sub(" ", value.strip())
    first = next((v for v in found.values() if isinstance(v, str) and v.strip()), "")
    return _SPACE.sub(" ", first.strip())


def _outcomes(messages: Sequence[Message]) -> dict[str, tuple[str, list[str]]]:
    """How each call answered among `messages` ended, by call id: ``" (exit N)"`` (or ``" (failed)"`` for a result
    flagged as an error, "" where the output states nothing) and the error lines of a failed one."""
    out: dict[str, tuple[str, list[str]]] = {}
    for m in messages:
        for result in m.tool_results:
            lines = result.text.splitlines()
            status = exit_status(lines)
            failed = result.is_error or (status is not None and status != 0)
            said = f" (exit {status})" if status is not None else " (failed)" if failed else ""
            errors = error_lines(lines, _ERRORS_PER_RESULT) if failed else []
            if failed and not errors:
                errors = [line.strip() for line in lines if line.strip()][:_ERRORS_PER_RESULT]
            out[result.call_id] = (said, errors)
    return out


def messages_lines(messages: Sequence[Message]) -> Carried:
    """What messages moved to the archive held, in their words: the first words of each user request, each tool
    call's name with its command or path and how it ended (repeats once), the first error line of a failed one, and
    what else they were (`Carried.others`); a record among them carries on what its blocks did."""
    requests: list[str] = []
    tools: list[str] = []
    errors: list[str] = []
    others: list[str] = []
    inner = Carried()
    outcomes = _outcomes(messages)
    called = {c.id for m in messages for c in m.tool_calls}
    for m in messages:
        if is_record_message(m):
            inner = inner + blocks_lines(record_blocks(m) or ())
            continue
        for part in m.parts:
            if isinstance(part, Text) and part.text.strip():
                text = part.text.lstrip()
                if m.role == "user" and text.startswith("[chainsum"):
                    continue  # a recall block or another note of ours: its originals are in the archive
                if m.role == "user" and not text.startswith(_HARNESS):
                    requests.append(_words(text, _REQUEST_WORDS))
                else:
                    others.append(f"{m.role}: {_words(text, _OTHER_WORDS)}")
            elif isinstance(part, Reasoning) and part.text.strip():
                others.append(f"reasoning: {_words(part.text, _OTHER_WORDS)}")
        for result in m.tool_results:
            if result.call_id not in called and result.text.strip():
                others.append(f"tool: {_words(result.text, _OTHER_WORDS)}")  # its call is not among them
        for call in m.tool_calls:
            said, failed = outcomes.get(call.id, ("", []))
            text = _call_text(call) + said
            if text not in tools:
                tools.append(text)
            label = _call_what(call)[:40] or call.name
            errors += [_cut(f"({label}) {_SPACE.sub(' ', line)}", _ERROR_CHARS) for line in failed]
    mine = Carried(tuple(requests), tuple(tools), (), tuple(errors), (), tuple(others))
    return inner + mine


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def blocks_lines(blocks: Sequence[RecordBlock]) -> Carried:
    """What summary blocks (or notes) moved to the archive carried on: the requests, the actions, the error lines,
    the files and the identifiers an extractive summary (or a note) listed, its decisions (or an earlier note's
    messages) as `Carried.others`, else a summary's first line of content among the requests (marked as such), or
    among the others where the block has sections but none of these. The newest block's identifiers come first: a
    fold reads the first listed as the most recent."""
    requests: list[str] = []
    tools: list[str] = []
    identifiers: list[str] = []
    errors: list[str] = []
    files: list[str] = []
    others: list[str] = []
    for block in blocks:
        lines = [line.strip() for line in block.text.splitlines() if line.strip()]
        listed = [r for r in _section(lines, _REQUESTS) if not r.startswith(_HARNESS)]
        actions = _section(lines, _ACTIONS)
        failed = _section(lines, _ERRORS)
        touched = _section(lines, _FILES)
        names = _section(lines, _IDENTIFIERS)
        said = _section(lines, _DECISIONS) + _section(lines, _MESSAGES)
        requests += [r if r.startswith("(") else _words(r, _REQUEST_WORDS) for r in listed]
        tools += [_cut(a, _CALL_CHARS) for a in actions]
        errors += [_cut(e, _ERROR_CHARS) for e in failed]
        files += [_cut(f, _CALL_CHARS) for f in touched]
        identifiers[:0] = names
        others += [_words(d, _OTHER_WORDS) for d in said]
        if listed or actions or failed or touched or names or said:
            continue
        first = next((line for line in lines if not _SELF_LINE.match(line) and not _TITLE.match(line)), None)
        if first is None:
            continue
        if any(_TITLE.match(line) for line in lines):
            others.append(_words(first.removeprefix("- "), _OTHER_WORDS))
        else:
            requests.append(_SUMMARY + _words(first.removeprefix("- "), _REQUEST_WORDS))
    return Carried(tuple(requests), tuple(tools), tuple(identifiers), tuple(errors), tuple(files), tuple(others))


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
    the identifiers (half of what is left when there are actions, errors or files too) and those, sharing the rest,
    in the sections an extractive summary writes, so a summary folding the note in reads them as such. Where none
    of these is carried, what else the messages were (`Carried.others`): a note is never its header alone unless
    what it stands for held no words at all."""
    header = f"{count} earlier message(s) were moved to the archive without a summary."
    lines = [header]
    room = chars
    kept = _fit(_unique(carried.requests), room - len(_REQUESTS))
    if kept:
        lines += [_REQUESTS, *(f"- {r}" for r in kept)]
        room -= len(_REQUESTS) + sum(len(r) + 3 for r in kept)
    prose = [
        (title, items)
        for title, items in (
            (_ACTIONS, _unique(carried.actions)),
            (_ERRORS, _unique(carried.errors)),
            (_FILES, _unique(carried.files)),
        )
        if items
    ]
    share = room // 2 if prose else room
    names = _leading(_unique(carried.identifiers), share - len(_IDENTIFIERS))
    if names:
        room -= len(_IDENTIFIERS) + sum(len(i) + 3 for i in names) * _DENSE
    for k, (title, items) in enumerate(prose):
        part = room // (len(prose) - k)  # what the sections after it leave: an equal share, passed on if unused
        fitted = _fit(items, part - len(title))
        if fitted and part > len(title) + 20:
            lines += [title, *(f"- {t}" for t in fitted)]
            room -= len(title) + sum(len(t) + 3 for t in fitted)
    if names:
        lines += [_IDENTIFIERS, *(f"- {i}" for i in names)]
    if len(lines) == 1:
        # nothing above fit (an identifier longer than the room ends their list): what else the messages were, else
        # the first identifier cut to the room
        for title, items in ((_MESSAGES, _unique(carried.others)), (_IDENTIFIERS, _unique(carried.identifiers))):
            said = _fit(items, room - len(title))
            if said:
                lines += [title, *(f"- {o}" for o in said)]
                break
    return "\n".join(lines)


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def archive_note(count: int, carried: Carried, chars: int = NOTE_CHARS) -> RecordBlock:
    """The depth-0 block standing for `count` messages moved to the archive without a summary (`note_text`)."""
    text = note_text(count, carried, chars)
    return RecordBlock(id=block_id(text, 0, count), depth=0, messages=count, text=text)
