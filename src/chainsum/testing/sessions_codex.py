"""A Codex CLI session as the proxy sees it: OpenAI Responses API ``input`` items, deterministic.

`codex_session(steps)` writes what Codex sends on its last request (issue 21, item 5): its ``instructions`` (a base
prompt of about 3,000 tokens) and tool definitions (counted, `TOOL_TOKENS`) apart, then a ``developer`` message (the
sandbox and approval policy), a user message holding only the ``<environment_context>`` block, the user's task, and
per step a ``reasoning`` item (a summary and an opaque ``encrypted_content`` the client must get back as it was), a
``function_call`` of ``exec_command`` and its ``function_call_output`` of about `output_tokens` tokens (Codex's own
framing: chunk id, wall time, exit code, the original token count, then the output), now and then a short assistant
message; a last assistant message answers.
Every model request of the session is a prefix of the items: `request_ends` says where each one ends.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

__all__ = ["TOOL_TOKENS", "CodexSession", "codex_session", "request_ends"]

_INSTRUCTIONS_HEAD = (
    "You are Codex, a coding agent based on GPT-5. You and the user share the same workspace and collaborate to "
    "achieve the user's goals. Run commands with exec_command; keep answers short.\n\n"
)
_GUIDELINES = (
    "Prefer rg over grep when searching for text or files.",
    "Do not revert changes you did not make unless the user asks you to.",
    "Keep going until the query is completely resolved before ending your turn.",
    "Use apply_patch for single file edits; never write files with cat or echo redirections.",
    "Before running a command that may take long, say what you are about to do in one short sentence.",
    "When a command fails, read the error, fix the cause and run it again instead of guessing.",
    "Summarize your changes at the end with the files touched and how to verify them.",
    "Respect the sandbox: ask for escalation only when a command needs the network or files outside cwd.",
)
_INSTRUCTIONS_TOKENS = 3000
"""About what Codex's base prompt (the request's ``instructions``) counts: a few thousand tokens of rules."""
TOOL_TOKENS = 6500
"""About what Codex's tool definitions count (``exec_command``, ``apply_patch``, ``update_plan``, ...): a proxy
reserves them beside the history. With the instructions, the first request is near 10,000 tokens, as Codex's own, by
chainsum's count, were 10,000 (function tools) to 15,000 (code mode) (tests/e2e/test_codex.py)."""
_DEVELOPER = (
    "<permissions instructions>\nFilesystem sandboxing defines which files can be read or written. "
    "sandbox_mode is workspace-write: the sandbox permits reading files, and editing files in cwd and writable "
    "roots. Approval policy is currently never.\n</permissions instructions>"
)
_ENVIRONMENT = (
    "<environment_context>\n  <cwd>/home/user/work</cwd>\n  <approval_policy>never</approval_policy>\n"
    "  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n"
    "  <shell>bash</shell>\n</environment_context>"
)
_TASKS = (
    "Run seq 1 3000 twenty times, one command per turn, and after the last one tell me the sum of the last line of "
    "every run (ticket OPS-{n}).",
    "Count the lines of every log under /var/log/app one file per turn and report the largest (ticket OPS-{n}).",
    "Grep the build output for warnings step by step, one module per turn, and list the modules with warnings "
    "(ticket OPS-{n}).",
)


@dataclass(frozen=True, slots=True)
class CodexSession:
    instructions: str
    """The request's ``instructions`` (Codex's base prompt), outside the items."""
    tool_tokens: int
    """What the request's tool definitions count (`TOOL_TOKENS`): to reserve beside the history."""
    items: list[dict[str, Any]]
    """The ``input`` items of the session's last request, and the final answer after them."""
    task: str
    """The user's task, as the third item says it."""


def _message(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def _output(rng: random.Random, step: int, command: str, tokens: int) -> str:
    """Codex's ``exec_command`` output framing around about `tokens` tokens of numbers (seq's lines)."""
    start = rng.randint(1, 50)
    lines: list[str] = []
    chars = 0
    n = start
    while chars < tokens * 7 // 4:  # a short line of digits counts about 1.75 characters a token (chainsum)
        lines.append(str(n))
        chars += len(lines[-1]) + 1
        n += 1
    status = 0 if rng.random() < 0.9 else 1
    head = (
        f"Chunk ID: {rng.getrandbits(24):06x}\nWall time: 0.{rng.randint(10, 99)} seconds\n"
        f"Process exited with code {status}\nOriginal token count: {tokens}\nOutput:\n"
    )
    tail = f"\nerror: step {step} of `{command}` stopped early" if status else ""
    return head + "\n".join(lines) + tail


def codex_session(steps: int = 20, *, seed: int = 3, output_tokens: int = 1400) -> CodexSession:
    """A Codex session of `steps` tool steps (see the module docstring)."""
    rng = random.Random(seed)
    task = rng.choice(_TASKS).format(n=rng.randint(100, 999))
    items: list[dict[str, Any]] = [
        _message("developer", _DEVELOPER),
        _message("user", _ENVIRONMENT),
        _message("user", task),
    ]
    for step in range(1, steps + 1):
        command = f"seq {rng.randint(1, 40)} {rng.randint(2900, 3100)}"
        call_id = f"call_{seed:02d}{step:03d}"
        items.append(
            {
                "type": "reasoning",
                "id": f"rs_{seed:02d}{step:03d}",
                "summary": [{"type": "summary_text", "text": f"**Running step {step}**\n\nNext: `{command}`."}],
                "content": None,
                "encrypted_content": f"gAAAAB{rng.getrandbits(256):064x}{step:04d}",
            }
        )
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{seed:02d}{step:03d}",
                "call_id": call_id,
                "name": "exec_command",
                "arguments": f'{{"cmd":"{command}","workdir":"/home/user/work","max_output_tokens":40000}}',
            }
        )
        size = max(100, int(output_tokens * rng.uniform(0.85, 1.15)))
        items.append({"type": "function_call_output", "call_id": call_id, "output": _output(rng, step, command, size)})
        if rng.random() < 0.2:
            items.append(_message("assistant", f"Step {step} done; {steps - step} to go."))
    items.append(_message("assistant", f"All {steps} runs are done; the last lines are listed above."))
    return CodexSession(_instructions(), TOOL_TOKENS, items, task)


def _instructions() -> str:
    lines = [_INSTRUCTIONS_HEAD]
    k = 0
    while sum(len(line) for line in lines) < _INSTRUCTIONS_TOKENS * 4:
        lines.append(f"{k + 1}. {_GUIDELINES[k % len(_GUIDELINES)]}\n")
        k += 1
    return "".join(lines)


_MODEL_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call"})


def _from_model(item: dict[str, Any]) -> bool:
    return item.get("type") in _MODEL_ITEMS or (item.get("type") == "message" and item.get("role") == "assistant")


def request_ends(items: list[dict[str, Any]]) -> list[int]:
    """Where each model request of the session ends: ``items[:end]`` is what the client sends before the model's
    next output (the first item of each run of model items)."""
    return [i for i in range(1, len(items)) if _from_model(items[i]) and not _from_model(items[i - 1])]
