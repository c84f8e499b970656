"""Agent-span facts: what a coding agent did, read from its tool calls and their results in a transcript.

A summary of an agent's span must say what the work was: the files it read and wrote, the commands it ran and how
each ended (exit status, the error lines), and the errors it met. Matching identifier patterns over the text finds
the paths among hundreds of other names and misses the outcome altogether (a Claude Code tool result names no
tool, and its exit status is a line of text). So the calls are read as calls, in the shapes agents send them:

- commands: Claude Code's ``Bash`` (``command``), Codex's ``exec_command`` (``cmd``) and ``shell`` (``command``),
  as a string or an argument list (``["bash", "-lc", SCRIPT]`` is SCRIPT), any tool whose name says it runs
  something (``run``, ``terminal``, ``execute``...) with a ``command`` or ``cmd``;
- files: ``Read``/``Write``/``Edit``/``MultiEdit``/``NotebookEdit`` (``file_path``, ``notebook_path``), Codex's
  ``apply_patch`` (the ``*** Add|Update|Delete File:`` headers of the patch, in the arguments or on the lines after
  the call), and any tool's ``path``, ``file``, ``filename`` or ``paths``; the verb from the tool's name;
- searches: ``Glob``/``Grep`` and the like (their pattern, and where);
- code written: the first `_CHANGED_LINES` lines each edit adds (an ``Edit``'s ``new_string`` lines its
  ``old_string`` lacks, a ``Write``'s ``content``, a ``MultiEdit``'s edits, a patch's ``+`` lines);
- outcomes, from the result answering the call (matched by call id): the exit status (``Exit code 1``,
  ``Exit code: 1``, ``"exit_code": 1``, ``Process exited with code 1``), the result's error flag, and the error
  lines of a failed command's output (``Error``, ``error:``, ``Traceback``, ``FAILED``, ``panic``, ...), at most
  `ERROR_LINES` of each; a file's content (a ``Read``) is never scanned for errors: code that says "raise
  ValueError" reports nothing.

Linear: each line is looked at once, arguments parsed once per call (JSON, else a bounded pattern for an excerpt
that cut the JSON), and output lines are searched in windows of bounded size.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, cast

from ._identifiers import WINDOW
from ._items import Collector, Item

__all__ = ["ERROR_LINES", "AgentFacts", "call_head", "error_lines", "exit_status", "result_head"]

Kind: TypeAlias = Literal["command", "read", "write", "search", "other"]

ERROR_LINES = 3
"""Error lines kept of one result: the first ones say what failed, the rest is usually the same failure again."""

_CALL = re.compile(r"^\[tool call: ([^\s\]]{1,120})(?: id=([^\s\]]{1,200}))?\] ?")
_RESULT = re.compile(r"^\[tool result(?: ([^\s\]]{1,120}))? for ([^\s\]]{0,200})( error)?\]$")
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (\S[^\n]{0,300})$")
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (\S[^\n]{0,300})$")
_PATCH_ANYWHERE = re.compile(r"\*\*\* (Add|Update|Delete) File: ([^\n\\\"]{1,300})")
_EXIT = re.compile(
    r"(?:^Exit code:? |\"?exit_?code\"?\s?[:=]\s?|Process exited with code |exit status |exited with code )"
    r"(-?\d{1,4})\b",
    re.IGNORECASE,
)
_ERROR = re.compile(
    r"\b(?:\w{0,60}(?:Error|Exception)\b|(?i:error)(?:\[\w{1,20}\])?:|ERROR\b|Traceback\b|(?i:failed|failure)\b|FAIL:|"
    r"panic(?:ked)?\b|(?i:fatal):|FATAL\b|Segmentation fault|command not found|No such file or directory|"
    r"[Pp]ermission denied|<tool_use_error>)"
)
_CODE = re.compile(r"(?:\b|(?<=\\n))(?:ERR(?:OR)?[-_][A-Z0-9][A-Z0-9_-]{1,40}|(?:E|TS|CS|ORA-)\d{3,5})\b")
"""An error code (``ERR-00042``, ``ERR_MODULE_NOT_FOUND``, ``E0425``, ``TS2345``, ``ORA-00942``), also right after an
escaped line break of a JSON output: the line naming one is kept from any output, failed or not, a file's content
included (a log read back), at most `CODE_LINES` of each: such a code is what a session comes back to and searches
for, and it was lost with the output."""
CODE_LINES = 2
_ARG_STRING = re.compile(
    r'"(file_path|notebook_path|path|file|filename|command|cmd|pattern)"\s?:\s?"((?:[^"\\]|\\.){1,400})"'
)
_UNESCAPE = {"\\n": " ", '\\"': '"', "\\\\": "\\", "\\t": " "}
_PATH_KEYS = ("file_path", "notebook_path", "path", "file", "filename", "filepath", "target_file")
_NOISE_LINE = re.compile(r"^(?:Wall time:|Output:$|Total output lines:|Chunk ID:|Original token count:)")

_NO_SCAN = frozenset({"webfetch", "websearch", "task", "taskoutput", "todowrite", "skill", "web_search", "fetch"})
"""Tools whose output is text read for the agent (a web page, a subagent's report): not an outcome to scan."""
_WRITE = ("write", "edit", "patch", "replace", "create", "insert", "delete", "remove", "move", "rename", "save")
_READ = ("read", "view", "open", "cat", "show", "fetch_file", "get_file")
_SEARCH = ("glob", "grep", "search", "find", "ls", "list")
_RUN = ("bash", "shell", "exec", "run", "terminal", "command", "console", "sh")


def call_head(line: str) -> tuple[str, str, int] | None:
    """(tool name, call id, where the arguments start) of a ``[tool call: NAME id=ID] ARGS`` line; None otherwise."""
    if not line.startswith("[tool call: "):  # most lines: a string test, not the pattern
        return None
    match = _CALL.match(line)
    return None if match is None else (match.group(1), match.group(2) or "", match.end())


def result_head(line: str) -> tuple[str, str, bool] | None:
    """(tool name or "", call id, flagged as an error) of a ``[tool result NAME for ID error]`` line, else None."""
    if not line.startswith("[tool result"):  # most lines (a tool's output): a string test, not the pattern
        return None
    match = _RESULT.match(line)
    return None if match is None else (match.group(1) or "", match.group(2), match.group(3) is not None)


def _kind(name: str, args: dict[str, object] | None) -> Kind:
    low = name.lower()
    if low in ("apply_patch", "multiedit", "notebookedit", "str_replace_based_edit_tool", "str_replace_editor"):
        return "write"
    if any(word in low for word in _WRITE):
        return "write"
    if args is not None and ("command" in args or "cmd" in args) and any(w in low for w in _RUN):
        return "command"
    if any(word in low for word in _SEARCH) and not any(k in (args or {}) for k in ("file_path", "notebook_path")):
        return "search"
    if any(word in low for word in _READ):
        return "read"
    if args is not None and ("command" in args or "cmd" in args):
        return "command"
    return "other"


def _script(value: object) -> str | None:
    """A command as the agent wrote it: a string, or an argument list (``bash -lc SCRIPT`` is SCRIPT)."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, list) and value:
        words = [v for v in cast("list[object]", value) if isinstance(v, str)]
        if len(words) != len(cast("list[object]", value)):
            return None
        if len(words) >= 3 and words[-2] in ("-c", "-lc", "-ic", "/c", "-Command"):
            return words[-1].strip() or None
        return " ".join(words)
    return None


def _parse(arguments: str) -> dict[str, object] | None:
    """The arguments as a JSON object; for an excerpt that cut the JSON, the string fields a bounded pattern finds."""
    text = arguments.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        found: dict[str, object] = {}
        for match in _ARG_STRING.finditer(text[:WINDOW]):
            raw = match.group(2)
            for escaped, plain in _UNESCAPE.items():
                raw = raw.replace(escaped, plain)
            found.setdefault(match.group(1), raw)
        return found or None
    return value if isinstance(value, dict) else None  # pyright: ignore[reportUnknownVariableType]


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


@dataclass(slots=True)
class _Call:
    name: str
    kind: Kind
    label: str
    """How the call is named in an action or an error item: the command, or the tool and its path."""
    command: str | None
    at: int


@dataclass(slots=True)
class _File:
    verbs: list[str]
    first: int
    last: int
    touches: int = 1


@dataclass(slots=True)
class _Command:
    count: int
    first: int
    last: int
    outcomes: list[str] = field(default_factory=list[str])
    """How each run ended, in order, a repeat of the one before left out ("exit 1, exit 0": failed, then passed)."""
    failed: bool = False


@dataclass(slots=True)
class AgentFacts:
    """The agent facts of one transcript, collected line by line (`call`, `patch_line`, `result`) and written into
    a `Collector` at the end (`emit`). Local to one extraction."""

    max_item_chars: int
    calls: dict[str, _Call] = field(default_factory=dict[str, _Call])
    files: dict[str, _File] = field(default_factory=dict[str, _File])
    commands: dict[str, _Command] = field(default_factory=dict[str, _Command])
    others: dict[str, list[int]] = field(default_factory=dict[str, list[int]])
    """Action items of searches and other tools: text -> [count, first, last, weight]."""
    errors: list[tuple[str, int]] = field(default_factory=list[tuple[str, int]])
    coded: list[tuple[str, int]] = field(default_factory=list[tuple[str, int]])
    """Lines naming an error code in outputs that did not fail (`_CODE`): they weigh less than a failure's."""
    changes: dict[str, list[int]] = field(default_factory=dict[str, list[int]])
    """The code the agent wrote (`_changed_lines`): "file: line" -> [count, first, last]."""
    patching: str = ""
    """The file the patch being read (`patch_line`) is changing: its added lines are code written."""
    answered: set[str] = field(default_factory=set[str])
    """The call ids the span's results name (with `calls`' keys: every tool-call id of the span, never an item)."""

    def call(self, name: str, call_id: str, arguments: str, at: int) -> None:
        """A ``[tool call: ...]`` line (its arguments may go on over the next lines: `patch_line`)."""
        args = _parse(arguments)
        kind = _kind(name, args)
        paths: list[str] = []
        if args is not None:
            for key in _PATH_KEYS:
                value = args.get(key)
                if isinstance(value, str) and value.strip() and "\n" not in value:
                    paths.append(value.strip())
            listed = args.get("paths", args.get("files"))
            if isinstance(listed, list):
                paths += [p for p in listed if isinstance(p, str) and p.strip()]  # pyright: ignore[reportUnknownVariableType]
        for verb, path in _PATCH_ANYWHERE.findall(arguments[: WINDOW * 4]):
            self._file(path.strip(), _PATCH_VERBS[verb], at)
            self.patching = path.strip()
        if kind == "write":
            target = paths[0] if paths else self.patching
            for line in _changed_lines(args, arguments):
                self._change(target, line, at)
        command = _script(args.get("command", args.get("cmd"))) if args is not None else None
        if kind == "command" and command:
            label = _short(command, self.max_item_chars - 20)
            entry = self.commands.get(label)
            if entry is None:
                self.commands[label] = _Command(1, at, at)
            else:
                entry.count += 1
                entry.last = at
        elif kind == "search" and args is not None:
            pattern = next((v for k in ("pattern", "query", "regex", "glob") if isinstance(v := args.get(k), str)), "")
            where = f" in {paths[0]}" if paths else ""
            label = _short(f"{name} {pattern}{where}", self.max_item_chars)
            self._other(label, at, 0)
            paths = []  # where a search looked is not a file it read
        elif kind == "other" and not paths:
            first = next((v for v in (args or {}).values() if isinstance(v, str) and v.strip()), "")
            label = _short(f"{name} {first}".strip(), 120)
            self._other(label, at, 1)
        verb = "written" if kind == "write" else "read" if kind in ("read", "other", "command") else ""
        if kind == "write":
            low = name.lower()
            verb = "edited" if ("edit" in low or "replace" in low or "patch" in low) else "written"
        for path in paths if verb else ():
            self._file(path, verb, at)
        label = command if kind == "command" and command else f"{name} {paths[0]}" if paths else name
        self.calls[call_id] = _Call(name, kind, _short(label, 60), command if kind == "command" else None, at)

    def patch_line(self, line: str, at: int) -> bool:
        """A line after a call line in the same message: the patch headers of an ``apply_patch`` whose patch goes
        on over several lines. True when the line was such a header."""
        match = _PATCH_FILE.match(line)
        if match is not None:
            self._file(match.group(2).strip(), _PATCH_VERBS[match.group(1)], at)
            self.patching = match.group(2).strip()
            return True
        if self.patching and line.startswith("+") and not line.startswith("+++"):
            if _worth_keeping(line[1:]):
                self._change(self.patching, line[1:], at)
            return False
        moved = _PATCH_MOVE.match(line)
        if moved is not None:
            self._file(moved.group(1).strip(), "moved here", at)
            return True
        return False

    def result(self, call_id: str, flagged: bool, lines: Sequence[str], where: int) -> None:
        """The lines of one tool result (its head line excluded), `where` the index of its first line."""
        self.answered.add(call_id)
        call = self.calls.get(call_id)
        kind = call.kind if call is not None else "other"
        status = exit_status(lines)
        failed = flagged or (status is not None and status != 0)
        label = call.label if call is not None else "tool"
        if call is not None and call.command is not None:
            entry = self.commands.get(_short(call.command, self.max_item_chars - 20))
            if entry is not None:
                entry.failed = entry.failed or failed
                outcome = f"exit {status}" if status is not None else "failed" if failed else "done"
                if not entry.outcomes or entry.outcomes[-1] != outcome:
                    entry.outcomes.append(outcome)
        if not failed and (kind != "other" or (call is not None and call.name.lower() in _NO_SCAN)):
            # a file's content, a confirmation, a list of matches, a command that did not fail (no exit status and
            # no error flag: Claude Code says only when one fails): no outcome to report, whatever words it holds,
            # but the error codes it names
            if call is None or call.name.lower() not in _NO_SCAN:
                self._codes(label, lines, where)
            return
        kept = 0
        first_content: tuple[str, int] | None = None
        for offset, line in enumerate(lines):
            for piece in _pieces(line):
                text = piece.strip()
                if not text or _NOISE_LINE.match(text) or (_EXIT.match(text) and len(text) < 40):
                    continue
                if first_content is None:
                    first_content = (text, where + offset)
                if kind in ("read", "write", "search"):
                    break  # a failed file tool: its first line says why
                if _ERROR.search(text[:WINDOW]) is not None:
                    self.errors.append((f"({label}) {text}", where + offset))
                    kept += 1
                    if kept >= ERROR_LINES:
                        return
            if kind in ("read", "write", "search") and first_content is not None:
                break
        if failed and not kept and first_content is not None:
            self.errors.append((f"({label}) {first_content[0]}", first_content[1]))

    def _codes(self, label: str, lines: Sequence[str], where: int) -> None:
        """The first `CODE_LINES` lines of an output that name an error code, into `coded`: one search of the whole
        text (most outputs name none), then the lines around its matches."""
        text = "\n".join(lines)
        found = 0
        end = -1
        for match in _CODE.finditer(text):
            if match.start() <= end:
                continue  # a second code on a line already kept
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            end = len(text) if end < 0 else end
            # the piece holding the code, where the line is a JSON string of escaped lines (`_pieces`)
            code = match.group(0)
            line = next((p for p in _pieces(text[start:end]) if code in p), text[start:end][:WINDOW]).strip()
            self.coded.append((f"({label}) {line}", where + text.count("\n", 0, start)))
            found += 1
            if found >= CODE_LINES:
                return

    def _change(self, path: str, line: str, at: int) -> None:
        name = path.rstrip("/").rsplit("/", 1)[-1] if path else "code"
        text = f"{name}: {_short(line, _CHANGE_CHARS)}"
        entry = self.changes.get(text)
        if entry is None:
            self.changes[text] = [1, at, at]
        else:
            entry[0] += 1
            entry[2] = at

    def _file(self, path: str, verb: str, at: int) -> None:
        entry = self.files.get(path)
        if entry is None:
            self.files[path] = _File([verb], at, at)
            return
        if verb not in entry.verbs:
            entry.verbs.append(verb)
        entry.last = at
        entry.touches += 1

    def _other(self, text: str, at: int, weight: int) -> None:
        entry = self.others.get(text)
        if entry is None:
            self.others[text] = [1, at, at, weight]
        else:
            entry[0] += 1
            entry[2] = at

    @property
    def call_ids(self) -> set[str]:
        """Every tool-call id the span's call and result lines name."""
        return {*self.calls, *self.answered} - {""}

    @property
    def coding(self) -> bool:
        """Whether the span is a coding agent's (it read or wrote files, or ran commands): its summary's room goes
        to that work first. A customer-service agent's calls (``get_reservation_details``) are not: there the ids
        in the list of identifiers are what the conversation comes back to."""
        return bool(self.files or self.commands)

    def listed_file(self, text: str, at: int) -> None:
        """A file item of a partial summary being consolidated (``path (read, edited)``): merged with the span's
        own, so one file is one item however many partial summaries listed it (a consolidation listed
        ``session_live.ex`` three times, once per verb set)."""
        path, verbs = text, ["read"]
        at_verbs = text.rfind(" (")
        if text.endswith(")") and at_verbs > 0:
            path, verbs = text[:at_verbs], [v.strip() for v in text[at_verbs + 2 : -1].split(",") if v.strip()]
        for verb in verbs or ["read"]:
            self._file(path, verb, at)

    @property
    def root(self) -> str:
        """The directory at least two of the files are under and every absolute one is (``/home/me/project``),
        at least `_ROOT_CHARS` long; "" when there is none. A list of files then names them relative to it, once:
        a Claude Code session's absolute paths spent 50 characters each on the same directory."""
        absolute = [p for p in self.files if p.startswith("/")]
        if len(absolute) < 2:
            return ""
        parts = absolute[0].split("/")[:-1]
        for path in absolute[1:]:
            other = path.split("/")[:-1]
            common = 0
            while common < min(len(parts), len(other)) and parts[common] == other[common]:
                common += 1
            parts = parts[:common]
        root = "/".join(parts)
        return root if len(root) >= _ROOT_CHARS else ""

    def emit(self, out: Collector) -> str:
        """Write the facts into `out`: files (written ones weigh more), commands with their outcome (failed ones
        weigh more), searches and other calls, the code written, and error lines (from failed commands weigh more).
        Returns the directory the files are named relative to (`root`)."""
        root = self.root
        for path, f in self.files.items():
            written = any(v != "read" for v in f.verbs)
            shown = path[len(root) + 1 :] if root and path.startswith(root + "/") else path
            out.put("files", Item(f"{shown} ({', '.join(f.verbs)})", f.touches, f.first, f.last, 2 if written else 1))
        for command, entry in self.commands.items():
            text = f"$ {command}" + (f" ({', '.join(entry.outcomes[-4:])})" if entry.outcomes else "")
            out.put("actions", Item(text, entry.count, entry.first, entry.last, 3 if entry.failed else 2))
        for text, (count, first, last, weight) in self.others.items():
            out.put("actions", Item(text, count, first, last, weight))
        for text, (count, first, last) in self.changes.items():
            out.put("changes", Item(text, count, first, last, 1))
        for text, at in self.errors:
            out.add("errors", text, at, 3)
        for text, at in self.coded:
            out.add("errors", text, at, 1)
        return root


_PATCH_VERBS = {"Add": "created", "Update": "edited", "Delete": "deleted"}
_ROOT_CHARS = 12
_CHANGED_LINES = 8
"""Lines of code written kept of one edit: its first added lines say what it changed (a definition, an attribute,
a call); the rest of a long write is in the file, and the archive keeps the call."""
_CHANGE_CHARS = 160
_NEW_KEYS = ("new_string", "new_str", "content", "file_text", "new_source", "text")
_OLD_KEYS = ("old_string", "old_str")
_TRIVIAL = re.compile(r"^(?:[\W_]{0,6}|end|do|else|fi|done|pass|return|\w{1,3}|#.{0,3}|//.{0,3})$")


def _worth_keeping(line: str) -> bool:
    """A line of code that says something: not blank, not only punctuation or a keyword closing a block."""
    text = line.strip()
    return len(text) >= 6 and _TRIVIAL.match(text) is None and any(c.isalpha() for c in text)


def _first_text(entry: dict[str, object], keys: Sequence[str]) -> str:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, str):
            return value
    return ""


