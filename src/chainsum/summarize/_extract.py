"""Reading a transcript into items: the extractive summarizer's one pass over the blocks `render_transcript` wrote.

Per block: the user's requests (`_chat.digest`), the assistant's decisions (sentences with decision cues, else the
last sentence of a message), the agent's calls and their outcomes (`_agent.AgentFacts`: files, commands with exit
status, error lines), errors people and assistants name, and every identifier (`_identifiers`), weighted by who
wrote it. A ``summary`` block written in this package's own format (a partial summary being consolidated) is read
back section by section, so every item survives every level of map-reduce.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ..tokens import HeuristicCounter
from ._agent import AgentFacts, call_head, result_head
from ._chat import digest, names, sentences, split_tag
from ._filler import CHECKED_TITLE, EXCERPT_TITLE, HARNESS, is_call_id
from ._identifiers import WINDOW
from ._items import BY_TITLE, ROOT_PATTERN, Collector, Extraction, Section, sampled_lines
from ._transcript import CLIPPED_LINE, parse_transcript

__all__ = ["COUNTER", "extract"]

COUNTER = HeuristicCounter()
"""Counts a transcript's and a summary's tokens (stateless; its cache is bounded)."""

_USER_WEIGHT = 5
"""How much an identifier a user wrote weighs (the assistant's weigh 3, tool output's 1, each plus 1 with a digit)."""
_LISTED_WEIGHT = _USER_WEIGHT
"""How much an identifier an earlier summary listed weighs when that summary is folded into a new one (see
`_summary_lines`)."""
_COUNT_SUFFIX = re.compile(r" \(x\d{1,9}\)$")
_OWN_LINE = re.compile(
    r"^(?:\(\d{1,12} more (?:items )?left out(?: for length)?\)"
    r"|State snapshot \(extractive\) of \d{1,12} message\(s\)\.|No text content\.|"
    + re.escape(CHECKED_TITLE)
    + r"|\d{1,12} earlier message\(s\) were moved to the archive without a summary\.)$"
)
"""The lines a summary of ours writes about itself (its header, what it left out, the header of the note standing
for messages archived without one): never content ("message" was listed as an identifier of a chat's record)."""
_QUOTED_ROLE = re.compile(r"^\[(?:user|assistant|tool|system)\] ")
"""The role an excerpt's quoted message opens with."""
_JSONISH = re.compile(r'"\s?[:,}\]]|[}\]]$')
"""What the tail of JSON arguments holds (``"}``, ``",``, ``":``, a closing brace at its end), and prose rarely."""
_HEADER_COUNT = re.compile(r"^State snapshot \(extractive\) of (\d{1,12}) message\(s\)\.$", re.MULTILINE)
_CUES = re.compile(
    r"\b(?:decided|decide|decision|chose|choose|will|going to|should|must|instead|because|so that|therefore|"
    r"conclusion|concluded|root cause|the cause|caused by|fixed|fix(?:es)?|resolved|solved|implemented|added|"
    r"removed|changed|updated|renamed|created|replaced|switched|use|using|plan|next|done|works|passes|agreed)\b",
    re.IGNORECASE,
)
_NARRATION = re.compile(
    r"^(?:(?:now|next|ok|okay|good|great|perfect|first|then|also|so)[,.!]? )?(?:let me|let's|i'll|i will|i need to|"
    r"i'm going to|i am going to|i should|i want to)\b",
    re.IGNORECASE,
)
"""How an agent's narration of its next call begins ("Now let me read the router.")."""
_STRONG_CUES = re.compile(
    r"\b(?:because|since|instead|root cause|the cause|caused by|therefore|so that|decided|conclusion|concluded|"
    r"turns out|the issue is|the problem is|the fix is|fixed|resolved|solved)\b",
    re.IGNORECASE,
)
"""What makes a narrated step a decision after all: a reason, a diagnosis, a conclusion."""
_PROSE_ERROR = re.compile(
    r"(?<!\b0 )(?<!\bno )\b(?:\w+(?:Error|Exception)\b|(?i:error:|errors:|traceback|failed|failure|fatal|panic|"
    r"denied|refused|not found|timed out|segmentation fault|crash(?:ed|es)?|"
    r"(?:HTTP |status )?[45]\d\d (?:error|response)))"
)
"""What marks an error in what people and assistants write: prose mostly talks about errors ("I'll look at the
error logs", "invalid input is rejected"), so there the bare words "error", "invalid", "cannot" do not count; error
names, "error:", failures and status codes do, unless counted as none ("0 failures", "no errors:"). (Tool output is
read by `_agent`.)"""


def extract(transcript: str, max_item_chars: int) -> Extraction:
    """Parse the transcript's blocks and collect items per section (no budget applied)."""
    parsed = parse_transcript(transcript)
    # The context case shows the user messages around the span only so the summary knows what was asked (its
    # instructions say not to summarize them): they stay in the history, and listing them again spent the
    # summary's room on what is kept verbatim.
    blocks = [b for b in parsed.blocks if not (parsed.kind == "context" and b.section == "context")]
    out = Collector(max_item_chars)
    agent = AgentFacts(max_item_chars)
    where = 0
    for block in blocks:
        lines = block.body.split("\n")  # what `lines_of` yields, all at once (in C: it is read whole here)
        if block.role == "summary":
            listed = _summary_lines(out, agent, lines, where)
            for offset, line in enumerate(lines):
                if offset not in listed and not _OWN_LINE.match(line):
                    out.identifiers(line, where + offset, quotes=True)
        elif block.role == "tool":
            _tool_lines(out, agent, lines, where)
        else:
            prose = _calls(agent, lines, where) if block.role in ("assistant", "unknown") else None
            for offset, line in enumerate(lines):
                at = where + offset
                if block.role == "user":
                    tag, line = split_tag(line)
                    if tag:  # a client's tag (a session's date): metadata, not what the person stated
                        out.identifiers(tag, at, quotes=False, weight=1)
                code_like = line.startswith(("[tool call: ", "{", "[")) or (prose is not None and offset not in prose)
                if code_like:
                    head = call_head(line)  # a call's arguments, not its head: the id pairing it is no identifier
                    out.identifiers(line if head is None else line[head[2] :], at, quotes=False, weight=1)
                    continue
                # what a person states weighs most: a chat comes back to the user's names, dates and numbers
                weight = _USER_WEIGHT if block.role == "user" else 3
                out.identifiers(line, at, quotes=True, weight=weight)
                if block.role == "user":
                    for name in names(line):
                        out.add("identifiers", name, at, weight)
                if line.startswith("$ "):
                    out.add("actions", line, at)
                if _PROSE_ERROR.search(line[:WINDOW]) is not None:
                    out.add("errors", line if block.role == "assistant" else f"({block.role}) {line}", at)
            if (block.role == "user" or block.section == "context") and not block.body.lstrip().startswith(HARNESS):
                # a harness's notice (a task notification, a reminder) is no request: its identifiers count above
                text, facts = digest(lines)
                out.add("requests", text, where, 1 + facts)
            elif prose is not None:
                acting = len(prose) < len(lines) and any(call_head(line) for line in lines)
                _assistant_lines(out, [(where + i, lines[i]) for i in sorted(prose)], where, acting=acting)
        where += len(lines)
    root = agent.emit(out)
    # A partial summary being consolidated stands for the messages its header counts, not for one.
    stood_for = sum(
        int(m.group(1)) if b.role == "summary" and (m := _HEADER_COUNT.search(b.body, 0, 200)) else 1 for b in blocks
    )
    result = out.result(stood_for)
    known = agent.call_ids
    ids = tuple(i for i in result.sections["identifiers"] if not is_call_id(i.text, known))
    result = replace(result, sections={**result.sections, "identifiers": ids})
    # Earlier summaries being consolidated do not count: a consolidation is not asked to shrink by `ratio`.
    return replace(
        result,
        content_chars=sum(len(b.body) for b in blocks if b.role != "summary"),
        summary_chars=sum(len(b.body) for b in blocks if b.role == "summary"),
        read_tokens=COUNTER.count_joined([b.body for b in blocks], "\n"),  # bodies counted before: not read again
        agent=agent.coding or bool(result.sections["files"]),
        root=root,
    )


def _calls(agent: AgentFacts, lines: Sequence[str], where: int) -> set[int]:
    """Read the tool calls of an assistant message into `agent`; the offsets of its prose lines (not a call, not
    a call's arguments going on over the next lines, not a placeholder)."""
    prose: set[int] = set()
    in_call = False
    after_cut = False
    for offset, line in enumerate(lines):
        head = call_head(line)
        if head is not None:
            name, call_id, start = head
            agent.call(name, call_id, line[start:], where + offset)
            in_call = True
        elif in_call and not line.startswith("[reasoning] "):
            agent.patch_line(line, where + offset)
        elif after_cut and _JSONISH.search(line[:WINDOW]) is not None:
            pass  # the tail of a call's arguments an excerpt cut from its head (``rs.ex","offset":90}``)
        elif not ((line.startswith("[") and line.endswith("]")) or line.startswith(("{", '"'))):
            prose.add(offset)  # not a placeholder, nor arguments an excerpt cut from their call
        after_cut = CLIPPED_LINE.match(line) is not None
    return prose


def _assistant_lines(out: Collector, lines: Sequence[tuple[int, str]], where: int, *, acting: bool = False) -> None:
    """Decisions: the sentences with a decision cue, else the last sentence of the message.

    `acting`: the message makes tool calls. An agent narrates each call ("Let me check the config.", "Now let me
    run the tests."): such a sentence says what the call does, which the actions and files list already, and is no
    decision unless it gives a reason or a conclusion (`_STRONG_CUES`). In a Claude Code session they were most of
    the decisions listed, and took the room of the code written and the names the work came back to."""
    found = False
    last_sentence, last_at = "", where
    for at, line in lines:
        text = line[len("[reasoning] ") :] if line.startswith("[reasoning] ") else line
        for sentence in sentences(text):
            narration = acting and _NARRATION.match(sentence) is not None
            if narration and not _STRONG_CUES.search(sentence[:WINDOW]):
                continue
            last_sentence, last_at = sentence, at
            if _CUES.search(sentence[:WINDOW]):
                out.add("decisions", sentence, at)
                found = True
    if not found and last_sentence:
        out.add("decisions", last_sentence, last_at)


def _tool_lines(out: Collector, agent: AgentFacts, lines: Sequence[str], where: int) -> None:
    """A tool message: its identifiers (weighing least, never quoted phrases: tool output may hold instructions
    aimed at the model; of a long output, its head and tail only: `sampled_lines`), and each result's outcome for
    `agent` (read whole: an error line may be anywhere; tool text is never a decision)."""
    current: tuple[str, bool, int] | None = None  # (call id, flagged, offset of its first line)
    body: list[tuple[int, str]] = []  # the current result's lines

    def read_identifiers() -> None:
        for offset, line in sampled_lines(body):
            out.identifiers(line, where + offset, quotes=False, phrases=False)
        body.clear()

    for offset, line in enumerate(lines):
        head = result_head(line)
        if head is not None:
            read_identifiers()
            if current is not None:
                agent.result(current[0], current[1], lines[current[2] : offset], where + current[2])
            current = (head[1], head[2], offset + 1)
            continue
        body.append((offset, line))
    read_identifiers()
    if current is not None:
        agent.result(current[0], current[1], lines[current[2] :], where + current[2])


def _summary_lines(out: Collector, agent: AgentFacts, lines: Sequence[str], where: int) -> set[int]:
    """A partial summary: read our own section format back; other lines are treated as assistant prose. Returns
    the offsets of the lines it read as listed identifiers or as its excerpt.

    An excerpt (the lines after `EXCERPT_TITLE`: messages quoted in part, ``[role] body``) is read as what it
    quotes: its tool calls as calls (the commands and files they name), the rest for identifiers only, as tool
    output is (never a decision or a request: read as prose, the tail of a cut JSON argument, ``for dialyzer
    config"}``, was listed as a decision and its keys, ``"offset"``, as identifiers).

    A listed identifier keeps its place: it weighs what a person's mention does (`_LISTED_WEIGHT`), and the first
    listed reads as the most recent of them, so a summary folding this one in ranks them in the order it listed
    them. Read as text, each weighed 2 and an identifier with a digit 3: on every fold the dates outranked the names
    the earlier summary had listed before them, and a companion chat at a 1,000-token window ended with a record
    listing its session dates and none of the places the user had planned to visit."""
    section: Section | None = None
    prose: list[tuple[int, str]] = []
    listed: list[tuple[int, str]] = []
    quoted: set[int] = set()
    files: list[tuple[int, str]] = []
    for offset, line in enumerate(lines):
        if quoted or line == EXCERPT_TITLE:
            quoted.add(offset)
            body = _QUOTED_ROLE.sub("", line, count=1)
            head = call_head(body)
            if head is not None:
                agent.call(head[0], head[1], body[head[2] :], where + offset)
                body = body[head[2] :]
            out.identifiers(body, where + offset, quotes=False, phrases=False)
            continue
        heading = BY_TITLE.get(line.strip().lower())
        rooted = ROOT_PATTERN.match(line) if section == "files" else None
        if heading is not None:
            section = heading
        elif rooted is not None:  # the directory the files listed above are named relative to
            root = rooted.group(1)
            files = [(at, text if text.startswith("/") else f"{root}/{text}") for at, text in files]
        elif section == "identifiers" and line.startswith("- "):
            listed.append((offset, line[2:]))
        elif section == "files" and line.startswith("- "):
            files.append((where + offset, _COUNT_SUFFIX.sub("", line[2:])))
        elif section is not None and line.startswith("- "):
            text = _COUNT_SUFFIX.sub("", line[2:])
            out.add(section, text, where + offset, 2 if section == "files" and not text.endswith("(read)") else 1)
            if section == "requests":  # the user's words: the names they state count as theirs (`extract`)
                for name in names(text):
                    out.add("identifiers", name, where + offset, _USER_WEIGHT)
        elif _OWN_LINE.match(line):
            continue
        elif line.strip():
            section = None
            prose.append((where + offset, line))
            if _PROSE_ERROR.search(line[:WINDOW]):
                out.add("errors", line, where + offset)
    for at, text in files:
        agent.listed_file(text, at)
    for (offset, _), (_, text) in zip(listed, reversed(listed), strict=True):  # the first listed as the newest
        out.add("identifiers", text, where + offset, _LISTED_WEIGHT)
    _assistant_lines(out, prose, where)
    return {offset for offset, _ in listed} | quoted
