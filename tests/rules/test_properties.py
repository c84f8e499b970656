"""The rules' invariants over generated histories, well-formed and malformed, for every provider."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings

from chainsum.chain import Chain
from chainsum.messages import Message, Text, ToolCall
from chainsum.rules import PROVIDERS, RULES, repair, validate
from generators import histories, well_formed_histories
from sampling import examples

PROPERTY = settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _texts(messages: Sequence[Message]) -> str:
    return "\x00".join(p.text for m in messages for p in m.parts if isinstance(p, Text))


def _assistant_calls(messages: Sequence[Message]) -> Counter[tuple[str, str]]:
    return Counter((c.name, c.arguments) for m in messages if m.role == "assistant" for c in m.tool_calls)


@PROPERTY
@given(histories())
def test_repaired_histories_are_valid(messages: list[Message]) -> None:
    for provider in PROVIDERS:
        repaired = repair(messages, provider)
        assert validate(repaired.messages, provider) == [], provider


@PROPERTY
@given(histories())
def test_repair_is_idempotent(messages: list[Message]) -> None:
    for provider in PROVIDERS:
        once = repair(messages, provider).messages
        twice = repair(once, provider)
        assert twice.messages is once and twice.actions == (), provider


@PROPERTY
@given(histories())
def test_a_valid_history_is_returned_as_is(messages: list[Message]) -> None:
    given_tuple = tuple(messages)
    for provider in PROVIDERS:
        if validate(given_tuple, provider) == []:
            repaired = repair(given_tuple, provider)
            assert repaired.messages is given_tuple and repaired.actions == (), provider
        else:
            assert repair(given_tuple, provider).actions, provider


@PROPERTY
@given(well_formed_histories())
def test_well_formed_histories_are_valid_everywhere(messages: list[Message]) -> None:
    for provider in PROVIDERS:
        assert validate(messages, provider) == [], provider


@PROPERTY
@given(histories())
def test_no_text_or_tool_call_is_lost(messages: list[Message]) -> None:
    """Only blank text is ever removed; calls outside assistant turns survive as folded text, the others as calls
    (ids may be renamed)."""
    for provider in PROVIDERS:
        out = repair(messages, provider).messages
        text = _texts(out)
        for message in messages:
            for part in message.parts:
                if isinstance(part, Text) and part.text.strip():
                    assert part.text in text, provider
                elif isinstance(part, ToolCall) and message.role != "assistant":
                    assert f"{part.name}({part.arguments})" in text, provider
        assert not _assistant_calls(messages) - _assistant_calls(out), provider


@PROPERTY
@given(histories())
def test_every_reported_rule_is_documented(messages: list[Message]) -> None:
    for provider in PROVIDERS:
        for problem in validate(messages, provider):
            assert problem.rule in RULES
            assert 0 <= problem.index < len(messages)


@PROPERTY
@given(histories())
def test_the_chain_layer_pairs_the_repaired_history_the_same_way(messages: list[Message]) -> None:
    """The chain tree finds every call answered and every result answering one (its rules 3, 4 and 6)."""
    for provider in PROVIDERS:
        chain = Chain.build(repair(messages, provider).messages, repair=True)
        assert [r for r in chain.repairs if r.rule in (3, 4, 6)] == [], provider