def _changed_lines(args: dict[str, object] | None, arguments: str) -> list[str]:
    """The first `_CHANGED_LINES` lines an edit call adds: of each new text (``new_string``, a write's ``content``,
    a ``MultiEdit``'s ``edits``) the lines its old text (``old_string``) does not hold; of a patch in the arguments,
    its ``+`` lines."""
    pairs: list[tuple[str, str]] = []
    if args is not None:
        edits = args.get("edits")
        listed = cast("list[object]", edits) if isinstance(edits, list) else []
        entries = [args, *(cast("dict[str, object]", e) for e in listed if isinstance(e, dict))]
        for entry in entries:
            new, old = _first_text(entry, _NEW_KEYS), _first_text(entry, _OLD_KEYS)
            if new:
                pairs.append((new, old))
    elif "*** " in arguments[:200]:
        pairs.append(("\n".join(x[1:] for x in arguments[: WINDOW * 4].split("\n") if x.startswith("+")), ""))
    out: list[str] = []
    for new, old in pairs:
        before = {line.strip() for line in old[: WINDOW * 4].split("\n")}
        for line in new[: WINDOW * 4].split("\n"):
            if line.strip() not in before and _worth_keeping(line):
                out.append(line.strip())
                if len(out) >= _CHANGED_LINES:
                    return out
    return out


