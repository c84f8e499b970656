"""`auto` plans only what the executor accepts: no span that separates a tool call from its result, however the
budget, the protected tail (`TailGuard`, the manager's ``preserve_recent``) and the tool outputs fall.

The tail's start is a message count, not a safe cut; `auto` once moved its cut forward to it and split a call from
its 48 KB result (``tests/data/repro/invalid-plan-history.json``)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

import chainsum
from chainsum.chain import safe_cuts
from chainsum.executor import compact_sync
from chainsum.formats import load
from chainsum.manager import ContextManager, ManagerConfig
from chainsum.messages import Message
from chainsum.strategies import AutoStrategy, Clip, Plan, PlanContext, Summarize, TailGuard
from chainsum.strategies._guard import verbatim_tail
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing.sessions import agent_session
from chainsum.tokens import HeuristicCounter
from sampling import examples
from strategies.strategies_support import FixedPlan

REPRO = Path(__file__).resolve().parents[1] / "data" / "repro" / "invalid-plan-history.json"
RECALL = "[chainsum recall: earlier messages of this conversation, brought back for the newest message]\n..."


def test_the_reproducer_compacts_instead_of_failing() -> None:
    events: list[chainsum.ManagerEvent] = []
    manager = ContextManager(
        ManagerConfig(), context_window=32_000, summarizers=[ExtractiveSummarizer()], on_event=events.append
    )
    history = json.loads(REPRO.read_text(encoding="utf-8"))
    prepared = manager.prepare_sync(history)
    assert [e.kind for e in events] == ["summarized"]
    assert prepared.tokens_after < prepared.tokens_before
    assert chainsum.validate(list(load(prepared.messages).messages), "openai") == []


@st.composite
def agent_histories(draw: st.DrawFn) -> list[Message]:
    """A generated coding-agent log (large tool outputs right after their calls, some parallel calls), cut at a
    random length, with a recall block before its newest user message now and then."""
    messages = list(load(agent_session(draw(st.integers(30, 140)), seed=draw(st.integers(0, 10_000)))).messages)
    if draw(st.booleans()):
        newest_user = max(i for i, m in enumerate(messages) if m.role == "user")
        messages.insert(newest_user, Message.of("user", RECALL))
    return messages


@settings(max_examples=examples(40), deadline=None)
@given(agent_histories(), st.integers(0, 14), st.floats(0.15, 0.9), st.booleans())
def test_no_plan_is_rejected(messages: list[Message], preserve_recent: int, share: float, windowed: bool) -> None:
    counter = HeuristicCounter()
    total = counter.count_messages(messages)
    strategy = TailGuard(AutoStrategy(), preserve_recent=preserve_recent, name="auto")
    # compact raises ValueError when `check_plan` rejects a plan; the history stays valid whatever it does
    result = compact_sync(
        messages,
        strategy,
        summarizer=ExtractiveSummarizer(),
        counter=counter,
        budget=max(1, int(total * share)),
        provider="openai",
        hard_limit=int(total * (share + 0.05)) if windowed else None,
    )
    assert result.valid, result.problems


@settings(max_examples=examples(4), deadline=None)
@given(st.integers(0, 10_000), st.integers(40, 120), st.sampled_from([6_000, 8_000, 12_000, 16_000]))
@example(seed=99, n=60, window=6_000)  # failed before the tail's start stopped being taken for a safe cut
def test_a_replayed_agent_session_never_fails_a_compaction(seed: int, n: int, window: int) -> None:
    """The manager's way in: records and recall blocks appear as they do in a session, the tail is the default
    ``preserve_recent``, and every model request is prepared; not one compaction may fail."""
    history = agent_session(n, seed=seed)
    events: list[chainsum.ManagerEvent] = []
    manager = ContextManager(
        ManagerConfig(), context_window=window, summarizers=[ExtractiveSummarizer()], on_event=events.append
    )
    for end in range(2, len(history) + 1):
        if end == len(history) or history[end]["role"] == "assistant":  # a model request before each answer
            manager.prepare_sync(history[:end])
    assert [e for e in events if e.kind == "failed"] == []


def test_the_tail_guard_drops_the_edits_planned_after_a_summary_it_shortens() -> None:
    """Past the window the inner strategy plans without the tail (a summary reaching into it, the step after it
    clipped); the guard shortens the summary, and the messages left out of it stay whole: a clip of newer output
    planned with them summarized would leave an older output whole while a newer one is cut (DESIGN invariant 11),
    so it goes too, and the next round plans again."""
    messages = list(load(agent_session(40, seed=3)).messages)
    counter = HeuristicCounter()
    start = next(i for i, m in enumerate(messages) if m.role == "assistant")
    clip_at = len(messages) - 3
    while messages[clip_at].role != "tool":
        clip_at -= 1
    inner = FixedPlan(
        Plan(
            (
                Summarize(start=start, end=len(messages) - 8, form="record", reason="into the tail"),
                Clip(index=clip_at, part=0, head=100, tail=50, reason="after the summary"),
            )
        )
    )
    guard = TailGuard(inner, preserve_recent=12, name="fixed")
    # no budget: under one the tail would give way (it alone is over a budget of a token), and this is about the
    # guard shortening a summary that reaches into a tail it keeps
    ctx = PlanContext(budget=None, counter=counter, hard_limit=counter.count_messages(messages) - 1)
    plan = guard.plan(messages, ctx)
    assert [s.kind for s in plan.steps] == ["summarize"]
    summarize = plan.steps[0]
    assert isinstance(summarize, Summarize) and summarize.end <= len(messages) - 12


def test_the_verbatim_tail_gives_way_when_it_alone_is_over_the_budget() -> None:
    """Kept whole, a tail over the budget leaves the history over it whatever is done before it (Codex at a 40K
    window: five tool steps above the 32K trigger after every compaction): the guard keeps the most of the newest
    messages that fit the budget and start at a safe cut (a tail starting at a tool result kept the step that made
    the call too, uncounted), at least the newest one."""
    messages = list(load(agent_session(60, seed=3)).messages)
    counter = HeuristicCounter()
    sizes = [counter.count_message(m) for m in messages]
    cuts = safe_cuts(messages)
    n = len(messages)
    tail = sum(sizes[-10:])
    first = n - 10  # the tail keeps the step whose results it starts with
    while not cuts[first]:
        first -= 1
    assert verbatim_tail(messages, 10, PlanContext(budget=sum(sizes[first:]), counter=counter)) == 10
    assert verbatim_tail(messages, 10, PlanContext(budget=None, counter=counter)) == 10
    for budget in (tail - 1, tail // 2, sum(sizes[-3:]), sizes[-1] + 1):
        keep = verbatim_tail(messages, 10, PlanContext(budget=budget, counter=counter))
        assert 1 <= keep < 10
        assert keep == 1 or (sum(sizes[-keep:]) <= budget and cuts[n - keep])  # the newest stays, whatever its size
        larger = next(k for k in range(keep + 1, n + 1) if cuts[n - k])
        assert budget < sum(sizes[-larger:])
    assert verbatim_tail(messages, 10, PlanContext(budget=1, counter=counter)) == 1
