"""Per-message caching: a growing history costs O(new messages), proven by counting text-counter calls."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.messages import Message
from chainsum.testing import generate_large_chain
from chainsum.tokens import HeuristicCounter
from chainsum.tokens._cache import IdentityCache, LRUCache
from generators import well_formed_histories


class CountingCounter(HeuristicCounter):
    """Records every call to the underlying text counter."""

    def __init__(self, *, cache_size: int = 65_536) -> None:
        super().__init__(cache_size=cache_size)
        self.calls = 0

    def count_text(self, text: str) -> int:
        self.calls += 1
        return super().count_text(text)


def calls_for(messages: list[Message]) -> int:
    """What counting these messages from scratch costs in text-counter calls."""
    fresh = CountingCounter(cache_size=0)
    for m in messages:
        fresh.count_message(m)
    return fresh.calls


def test_growing_history_costs_only_the_new_messages() -> None:
    history = generate_large_chain(150, seed=3, text_bytes=200)
    counter = CountingCounter()
    total_calls = 0
    for n in range(1, len(history) + 1):
        before = counter.calls
        counter.count_messages(history[:n])
        assert counter.calls - before == calls_for([history[n - 1]])  # exactly the new message's work
        total_calls = counter.calls
    # Over the whole session: linear in the history, where recounting would be quadratic.
    assert total_calls == calls_for(history)
    uncached = CountingCounter(cache_size=0)
    for n in range(1, len(history) + 1):
        uncached.count_messages(history[:n])
    assert uncached.calls > 50 * total_calls


def test_appending_several_messages_costs_those_messages() -> None:
    history = generate_large_chain(60, seed=4, text_bytes=100)
    counter = CountingCounter()
    counter.count_messages(history[:40])
    before = counter.calls
    assert counter.count_messages(history) == HeuristicCounter().count_messages(history)
    assert counter.calls - before == calls_for(history[40:])


def test_equal_but_distinct_messages_are_counted_afresh() -> None:
    counter = CountingCounter()
    a = Message.of("user", "hello there")
    b = Message.of("user", "hello there")
    assert a == b and a is not b
    counter.count_message(a)
    first = counter.calls
    counter.count_message(a)
    assert counter.calls == first
    counter.count_message(b)
    assert counter.calls == 2 * first


def test_cache_is_bounded_and_keeps_its_messages_alive() -> None:
    counter = CountingCounter(cache_size=2)
    messages = [Message.of("user", f"message {i}") for i in range(3)]
    for m in messages:
        counter.count_message(m)
    assert len(counter._messages) == 2  # pyright: ignore[reportPrivateUsage]
    counter.clear_cache()
    assert len(counter._messages) == 0  # pyright: ignore[reportPrivateUsage]


def test_identity_is_never_confused_after_collection() -> None:
    # The entry holds the message, so its id cannot be reused while cached; after eviction a new object at a
    # recycled address must not get the old count.
    cache = IdentityCache(1)
    results: list[int] = []
    for i in range(200):
        m = Message.of("user", "x" * i)
        results.append(cache.get_or_compute(m, lambda msg: len(msg.text)))
        del m  # freed at once (reference counting): the next message may well reuse its address
    assert results == list(range(200))


def test_caches_reject_negative_sizes() -> None:
    with pytest.raises(ValueError):
        IdentityCache(-1)
    with pytest.raises(ValueError):
        LRUCache[str](-1)


def test_lru_cache_evicts_least_recent() -> None:
    cache = LRUCache[str](2)
    assert cache.get_or_compute("a", lambda: 1) == 1
    assert cache.get_or_compute("b", lambda: 2) == 2
    assert cache.get_or_compute("a", lambda: 99) == 1  # hit, and now most recent
    assert cache.get_or_compute("c", lambda: 3) == 3  # evicts b
    assert cache.get_or_compute("b", lambda: 4) == 4
    assert len(cache) == 2
    assert LRUCache[str](0).get_or_compute("a", lambda: 5) == 5


@settings(max_examples=40, deadline=None)
@given(well_formed_histories())
def test_second_count_of_same_history_is_free(messages: list[Message]) -> None:
    counter = CountingCounter()
    first = counter.count_messages(messages)
    calls = counter.calls
    assert counter.count_messages(messages) == first
    assert counter.calls == calls


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["append", "truncate", "replace", "same"]), st.integers(0, 30)),
        min_size=1,
        max_size=25,
    )
)
def test_cached_history_totals_always_equal_a_fresh_count(ops: list[tuple[str, int]]) -> None:
    """Whatever happens to the history between calls (appends, a compaction that shortens it, an edit in the
    middle), the memoized running total must equal counting from scratch."""
    pool = generate_large_chain(40, seed=5, text_bytes=300)
    counter = HeuristicCounter()
    history: list[Message] = []
    for op, k in ops:
        if op == "append":
            history = history + pool[len(history) : len(history) + 1 + k % 4]
        elif op == "truncate":
            history = history[: k % (len(history) + 1)]
        elif op == "replace" and history:
            i = k % len(history)
            history = [*history[:i], Message.of("user", f"edited {k}"), *history[i + 1 :]]
        assert counter.count_messages(history) == HeuristicCounter(cache_size=0).count_messages(history)


def test_a_tuple_and_a_list_of_the_same_messages_share_the_memo() -> None:
    history = generate_large_chain(20, seed=6, text_bytes=300)
    counter = CountingCounter()
    total = counter.count_messages(history)
    calls = counter.calls
    assert counter.count_messages(tuple(history)) == total
    assert counter.calls == calls
