"""`check_conversation`: every claim an end-to-end test makes about what the upstream received, for any provider.

The provider-specific parts are small readers (`Provider`): where the history is, how a request's newest tool
result and the reasoning tokens look. The claims:

1. every request is valid for its provider (`wire_checks`, this suite's own checker);
2. the agent loop's requests form one conversation that only grows, except where chainsum compacted or the client
   compacted itself (`wire_checks.continuity_problems`; the client's compaction request itself is a fork, checked
   for validity only);
3. each request ends with the output of the command the previous answer asked for, whole (its last line is
   there): the current turn is never summarized, and the client really ran the command;
4. reasoning comes back as it was handed out: every thinking block with its signature, every reasoning item with
   its ``encrypted_content``, and the newest call's reasoning is there;
5. no request reached the upstream far over the window: counted here on the raw JSON (history, system and tools,
   with chainsum's default counter), which differs from chainsum's own count by keys and opaque reasoning tokens,
   so only a request over `OVER_WINDOW` times the window fails: a history the proxy let grow unchecked;
6. the proxy compacted at least twice (its session API), and the upstream saw it (requests that hold chainsum
   summary content).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from chainsum.tokens import HeuristicCounter, json_tokens
from e2e.agent_script import STEPS, call_id, encrypted_reasoning, signature, step, thinking_text
from e2e.fake_upstream import FakeUpstream, Received
from e2e.harness import Proxy
from e2e.wire_checks import (
    anthropic_problems,
    chainsum_marks,
    chat_problems,
    continuity_problems,
    responses_problems,
)

__all__ = ["ANTHROPIC", "CHAT", "OVER_WINDOW", "RESPONSES", "Provider", "Stats", "check_conversation"]

OVER_WINDOW = 1.5
"""A request this many times the window is one the proxy did not manage (claim 5); the raw-JSON count of this
suite reads up to 1.1 times the window where chainsum kept the request inside it."""

Json = dict[str, Any]


def _dicts(value: object) -> list[Json]:
    return [cast(Json, v) for v in cast(list[Any], value)] if isinstance(value, list) else []


def _text(content: object) -> str:
    """The text of a tool result's content, whatever its shape (a string, or a list of text parts)."""
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", part.get("output", ""))) for part in _dicts(content))


@dataclass(frozen=True, slots=True)
class Provider:
    name: str
    field: str
    """The body field that holds the history."""
    id_prefix: str
    problems: Callable[[Json], list[str]]
    results: Callable[[list[Json]], dict[str, str]]
    """Tool results of a history: call id to text."""
    calls: Callable[[list[Json]], list[str]]
    """Tool call ids of a history, in order."""
    reasoning: Callable[[list[Json], str], list[str]]
    """Problems with the reasoning handed back (the newest call's id given)."""

    def history(self, body: Json) -> list[Json]:
        return _dicts(body.get(self.field))


# Anthropic ------------------------------------------------------------------------------------------------------------
def _anthropic_blocks(history: list[Json]) -> list[tuple[int, Json]]:
    return [(i, b) for i, m in enumerate(history) if isinstance(m.get("content"), list) for b in _dicts(m["content"])]


def _anthropic_reasoning(history: list[Json], newest: str) -> list[str]:
    known = {thinking_text(n): signature(n) for n in range(1, STEPS + 2)}
    problems: list[str] = []
    for i, block in _anthropic_blocks(history):
        if block.get("type") != "thinking":
            continue
        expected = known.get(str(block.get("thinking")))
        if expected is None:
            problems.append(f"messages[{i}]: a thinking block the upstream never wrote: {block.get('thinking')!r:.80}")
        elif block.get("signature") != expected:
            problems.append(f"messages[{i}]: thinking signature changed")
    for message in history:
        blocks = _dicts(message.get("content"))
        if any(b.get("type") == "tool_use" and b.get("id") == newest for b in blocks):
            if not blocks or blocks[0].get("type") != "thinking":
                problems.append(f"the assistant message of {newest} does not start with its thinking block")
    return problems


