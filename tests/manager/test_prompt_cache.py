"""`chainsum replay`'s estimate of Anthropic's prompt cache from the marks a request carries
(`chainsum.manager._prompt_cache`): a recording replayed with no marks caches nothing; with the manager's
breakpoints a compacted session is read from the cache again, and the mark the manager moves is no prefix break."""

from __future__ import annotations

from chainsum.formats import load
from chainsum.manager import ContextManager, ManagerConfig, replay_sync
from chainsum.manager._prompt_cache import BreakpointCache
from chainsum.messages import Message, Text
from chainsum.store import MemoryArchive
from chainsum.testing import ScriptedSummarizer
from chainsum.testing.sessions import agent_session
from chainsum.tokens import HeuristicCounter


def _replay(breakpoints: bool, adopt: bool = False) -> dict[str, object]:
    messages = list(load(agent_session(120, seed=5), format="openai").messages)
    manager = ContextManager(
        ManagerConfig(cache_breakpoints=breakpoints),
        context_window=8_000,
        summarizers=[ScriptedSummarizer()],
        archive=MemoryArchive(),
        provider="anthropic",
    )
    return replay_sync(messages, manager, check_valid=False, adopt=adopt).totals()


def test_the_manager_breakpoints_make_a_compacted_session_cacheable_again() -> None:
    off, on = _replay(False), _replay(True)
    assert off["compactions"] == on["compactions"] and isinstance(on["compactions"], int) and on["compactions"] >= 3
    assert off["breakpoint_cached_input_tokens"] == 0 and off["breakpoint_cache_hit_share"] == 0.0
    share = on["breakpoint_cache_hit_share"]
    assert isinstance(share, float) and share > 0.3, share
    assert on["prefix_breaks"] == off["prefix_breaks"] == 0  # the moved mark is not a break
    assert on["cached_input_tokens"] == off["cached_input_tokens"]  # the other estimate ignores marks
    assert _replay(True, adopt=True)["prefix_breaks"] == 0


def test_a_request_reads_the_longest_prefix_an_earlier_mark_wrote() -> None:
    counter = HeuristicCounter()
    mark = {"anthropic": {"fields": {"cache_control": {"type": "ephemeral"}}}}

    def msg(text: str, marked: bool = False) -> Message:
        return Message(role="user", parts=(Text(text=text, extras=mark if marked else {}),))

    cache = BreakpointCache()
    a, b, c = msg("a " * 50), msg("b " * 50), msg("c " * 50)
    assert cache.read([a, msg("b " * 50, marked=True)], counter.count_messages) == 0  # writes [a, b]
    assert cache.read([a, b, msg("c " * 50, marked=True)], counter.count_messages) == counter.count_messages([a, b])
    assert cache.read([a, b, c], counter.count_messages) == 0  # no mark: no read
    assert cache.read([msg("x"), b, msg("c " * 50, marked=True)], counter.count_messages) == 0  # another prefix
