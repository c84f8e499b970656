"""A session never dies: a 400-message generated chat, fed request by request (an assistant reply, then the next user
message) at a 2K and a 4K token window, is compacted for as long as it lives and no request it returns is over the
window (DESIGN invariant 8), whether the caller keeps its full history or sends back what it got."""

from __future__ import annotations

import time

import pytest

from chainsum.manager import (
    ContextManager,
    ManagerConfig,
    ManagerEvent,
    SummarizationFailedEvent,
    WindowExceededEvent,
    is_recall_message,
)
from chainsum.rules import validate
from chainsum.store import MemoryArchive
from chainsum.testing.sessions import agent_session, chat
from chainsum.tokens import HeuristicCounter
from manager.manager_support import Dict
from manager.wire_support import canonical

COUNTER = HeuristicCounter()


@pytest.mark.parametrize("window", [2000, 4000])
@pytest.mark.parametrize("caller", ["keeps_full_history", "sends_back_what_it_got"])
def test_a_400_message_chat_stays_under_the_window_for_ever(window: int, caller: str) -> None:
    session = chat(400)
    events: list[ManagerEvent] = []
    manager = ContextManager(
        ManagerConfig(), context_window=window, archive=MemoryArchive(), counter=COUNTER, on_event=events.append
    )
    started = time.perf_counter()
    history: list[Dict] = [session.messages[0]]
    requests = compactions = 0
    largest = 0.0
    for message in session.messages[1:]:
        history.append(message)
        if message["role"] != "user":
            continue
        prepared = manager.prepare_sync(history)
        requests += 1
        compactions += prepared.changed
        out = canonical(prepared.messages, "openai")
        tokens = COUNTER.count_messages(out)
        assert tokens <= window, (requests, tokens)
        assert prepared.tokens_after <= window and not prepared.over_window
        assert validate(out, "openai") == []
        assert out[0] == canonical([session.messages[0]], "openai")[0]  # the system prompt, verbatim
        assert out[-1].text == message["content"]  # the newest user message, whole
        # each recall block pinned since the last compaction in its own room (the request under the window above)
        recalled = [m for m in out if is_recall_message(m)]
        assert all(COUNTER.count_message(m) <= manager.config.recall_token_ratio * window for m in recalled)
        assert prepared.recall_tokens == sum(COUNTER.count_message(m) for m in recalled)
        largest = max(largest, tokens / window)
        if caller == "sends_back_what_it_got":
            history = list(prepared.messages)
    assert requests == 200
    assert compactions >= {2000: 10, 4000: 5}[window]  # summarized for as long as the session lives
    assert manager.state.summarizations == compactions and manager.state.failures == 0
    assert not [e for e in events if isinstance(e, WindowExceededEvent | SummarizationFailedEvent)]
    assert largest <= 1.0
    assert time.perf_counter() - started < 20


def test_an_agent_session_with_huge_tool_output_stays_under_the_window() -> None:
    session = agent_session(300)
    window = 4000
    manager = ContextManager(ManagerConfig(), context_window=window, archive=MemoryArchive(), counter=COUNTER)
    history: list[Dict] = [session[0]]
    requests = 0
    for message in session[1:]:
        if message["role"] == "assistant" and history[-1]["role"] != "assistant":
            prepared = manager.prepare_sync(history)  # the request the assistant message answers
            requests += 1
            out = canonical(prepared.messages, "openai")
            assert COUNTER.count_messages(out) <= window and not prepared.over_window, requests
            assert validate(out, "openai") == []
            history = list(prepared.messages)
        history.append(message)
    assert requests > 100 and manager.state.summarizations > 10


def test_only_a_newest_user_message_larger_than_the_window_may_go_over() -> None:
    session = chat(60)
    events: list[ManagerEvent] = []
    manager = ContextManager(ManagerConfig(), context_window=2000, archive=MemoryArchive(), on_event=events.append)
    huge = {"role": "user", "content": "Please read this: " + "word " * 4000}
    prepared = manager.prepare_sync([*session.messages, huge])
    assert prepared.over_window
    out = canonical(prepared.messages, "openai")
    assert out[-1].text == huge["content"]  # never cut: the user's own question
    exceeded = [e for e in events if isinstance(e, WindowExceededEvent)]
    assert exceeded and exceeded[-1].floor_tokens > 2000
    assert "system prompt and the current turn alone exceed the window" in exceeded[-1].detail
    # everything but the system prompt and that message went: nothing else holds the request over the window
    floor = COUNTER.count_messages([out[0], out[-1]])
    assert COUNTER.count_messages(out) - floor < 400


@pytest.mark.parametrize("seed", [5, 11])
def test_an_agent_s_task_survives_every_compaction(seed: int) -> None:
    """An agent's whole loop is one user turn, so its task is the newest user message and stays verbatim: the
    second compaction used to merge it into the record before it (two user messages in a row, repaired) and
    summarize it away with the rest (agent_session(120, seed=5) at 12K: gone from the second compaction on)."""
    history = agent_session(120, seed=seed)
    task = history[1]
    manager = ContextManager(ManagerConfig(), context_window=12_000, archive=MemoryArchive())
    compactions = 0
    for end in range(2, len(history) + 1):
        if end < len(history) and history[end]["role"] != "assistant":
            continue  # a model request before each answer, and one at the end
        prepared = manager.prepare_sync(history[:end])
        if prepared.event is not None and prepared.event.kind == "summarized":
            compactions += 1
            assert task in prepared.messages, f"compaction {compactions} (request before message {end})"
    assert compactions >= 3
