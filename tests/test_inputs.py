"""What the top-level functions accept as a history: `Message` objects, or wire message dicts of any format (read
by `chainsum.formats.as_messages`); anything else is a chainsum error naming the index and field, never an
`AttributeError`. And the shared budget rule (`chainsum.executor.check_budget`)."""

from __future__ import annotations

import math
from typing import Any

import pytest

import chainsum
from chainsum.errors import ChainsumError

OPENAI = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "hi"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    },
    {"role": "user", "content": "are you there?"},
]
ANTHROPIC = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]},
    {"role": "user", "content": "are you there?"},
]


def _compact(history: Any, budget: Any = 10) -> chainsum.CompactResult:
    return chainsum.compact_sync(
        history,
        chainsum.AutoStrategy(),
        summarizer=chainsum.ExtractiveSummarizer(),
        counter=chainsum.HeuristicCounter(),
        budget=budget,
    )


@pytest.mark.parametrize("history", [OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
def test_validate_repair_and_compact_take_wire_dicts(history: list[dict[str, Any]]) -> None:
    messages = chainsum.load(history).messages
    assert chainsum.validate(history, "openai") == chainsum.validate(messages, "openai")
    problems = chainsum.validate(history, "anthropic")
    assert [p.rule for p in problems] == ["tool-result-missing"]
    repaired = chainsum.repair(history, "anthropic")
    assert repaired.messages == chainsum.repair(messages, "anthropic").messages
    assert chainsum.validate(repaired.messages, "anthropic") == []
    result = _compact(history)
    assert result.messages == _compact(messages).messages


def test_a_whole_request_document_is_taken_too() -> None:
    doc = {"system": "be brief", "messages": ANTHROPIC}
    repaired = chainsum.repair(doc, "anthropic")
    assert repaired.messages[0].role == "system" and repaired.messages[0].text == "be brief"


@pytest.mark.parametrize(
    ("history", "where"),
    [
        ([{"role": "user", "content": "hi"}, {"content": "no role"}], r"at \[1\]\.role: missing role"),
        ([chainsum.Message.of("user", "hi"), {"role": "user", "content": "x"}], r"at \[1\]: expected a chainsum"),
        ([{"role": "user", "content": "hi"}, "hello"], r"at \[1\]: expected a message dict"),
        ([42], r"at \[0\]: expected a message dict"),
    ],
)
@pytest.mark.parametrize("call", ["validate", "repair", "compact_sync"])
def test_what_cannot_be_read_is_a_chainsum_error_naming_where(history: list[Any], where: str, call: str) -> None:
    with pytest.raises(ChainsumError, match=where):
        if call == "validate":
            chainsum.validate(history, "openai")
        elif call == "repair":
            chainsum.repair(history, "openai")
        else:
            _compact(history)


def test_a_budget_given_as_text_is_read() -> None:
    assert _compact(OPENAI, "100").budget == 100
    assert _compact(OPENAI, " 1_000 ").budget == 1000


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        (math.nan, "budget must be a whole number of tokens, got nan"),
        (math.inf, "budget must be a whole number of tokens, got inf"),
        ("abc", "budget must be a whole number of tokens, got 'abc'"),
        ("1e3", "budget must be a whole number of tokens, got '1e3'"),
        (-1, "budget must be >= 0 tokens, got -1"),
        (12.5, "budget must be a whole number of tokens, got 12.5"),
        ([100], "budget must be a whole number of tokens, got list"),
    ],
)
def test_a_bad_budget_is_a_clear_value_error(budget: Any, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message.replace('(', '[(]')}$"):
        _compact(OPENAI, budget)
