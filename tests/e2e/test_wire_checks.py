"""The end-to-end suite's own checker, checked: each rule catches the history a provider refuses and passes the one it
accepts, so a green end-to-end run means something. These run in the default suite (no client needed)."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.wire_checks import anthropic_problems, chat_problems, continuity_problems, responses_problems

Json = dict[str, Any]


def _use(call: str) -> Json:
    return {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "ls"}}


def _result(call: str, text: str = "out") -> Json:
    return {"type": "tool_result", "tool_use_id": call, "content": text}


def _text(text: str) -> Json:
    return {"type": "text", "text": text}


def _anthropic(*messages: Json) -> Json:
    return {"model": "m", "messages": list(messages)}


VALID_ANTHROPIC = _anthropic(
    {"role": "user", "content": "do it"},
    {"role": "assistant", "content": [_text("ok"), _use("a"), _use("b")]},
    {"role": "user", "content": [_result("b"), _result("a"), _text("more")]},
    {"role": "user", "content": "and then"},
    {"role": "assistant", "content": [_use("c")]},
    {"role": "user", "content": [_result("c")]},
)


def test_anthropic_accepts_a_valid_tool_loop() -> None:
    assert anthropic_problems(VALID_ANTHROPIC) == []


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (_anthropic({"role": "assistant", "content": "hi"}), "first message must be a user message"),
        (
            _anthropic({"role": "user", "content": "x"}, {"role": "assistant", "content": [_use("a")]}),
            "without tool_result blocks",
        ),
        (
            _anthropic(
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": [_use("a")]},
                {"role": "user", "content": [_text("first"), _result("a")]},
            ),
            "comes after other content",
        ),
        (
            _anthropic(
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": [_use("a")]},
                {"role": "user", "content": [_result("a")]},
                {"role": "assistant", "content": "done"},
                {"role": "user", "content": [_result("a")]},
            ),
            "answers no tool_use of the previous message",
        ),
        (_anthropic({"role": "user", "content": [_result("z")]}), "answers no tool_use"),
        (_anthropic({"role": "user", "content": [_text(" ")]}), "non-whitespace text"),
        (_anthropic({"role": "user", "content": []}), "empty content"),
        (
            _anthropic(
                {"role": "user", "content": "x"},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}, _text("a")]},
            ),
            "without its signature",
        ),
        (
            _anthropic(
                {
                    "role": "user",
                    "content": [{**_text(str(i)), "cache_control": {"type": "ephemeral"}} for i in range(5)],
                }
            ),
            "5 blocks with cache_control",
        ),
    ],
)
def test_anthropic_finds_what_the_api_refuses(body: Json, needle: str) -> None:
    problems = anthropic_problems(body)
    assert any(needle in p for p in problems), problems


def _fc(call: str) -> Json:
    return {"type": "function_call", "call_id": call, "name": "exec_command", "arguments": "{}"}


def _fco(call: str) -> Json:
    return {"type": "function_call_output", "call_id": call, "output": "out"}


def _user(text: str) -> Json:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def test_responses_accepts_a_valid_tool_loop() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"}
    items = [_user("go"), reasoning, _fc("a"), _fco("a"), {"role": "user", "content": "recalled"}, _fc("b"), _fco("b")]
    assert responses_problems({"input": items}) == []


@pytest.mark.parametrize(
    ("items", "needle"),
    [
        ([_user("go"), _fc("a")], "no tool output found for function call a"),
        ([_user("go"), _fco("a")], "no tool call found for output with call_id a"),
        ([_user("go"), {"type": "reasoning", "summary": []}], "without its required following item"),
        ([_user("go"), {"type": "reasoning", "summary": []}, _user("x")], "followed by a user message"),
        ([_user("")], "empty text"),
        ([_user("go"), _fc("a"), _fco("a"), _fc("a"), _fco("a")], "used twice"),
    ],
)
def test_responses_finds_what_the_api_refuses(items: list[Json], needle: str) -> None:
    problems = responses_problems({"input": items})
    assert any(needle in p for p in problems), problems


def _calls(*ids: str) -> Json:
    calls = [{"id": i, "type": "function", "function": {"name": "run_shell", "arguments": "{}"}} for i in ids]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def _tool(call: str) -> Json:
    return {"role": "tool", "tool_call_id": call, "content": "out"}


def test_chat_accepts_a_valid_tool_loop() -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}, _calls("a", "b"), _tool("b")]
    messages += [_tool("a"), {"role": "assistant", "content": "done"}]
    assert chat_problems({"messages": messages}) == []


@pytest.mark.parametrize(
    ("messages", "needle"),
    [
        ([{"role": "user", "content": "u"}, _calls("a")], "did not have response messages"),
        ([{"role": "user", "content": "u"}, _calls("a"), {"role": "user", "content": "x"}], "did not have response"),
        ([{"role": "user", "content": "u"}, _tool("a")], "answers no pending tool call"),
        ([{"role": "user", "content": ""}], "empty user content"),
        ([{"role": "user", "content": "u"}, {"role": "assistant", "content": None}], "without content or tool calls"),
    ],
)
def test_chat_finds_what_the_api_refuses(messages: list[Json], needle: str) -> None:
    problems = chat_problems({"messages": messages})
    assert any(needle in p for p in problems), problems


A = {"role": "user", "content": "task"}
B = {"role": "assistant", "content": "step one"}
C = {"role": "user", "content": "output one"}
D = {"role": "assistant", "content": "step two"}
RECORD = {"role": "user", "content": "[chainsum record of the earlier conversation, not instructions: ...] one"}
RECORD_2 = {"role": "user", "content": "[chainsum record of the earlier conversation, not instructions: ...] two"}


def test_continuity_accepts_growth_and_compactions() -> None:
    cached = {"role": "user", "content": [{"type": "text", "text": "t", "cache_control": {"type": "ephemeral"}}]}
    moved = {"role": "user", "content": [{"type": "text", "text": "t"}]}
    histories = [[A], [A, B, cached], [A, B, moved, D], [RECORD, D], [RECORD, D, C]]
    assert continuity_problems(histories) == []


def test_continuity_finds_rewritten_or_stale_context() -> None:
    assert "does not extend request 0" in continuity_problems([[A, B], [A, D]])[0]
    # the compacted history, then the uncompacted one again: stale context
    assert continuity_problems([[A, B, C], [RECORD, C], [A, B, C, D]])
    # a summary dropped between compactions
    assert continuity_problems([[RECORD, C], [C, D]])


def test_continuity_after_the_client_compacted() -> None:
    assert continuity_problems([[RECORD, C], [A], [A, B]], client_compacted=[1]) == []
    problems = continuity_problems([[RECORD, C], [RECORD, A]], client_compacted=[1])
    assert "stale chainsum" in problems[0]
    assert continuity_problems([[RECORD, C], [A], [RECORD_2, A, B]], client_compacted=[1]) == []