def exit_status(lines: Sequence[str]) -> int | None:
    """The exit status an output states in its first six or last three lines (``Exit code 1``, ``Process exited
    with code 1``, ...), None where it states none."""
    for line in (*lines[:6], *lines[-3:]):
        head = line[:300]
        # every exit status line holds "exit" in some case: a line without "ex" is not searched (the pattern
        # ignores case, so it tries every position of the line: most of what reading an output cost)
        match = _EXIT.search(head) if "ex" in head.lower() else None
        if match is not None:
            return int(match.group(1))
    return None


def error_lines(lines: Sequence[str], limit: int = ERROR_LINES) -> list[str]:
    """The first `limit` lines of a failed command's output that say what failed (the patterns `AgentFacts` reads
    error lines by), its framing and exit status line aside: what a note standing for the command without a summary
    says of its outcome (`chainsum.strategies`)."""
    found: list[str] = []
    for line in lines:
        for piece in _pieces(line):
            text = piece.strip()
            if not text or _NOISE_LINE.match(text) or (_EXIT.match(text) and len(text) < 40):
                continue
            if _ERROR.search(text[:WINDOW]) is not None:
                found.append(text)
                if len(found) >= limit:
                    return found
    return found


def _pieces(line: str) -> list[str]:
    """A line of output, split where a JSON string holds escaped line breaks (``{"output": "a\\nb"}``)."""
    if "\\n" in line and line.lstrip().startswith(("{", "[", '"')):
        return line[: WINDOW * 4].split("\\n")
    return [line[:WINDOW]]
