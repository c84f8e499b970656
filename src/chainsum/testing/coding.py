"""Generated coding-agent spans in the tool dialects agents really use, with what a summary of them must name.

`coding_span(seed, dialect=...)` is a user request and the steps an agent takes for it, as canonical messages:
commands run (with an exit status and, when they fail, error lines), files read and files written, searches, in
the shapes of Claude Code (``Bash`` with ``command``; ``Read``/``Write``/``Edit``/``MultiEdit`` with
``file_path``; ``Glob``/``Grep``; a failing command is a tool result flagged ``is_error`` starting
``Exit code N``), of Codex (``exec_command`` with a ``cmd`` array and ``shell`` with a ``command`` array,
output starting ``Exit code: N``; ``apply_patch`` with the paths in the patch's headers) and of a generic agent
(``run`` with ``exit_code`` in JSON output, tools taking ``path``, ``file`` or ``filename``). `CodingSpan` lists
the ground truth: the requests, paths, commands and error lines planted, so a test of the extractive summarizer
checks its output against what was generated, not against what the summarizer itself finds.

Deterministic for a seed. Used by ``tests/summarize`` (a Hypothesis property over seeds) and
``bench/bench_summaries.py``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..messages import Message, Text, ToolCall, ToolResult

__all__ = ["DIALECTS", "CodingSpan", "Dialect", "coding_span", "spans_of"]

Dialect: TypeAlias = Literal["claude", "codex", "generic"]
DIALECTS: tuple[Dialect, ...] = ("claude", "codex", "generic")

_DIRS = ("src/app", "src/core", "lib/store", "pkg/api", "tests/unit", "web/static")
_STEMS = ("router", "cache_layer", "session", "billing", "auth_token", "retry_policy", "parser", "schema")
_EXT = (".py", ".ts", ".go", ".rs", ".ex")
_COMMANDS = (
    "pytest -q tests/unit",
    "npm run build",
    "go test ./...",
    "cargo check --all-targets",
    "mix test --failed",
    "make lint",
    "git status --short",
    "ruff check src",
)
_ERRORS = (
    "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'",
    "error: cannot find value `retry_budget` in this scope",
    "FAILED tests/unit/test_cache.py::test_expiry - AssertionError",
    "panic: runtime error: index out of range [3] with length 3",
    "Traceback (most recent call last):",
    "ModuleNotFoundError: No module named 'billing_v2'",
)
_ASKS = (
    "Fix the flaky cache expiry test in {path} and keep the public API unchanged",
    "Add a retry budget to {path}; the limit is 3 attempts per request",
    "Rename the session token helper in {path} and update every caller",
    "Find out why the build fails on CI for {path} and fix it",
)
_WORDS = "the a of to and in is that for on with as it this be by from or at check look next then".split()


@dataclass(frozen=True, slots=True, kw_only=True)
class CodingSpan:
    """A generated span and what its summary must name."""

    messages: tuple[Message, ...]
    requests: tuple[str, ...]
    """The user's requests, verbatim."""
    paths: tuple[str, ...]
    """Every file path read or written (in tool arguments or patch headers)."""
    commands: tuple[str, ...]
    """Every shell command run, as the agent wrote it (the script of a ``bash -lc`` array)."""
    errors: tuple[str, ...]
    """The error lines of the failing commands' output."""
    failed: tuple[str, ...]
    """The commands that failed (exit status not 0)."""


def _filler(rng: random.Random, lines: int) -> str:
    return "\n".join(" ".join(rng.choice(_WORDS) for _ in range(8)) for _ in range(lines))


def _args(payload: dict[str, object]) -> str:
    return json.dumps(payload, separators=(",", ":"))


def coding_span(seed: int, *, dialect: Dialect = "claude", steps: int = 6, filler: int = 3) -> CodingSpan:
    """A user request and `steps` agent steps in `dialect` (see the module docstring); `filler` lines of plain
    output around each planted line."""
    rng = random.Random(seed)
    paths = [f"{rng.choice(_DIRS)}/{rng.choice(_STEMS)}_{rng.randint(1, 99)}{rng.choice(_EXT)}" for _ in range(4)]
    request = rng.choice(_ASKS).format(path=paths[0])
    messages: list[Message] = [Message.of("user", request)]
    used_paths: list[str] = []
    commands: list[str] = []
    errors: list[str] = []
    failed: list[str] = []
    for step in range(steps):
        call_id = f"call_{seed}_{step}"
        kind = rng.choice(("run", "run", "read", "write"))
        path = rng.choice(paths)
        text = f"Step {step}: " + " ".join(rng.choice(_WORDS) for _ in range(6)) + "."
        if kind == "run":
            command = rng.choice(_COMMANDS)
            status = rng.choice((0, 0, 1, 2))
            error = rng.choice(_ERRORS) if status else ""
            body = _filler(rng, filler) + (f"\n{error}\n" if error else "\n") + _filler(rng, filler)
            call, result = _run(dialect, call_id, command, status, body)
            commands.append(command)
            if status:
                failed.append(command)
                errors.append(error)
        elif kind == "read":
            call, result = _read(dialect, call_id, path, _filler(rng, filler * 2))
            used_paths.append(path)
        else:
            call, result = _write(dialect, call_id, path, _filler(rng, filler))
            used_paths.append(path)
        messages.append(Message(role="assistant", parts=(Text(text=text), call)))
        messages.append(Message(role="tool", parts=(result,)))
    messages.append(Message.of("assistant", "Done: " + " ".join(rng.choice(_WORDS) for _ in range(10)) + "."))
    return CodingSpan(
        messages=tuple(messages),
        requests=(request,),
        paths=tuple(dict.fromkeys(used_paths)),
        commands=tuple(dict.fromkeys(commands)),
        errors=tuple(dict.fromkeys(errors)),
        failed=tuple(dict.fromkeys(failed)),
    )


