"""The scripted agent every end-to-end test plays: which shell command each step asks the client to run, how the
answers name themselves so the fake upstream can tell from a request where the conversation stands, and the
reasoning tokens it hands out (so that a test can check they come back exactly as given).

Why shell commands with large outputs: the proxy must compact real tool results that the real client produced
and sent back, so the commands are cheap, deterministic and large (about 11 KB of numbers or 20 KB of one line),
and each output is known in advance (`Step.output`): a test checks that the newest output reached the upstream
whole.

Why the step number is written into every call id and command (``e2e_step_07``, ``E2E-STEP-07``): the latest
tool call is never summarized (it is the current turn), so the highest step number in a request is the step just
run, whatever the proxy or the client compacted before it; when the client compacts its own history, the summary
the fake writes for it names the last step too.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = [
    "FINAL_ANSWER",
    "STEPS",
    "Step",
    "call_id",
    "encrypted_reasoning",
    "last_step_in",
    "signature",
    "step",
    "thinking_text",
]

STEPS = 26
"""Tool calls before the final answer (the issue asks for 25 or more)."""

FINAL_ANSWER = "E2E-FINAL-ANSWER: all steps ran"
"""What the fake answers once every step has run; the client must print it and exit 0."""

_STEP_ID = re.compile(r"(?:e2e_step_|E2E-STEP-)(\d{2})")


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call of the script."""

    number: int
    command: str
    """A shell command whose output is a few KB to tens of KB."""
    output: str
    """What the command prints: a tool result holding it all reached the upstream whole (no clip, no mask)."""


def step(number: int) -> Step:
    """Step `number` (1-based): odd steps print 1,801 numbers (11 KB), even steps one 20,000-character line."""
    tag = f"E2E-STEP-{number:02d}"
    if number % 2:
        start = number * 10_000
        numbers = "\n".join(str(n) for n in range(start, start + 1_801))
        return Step(number, f"echo {tag}; seq {start} {start + 1_800}", f"{tag}\n{numbers}")
    command = f"""python3 -c "print('{tag}'); print('x' * 20000); print('{tag}-END')" """.strip()
    return Step(number, command, f"{tag}\n{'x' * 20000}\n{tag}-END")


def call_id(prefix: str, number: int) -> str:
    """The call id of step `number` in a provider's id style (``toolu_``, ``call_``)."""
    return f"{prefix}e2e_step_{number:02d}"


def last_step_in(text: str) -> int:
    """The highest step number named in `text` (a raw request body), 0 when none is."""
    return max((int(m) for m in _STEP_ID.findall(text)), default=0)


def thinking_text(number: int) -> str:
    return f"Step {number} of {STEPS}: run the next command and look at its output."


def signature(number: int) -> str:
    """The Anthropic thinking signature handed out with step `number`'s thinking (opaque to the client)."""
    return "e2e-sig-" + hashlib.sha256(thinking_text(number).encode()).hexdigest()[:40]


def encrypted_reasoning(number: int) -> str:
    """The Responses ``encrypted_content`` handed out with step `number`'s reasoning item."""
    return "gAAAAB-e2e-" + hashlib.sha256(f"reasoning {number}".encode()).hexdigest() * 4
