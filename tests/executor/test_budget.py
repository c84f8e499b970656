"""A budget means what it says: `compact` with the default strategy lands just under it, a larger budget never
keeps fewer tokens, and a dry run with the deterministic default summarizer predicts the run exactly."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.executor import CompactResult, compact_sync
from chainsum.formats import load
from chainsum.messages import Image, Message, Text, ToolCall, ToolResult
from chainsum.strategies import AutoStrategy
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import CorpusDocument, iter_documents
from chainsum.testing.retention import kept_identifiers
from chainsum.tokens import HeuristicCounter
from corpora_support import document
from generators import identifier_histories, well_formed_histories
from sampling import every_per_corpus, examples

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-session.json"
SHARES = (0.25, 0.35, 0.5, 0.65, 0.8)


def run(messages: list[Message] | tuple[Message, ...], budget: int, *, dry_run: bool = False) -> CompactResult:
    return compact_sync(
        messages,
        AutoStrategy(),
        summarizer=ExtractiveSummarizer(),
        counter=HeuristicCounter(),
        budget=budget,
        dry_run=dry_run,
    )


def sweep(messages: list[Message] | tuple[Message, ...]) -> list[tuple[int, int, bool]]:
    """(budget, tokens after, fits) for each share of the history's tokens."""
    total = HeuristicCounter().count_messages(messages)
    out: list[tuple[int, int, bool]] = []
    for share in SHARES:
        budget = max(1, int(total * share))
        result = compact_sync(
            messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=HeuristicCounter(), budget=budget
        )
        assert result.valid
        out.append((budget, result.tokens_after, result.fits))
    return out


def assert_monotone(points: list[tuple[int, int, bool]]) -> None:
    """Between two budgets that are both reached, the larger keeps at least as many tokens."""
    reached = [(b, t) for b, t, fits in points if fits]
    for (b1, t1), (b2, t2) in itertools.pairwise(reached):
        assert t2 >= t1, f"budget {b1} kept {t1} tokens, the larger budget {b2} only {t2}"


def test_the_readme_example_lands_just_under_every_budget_and_keeps_its_identifiers() -> None:
    messages = load(EXAMPLE.read_text()).messages
    for budget in (500, 600, 700, 800, 900, 1200, 1600):
        result = compact_sync(
            messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=HeuristicCounter(), budget=budget
        )
        assert result.fits and result.valid
        assert result.tokens_after >= 0.85 * budget, (budget, result.tokens_after)
    at_readme = run(messages, 800)
    text = json.dumps([m.text for m in at_readme.messages])
    for identifier in ("ORD-7731", "0042", "KeyError"):  # the order, the migration, the error
        assert identifier in text, identifier


def test_a_larger_budget_never_keeps_fewer_tokens_on_the_example() -> None:
    assert_monotone(sweep(load(EXAMPLE.read_text()).messages))


@pytest.mark.corpus
@pytest.mark.parametrize(
    "doc", every_per_corpus(list(iter_documents(include_subagents=False)), 25), ids=lambda d: d.label
)
def test_on_the_corpora_a_budget_is_filled_and_a_larger_one_never_keeps_fewer_tokens(doc: CorpusDocument) -> None:
    messages = load(doc.data, doc.format).messages
    points = sweep(messages)
    assert_monotone(points)
    # landed near the budget (the issue's 85 %): tau2's user tool calls, which the provider repair turns into
    # shorter text, are folded before planning; a tool result too large to keep right before the summary's cut is
    # kept clipped (it ended at 60 % of the budget before); the summary is asked for what is left, never more
    assert all(after >= 0.85 * budget for budget, after, fits in points if fits), points


TAU2_4 = "tau2-bench/gpt-4.1_telecom_default_gpt-4.1_1trials.json#4"


@pytest.mark.parametrize("floor, monotone", [(AutoStrategy().summary_floor, True), (0.0, False)])
def test_the_summary_floor_keeps_a_larger_budget_from_losing_identifiers(floor: float, monotone: bool) -> None:
    """tau2 telecom #4: at 65 % of its tokens the cut moved back over short chat turns and the summary of what came
    before them got less room than at 50 %, losing dates and field names (32 identifiers kept at 50 %, 30 at 65 %).
    The summary's floor (`AutoStrategy.summary_floor`) keeps its room from shrinking; without it the loss is back,
    which shows the test can fail."""
    doc = document(TAU2_4)
    messages = load(doc.data, doc.format).messages
    total = HeuristicCounter().count_messages(messages)
    kept: list[int] = []
    for share in (0.5, 0.65):
        result = compact_sync(
            messages,
            AutoStrategy(summary_floor=floor),
            summarizer=ExtractiveSummarizer(),
            counter=HeuristicCounter(),
            budget=int(total * share),
        )
        assert result.fits
        kept.append(len(kept_identifiers(messages, result.messages)))
    assert (kept[1] >= kept[0]) is monotone, kept