ANTHROPIC = Provider(
    name="anthropic",
    field="messages",
    id_prefix="toolu_",
    problems=anthropic_problems,
    results=lambda h: {
        str(b.get("tool_use_id")): _text(b.get("content"))
        for _, b in _anthropic_blocks(h)
        if b.get("type") == "tool_result"
    },
    calls=lambda h: [str(b.get("id")) for _, b in _anthropic_blocks(h) if b.get("type") == "tool_use"],
    reasoning=_anthropic_reasoning,
)


# OpenAI Responses -----------------------------------------------------------------------------------------------------
_RS_ID = re.compile(r"rs_e2e_(\d+)")


def _responses_reasoning(history: list[Json], newest: str) -> list[str]:
    by_summary = {thinking_text(n): n for n in range(1, STEPS + 2)}
    problems: list[str] = []
    for i, item in enumerate(history):
        if item.get("type") != "reasoning":
            continue
        summary = " ".join(str(s.get("text")) for s in _dicts(item.get("summary")))
        found = _RS_ID.fullmatch(str(item.get("id", "")))
        number = by_summary.get(summary) or (int(found.group(1)) if found else None)
        if number is None:
            problems.append(f"input[{i}]: a reasoning item the upstream never wrote")
        elif item.get("encrypted_content") != encrypted_reasoning(number):
            problems.append(f"input[{i}]: encrypted_content of step {number} changed or lost")
    for i, item in enumerate(history):
        is_newest = item.get("type") in ("function_call", "custom_tool_call") and item.get("call_id") == newest
        if is_newest and not _turn_has_reasoning(history, i):
            problems.append(f"the reasoning item of {newest} is not in its turn")
    return problems


def _turn_has_reasoning(history: list[Json], at: int) -> bool:
    """Whether the model's turn that holds item `at` (the output items before it: assistant text, calls) starts
    with a reasoning item."""
    for item in reversed(history[:at]):
        kind = item.get("type", "message")
        if kind == "reasoning":
            return True
        if kind not in ("function_call", "custom_tool_call") and not (
            kind == "message" and item.get("role") == "assistant"
        ):
            return False
    return False


RESPONSES = Provider(
    name="openai-responses",
    field="input",
    id_prefix="call_",
    problems=responses_problems,
    results=lambda h: {
        str(i.get("call_id")): _text(i.get("output"))
        for i in h
        if i.get("type") in ("function_call_output", "custom_tool_call_output")
    },
    calls=lambda h: [str(i.get("call_id")) for i in h if i.get("type") in ("function_call", "custom_tool_call")],
    reasoning=_responses_reasoning,
)


# OpenAI Chat Completions ----------------------------------------------------------------------------------------------
CHAT = Provider(
    name="openai-chat",
    field="messages",
    id_prefix="call_",
    problems=chat_problems,
    results=lambda h: {str(m.get("tool_call_id")): _text(m.get("content")) for m in h if m.get("role") == "tool"},
    calls=lambda h: [str(c.get("id")) for m in h for c in _dicts(m.get("tool_calls"))],
    reasoning=lambda h, newest: [],
)


# the claims -----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Stats:
    """What a run saw, for the report."""

    requests: int
    """Requests of the agent loop (and the client's own compaction requests)."""
    side_requests: int
    compactions: int
    """Compactions the session API counts, over every session of the run."""
    compacted_requests: int
    """Requests at which the upstream saw new chainsum summary content."""
    client_compactions: int
    first_request_tokens: int
    """Tokens of the first request as the proxy measured it (system, tools, history, answer room)."""

    def line(self) -> str:
        return (
            f"{self.requests} requests ({self.side_requests} side), {self.compactions} compactions "
            f"({self.compacted_requests} seen upstream), {self.client_compactions} client compactions, "
            f"first request {self.first_request_tokens:,} tokens"
        )


