"""A compaction that is worth it (issue 21), over generated agent sessions request by request through a
`ContextManager` at windows from a few tool results wide to 32K:

- a request is never larger after a compaction than it would have been without it, recall blocks included (a
  block takes only the room the compaction freed);
- after a compaction the history is below the trigger, unless what no compaction may take is over the compaction's
  budget: the system messages, the user's messages (the task survives every compaction) and the newest step (the
  last model turn and the tool output answering it, the last thing to lose, DESIGN invariant 11);
- no compaction right after another, unless that next request's own new messages brought the history from where the
  compaction left it back to the trigger (a single step that fills the room, or the window).

Codex at a 40K window compacted on every request from the 6th on: the ten messages kept verbatim were five tool
steps, 35.8-38.7K tokens, above the 32K trigger, so each compaction left the history where the next one began.
What is kept verbatim gives way by priority (`chainsum.strategies._guard`): the record of older turns is folded
first, then the older tool output the strategy spared is masked, oldest first, the newest step never."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.formats import load
from chainsum.manager import ContextManager, ManagerConfig, request_indices
from chainsum.messages import Message
from chainsum.testing.sessions import agent_session
from chainsum.tokens import HeuristicCounter
from sampling import examples

COUNTER = HeuristicCounter()


@dataclass(frozen=True, slots=True)
class Compaction:
    request: int
    before: int
    after: int
    history_after: int
    """`after` without the recall blocks: what the trigger measures."""
    floor: int
    """Tokens of what no compaction may take: the system and user messages (the summary record left out) and the
    last model turn of the request with what follows it (the newest step)."""
    new_tokens: int
    """Tokens of the messages this request added to the caller's history."""
    reason: str
    """Why it compacted: ``trigger`` (the history reached the trigger) or ``emergency`` (the request was over the
    window)."""


def _compactions(n_messages: int, seed: int, window: int) -> tuple[ContextManager, list[Compaction]]:
    messages = load(agent_session(n_messages, seed=seed), "openai").messages
    manager = ContextManager(ManagerConfig(), context_window=window)
    history: list[Message] = []
    out: list[Compaction] = []
    pos = 0

    async def run() -> None:
        nonlocal pos
        for i, cut in enumerate(request_indices(messages)):
            new = messages[pos:cut]
            history.extend(new)
            pos = cut
            prepared = await manager.prepare(history)
            if not prepared.changed:
                continue
            sent = list(prepared.messages)
            last = max(k for k, m in enumerate(sent) if m.role in ("assistant", "user"))
            kept = [m for m in sent[:last] if m.role == "system" or (m.role == "user" and m in messages)]
            out.append(
                Compaction(
                    request=i,
                    before=prepared.tokens_before,
                    after=prepared.tokens_after,
                    history_after=prepared.tokens_after - prepared.recall_tokens,
                    floor=COUNTER.count_messages(kept + sent[last:]),
                    new_tokens=COUNTER.count_messages(new),
                    reason=getattr(prepared.event, "reason", ""),
                )
            )

    asyncio.run(run())
    return manager, out


@settings(max_examples=examples(5), deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_messages=st.integers(60, 180),
    window=st.sampled_from([6_000, 12_000, 24_000]),
)
def test_a_compaction_is_worth_it(seed: int, n_messages: int, window: int) -> None:
    _check(n_messages, seed, window)


@pytest.mark.parametrize(
    ("seed", "n_messages", "window"),
    [(2778, 60, 6_000), (81, 60, 12_000), (0, 120, 6_000), (8, 120, 6_000), (35, 120, 12_000)],
)
def test_a_compaction_gets_below_the_trigger(seed: int, n_messages: int, window: int) -> None:
    """Sessions the property found landing above the trigger (each at a request where what no compaction may take
    was under the budget). Seeds 2778 and 81 (request 17: an emergency compaction at 5,501 > 4,800 tokens, a ratio
    one at 10,277 > 9,600) kept an older 2.1-4.4K-token output of a recent step whole; seeds 0, 8 and 35, found once
    that output gave way (4,891 > 4,800, 4,830 > 4,800 and 10,010 > 9,600 tokens), kept a 1.3-2.9K-token record
    beside a current step of 3.3-7.0K tokens."""
    compactions = _check(n_messages, seed, window)
    assert compactions


def _check(n_messages: int, seed: int, window: int) -> list[Compaction]:
    """The three points of the module docstring over one session; its compactions."""
    manager, compactions = _compactions(n_messages, seed, window)
    cfg = manager.config
    trigger = int(cfg.trigger_token_ratio * window)
    budget = int(cfg.reset_token_ratio * window) - int(cfg.recall_token_ratio * window)
    previous: Compaction | None = None
    for c in compactions:
        assert c.after <= c.before, c
        if c.floor <= budget:
            assert c.history_after < trigger, c
        if previous is not None and previous.request == c.request - 1:
            assert previous.history_after + c.new_tokens >= trigger, (previous, c)
        previous = c
    return compactions