@settings(max_examples=examples(25))
@given(well_formed_histories(), st.floats(0.2, 0.9))
def test_a_larger_budget_never_keeps_fewer_tokens_on_generated_histories(messages: list[Message], share: float) -> None:
    total = HeuristicCounter().count_messages(messages)
    low, high = max(1, int(total * share * 0.8)), max(1, int(total * share))
    a = compact_sync(
        messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=HeuristicCounter(), budget=low
    )
    b = compact_sync(
        messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=HeuristicCounter(), budget=high
    )
    if not (a.fits and b.fits) or b.tokens_after >= a.tokens_after:
        return
    # Fewer tokens at the larger budget only where it kept more of the conversation itself: every message the smaller
    # budget kept verbatim, and more, and every identifier it kept. A summary of a short span costs its framing, so
    # a record of five tiny messages can be longer than the messages are verbatim (found by this test: budget 242
    # kept 223 tokens behind a record of five messages, budget 303 kept 217 with four of them verbatim); keeping
    # them verbatim is the better history, not a loss.
    verbatim_a = [m for m in a.messages if m in messages]
    verbatim_b = [m for m in b.messages if m in messages]
    assert len(verbatim_b) > len(verbatim_a), (low, a.tokens_after, high, b.tokens_after)
    assert all(m in verbatim_b for m in verbatim_a), (low, a.tokens_after, high, b.tokens_after)
    assert kept_identifiers(messages, a.messages) <= kept_identifiers(messages, b.messages)


def test_a_larger_budget_that_keeps_fewer_tokens_keeps_more_of_the_conversation_verbatim() -> None:
    """The case the property above found, fixed: the larger budget keeps six tokens fewer, and four more messages
    verbatim (the smaller one's record stands for them)."""
    call = Message(role="assistant", parts=(ToolCall(id="call_1", name="get_weather", arguments="{}"),))
    result = Message(role="tool", parts=(ToolResult(call_id="call_1", name="get_weather", content=""),))
    messages = [
        Message(role="user", parts=(Text(text="0"), Image(url="https://example.com/a.png", media_type="image/png"))),
        Message(role="assistant", parts=(Text(text="00000"),)),
        Message(role="user", parts=(Text(text="0"),)),
        call,
        result,
        call,
        result,
        Message(role="assistant", parts=(Text(text="0"),)),
    ]
    small, large = run(messages, 242), run(messages, 303)
    assert small.fits and large.fits
    # (since the record lists no tool-call id, ``call_1``, the smaller budget's record is the smaller history too)
    assert large.tokens_after >= small.tokens_after or sum(m in messages for m in large.messages) > sum(
        m in messages for m in small.messages
    )
    assert sum(m in messages for m in large.messages) > sum(m in messages for m in small.messages)


@pytest.mark.parametrize("budget", [300, 500, 800, 1200])
def test_dry_run_with_the_default_summarizer_is_the_run(budget: int) -> None:
    messages = load(EXAMPLE.read_text()).messages
    real = run(messages, budget)
    dry = run(messages, budget, dry_run=True)
    assert dry.messages == tuple(messages)
    assert [p.steps for p in dry.plans] == [p.steps for p in real.plans]
    for field in ("summarizer_calls", "tokens_after", "messages_after", "messages_summarized", "rounds"):
        assert getattr(dry, field) == getattr(real, field), field


def assert_identifiers_monotone(messages: Sequence[Message], shares: Sequence[float]) -> None:
    """Between two budgets that are both reached, the larger keeps at least as many of the history's identifiers
    (counted by the independent matcher of `chainsum.testing.retention`)."""
    total = HeuristicCounter().count_messages(messages)
    kept: list[tuple[float, int]] = []
    for share in shares:
        result = run(list(messages), max(1, int(total * share)))
        if result.fits:
            kept.append((share, len(kept_identifiers(messages, result.messages))))
    for (low, ids_low), (high, ids_high) in itertools.combinations(kept, 2):
        assert ids_high >= ids_low, f"{ids_low} identifiers kept at {low:.0%} of the tokens, {ids_high} at {high:.0%}"


TAU2_10 = "tau2-bench/gpt-4.1_telecom_default_gpt-4.1_1trials.json#10"


def test_a_mask_given_room_back_lists_the_identifiers_a_smaller_budget_s_summary_kept() -> None:
    """tau2 telecom #10: at 65 % of its tokens an old bill lookup right after the summary's cut is masked, and its
    placeholder's usual 240 characters left out a phone number the summary listed at 50 % (39 identifiers kept at
    50 %, 38 at 65 %). The budget's rest now widens that placeholder (`widened_mask`)."""
    doc = document(TAU2_10)
    assert_identifiers_monotone(load(doc.data, doc.format).messages, (0.5, 0.65))


@pytest.mark.corpus
@pytest.mark.parametrize(
    "doc", every_per_corpus(list(iter_documents(include_subagents=False)), 25), ids=lambda d: d.label
)
@pytest.mark.slow
def test_on_the_corpora_a_larger_budget_never_keeps_fewer_identifiers(doc: CorpusDocument) -> None:
    assert_identifiers_monotone(load(doc.data, doc.format).messages, (0.15, *SHARES))


@settings(max_examples=examples(12), deadline=None)
@given(identifier_histories())
def test_a_larger_budget_never_keeps_fewer_identifiers_on_generated_histories(messages: list[Message]) -> None:
    """Chats and tool calls with planted order ids, paths, fields, dates and amounts, at every budget of the corpus
    sweep. Randomized runs of 2,400 histories (``bench/bench_budget.py --generated``'s property with six seeds)
    found none where a larger budget keeps fewer."""
    assert_identifiers_monotone(messages, (0.15, *SHARES))
