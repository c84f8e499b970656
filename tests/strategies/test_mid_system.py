"""System messages in the middle of a history (OpenAI's ``system``/``developer`` anywhere, Anthropic's
mid-conversation beta that Claude Code sends): instructions like the leading system prompt. Never summarized or
edited, kept verbatim and in order, and never in the way of a compaction: a span reaches over one and keeps it
right after the record."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainsum.chain import is_record_message
from chainsum.executor import compact_sync
from chainsum.messages import Message
from chainsum.strategies import (
    AutoStrategy,
    MaskStrategy,
    PlanContext,
    RatioStrategy,
    SafeSplitConfig,
    SafeSplitStrategy,
    SectionsConfig,
    SectionsStrategy,
    Strategy,
    Summarize,
)
from chainsum.tokens import HeuristicCounter
from generators import well_formed_histories
from sampling import examples
from strategies.strategies_support import CharCounter, chat_history, fixed_summary

PROPERTY = settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
COUNTER = HeuristicCounter()
INLINE = {"anthropic": {"inline": True}}


def instruction(text: str, *, inline: bool = False) -> Message:
    """A user's system message in the middle; `inline`: read from Anthropic's own list (the beta)."""
    return Message.of("system", text, extras=INLINE if inline else {})


def early_instruction_chat(turns: int) -> list[Message]:
    """Claude Code's shape: an instruction right after the first question, another later on."""
    chat = chat_history(turns, size=800)
    chat.insert(2, instruction("Plan mode is on: propose before you edit."))
    chat.insert(len(chat) // 2, instruction("Plan mode is off."))
    return chat


def systems(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.role == "system"]


def test_an_early_instruction_does_not_stop_auto_from_summarizing_past_it() -> None:
    messages = early_instruction_chat(12)
    total = CharCounter().count_messages(messages)
    result = compact_sync(messages, AutoStrategy(), summarizer=fixed_summary, counter=CharCounter(), budget=total // 3)
    assert result.changed and result.tokens_after <= total // 3
    (step,) = [s for p in result.plans for s in p.steps]
    assert isinstance(step, Summarize) and step.start < 2 < len(messages) // 2 < step.end
    assert 2 in step.keep and len(messages) // 2 in step.keep  # reached over, kept aside
    out = result.messages
    assert systems(out) == systems(messages) and is_record_message(out[1])
    assert out[2:4] == (messages[2], messages[len(messages) // 2])  # right after the record, in their order
    assert result.valid


def test_ratio_keeps_instructions_too_and_a_second_pass_keeps_them_after_the_record() -> None:
    messages = early_instruction_chat(16)
    first = compact_sync(messages, RatioStrategy(), summarizer=fixed_summary, counter=CharCounter(), budget=None)
    assert first.changed and systems(first.messages) == systems(messages)
    grown = [*first.messages, *chat_history(8, size=800)[1:]]
    total = CharCounter().count_messages(grown)
    again = compact_sync(grown, AutoStrategy(), summarizer=fixed_summary, counter=CharCounter(), budget=total // 2)
    assert again.changed and systems(again.messages) == systems(messages)
    assert sum(1 for m in again.messages if is_record_message(m)) == 1


def test_the_layout_keeps_every_instruction_of_the_region_with_the_newest_user_message() -> None:
    messages = early_instruction_chat(6)
    plan = AutoStrategy().plan(messages, PlanContext(counter=CharCounter(), budget=10))
    summaries = [s for s in plan.steps if isinstance(s, Summarize)]
    assert all(messages[k].role in ("system", "user") for s in summaries for k in s.keep)


def strategies() -> list[Strategy]:
    return [
        RatioStrategy(summary_ratio=0.5, preserve_recent=2),
        MaskStrategy(keep_last_turns=0, clip_chars=40, head=10, tail=10),
        AutoStrategy(keep_last_turns=0, clip_chars=40, head=10, tail=10, min_block_tokens=5),
        SectionsStrategy(SectionsConfig(last_sec_bytes=400, max_bp_bytes=120, max_qa_bytes=800, use_qa=True)),
        SafeSplitStrategy(SafeSplitConfig(conversational_token_threshold=60, summary_window=4)),
    ]


@st.composite
def histories_with_instructions(draw: st.DrawFn) -> list[Message]:
    """Well-formed histories with system messages inserted at random places (never between a call and its
    results, where no provider takes one)."""
    messages = list(draw(well_formed_histories()))
    for k in range(draw(st.integers(1, 4))):
        places = [i for i in range(1, len(messages) + 1) if i == len(messages) or messages[i].role != "tool"]
        at = draw(st.sampled_from(places))
        messages.insert(at, instruction(f"instruction {k}: " + "keep this " * draw(st.integers(1, 6))))
    return messages


@PROPERTY
@given(histories_with_instructions(), st.booleans())
def test_every_strategy_keeps_every_instruction_verbatim_and_in_order(messages: list[Message], inline: bool) -> None:
    """On OpenAI (system messages anywhere) and on Anthropic with the beta's messages (marked inline), each system
    message comes out as the very message it was, in its order: nothing folded, merged or summarized."""
    provider = "anthropic" if inline else "openai"
    if inline:
        messages = [instruction(m.text, inline=True) if m.role == "system" and i else m for i, m in enumerate(messages)]
    budget = COUNTER.count_messages(messages) // 2
    for strategy in strategies():
        result = compact_sync(
            messages, strategy, summarizer=fixed_summary, counter=COUNTER, budget=budget, provider=provider
        )
        assert systems(result.messages) == systems(messages), strategy.name
        assert not any(m.text.startswith("[system]") for m in result.messages)
