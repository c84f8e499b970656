"""The cache-aware reset (`chainsum.manager._depth`): the cost model's root, when the choice applies (asked for, at
most the configured reset), how the summarizer is priced, and what a manager does with it on a generated session."""

from __future__ import annotations

import asyncio

import pytest

from chainsum.formats import load
from chainsum.manager import ContextManager, CountingSummarizer, ManagerConfig, request_indices
from chainsum.manager._depth import KEEP_FLOOR, KEEP_TOKENS, choose_depth, reset_share
from chainsum.messages import Message
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing.sessions import agent_session
from chainsum.tokens import HeuristicCounter

EXTRACTIVE = (ExtractiveSummarizer(),)
AWARE = ManagerConfig(cache_aware=True)


def _model(text: str) -> str:
    """Stands for a summarizer that calls a model (anything but the extractive one)."""
    return text[:100]


@pytest.mark.parametrize(("c", "s"), [(0.1, 1.5), (0.1, 0.3), (0.5, 4.0), (0.0, 10.0)])
def test_reset_share_is_the_root_of_the_model(c: float, s: float) -> None:
    """dJ/dA = 0: 2 (1 - c) x = s (1 - x)^2, with x in (0, 1)."""
    x = reset_share(c, s)
    assert 0 < x < 1
    assert 2 * (1 - c) * x == pytest.approx(s * (1 - x) ** 2)


def test_reset_share_grows_with_the_summarizer_price_and_is_0_for_a_free_one() -> None:
    assert reset_share(0.1, 0.0) == 0.0
    shares = [reset_share(0.1, s) for s in (0.5, 1.5, 5.0, 50.0)]
    assert shares == sorted(shares)
    assert reset_share(0.1, 1.5) == pytest.approx(0.351, abs=1e-3)


def test_cache_aware_goes_deeper_with_the_trigger_kept() -> None:
    choice = choose_depth(AWARE, EXTRACTIVE, 32_000)
    assert choice.cache_aware and choice.summarizer_price_ratio == 0
    assert choice.config.trigger_token_ratio == 0.8
    assert choice.config.reset_token_ratio == pytest.approx(KEEP_FLOOR + KEEP_TOKENS / 32_000, abs=1e-3)
    assert "cache-aware" in choice.why and "model-free" in choice.why
    again = choose_depth(choice.config, EXTRACTIVE, 32_000)  # what a manager's config gives: the same
    assert again.config == choice.config


def test_a_model_summarizer_is_priced_and_a_counted_extractive_one_is_not() -> None:
    assert choose_depth(AWARE, (_model,), 32_000).summarizer_price_ratio == 1.5
    counted = CountingSummarizer(ExtractiveSummarizer(), HeuristicCounter())
    assert choose_depth(AWARE, (counted,), 32_000).summarizer_price_ratio == 0
    given = choose_depth(ManagerConfig(cache_aware=True, summarizer_price_ratio=10.0), EXTRACTIVE, 32_000)
    assert given.summarizer_price_ratio == 10.0
    # a costly summarizer makes each compaction worth less: the reset goes above the floor, x * trigger
    assert given.config.reset_token_ratio == pytest.approx(round(reset_share(0.1, 10.0) * 0.8, 3))


def test_on_by_default_off_when_asked_and_the_users_ratios_bound_it() -> None:
    assert ManagerConfig().cache_aware and choose_depth(ManagerConfig(), EXTRACTIVE, 32_000).cache_aware
    for config in (
        ManagerConfig(cache_aware=False),
        ManagerConfig(cache_aware=False, reset_token_ratio=0.5),
        ManagerConfig(cache_aware=False, trigger_token_ratio=0.9),
    ):
        choice = choose_depth(config, EXTRACTIVE, 32_000)
        assert not choice.cache_aware and choice.config == config and "cache_aware off" in choice.why
        assert choice.configured_reset == config.reset_token_ratio
    low = choose_depth(ManagerConfig(cache_aware=True, reset_token_ratio=0.35), EXTRACTIVE, 32_000)
    assert low.config.reset_token_ratio == 0.35  # never above the configured reset
    high = choose_depth(ManagerConfig(cache_aware=True, trigger_token_ratio=0.9), EXTRACTIVE, 64_000)
    assert high.config.trigger_token_ratio == 0.9 and high.config.reset_token_ratio < 0.7


