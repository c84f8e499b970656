"""DESIGN's invariants for every strategy (ratio, mask, auto, sections, safe-split), over generated histories
and the corpus conversations (every 10th of each corpus by default, every one under the thorough profile):
valid for the provider without the final repair having to fix tool pairing, system messages verbatim, the last
body pair intact, never larger, deterministic."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings

from chainsum import formats
from chainsum.chain import Chain
from chainsum.executor import compact_sync
from chainsum.messages import Message, Text
from chainsum.rules import repair, validate
from chainsum.strategies import (
    AutoStrategy,
    MaskStrategy,
    RatioStrategy,
    SafeSplitConfig,
    SafeSplitStrategy,
    SectionsConfig,
    SectionsStrategy,
    Strategy,
)
from chainsum.testing import ChainConfig, generate_chain, generate_large_chain, iter_documents
from chainsum.tokens import HeuristicCounter
from generators import chain_configs, histories, well_formed_histories
from sampling import every_per_corpus, examples
from strategies.strategies_support import fixed_summary

PROPERTY = settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROVIDERS = ("openai", "anthropic")
PAIRING_PASSES = {"gather-displaced-results", "drop-orphan-results", "add-missing-results", "separate-tool-results"}
COUNTER = HeuristicCounter()


def small_strategies() -> list[Strategy]:
    return [
        RatioStrategy(summary_ratio=0.5, preserve_recent=2),
        MaskStrategy(keep_last_turns=0, clip_chars=40, head=10, tail=10),
        AutoStrategy(keep_last_turns=0, clip_chars=40, head=10, tail=10, min_block_tokens=5),
        SectionsStrategy(SectionsConfig(last_sec_bytes=400, max_bp_bytes=120, max_qa_bytes=800, use_qa=True)),
        SafeSplitStrategy(SafeSplitConfig(conversational_token_threshold=60, summary_window=4)),
    ]


def current_tail(messages: Sequence[Message]) -> list[Message]:
    flat = Chain.build(messages, repair=True, allow_pending_tail=True).messages()
    for i in range(len(flat) - 1, -1, -1):
        if flat[i].role == "assistant":
            return flat[i:]
    return []


def input_pairing_problems(messages: Sequence[Message], provider: str) -> set[str]:
    flat = Chain.build(messages, repair=True, allow_pending_tail=True).messages()
    return {p.rule for p in validate(flat, provider)} & {"tool-result-missing", "orphan-tool-result"}


def check(messages: list[Message], strategy: Strategy, provider: str, *, tail_intact: bool) -> None:
    before = list(messages)
    tokens = COUNTER.count_messages(messages)
    budget = None if strategy.name in ("ratio", "sections") else tokens // 2
    result = compact_sync(
        messages, strategy, summarizer=fixed_summary, counter=COUNTER, budget=budget, provider=provider
    )
    assert messages == before
    out = result.messages
    assert result.tokens_after <= result.tokens_before
    if not result.changed:
        assert out == tuple(messages)
        return
    assert result.valid, result.problems
    fixed = {a.pass_name for a in result.provider_repairs} & PAIRING_PASSES
    if not input_pairing_problems(messages, provider):  # a pending call in the input's last turn is the input's
        assert not fixed, [str(a) for a in result.provider_repairs]
    # system messages verbatim (folded to a "[system] " user turn where only leading ones are allowed)
    text = "\n".join(m.text for m in out)
    # what the provider itself requires (foreign blocks dropped, ...) is the reference, not the raw input
    reference = repair(Chain.build(messages, repair=True, allow_pending_tail=True).messages(), provider).messages
    originals = [m for m in reference if m.role == "system" and m.text.strip()]
    for m in originals:
        assert m.text in text
    # the raw input's system text too, part by part: only blank parts may go (providers reject empty text blocks)
    for m in messages:
        if m.role == "system":
            assert all(p.text in text for p in m.parts if isinstance(p, Text) and p.text.strip())
    if provider == "openai":
        kept = iter(out)
        assert all(any(o == m for o in kept) for m in originals), "system messages out of order or changed"
    if tail_intact:
        tail = current_tail(messages)
        assert list(out[len(out) - len(tail) :]) == tail
    again = compact_sync(
        messages, strategy, summarizer=fixed_summary, counter=COUNTER, budget=budget, provider=provider
    )
    assert again.messages == out


@PROPERTY
@given(well_formed_histories())
def test_well_formed_histories(messages: list[Message]) -> None:
    for strategy in small_strategies():
        for provider in PROVIDERS:
            check(messages, strategy, provider, tail_intact=True)


@PROPERTY
@given(histories())
def test_any_histories(messages: list[Message]) -> None:
    for strategy in small_strategies():
        for provider in PROVIDERS:
            check(messages, strategy, provider, tail_intact=False)


@PROPERTY
@given(chain_configs())
def test_generated_chains(config: ChainConfig) -> None:
    messages = generate_chain(config)
    for strategy in small_strategies():
        for provider in PROVIDERS:
            check(messages, strategy, provider, tail_intact=config.include_all_tool_responses)


@pytest.mark.parametrize("seed", range(4))
def test_large_generated_chains(seed: int) -> None:
    messages = generate_large_chain(120, seed=seed)
    for strategy in [RatioStrategy(), MaskStrategy(clip_chars=1000, head=200, tail=200), AutoStrategy()]:
        for provider in PROVIDERS:
            check(messages, strategy, provider, tail_intact=True)


@pytest.mark.corpus
@pytest.mark.slow
def test_every_corpus_conversation() -> None:
    docs = every_per_corpus(iter_documents(), 10)
    if not docs:
        pytest.skip("the shared corpora are not available")
    strategies: list[Strategy] = [
        RatioStrategy(),
        MaskStrategy(keep_last_turns=1),
        AutoStrategy(),
        SectionsStrategy(SectionsConfig(last_sec_bytes=8 * 1024, max_bp_bytes=4 * 1024)),
        SafeSplitStrategy(SafeSplitConfig(conversational_token_threshold=4000, summary_window=20)),
    ]
    for doc in docs:
        messages = list(formats.load(doc.data, doc.format).messages)
        for strategy in strategies:
            for provider in PROVIDERS:
                try:
                    check(messages, strategy, provider, tail_intact=provider == "openai")
                except AssertionError as exc:
                    raise AssertionError(f"{doc.label} {strategy.name} {provider}: {exc}") from exc
