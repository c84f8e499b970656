"""`chainsum.manager._replay`: how requests are cut, the cached prefix, the totals, and the counting summarizer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chainsum.formats import load
from chainsum.manager import ContextManager, ManagerConfig
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