def check_conversation(fake: FakeUpstream, proxy: Proxy, provider: Provider, window: int) -> Stats:
    """Assert the claims of the module docstring about a finished run (`window` is the proxy's context window);
    return what it saw."""
    loop = fake.of_kind("main", "compact")
    assert loop, "the upstream received no request of the agent loop"
    problems: list[str] = []
    for n, request in enumerate(loop):
        problems += [f"request {n}: {p}" for p in provider.problems(request.body)]
    histories = [provider.history(r.body) for r in loop]
    restarts = _client_restarts(loop)
    mains = [n for n, r in enumerate(loop) if r.kind == "main"]
    main_histories = [histories[n] for n in mains]
    problems += continuity_problems(main_histories, [mains.index(n) for n in restarts], mains)
    problems += _newest_results(loop, histories, provider, restarts)
    for n, (request, history) in enumerate(zip(loop, histories, strict=True)):
        newest = call_id(provider.id_prefix, request.answered - 1) if request.answered > 1 else ""
        problems += [f"request {n}: {p}" for p in provider.reasoning(history, newest)]
    assert not problems, "\n".join(problems[:40])

    sizes = [_tokens(r) for r in loop]
    over = [f"request {n}: {size:,} tokens" for n, size in enumerate(sizes) if size > OVER_WINDOW * window]
    assert not over, f"requests far over the {window:,}-token window reached the upstream: {', '.join(over)}"
    steps = sorted({r.answered for r in loop if r.kind == "main"})
    assert steps == list(range(1, STEPS + 2)), f"the agent loop skipped or repeated steps: {steps}"
    sessions = proxy.sessions()
    compactions = sum(int(s.get("compactions") or 0) for s in sessions)
    seen = sum(1 for a, b in itertools.pairwise(main_histories) if chainsum_marks(b) - chainsum_marks(a))
    assert compactions >= 2, f"the proxy compacted {compactions} time(s): {json.dumps(sessions)[:2000]}"
    assert seen >= 2, f"the upstream saw {seen} compaction(s)"
    first = fake.of_kind("main")[0]
    return Stats(
        requests=len(loop),
        side_requests=len(fake.received) - len(loop),
        compactions=compactions,
        compacted_requests=seen,
        client_compactions=sum(1 for r in loop if r.kind == "compact"),
        first_request_tokens=_tokens(first),
    )


def _client_restarts(loop: Sequence[Received]) -> list[int]:
    """The requests right after a client's own compaction (it starts over from its summary). The compaction request
    itself is a fork of the conversation (Claude Code leaves the newest turn out and asks for a summary), so it is
    checked for validity, not continuity."""
    return [n for n in range(1, len(loop)) if loop[n - 1].kind == "compact"]


def _newest_results(
    loop: Sequence[Received], histories: Sequence[list[Json]], provider: Provider, restarts: Sequence[int]
) -> list[str]:
    """Claim 3: each request carries the previous answer's call, and its output whole, as the newest call."""
    problems: list[str] = []
    for n in range(1, len(loop)):
        asked = loop[n - 1].answered
        if n in restarts or loop[n - 1].kind != "main" or loop[n].kind != "main" or not 1 <= asked <= STEPS:
            continue
        wanted = call_id(provider.id_prefix, asked)
        history = histories[n]
        calls = provider.calls(history)
        if not calls or calls[-1] != wanted:
            problems.append(f"request {n}: newest tool call is {calls[-1:]} instead of {wanted}")
            continue
        output = provider.results(history).get(wanted)
        if output is None:
            problems.append(f"request {n}: no result for {wanted}")
        elif step(asked).output not in output.replace("\r\n", "\n"):
            clipped = "[chainsum: clipped" in output or "[chainsum: tool output masked" in output
            problems.append(
                f"request {n}: the newest output (step {asked}) is not whole"
                + (" (chainsum clipped or masked it)" if clipped else "")
                + f": {len(output):,} characters, {len(step(asked).output):,} printed"
            )
    return problems


_COUNTER = HeuristicCounter()


def _tokens(request: Received) -> int:
    """A request's size by chainsum's default counter over its raw JSON (history, system, tools; answer room aside)."""
    body = request.body
    return sum(json_tokens(_COUNTER, body.get(k)) for k in ("system", "instructions", "tools", "messages", "input"))
