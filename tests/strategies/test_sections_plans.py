"""Exact plans of the `sections` strategy on hand-built chains, one phase at a time."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from chainsum.chain import SUMMARIZED_CONTENT_PREFIX, BodyPair, Chain
from chainsum.messages import Message, ToolCall, ToolResult
from chainsum.strategies import Plan, PlanContext, Summarize
from chainsum.strategies._sections import (
    SectionsConfig,
    SectionsStrategy,
    plan_oversized_pairs,
    plan_qa_pairs,
    plan_sections,
)
from chainsum.tokens import HeuristicCounter

CTX = PlanContext(budget=None, counter=HeuristicCounter())

Shape = tuple[int, int, str, str, tuple[int, ...]]


def system() -> Message:
    return Message.of("system", "You are helpful.")


def human(text: str) -> Message:
    return Message.of("user", text)


def ai(text: str) -> Message:
    return Message.of("assistant", text)


def tool_pair(n: int, content: str = "result") -> list[Message]:
    call = ToolCall(id=f"c{n}", name="search", arguments="{}")
    return [
        Message(role="assistant", parts=(call,)),
        Message(role="tool", parts=(ToolResult(call_id=call.id, name="search", content=content),)),
    ]


def summary_pair(text: str = "older work") -> list[Message]:
    return BodyPair.from_summarization(text).messages()


def shapes(steps: Sequence[object]) -> list[Shape]:
    out: list[Shape] = []
    for s in steps:
        assert isinstance(s, Summarize)
        assert s.reason
        out.append((s.start, s.end, s.form, s.case, s.context))
    return out


def plan(messages: list[Message], config: SectionsConfig) -> Plan:
    return SectionsStrategy(config).plan(messages, CTX)


# section summarization --------------------------------------------------------------------------------------------
def test_every_section_but_the_last_becomes_one_summary() -> None:
    messages = [system(), human("q1"), ai("a1"), *tool_pair(1), human("q2"), ai("a2"), human("q3"), ai("a3")]
    #           0         1            2         3, 4          5            6         7            8
    result = plan(messages, SectionsConfig())
    assert shapes(result.steps) == [
        (2, 5, "pair", "context", (1,)),  # a tool round trip in the section: a Summarization pair
        (6, 7, "completion", "context", (5,)),  # completions only: a Completion with the prefix
    ]
    assert "section" in result.note


def test_keep_qa_sections_keeps_more_recent_sections() -> None:
    messages = [system(), human("q1"), ai("a1"), ai("a1b"), human("q2"), ai("a2"), human("q3"), ai("a3")]
    assert shapes(plan(messages, SectionsConfig(keep_qa_sections=2)).steps) == [(2, 4, "completion", "context", (1,))]
    assert not plan(messages, SectionsConfig(keep_qa_sections=3)).steps
    assert not plan(messages, SectionsConfig(keep_qa_sections=10)).steps


def test_already_summarized_sections_are_skipped_by_kind_and_by_prefix() -> None:
    messages = [
        system(),
        human("q1"),
        *summary_pair(),  # 2, 3: by kind
        human("q2"),
        ai(SUMMARIZED_CONTENT_PREFIX + "what happened"),  # 5: by prefix
        human("q3"),
        ai("a3"),
    ]
    assert not plan_sections(messages, Chain.build(messages), SectionsConfig())


def test_a_summary_followed_by_more_pairs_is_summarized_again() -> None:
    messages = [system(), human("q1"), ai(SUMMARIZED_CONTENT_PREFIX + "s"), ai("more"), human("q2"), ai("a2")]
    assert shapes(plan(messages, SectionsConfig()).steps) == [(2, 4, "completion", "context", (1,))]
    messages = [system(), human("q1"), *summary_pair(), ai("more"), human("q2"), ai("a2")]
    assert shapes(plan(messages, SectionsConfig()).steps) == [(2, 5, "pair", "context", (1,))]


def test_a_section_without_human_is_summarized_as_ai_content() -> None:
    messages = [system(), ai("hello"), ai("again"), human("q"), ai("a")]
    assert shapes(plan(messages, SectionsConfig()).steps) == [(1, 3, "completion", "ai", ())]


def test_the_current_turn_before_a_waiting_human_message_is_kept() -> None:
    messages = [system(), human("q1"), ai("a1"), human("q2"), ai("a2"), *tool_pair(2), human("q3")]
    # the last section (q3) has no body yet: the pair answering q2 is still the chain's last pair
    assert shapes(plan(messages, SectionsConfig()).steps) == [(2, 3, "completion", "context", (1,))]


def test_single_section_and_empty_histories_plan_nothing_here() -> None:
    assert not plan([], SectionsConfig())
    messages = [system(), human("q"), ai("a"), ai("b")]
    assert plan(messages, SectionsConfig()).note.startswith("every section")


def test_malformed_history_gets_an_empty_plan_with_the_reason() -> None:
    messages = [system(), human("q"), *tool_pair(1)[:1], ai("no result came")]  # repair would add a result
    result = plan(messages, SectionsConfig())
    assert not result and "well-formed" in result.note


# oversized body pairs ---------------------------------------------------------------------------------------------
def test_oversized_pairs_but_never_the_last_pair() -> None:
    big = "x" * 300
    messages = [
        system(),
        human("q"),  # 1
        *tool_pair(1, big),  # 2, 3: oversized tool round trip -> pair
        ai("small"),  # 4
        ai(big),  # 5: oversized completion -> completion
        ai(SUMMARIZED_CONTENT_PREFIX + big),  # 6: a summary already
        *summary_pair(big),  # 7, 8: a summary already
        ai(big),  # 9: the last pair: never
    ]
    config = SectionsConfig(max_bp_bytes=200, last_sec_bytes=100_000)
    result = plan(messages, config)
    assert shapes(result.steps) == [(2, 4, "pair", "context", (1,)), (5, 6, "completion", "context", (1,))]
    assert "oversized" in result.note


def test_oversized_pairs_only_in_the_last_sections_unless_asked() -> None:
    big = "x" * 300
    messages = [system(), human("q1"), ai(big), ai("end1"), human("q2"), ai(big), ai("end2")]
    chain = Chain.build(messages)
    config = SectionsConfig(max_bp_bytes=200, last_sec_bytes=100_000)
    assert shapes(plan_oversized_pairs(messages, chain, config, [1])) == [(5, 6, "completion", "context", (4,))]
    assert shapes(plan_oversized_pairs(messages, chain, config)) == [
        (2, 3, "completion", "context", (1,)),
        (5, 6, "completion", "context", (4,)),
    ]
    # through the strategy, section 1 is summarized whole first; after that only the last section is looked at
    assert shapes(plan(messages, config).steps) == [(2, 4, "completion", "context", (1,))]


def test_preserve_last_off_skips_oversized_pairs_and_rotation() -> None:
    big = "x" * 300
    messages = [system(), human("q"), ai(big), ai(big), ai(big)]
    config = SectionsConfig(preserve_last=False, max_bp_bytes=200, last_sec_bytes=300)
    assert not plan(messages, config)


# last-section rotation --------------------------------------------------------------------------------------------
def test_rotation_summarizes_the_oldest_pairs_and_keeps_the_reserve() -> None:
    # header: "q" (1 byte); each completion 100 bytes; limit 500, reserve 25 % -> 375 for header + kept pairs
    messages = [system(), human("q"), *[ai(str(i) * 100) for i in range(8)]]
    chain = Chain.build(messages)
    assert chain.sections[0].size == len("You are helpful.") + 1 + 800
    config = SectionsConfig(last_sec_bytes=500, max_bp_bytes=1000)
    result = plan(messages, config)
    # header 17 + last 100 + 2 more = 317 <= 375; a third would make 417: pairs 0..4 are summarized
    assert shapes(result.steps) == [(2, 7, "completion", "context", (1,))]
    assert "rotation" in result.note


def test_rotation_of_pairs_with_tools_is_a_summarization_pair() -> None:
    messages = [system(), human("q"), *tool_pair(1, "r" * 200), ai("a" * 200), ai("b" * 200), ai("c")]
    config = SectionsConfig(last_sec_bytes=300, max_bp_bytes=1000)
    assert shapes(plan(messages, config).steps) == [(2, 5, "pair", "context", (1,))]


def test_rotation_leaves_a_lone_earlier_summary_alone() -> None:
    messages = [system(), human("q"), ai(SUMMARIZED_CONTENT_PREFIX + "s" * 400), ai("b" * 200)]
    config = SectionsConfig(last_sec_bytes=300, max_bp_bytes=100)
    assert not plan(messages, config)


def test_rotation_covers_the_last_keep_qa_sections() -> None:
    messages = [system(), human("q1"), ai("a" * 200), ai("b" * 200), human("q2"), ai("c" * 200), ai("d" * 200)]
    #           0         1            2              3              4             5              6
    config = SectionsConfig(last_sec_bytes=300, max_bp_bytes=1000, keep_qa_sections=2)
    assert shapes(plan(messages, config).steps) == [
        (5, 6, "completion", "context", (4,)),  # the last section first, as the spec's loop goes
        (2, 3, "completion", "context", (1,)),
    ]


def test_the_section_before_a_waiting_human_message_is_rotated() -> None:
    messages = [system(), human("q1"), ai("a" * 200), ai("b" * 200), ai("c"), human("q2")]
    config = SectionsConfig(last_sec_bytes=300, max_bp_bytes=1000)
    # section 1 holds the chain's last pair: it is not summarized whole, it is rotated
    # (threshold 225: header 18 + last 1 + "b" 200 = 219 fit; "a" is summarized)
    assert shapes(plan(messages, config).steps) == [(2, 3, "completion", "context", (1,))]
    assert "rotation" in plan(messages, config).note


def test_a_leading_assistant_message_opens_a_headerless_section() -> None:
    messages = [ai("hello"), ai("again"), human("q"), ai("a")]
    assert shapes(plan(messages, SectionsConfig()).steps) == [(0, 2, "completion", "ai", ())]


def test_oversized_pairs_come_before_rotation() -> None:
    messages = [system(), human("q"), ai("a" * 400), ai("b" * 100), ai("c" * 100)]
    config = SectionsConfig(last_sec_bytes=500, max_bp_bytes=300)
    assert shapes(plan(messages, config).steps) == [(2, 3, "completion", "context", (1,))]
    assert "oversized" in plan(messages, config).note


# QA pairs ---------------------------------------------------------------------------------------------------------
def _qa_history(pair: bool = False) -> list[Message]:
    out = [system()]
    for i in range(5):
        out.append(human(f"question {i}"))
        out.extend(summary_pair(f"answer {i}") if pair and i == 1 else [ai(SUMMARIZED_CONTENT_PREFIX + f"a{i}")])
    out.append(human("question 5"))
    out.append(ai("answer 5"))
    return out


def test_qa_merges_the_oldest_sections_keeping_the_first_question() -> None:
    messages = _qa_history()  # sections: (1, 2) (3, 4) (5, 6) (7, 8) (9, 10) (11, 12)
    config = SectionsConfig(use_qa=True, max_qa_sections=4, preserve_last=False)
    result = plan(messages, config)
    # at most 4 sections: 3 kept + the summary section; the oldest 3 are merged
    assert shapes(result.steps) == [(2, 7, "completion", "context", (1,))]
    assert "QA" in result.note


def test_qa_with_human_summarization_makes_a_user_summary_and_an_ai_summary() -> None:
    messages = _qa_history(pair=True)
    config = SectionsConfig(use_qa=True, max_qa_sections=4, summarize_human_in_qa=True, preserve_last=False)
    assert shapes(plan(messages, config).steps) == [
        (1, 2, "record", "human", (3, 6)),  # every merged question, summarized together
        (2, 8, "pair", "context", (1,)),  # a Summarization pair among the merged: the summary is one
    ]


def test_qa_byte_limit_and_keep_qa_sections() -> None:
    messages = _qa_history()
    config = SectionsConfig(use_qa=True, max_qa_bytes=30, preserve_last=False)
    # every section is more than 15 bytes: only the last fits, the other 5 are merged
    assert shapes(plan_qa_pairs(messages, Chain.build(messages), config)) == [(2, 11, "completion", "context", (1,))]
    config = SectionsConfig(use_qa=True, max_qa_bytes=30, keep_qa_sections=3, preserve_last=False)
    assert shapes(plan_qa_pairs(messages, Chain.build(messages), config)) == [(2, 7, "completion", "context", (1,))]


def test_qa_needs_two_sections_to_merge_and_a_limit_exceeded() -> None:
    messages = _qa_history()
    assert not plan(messages, SectionsConfig(use_qa=True, preserve_last=False))  # 6 sections, 10 allowed
    assert not plan(messages, SectionsConfig(use_qa=True, max_qa_sections=6, preserve_last=False))
    assert not plan(messages, SectionsConfig(use_qa=True, max_qa_sections=5, keep_qa_sections=5, preserve_last=False))


def test_qa_when_the_first_section_has_no_human() -> None:
    messages = [system(), ai(SUMMARIZED_CONTENT_PREFIX + "s"), *_qa_history()[1:]]
    config = SectionsConfig(use_qa=True, max_qa_sections=4, summarize_human_in_qa=True, preserve_last=False)
    assert shapes(plan(messages, config).steps) == [(1, 8, "completion", "ai", ())]  # 7 sections, 4 merged


# configuration ----------------------------------------------------------------------------------------------------
def test_config_defaults_are_the_specs() -> None:
    c = SectionsConfig()
    assert (c.preserve_last, c.use_qa, c.summarize_human_in_qa) == (True, False, False)
    assert (c.last_sec_bytes, c.max_bp_bytes, c.max_qa_bytes) == (50 * 1024, 16 * 1024, 64 * 1024)
    assert (c.max_qa_sections, c.keep_qa_sections, c.last_section_reserve_percent) == (10, 1, 25)
    assert SectionsStrategy().name == "sections"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"last_sec_bytes": 0},
        {"max_bp_bytes": -1},
        {"max_qa_sections": 0},
        {"max_qa_bytes": 0},
        {"keep_qa_sections": 0},
        {"last_section_reserve_percent": 100},
        {"last_section_reserve_percent": -1},
    ],
)
def test_config_rejects_values_out_of_range(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="SectionsConfig"):
        SectionsConfig(**kwargs)  # pyright: ignore[reportArgumentType]