def test_a_small_window_keeps_the_spec_reset() -> None:
    """Below 3,000 / 0.4 = 7,500 tokens the floor is over the spec's reset, which is never exceeded."""
    assert choose_depth(AWARE, EXTRACTIVE, 4_000).config.reset_token_ratio == 0.7
    assert choose_depth(AWARE, EXTRACTIVE, 7_500).config.reset_token_ratio == 0.7
    assert choose_depth(AWARE, EXTRACTIVE, 16_000).config.reset_token_ratio == pytest.approx(0.4875, abs=1e-3)


def test_the_environment_sets_it_and_round_trips() -> None:
    env = {"SUMMARIZATION_CACHE_AWARE": "true", "SUMMARIZATION_CACHED_PRICE_RATIO": "0.25"}
    config = ManagerConfig.from_env(env, dotenv_path=None)
    assert config.cache_aware is True and config.cached_price_ratio == 0.25
    assert ManagerConfig.from_env(config.to_env(), dotenv_path=None) == config
    assert ManagerConfig.from_env({}, dotenv_path=None).cache_aware is True
    assert ManagerConfig.from_env({"SUMMARIZATION_CACHE_AWARE": "false"}, dotenv_path=None).cache_aware is False


def _replay(config: ManagerConfig, messages: list[Message], window: int) -> tuple[ContextManager, list[int]]:
    """Every request of `messages` through one manager; the history's tokens after each compaction."""
    manager = ContextManager(config, context_window=window, summarizers=[ExtractiveSummarizer()])
    after: list[int] = []

    async def run() -> None:
        history: list[Message] = []
        pos = 0
        for cut in request_indices(messages):
            history.extend(messages[pos:cut])
            pos = cut
            prepared = await manager.prepare(history)
            if prepared.changed:
                after.append(manager.counter.count_messages(manager.context()))

    asyncio.run(run())
    return manager, after


def test_a_manager_compacts_deeper_and_less_often() -> None:
    """A generated agent session at 16K: the cache-aware manager compacts deeper on average and fewer times than with
    the spec's ratios. (Landing below the trigger is test_worth_it's.)"""
    messages = list(load(agent_session(240, seed=3), "openai").messages)
    window = 16_000
    aware, deep = _replay(AWARE, messages, window)
    _, spec = _replay(ManagerConfig(cache_aware=False), messages, window)
    assert aware.choice.cache_aware and deep and spec
    assert len(deep) < len(spec)
    # deeper on average; not each at the chosen budget: the current step's large output stays, and the recent
    # messages the configured reset keeps verbatim raise the budget (test_the_deeper_reset_keeps_...)
    assert sum(deep) / len(deep) < sum(spec) / len(spec)


def test_the_deeper_reset_keeps_the_configured_verbatim_tail() -> None:
    """The last ``preserve_recent`` messages (7,000 tokens) are over the cache-aware budget at 16K (0.4875 less the
    recall room: 6,200) and within the configured one (9,600): the compaction summarizes the older work and keeps
    them verbatim, landing below where the configured reset would (the proxy's fidelity test, at 12K, had a Claude
    Code turn's image summarized before the budget made room for it)."""
    old = [Message.of("user" if k % 2 == 0 else "assistant", f"old {k} " + "word " * 300) for k in range(20)]
    recent = [Message.of("user" if k % 2 == 0 else "assistant", f"recent {k} " + "term " * 750) for k in range(10)]
    counter = HeuristicCounter()
    assert 6_400 < counter.count_messages(recent) < 9_000
    history = old + recent

    def run(config: ManagerConfig) -> list[Message]:
        manager = ContextManager(config, context_window=16_000, summarizers=[ExtractiveSummarizer()])
        prepared = manager.prepare_sync(history)
        assert prepared.changed
        return list(prepared.messages)

    aware = run(AWARE)
    assert aware[-10:] == recent and not any(m in aware for m in old)
    assert counter.count_messages(aware) <= counter.count_messages(run(ManagerConfig(cache_aware=False)))