def _run(dialect: Dialect, call_id: str, command: str, status: int, body: str) -> tuple[ToolCall, ToolResult]:
    if dialect == "claude":
        call = ToolCall(id=call_id, name="Bash", arguments=_args({"command": command, "description": "Run it"}))
        content = f"Exit code {status}\n{body}" if status else body
        return call, ToolResult(call_id=call_id, content=content, is_error=bool(status))
    if dialect == "codex":
        if call_id.endswith(("0", "2", "4", "6", "8")):
            call = ToolCall(id=call_id, name="exec_command", arguments=_args({"cmd": ["bash", "-lc", command]}))
        else:
            call = ToolCall(id=call_id, name="shell", arguments=_args({"command": ["bash", "-lc", command]}))
        content = f"Exit code: {status}\nWall time: 0.4 seconds\nOutput:\n{body}"
        return call, ToolResult(call_id=call_id, name=call.name, content=content)
    call = ToolCall(id=call_id, name="run", arguments=_args({"command": command}))
    content = json.dumps({"exit_code": status, "output": body})
    return call, ToolResult(call_id=call_id, name="run", content=content)


def _read(dialect: Dialect, call_id: str, path: str, body: str) -> tuple[ToolCall, ToolResult]:
    if dialect == "claude":
        return ToolCall(id=call_id, name="Read", arguments=_args({"file_path": path})), ToolResult(
            call_id=call_id, content=body
        )
    if dialect == "codex":
        call = ToolCall(
            id=call_id, name="exec_command", arguments=_args({"cmd": ["bash", "-lc", f"sed -n 1,80p {path}"]})
        )
        return call, ToolResult(call_id=call_id, name=call.name, content=f"Exit code: 0\nOutput:\n{body}")
    key = ("path", "file", "filename")[len(path) % 3]
    return ToolCall(id=call_id, name="read_file", arguments=_args({key: path})), ToolResult(
        call_id=call_id, name="read_file", content=body
    )


def _write(dialect: Dialect, call_id: str, path: str, body: str) -> tuple[ToolCall, ToolResult]:
    if dialect == "claude":
        name = ("Write", "Edit", "MultiEdit")[len(path) % 3]
        payload: dict[str, object] = {"file_path": path, "content": body} if name == "Write" else {"file_path": path}
        if name == "Edit":
            payload |= {"old_string": "a", "new_string": "b"}
        if name == "MultiEdit":
            payload |= {"edits": [{"old_string": "a", "new_string": "b"}]}
        return ToolCall(id=call_id, name=name, arguments=_args(payload)), ToolResult(
            call_id=call_id, content=f"The file {path} has been updated successfully."
        )
    if dialect == "codex":
        patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-old line\n+new line\n*** End Patch"
        return ToolCall(id=call_id, name="apply_patch", arguments=patch), ToolResult(
            call_id=call_id, name="apply_patch", content="Success. Updated the following files:\nM " + path
        )
    key = ("path", "file", "filename")[len(path) % 3]
    return ToolCall(id=call_id, name="write_file", arguments=_args({key: path, "text": body})), ToolResult(
        call_id=call_id, name="write_file", content="ok"
    )


def spans_of(messages: Sequence[Message], size: int) -> list[list[Message]]:
    """Consecutive spans of about `size` messages, system messages left out, a cut never before a tool message: the
    spans a summary is judged on (the summaries benchmark and their tests cut a real session alike)."""
    body = [m for m in messages if m.role != "system"]
    out: list[list[Message]] = []
    start = 0
    while start < len(body):
        end = min(len(body), start + size)
        while end < len(body) and body[end].role == "tool":
            end += 1
        out.append(body[start:end])
        start = end
    return out
