"""`chainsum.manager._replay`: how requests are cut, the cached prefix, the totals, and the counting summarizer."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from pathlib import Path
from typing import Any

import pytest

from chainsum.formats import load
from chainsum.manager import ContextManager, ManagerConfig, Prepared
from chainsum.manager._replay import CountingSummarizer, Prices, replay, replay_sync, request_indices
from chainsum.messages import Message
from chainsum.summarize import ExtractiveSummarizer
from chainsum.tokens import HeuristicCounter

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-session.json"


def _example() -> list[Message]:
    return list(load(EXAMPLE.read_bytes()).messages)


def _manager(window: int) -> tuple[ContextManager, CountingSummarizer]:
    counting = CountingSummarizer(ExtractiveSummarizer(), HeuristicCounter())
    return ContextManager(ManagerConfig(), context_window=window, summarizers=[counting]), counting


def test_requests_are_cut_before_each_assistant_message() -> None:
    msgs = [
        Message.of("user", "a"),
        Message.of("assistant", "b"),
        Message.of("user", "c"),
        Message.of("assistant", "d"),
    ]
    assert request_indices(msgs) == [1, 3]
    assert request_indices([Message.of("assistant", "x"), Message.of("user", "y")]) == []


def test_no_compaction_means_everything_but_the_new_tail_is_cached() -> None:
    msgs = [
        Message.of("user", "hello there"),
        Message.of("assistant", "hi"),
        Message.of("user", "how are you"),
        Message.of("assistant", "ok"),
    ]
    manager, counting = _manager(10**6)
    report = replay_sync(msgs, manager, counting=counting, prices=Prices(input=1e6, cached=0.0))
    first, second = report.turns
    assert (first.messages, second.messages) == (1, 3)
    assert first.cached_input_tokens == 0
    assert 0 < second.cached_input_tokens < second.context_tokens
    assert not first.compacted and not second.compacted
    # one USD per fresh token, cached free: the cost is exactly the fresh tokens
    assert second.cost_usd == pytest.approx(second.context_tokens - second.cached_input_tokens)
    assert counting.calls == 0


def test_example_with_a_small_window_compacts_and_totals_add_up() -> None:
    manager, counting = _manager(1500)
    done: list[tuple[int, int]] = []
    report = replay_sync(_example(), manager, counting=counting, progress=lambda d, t: done.append((d, t)))
    totals = report.totals()
    turns = report.turns
    assert totals["requests"] == len(turns) == len(done) == done[-1][1]
    assert totals["compactions"] == sum(t.compacted for t in turns) >= 1
    assert all(t.valid for t in turns)
    assert totals["input_tokens"] == sum(t.context_tokens for t in turns)
    assert totals["cached_input_tokens"] == sum(t.cached_input_tokens for t in turns) <= totals["input_tokens"]
    assert totals["summarizer_calls"] == counting.calls
    assert totals["summarizer_input_tokens"] == counting.input_tokens
    assert totals["max_context_tokens"] == max(t.context_tokens for t in turns)
    assert totals["cost_usd"] == pytest.approx(sum(t.cost_usd for t in turns))
    for t in turns:
        assert t.cached_input_tokens <= t.context_tokens
        assert bool(t.record_ids) == t.compacted
        assert (t.reason is not None) == t.compacted
    d = report.to_dict()
    assert set(d["totals"]) >= {"requests", "compactions", "summarizer_calls", "max_context_tokens", "cost_usd"}


def test_the_summarizers_input_and_output_are_priced_and_reported_apart() -> None:
    """An LLM summarizer's calls cost: its input and its output (the summaries), each at its own price, are part of
    the request's cost and shown apart; the same replay priced without them differs by exactly that."""

    def summarize(transcript: str) -> str:
        return transcript[: len(transcript) // 10]  # a fixed-ratio summary: a tenth of what it was given

    def run(prices: Prices) -> tuple[Any, CountingSummarizer]:
        counting = CountingSummarizer(summarize, HeuristicCounter())
        manager = ContextManager(ManagerConfig(), context_window=1500, summarizers=[counting])
        return replay_sync(_example(), manager, counting=counting, prices=prices), counting

    priced, counting = run(Prices(summarizer_input=3.0, summarizer_output=15.0))
    free, _ = run(Prices())
    totals = priced.totals()
    assert counting.calls > 0 and 0 < counting.output_tokens < counting.input_tokens
    assert totals["summarizer_output_tokens"] == counting.output_tokens
    expected = (3.0 * counting.input_tokens + 15.0 * counting.output_tokens) / 1e6
    assert totals["summarizer_cost_usd"] == pytest.approx(expected)
    assert totals["cost_usd"] == pytest.approx(free.totals()["cost_usd"] + expected)
    for t in priced.turns:
        assert (t.summarizer_cost_usd > 0) == (t.summarizer_calls > 0)
    assert free.totals()["summarizer_cost_usd"] == 0
    assert priced.to_dict()["prices_usd_per_mtok"]["summarizer_output"] == 15.0


def test_async_replay_matches_the_sync_one() -> None:
    a, ca = _manager(1500)
    b, cb = _manager(1500)
    ra = asyncio.run(replay(_example(), a, counting=ca))
    rb = replay_sync(_example(), b, counting=cb)
    assert [t.context_tokens for t in ra.turns] == [t.context_tokens for t in rb.turns]


def test_check_valid_off_reports_none() -> None:
    manager, _ = _manager(10**6)
    report = replay_sync(_example(), manager, check_valid=False)
    assert {t.valid for t in report.turns} == {None}
    assert report.totals()["invalid"] == 0


class _MovingNote(ContextManager):
    """A manager that puts a note right before the newest user message of every request, as recall did before its
    blocks were pinned: the note moves whenever a user message arrives."""

    async def prepare(self, messages: Any, **kwargs: Any) -> Prepared[Any]:
        prepared = await super().prepare(messages, **kwargs)
        out = list(prepared.messages)
        at = max(i for i, m in enumerate(out) if m.role == "user")
        return dataclasses.replace(prepared, messages=[*out[:at], Message.of("user", "[note]"), *out[at:]])


def test_prefix_breaks_count_requests_that_rewrite_what_was_sent_without_compacting() -> None:
    msgs = _example()
    moving = _MovingNote(ManagerConfig(), context_window=10**6)
    report = replay_sync(msgs, moving)
    # a request breaks the prefix when a user message arrived since the last one (the note moved there)
    users_before = [sum(m.role == "user" for m in msgs[: t.message_index]) for t in report.turns]
    moved = [b > a for a, b in itertools.pairwise(users_before)]
    assert any(moved) and report.totals()["prefix_breaks"] == sum(moved)
    assert [t.prefix_break for t in report.turns][1:] == moved
    assert report.to_dict()["turns"][0]["prefix_break"] is False


@pytest.mark.parametrize("adopt", [False, True])
def test_a_compacting_replay_with_recall_has_no_prefix_break(adopt: bool) -> None:
    """The bundled example at a small window compacts several times and recalls between compactions; every request
    that is no compaction extends the one before."""
    counting = CountingSummarizer(ExtractiveSummarizer(), HeuristicCounter())
    manager = ContextManager(ManagerConfig(recall_token_ratio=0.2), context_window=1500, summarizers=[counting])
    report = replay_sync(_example(), manager, counting=counting, adopt=adopt)
    totals = report.totals()
    assert totals["compactions"] >= 2 and totals["recalled"] > 0
    assert totals["prefix_breaks"] == 0
