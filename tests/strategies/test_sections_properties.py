"""Properties of the `sections` planners over generated chains, and the strategy through the executor."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainsum.chain import Chain, safe_cuts, summary_messages
from chainsum.executor import compact_sync
from chainsum.executor._check import check_plan as _check_plan
from chainsum.formats import load
from chainsum.messages import Message
from chainsum.rules import validate
from chainsum.strategies import PlanContext, Summarize
from chainsum.strategies._sections import (
    SectionsConfig,
    SectionsStrategy,
    plan_last_section_rotation,
    plan_oversized_pairs,
    plan_qa_pairs,
    plan_sections,
)
from chainsum.strategies._sections_common import Layout
from chainsum.testing import ChainConfig, corpora_root, generate_chain, iter_documents
from chainsum.tokens import HeuristicCounter
from generators import well_formed_histories
from sampling import every, examples

COUNTER = HeuristicCounter()
CTX = PlanContext(budget=None, counter=COUNTER)


@st.composite
def generated_histories(draw: st.DrawFn) -> list[Message]:
    sections = draw(st.integers(1, 6))
    pairs = draw(st.lists(st.integers(1, 4), min_size=sections, max_size=sections))
    total = sum(pairs)
    return generate_chain(
        ChainConfig(
            include_system=draw(st.booleans()),
            sections=sections,
            body_pairs_per_section=pairs,
            tools_for_body_pairs=draw(st.lists(st.booleans(), min_size=total, max_size=total)),
            tool_calls_per_body_pair=draw(st.lists(st.integers(1, 3), min_size=total, max_size=total)),
        )
    )


histories = st.one_of(generated_histories(), well_formed_histories(max_turns=7))

configs = st.builds(
    SectionsConfig,
    preserve_last=st.booleans(),
    use_qa=st.booleans(),
    summarize_human_in_qa=st.booleans(),
    last_sec_bytes=st.integers(1, 400),
    max_bp_bytes=st.integers(1, 120),
    max_qa_sections=st.integers(1, 6),
    max_qa_bytes=st.integers(1, 600),
    keep_qa_sections=st.integers(1, 4),
    last_section_reserve_percent=st.integers(0, 99),
)


def check_steps(messages: Sequence[Message], steps: Sequence[Summarize], *, pair_level: bool) -> None:
    """Every invariant a plan of this strategy must hold on `messages`."""
    chain = Chain.build(messages, allow_pending_tail=True)
    spans = Layout.of(chain).spans
    n = len(messages)
    cuts = safe_cuts(messages)
    bounds: set[int] = set()
    for sp in spans:
        bounds.update((sp.body_start, sp.end, *sp.pair_starts))
        if sp.human is not None:
            bounds.add(sp.human)
    with_body = [sp for sp in spans if sp.section.body]
    current_turn = with_body[-1].pair_starts[-1] if with_body else n
    covered: set[int] = set()
    for step in steps:
        assert 0 <= step.start < step.end <= n
        assert cuts[step.start] and cuts[step.end]
        assert step.start in bounds and step.end in bounds  # whole body pairs or whole sections
        span = range(step.start, step.end)
        assert all(messages[i].role != "system" for i in span)
        assert step.end <= current_turn  # the current turn (the chain's last pair) is never touched
        assert not covered.intersection(span)
        covered.update(span)
        assert all(i not in span and messages[i].role == "user" for i in step.context)
        if pair_level:  # inside one section's body, never its last pair
            sp = next(sp for sp in spans if sp.body_start <= step.start < sp.end)
            assert step.start in sp.pair_starts and step.end <= sp.pair_starts[-1]
            assert step.end in (*sp.pair_starts, sp.end)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories, configs)
def test_every_planner_respects_the_invariants(messages: list[Message], config: SectionsConfig) -> None:
    chain = Chain.build(messages, allow_pending_tail=True)
    check_steps(messages, plan_sections(messages, chain, config), pair_level=False)
    check_steps(messages, plan_oversized_pairs(messages, chain, config), pair_level=True)
    check_steps(messages, plan_last_section_rotation(messages, chain, config), pair_level=True)
    check_steps(messages, plan_qa_pairs(messages, chain, config), pair_level=False)
    plan = SectionsStrategy(config).plan(messages, CTX)
    assert plan == SectionsStrategy(config).plan(list(messages), CTX)  # deterministic
    steps = [s for s in plan.steps if isinstance(s, Summarize)]
    assert len(steps) == len(plan.steps)
    check_steps(messages, steps, pair_level=False)
    _check_plan(plan, messages, "sections")  # the executor accepts it


def apply(messages: Sequence[Message], steps: Sequence[Summarize]) -> list[Message]:
    out = list(messages)
    for step in sorted(steps, key=lambda s: -s.start):
        out[step.start : step.end] = summary_messages("s", step.form, out[step.start : step.end])
    return out


@settings(max_examples=examples(70), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories, configs)
def test_rounds_converge_and_keep_the_invariants(messages: list[Message], config: SectionsConfig) -> None:
    """Applied round after round with a short summary, the plans stay valid and run out (no thrashing)."""
    strategy = SectionsStrategy(config)
    systems = [m for m in messages if m.role == "system"]
    current = messages
    for round_no in range(12):
        plan = strategy.plan(current, PlanContext(budget=None, counter=COUNTER, round=round_no))
        if not plan:
            break
        steps = [s for s in plan.steps if isinstance(s, Summarize)]
        check_steps(current, steps, pair_level=False)
        current = apply(current, steps)
        Chain.build(current, allow_pending_tail=True)  # still a well-formed chain
    else:
        pytest.fail("the planner still had steps after 12 rounds")
    assert [m for m in current if m.role == "system"] == systems
    assert current[-1] == messages[-1]


# end to end -------------------------------------------------------------------------------------------------------
ALL_DOCS = list(iter_documents()) if corpora_root() is not None else []
_STRIDE = {id(d) for d in every(ALL_DOCS, 6)}  # every 6th document (all of them under the thorough profile)
DOCS = [d for d in ALL_DOCS if id(d) in _STRIDE or d.format == "claude-code"]  # the long agent sessions, every one
SMALL = SectionsConfig(last_sec_bytes=6000, max_bp_bytes=1500, use_qa=True, max_qa_sections=4, max_qa_bytes=20000)


def short_summary(transcript: str) -> str:
    return f"summary of {len(transcript)} characters"


@pytest.mark.corpus
@pytest.mark.parametrize("config", [SectionsConfig(), SMALL], ids=["defaults", "small"])
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.slow
def test_corpora_through_the_executor(provider: str, config: SectionsConfig) -> None:
    changed = 0
    for doc in DOCS:
        messages = load(doc.data).messages
        strategy = SectionsStrategy(config)
        # `Strategy.name` is a plain attribute in the protocol, so a frozen dataclass does not match it for pyright
        result = compact_sync(messages, strategy, summarizer=short_summary, counter=COUNTER, provider=provider)  # pyright: ignore[reportArgumentType]
        assert not validate(result.messages, provider), doc.label
        assert result.tokens_after <= result.tokens_before, doc.label
        systems_in = [m for m in messages if m.role == "system"]
        if result.changed:
            changed += 1
            assert [m for m in result.messages if m.role == "system"] == systems_in, doc.label
        assert not result.errors, doc.label
    assert changed > 0
