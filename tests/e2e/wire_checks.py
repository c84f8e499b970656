"""This suite's own checks of what the upstream received, written from the providers' API rules and independent of
`chainsum.rules` (a check that reused chainsum's validator would pass whatever chainsum gets wrong the same way).

Each ``*_problems`` function takes one request body and returns what a real provider would refuse, one line per
problem, empty when the request is valid:

- `anthropic_problems` (Messages): the first message is a user message; consecutive messages of one role are one
  turn (the API merges them), and an assistant turn's ``tool_use`` blocks are answered by ``tool_result`` blocks at
  the start of the very next user turn, each result answering a call of that turn; no empty text; at most four
  ``cache_control`` breakpoints; unique call ids; a thinking block carries a signature.
- `responses_problems` (Responses input items): every ``function_call`` has exactly one output after it and every
  output a call before it; a reasoning item is followed by the output it led to; no empty text.
- `chat_problems` (Chat Completions): an assistant message's ``tool_calls`` are answered by ``tool`` messages right
  after it, before anything else, and a tool message answers a call of that assistant message; no empty content.

`continuity_problems` checks the sequence of one conversation's requests: each extends the one before it exactly,
except where chainsum compacted (the request holds chainsum content the one before did not: a new record block, a
masked output) or where the client compacted its own history (the test says where).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, cast

__all__ = [
    "CHAINSUM_MARKS",
    "anthropic_problems",
    "chainsum_marks",
    "chat_problems",
    "continuity_problems",
    "responses_problems",
]

CHAINSUM_MARKS = (
    "[chainsum record of the earlier conversation",
    "[chainsum: tool output masked",
    "[chainsum: clipped",
    "[chainsum: argument masked",
    "execute_task_and_return_summary",
    "[summarized content]",
    "Automated Context Restoration",
)
"""Texts that only chainsum writes into a history (its summary forms and masks): a message holding one was
written or rewritten by a compaction. A recall block (``[chainsum recall``) is not one: it is added without a
compaction and must then stay as it was."""

Json = dict[str, Any]


def _dicts(value: object) -> list[Json]:
    return [cast(Json, v) for v in cast(list[Any], value)] if isinstance(value, list) else []


def _blank(text: object) -> bool:
    return not isinstance(text, str) or not text.strip()


# Anthropic Messages ---------------------------------------------------------------------------------------------------
def _blocks(message: Json) -> list[Json]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return _dicts(content)


def anthropic_problems(body: Json) -> list[str]:
    problems: list[str] = []
    messages = _dicts(body.get("messages"))
    if not messages:
        return ["messages: empty"]
    if messages[0].get("role") != "user":
        problems.append(f"messages[0]: role {messages[0].get('role')!r}, the first message must be a user message")
    turns: list[tuple[str, list[tuple[int, Json]]]] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant", "system"):
            problems.append(f"messages[{i}]: role {role!r}")
            continue
        content = message.get("content")
        if isinstance(content, list) and not content and not (role == "assistant" and i == len(messages) - 1):
            problems.append(f"messages[{i}]: empty content")
        if role == "system" and any(b.get("type") != "text" for b in _blocks(message)):
            problems.append(f"messages[{i}]: a system message holds only text")
        for j, block in enumerate(_blocks(message)):
            if block.get("type") == "text" and _blank(block.get("text")):
                problems.append(f"messages[{i}].content[{j}]: text content blocks must contain non-whitespace text")
            if block.get("type") == "thinking" and _blank(block.get("signature")):
                problems.append(f"messages[{i}].content[{j}]: thinking block without its signature")
        blocks = [(i, b) for b in _blocks(message)]
        if turns and turns[-1][0] == role and role != "system":
            turns[-1][1].extend(blocks)
        else:
            turns.append((str(role), blocks))
    seen_calls: set[str] = set()
    for t, (role, blocks) in enumerate(turns):
        calls = [str(b.get("id")) for _, b in blocks if b.get("type") == "tool_use"]
        for call in calls:
            if call in seen_calls:
                problems.append(f"tool_use id {call} used twice")
            seen_calls.add(call)
        if role == "assistant" and calls:
            last_turn = t == len(turns) - 1
            answer = turns[t + 1] if not last_turn else None
            if answer is None or answer[0] != "user":
                problems.append(f"tool_use ids {calls} were found without tool_result blocks immediately after")
                continue
            leading = [b for _, b in _leading_results(answer[1])]
            answered = {str(b.get("tool_use_id")) for b in leading}
            missing = [c for c in calls if c not in answered]
            if missing:
                problems.append(f"message {answer[1][0][0]}: tool_use ids {missing} have no tool_result at its start")
        if role == "user":
            previous = turns[t - 1] if t > 0 else None
            asked = {str(b.get("id")) for _, b in (previous[1] if previous else []) if b.get("type") == "tool_use"}
            asked = asked if previous is not None and previous[0] == "assistant" else set()
            leading_ids = {id(b) for _, b in _leading_results(blocks)}
            for i, block in blocks:
                if block.get("type") != "tool_result":
                    continue
                call = str(block.get("tool_use_id"))
                if call not in asked:
                    problems.append(f"messages[{i}]: tool_result {call} answers no tool_use of the previous message")
                elif id(block) not in leading_ids:
                    problems.append(f"messages[{i}]: tool_result {call} comes after other content")
    breakpoints = sum(1 for block in _cacheable(body) if "cache_control" in block)
    if breakpoints > 4:
        problems.append(f"{breakpoints} blocks with cache_control (at most 4)")
    return problems


def _leading_results(blocks: list[tuple[int, Json]]) -> list[tuple[int, Json]]:
    out: list[tuple[int, Json]] = []
    for i, block in blocks:
        if block.get("type") != "tool_result":
            break
        out.append((i, block))
    return out


def _cacheable(body: Json) -> Iterable[Json]:
    yield from _dicts(body.get("tools"))
    system = body.get("system")
    if isinstance(system, list):
        yield from _dicts(system)
    for message in _dicts(body.get("messages")):
        if isinstance(message.get("content"), list):
            yield from _blocks(message)


# OpenAI Responses -----------------------------------------------------------------------------------------------------
_CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
_OUTPUTS = {v: k for k, v in _CALLS.items()}


def responses_problems(body: Json) -> list[str]:
    problems: list[str] = []
    items = _dicts(body.get("input"))
    if not items:
        return ["input: empty"]
    open_calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, item in enumerate(items):
        kind = item.get("type", "message")
        if kind in _CALLS:
            call = str(item.get("call_id"))
            if call in open_calls or call in answered:
                problems.append(f"input[{i}]: call_id {call} used twice")
            open_calls[call] = i
        elif kind in _OUTPUTS:
            call = str(item.get("call_id"))
            if call not in open_calls:
                problems.append(f"input[{i}]: no tool call found for output with call_id {call}")
            else:
                del open_calls[call]
                answered.add(call)
        elif kind == "reasoning":
            following = items[i + 1] if i + 1 < len(items) else None
            if following is None or following.get("type", "message") == "reasoning":
                problems.append(f"input[{i}]: reasoning item provided without its required following item")
            elif following.get("type", "message") == "message" and following.get("role") != "assistant":
                problems.append(f"input[{i}]: reasoning item followed by a {following.get('role')} message")
        elif kind == "message":
            content = item.get("content")
            if isinstance(content, str):
                if _blank(content) and item.get("role") != "assistant":
                    problems.append(f"input[{i}]: empty {item.get('role')} message")
            else:
                parts = _dicts(content)
                if not parts:
                    problems.append(f"input[{i}]: message without content")
                for j, part in enumerate(parts):
                    if part.get("type") in ("input_text", "output_text") and _blank(part.get("text")):
                        problems.append(f"input[{i}].content[{j}]: empty text")
    for call, i in open_calls.items():
        problems.append(f"input[{i}]: no tool output found for function call {call}")
    return problems


# OpenAI Chat Completions ----------------------------------------------------------------------------------------------
def chat_problems(body: Json) -> list[str]:
    problems: list[str] = []
    messages = _dicts(body.get("messages"))
    if not messages:
        return ["messages: empty"]
    pending: set[str] = set()
    asked: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call = str(message.get("tool_call_id"))
            if call not in pending:
                problems.append(f"messages[{i}]: tool message {call} answers no pending tool call")
            pending.discard(call)
            continue
        if pending:
            problems.append(f"messages[{i}]: tool_call_ids {sorted(pending)} did not have response messages")
            pending = set()
        if role not in ("system", "developer", "user", "assistant"):
            problems.append(f"messages[{i}]: role {role!r}")
        content = message.get("content")
        calls = _dicts(message.get("tool_calls"))
        if role == "assistant":
            if (content is None or content == "") and not calls:
                problems.append(f"messages[{i}]: assistant message without content or tool calls")
            for call in calls:
                call_id = str(call.get("id"))
                if call_id in asked:
                    problems.append(f"messages[{i}]: tool call id {call_id} used twice")
                asked.add(call_id)
                pending.add(call_id)
        elif isinstance(content, str):
            if _blank(content):
                problems.append(f"messages[{i}]: empty {role} content")
        else:
            parts = _dicts(content)
            if not parts:
                problems.append(f"messages[{i}]: {role} message without content")
            for j, part in enumerate(parts):
                if part.get("type") == "text" and _blank(part.get("text")):
                    problems.append(f"messages[{i}].content[{j}]: empty text")
    if pending:
        problems.append(f"tool_call_ids {sorted(pending)} did not have response messages (end of history)")
    return problems


# one conversation's requests ------------------------------------------------------------------------------------------
def chainsum_marks(history: Sequence[Json]) -> set[str]:
    """The messages (as canonical JSON) that carry chainsum's summary or mask texts."""
    out: set[str] = set()
    for message in history:
        text = json.dumps(message, sort_keys=True, ensure_ascii=False)
        if any(mark in text for mark in CHAINSUM_MARKS):
            out.add(text)
    return out


def _content(value: object) -> object:
    """`value` as the model reads it, so that what a client rewrites of its own history between two turns without
    changing it does not count as a change. Claude Code does two such things: it moves its ``cache_control``
    breakpoint to the newest message every turn (the marker says where caching stops; it is not part of the
    prompt), and it sends a mid-conversation system message as a list of text blocks once, then as a string (a
    string is one text block to the API)."""
    if isinstance(value, dict):
        out = {k: _content(v) for k, v in cast(Json, value).items() if k != "cache_control"}
        if isinstance(out.get("content"), str) and "role" in out and out.get("type", "message") == "message":
            out["content"] = [{"type": "text", "text": out["content"]}]
        return out
    if isinstance(value, list):
        return [_content(v) for v in cast(list[Any], value)]
    return value


def continuity_problems(
    histories: Sequence[Sequence[Json]], client_compacted: Iterable[int] = (), numbers: Sequence[int] = ()
) -> list[str]:
    """Problems with a conversation's histories as sent upstream, in order.

    Request ``i`` must start with request ``i-1``'s messages, equal as JSON values (key order aside: the providers
    read parsed JSON, and prompt caching keys on the rendered prompt; ``cache_control`` markers aside, see
    `_content`). Where it does not, chainsum must have
    compacted right there (request ``i`` holds chainsum content request ``i-1`` did not), or the client compacted
    its own history (``i`` in `client_compacted`), and then no chainsum content from before may come back: the
    client started over and a stale summary would be context from a conversation it no longer has. `numbers` names
    the requests in the messages (their positions by default)."""
    problems: list[str] = []
    name = list(numbers) or list(range(len(histories)))
    restarts = set(client_compacted)
    seen_before_restart: set[str] = set()
    histories = [cast(list[Json], _content(list(h))) for h in histories]
    for i in range(1, len(histories)):
        previous, current = histories[i - 1], histories[i]
        if i in restarts:
            seen_before_restart |= set().union(*(chainsum_marks(h) for h in histories[:i]))
            stale = chainsum_marks(current) & seen_before_restart
            if stale:
                problems.append(f"request {name[i]}: after the client compacted, {len(stale)} stale chainsum messages")
            continue
        if list(current[: len(previous)]) == list(previous):
            continue
        if not chainsum_marks(current) - chainsum_marks(previous):
            where = next(
                (j for j, (a, b) in enumerate(zip(previous, current, strict=False)) if a != b),
                min(len(previous), len(current)),
            )
            problems.append(
                f"request {name[i]}: does not extend request {name[i - 1]} (first difference at message {where}) "
                "and holds no new chainsum summary: stale or rewritten context"
            )
        stale = chainsum_marks(current) & seen_before_restart
        if stale:
            problems.append(f"request {name[i]}: {len(stale)} chainsum message(s) from before the client compacted")
    return problems
