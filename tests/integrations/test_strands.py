"""`chainsum.integrations.strands` driven through the real Strands Agents (1.62): an `Agent` with tools, a
`CannedModel` (a `Model` subclass streaming canned events, as Strands' own tests do) replaying recorded corpus
conversations, a `FileSessionManager` and a `SQLiteStore` archive in ``tmp_path``.

What is checked on every request the model receives: its tokens (messages, system prompt and tool specs, counted as
the manager counts them) are inside the window, it is valid for Bedrock (`chainsum.rules`), and no tool result is
orphaned. After each run: the Strands session restores the same history and `removed_message_count` is the number of
stored messages before the verbatim tail; every stored message that left the context is in the archive, and every
summary record expands to its originals (verified by SHA-256). And Strands' own `SummarizingConversationManager`,
run on the same agent where the newest messages alone overflow, loops; chainsum's manager does not.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import sys
from collections.abc import Iterator, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strands import Agent, tool
from strands.agent.conversation_manager import SummarizingConversationManager
from strands.session import FileSessionManager
from strands.types.exceptions import ContextWindowOverflowException

from chainsum import Message, formats, validate
from chainsum.errors import MissingDependencyError
from chainsum.integrations.strands import ChainsumConversationManager
from chainsum.manager import ContextManager, ManagerConfig, ManagerEvent
from chainsum.store import SQLiteStore
from chainsum.testing.strands import CannedModel, CannedRequest, Replay, replay_of
from chainsum.tokens import HeuristicCounter
from corpora_support import documents

COUNTER = HeuristicCounter()


# helpers ------------------------------------------------------------------------------------------------------------
def corpus_replay(prefix: str, runs: int, *, parallel: int = 1) -> Replay:
    """The first `runs` conversations of a corpus, one after the other, as one replay (one system prompt);
    `parallel` merges up to that many consecutive single calls into one step of parallel calls."""
    docs = [d for d in documents(include_subagents=False) if d.label.startswith(prefix)][:runs]
    messages: list[Message] = []
    for i, doc in enumerate(docs):
        loaded = formats.load(doc.data).messages
        messages += [m for m in loaded if i == 0 or m.role != "system"]
    return replay_of(messages, parallel=parallel)


def request_tokens(request: CannedRequest) -> int:
    """What the model received, counted the way the manager counts: messages, system prompt, tool specs."""
    tokens = COUNTER.count_messages(formats.load(request.messages, "bedrock").messages)
    if request.system_prompt:
        tokens += COUNTER.count_text(request.system_prompt)
    if request.tool_specs:
        tokens += COUNTER.count_text(json.dumps(request.tool_specs, ensure_ascii=False, sort_keys=True, default=str))
    return tokens


def orphans(messages: Sequence[Any]) -> list[str]:
    """Tool results without their call in the message before, and calls left unanswered by the message after."""
    found: list[str] = []
    for i, message in enumerate(messages):
        uses = {b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b}
        results = {b["toolResult"]["toolUseId"] for b in message["content"] if "toolResult" in b}
        before = messages[i - 1]["content"] if i else []
        called = {b["toolUse"]["toolUseId"] for b in before if "toolUse" in b}
        found += [f"result {r} at {i} has no call" for r in results - called]
        if uses and i + 1 < len(messages):
            answered = {b["toolResult"]["toolUseId"] for b in messages[i + 1]["content"] if "toolResult" in b}
            found += [f"call {u} at {i} has no result" for u in uses - answered]
    return found


def wire_problems(messages: Sequence[Any]) -> list[str]:
    """What `chainsum.rules` cannot see in wire dicts (it reads runs of user messages as the one turn a Bedrock
    writer would make of them) but the Converse API refuses: two messages of one role in a row, a user message
    mixing tool results with other blocks, an empty one."""
    found = [
        f"two {a['role']} messages at {i}" for i, (a, b) in enumerate(pairwise(messages)) if a["role"] == b["role"]
    ]
    for i, message in enumerate(messages):
        kinds = {"toolResult" in b for b in message["content"]}
        found += [f"tool results mixed with other blocks at {i}"] if kinds == {True, False} else []
        found += [f"empty message at {i}"] if not message["content"] else []
    return found


def check_requests(model: CannedModel, window: int) -> None:
    assert model.requests
    for n, request in enumerate(model.requests):
        tokens = request_tokens(request)
        assert tokens <= window, f"request {n}: {tokens} tokens > window {window}"
        assert validate(request.messages, "bedrock") == [], f"request {n} is not valid for bedrock"
        assert wire_problems(request.messages) == [], f"request {n}"
        assert orphans(request.messages) == [], f"request {n}"


def roles_and_content(messages: Sequence[Any]) -> list[dict[str, Any]]:
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def check_session(agent: Agent, cm: ChainsumConversationManager, store_dir: Path, session: str) -> None:
    """The session restores this history; ``removed_message_count`` counts the stored messages before the tail."""
    repository = FileSessionManager(session_id=session, storage_dir=str(store_dir))
    stored = repository.list_messages(session, agent.agent_id)
    prefix = len(cm.get_state()["chainsum_prefix"])
    tail = agent.messages[prefix:]
    assert cm.removed_message_count + len(tail) == len(stored)
    assert roles_and_content(tail) == roles_and_content([s.to_message() for s in stored[cm.removed_message_count :]])
    restored_cm = ChainsumConversationManager(context_window=cm.manager.window)
    restored = Agent(
        model=CannedModel(lambda r: {"role": "assistant", "content": [{"text": "-"}]}),
        conversation_manager=restored_cm,
        session_manager=FileSessionManager(session_id=session, storage_dir=str(store_dir)),
        callback_handler=None,
    )
    assert roles_and_content(restored.messages) == roles_and_content(agent.messages)
    assert restored_cm.removed_message_count == cm.removed_message_count


def check_archive(agent: Agent, cm: ChainsumConversationManager, store: SQLiteStore, store_dir: Path) -> None:
    """Every stored message that left the context is in the archive (part by part: Bedrock merges a summary
    record with a user message that follows it), and every record expands to its verified originals."""
    session = cm.manager.session
    records = store.records(session)
    assert records
    for record in records:
        assert len(store.expand(record.id)) == len(record.original_message_ids)
    stored = FileSessionManager(session_id=session, storage_dir=str(store_dir)).list_messages(session, agent.agent_id)
    gone = formats.load([s.to_message() for s in stored[: cm.removed_message_count]], "bedrock").messages
    kept = {repr(p) for m in formats.load(list(agent.messages), "bedrock").messages for p in m.parts}
    archived = {repr(p) for e in store.archived(session) for p in e.message.parts}
    lost = [m for m in gone if any(repr(p) not in kept | archived for p in m.parts)]
    assert lost == []


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    archive = SQLiteStore(tmp_path / "chainsum.db")
    yield archive
    archive.close()


async def play(agent: Agent, replay: Replay, turns: slice = slice(None)) -> None:
    for turn in replay.turns[turns]:
        await agent.invoke_async(turn.prompt)


# long runs over the corpora ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("corpus", "runs", "parallel", "window"),
    # the whole Claude Code session: tests/data holds only its start
    [
        pytest.param("tau-bench", 14, 3, 4096, id="tau-bench-14-runs-4k"),
        pytest.param("claude-code", 1, 1, 16_000, id="claude-code-16k", marks=pytest.mark.corpus),
    ],
)
@pytest.mark.slow
def test_replayed_agent_stays_inside_the_window(
    corpus: str, runs: int, parallel: int, window: int, tmp_path: Path, store: SQLiteStore
) -> None:
    """tau-bench's gpt-4o made one call at a time: its consecutive calls are merged into parallel steps (up to 3),
    so both shapes run with parallel calls through Strands' concurrent tool executor."""
    replay = corpus_replay(corpus, runs, parallel=parallel)
    assert replay.steps >= 150  # hundreds of model calls
    events: list[ManagerEvent] = []
    cm = ChainsumConversationManager(context_window=window, archive=store, session="run", on_event=events.append)
    model = replay.model(context_window_limit=window)
    system = replay.system or "You are a coding agent working in the user's repository."
    agent = Agent(
        model=model,
        tools=replay.tools(),
        system_prompt=system,
        conversation_manager=cm,
        session_manager=FileSessionManager(session_id="run", storage_dir=str(tmp_path)),
        callback_handler=None,
    )
    asyncio.run(play(agent, replay))

    # the agent's own model writes the summaries too (Strands' default, issue 33): its other requests are the steps
    steps = [r for r in model.requests if not r.is_summarization]
    assert len(steps) == replay.steps and model.summaries == len(model.requests) - len(steps) > 0
    check_requests(model, window)  # the summary requests too: inside the window, valid for Bedrock
    parallel_calls = max(sum("toolUse" in b for b in r.messages[-2]["content"]) for r in steps[1:])
    assert parallel_calls >= (4 if corpus == "claude-code" else 2)
    if corpus == "tau-bench":  # the airline policy and the tool specs, outside agent.messages, take nearly half
        specs = json.dumps(model.requests[0].tool_specs, ensure_ascii=False, sort_keys=True, default=str)
        assert COUNTER.count_text(system) + COUNTER.count_text(specs) > 0.4 * window
    assert sum(e.kind == "summarized" for e in events) >= 10
    assert not any(e.kind == "over_window" for e in events)
    assert cm.removed_message_count > len(agent.messages)
    check_session(agent, cm, tmp_path, "run")
    check_archive(agent, cm, store, tmp_path)


def test_a_restarted_process_resumes_from_the_session_and_the_archive(tmp_path: Path) -> None:
    replay = corpus_replay("tau-bench", 6)
    window = 4096
    half = len(replay.turns) // 2
    responder = replay.responder()  # one script across both processes
    models: list[CannedModel] = []

    def start(db: SQLiteStore) -> tuple[Agent, ChainsumConversationManager]:
        cm = ChainsumConversationManager(context_window=window, archive=db, session="resume")
        models.append(CannedModel(responder))
        agent = Agent(
            model=models[-1],
            tools=replay.tools(),
            system_prompt=replay.system,
            conversation_manager=cm,
            session_manager=FileSessionManager(session_id="resume", storage_dir=str(tmp_path)),
            callback_handler=None,
        )
        return agent, cm

    first_db = SQLiteStore(tmp_path / "chainsum.db")
    agent, cm = start(first_db)
    asyncio.run(play(agent, replay, slice(None, half)))
    history, removed = roles_and_content(agent.messages), cm.removed_message_count
    assert removed > 0
    first_db.close()

    db = SQLiteStore(tmp_path / "chainsum.db")
    try:
        agent, cm = start(db)
        assert roles_and_content(agent.messages) == history
        assert cm.removed_message_count == removed
        asyncio.run(play(agent, replay, slice(half, None)))
        for model in models:
            check_requests(model, window)
        check_session(agent, cm, tmp_path, "resume")
        check_archive(agent, cm, db, tmp_path)
    finally:
        db.close()


# overflow: Strands' bug and chainsum's answer -------------------------------------------------------------------------
class LoopStopped(Exception):
    """Raised by the test's model to end a retry loop that would otherwise run until Python's recursion limit."""


@tool
def fetch(page: int) -> str:
    """Fetch one page of a document."""
    return f"page {page} " * (800 if page >= 100 else 5)


def overflow_scenario() -> Iterator[dict[str, Any]]:
    """Six small turns, then one turn whose four parallel results together are larger than the window."""
    for t in range(6):
        yield {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": f"a{t}", "name": "fetch", "input": {"page": t}}}],
        }
        yield {"role": "assistant", "content": [{"text": f"Page {t} says nothing new."}]}
    uses = [{"toolUse": {"toolUseId": f"big{k}", "name": "fetch", "input": {"page": 100 + k}}} for k in range(4)]
    yield {"role": "assistant", "content": uses}
    yield {"role": "assistant", "content": [{"text": "All four pages read."}]}
    while True:
        yield {"role": "assistant", "content": [{"text": "Nothing more to read."}]}


class Provider:
    """A provider that refuses requests over `limit` tokens, and stops the test after `stop_after` refusals."""

    def __init__(self, limit: int, stop_after: int = 40) -> None:
        self.limit = limit
        self.stop_after = stop_after
        self.refused = 0

    def __call__(self, request: CannedRequest) -> bool:
        if request_tokens(request) <= self.limit:
            return False
        self.refused += 1
        if self.refused >= self.stop_after:
            raise LoopStopped(f"{self.refused} overflowing requests")
        return True


def overflow_agent(cm: Any, provider: Provider, prompts: int = 8) -> tuple[Agent, CannedModel, BaseException | None]:
    replies = overflow_scenario()
    model = CannedModel(lambda _: next(replies), overflow=provider)
    agent = Agent(
        model=model, tools=[fetch], system_prompt="Read pages.", conversation_manager=cm, callback_handler=None
    )
    try:
        for t in range(prompts):
            agent(f"Read page batch {t}")  # the sync call: Strands runs its loop on a thread of its own
    except (LoopStopped, ContextWindowOverflowException) as exc:
        return agent, model, exc
    return agent, model, None


def test_strands_summarizing_manager_loops_when_the_newest_messages_alone_overflow() -> None:
    """Strands' own bug (its issue #3338): summarizing the oldest messages cannot shrink a history whose weight is
    in the newest turn, and once 10 recent messages are all that is left it summarizes its own summary, again and
    again; the agent retries by recursion, with no bound. Here the provider stops it after 40 refusals."""
    provider = Provider(limit=5000)
    agent, model, error = overflow_agent(SummarizingConversationManager(), provider)
    assert isinstance(error, LoopStopped)
    assert provider.refused == 40
    assert model.summaries >= 35  # a summary per retry, each of (mostly) the previous summary
    assert len(agent.messages) == 11  # the summary and the 10 preserved messages: nothing shrinks


def test_chainsum_fits_the_same_turn_without_a_single_overflow(store: SQLiteStore) -> None:
    provider = Provider(limit=5000)
    cm = ChainsumConversationManager(context_window=5000, archive=store)
    agent, model, error = overflow_agent(cm, provider)
    assert error is None
    assert provider.refused == 0
    check_requests(model, 5000)
    big = [p for e in store.archived(cm.manager.session) for p in e.message.parts if "page 100 page 100" in repr(p)]
    assert big  # the clipped results' originals are in the archive
    assert agent.messages[-1]["content"] == [{"text": "Nothing more to read."}]


def test_reduce_context_shrinks_when_the_provider_window_is_smaller_than_configured(store: SQLiteStore) -> None:
    """The manager believes in 16,000 tokens, the provider refuses above 5,000: Strands calls `reduce_context` with
    the overflow, from inside its running loop (the sync ``agent(...)`` path); chainsum lowers its window to 90 % of
    what was refused and clips the turn's results, and the agent carries on."""
    provider = Provider(limit=5000)
    cm = ChainsumConversationManager(context_window=16_000, archive=store)
    reductions: list[int] = []
    original = cm.reduce_context

    def counting(agent: Agent, e: Exception | None = None, **kwargs: Any) -> None:
        reductions.append(len(agent.messages))
        original(agent, e, **kwargs)

    cm.reduce_context = counting  # type: ignore[method-assign]
    agent, _, error = overflow_agent(cm, provider)
    assert error is None
    assert 1 <= len(reductions) == provider.refused <= 3
    assert cm.manager.window < 16_000  # learned from the refusal
    assert agent.messages[-1]["content"] == [{"text": "Nothing more to read."}]
    assert validate(agent.messages, "bedrock") == [] and orphans(agent.messages) == []


def test_reduce_context_raises_instead_of_looping_when_nothing_can_go() -> None:
    """A prompt larger than the provider's window: no history edit can make the request fit. chainsum raises the
    overflow after one attempt (Strands' manager would summarize forever)."""
    provider = Provider(limit=2000)
    cm = ChainsumConversationManager(context_window=8000)
    replies = overflow_scenario()
    model = CannedModel(lambda _: next(replies), overflow=provider)
    agent = Agent(model=model, tools=[fetch], conversation_manager=cm, callback_handler=None)
    for t in range(6):
        agent(f"Read page batch {t}")
    with pytest.raises(ContextWindowOverflowException, match="never compacts"):
        agent("Please read this: " + "lorem ipsum dolor " * 2000)
    assert provider.refused <= 3


# the pieces ---------------------------------------------------------------------------------------------------------
def long_history(turns: int = 30) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for t in range(turns):
        history.append({"role": "user", "content": [{"text": f"Question {t}: what does order ORD-{t:04d} hold?"}]})
        use = {"toolUseId": f"t{t}", "name": "fetch", "input": {"page": t}}
        history.append({"role": "assistant", "content": [{"toolUse": use}]})
        result = {"toolUseId": f"t{t}", "status": "success", "content": [{"text": f"ORD-{t:04d}: " + "item " * 80}]}
        history.append({"role": "user", "content": [{"toolResult": result}]})
        history.append({"role": "assistant", "content": [{"text": f"Order ORD-{t:04d} holds 80 items."}]})
    return history


@pytest.mark.parametrize("inside", [False, True], ids=["no-loop", "inside-a-running-loop"])
def test_apply_management_works_inside_and_outside_a_running_loop(inside: bool) -> None:
    """`apply_management` is sync; Strands calls it from inside its running loop, where chainsum's sync path runs
    its async work on a worker thread. Both ways compact an over-long history given to ``Agent(messages=...)``."""
    cm = ChainsumConversationManager(context_window=2000)
    agent = Agent(model=CannedModel(lambda _: {"role": "assistant", "content": []}), messages=long_history(),
                  tools=[fetch], conversation_manager=cm, callback_handler=None)  # fmt: skip
    before = len(agent.messages)

    async def in_loop() -> None:
        cm.apply_management(agent)

    if inside:
        asyncio.run(in_loop())
    else:
        cm.apply_management(agent)
    assert len(agent.messages) < before
    assert cm.removed_message_count > 0
    assert validate(agent.messages, "bedrock") == []
    assert orphans(agent.messages) == []


def test_state_round_trip_and_name_check() -> None:
    cm = ChainsumConversationManager(context_window=2000)
    agent = Agent(model=CannedModel(lambda _: {"role": "assistant", "content": []}), messages=long_history(),
                  tools=[fetch], conversation_manager=cm, callback_handler=None)  # fmt: skip
    cm.reduce_context(agent)
    state = json.loads(json.dumps(cm.get_state()))
    assert state["__name__"] == "ChainsumConversationManager"
    other = ChainsumConversationManager(context_window=2000)
    prepend = other.restore_from_session(state)
    assert other.removed_message_count == cm.removed_message_count > 0
    assert prepend is not None
    assert prepend + agent.messages[len(prepend) :] == json.loads(json.dumps(agent.messages))
    with pytest.raises(ValueError, match="Invalid conversation manager state"):
        other.restore_from_session({**state, "__name__": "SlidingWindowConversationManager"})


def test_recall_reaches_the_model_but_not_the_history(store: SQLiteStore) -> None:
    cm = ChainsumConversationManager(context_window=2000, archive=store)
    model = CannedModel(lambda _: {"role": "assistant", "content": [{"text": "ORD-0003 holds 80 items."}]})
    agent = Agent(model=model, messages=long_history(), tools=[fetch], conversation_manager=cm, callback_handler=None)
    agent("Remind me: what did order ORD-0003 hold?")
    *_, last = model.requests[-1].messages
    assert [b["text"][:16] for b in last["content"]] == ["[chainsum recall", "Remind me: what "]
    assert "Order ORD-0003 holds 80 items." in last["content"][0]["text"]
    history = json.dumps(agent.messages)
    assert "chainsum recall" not in history and "Order ORD-0003 holds" not in history  # it came from the archive
    check_requests(model, 2000)


def test_arguments_are_context_manager_arguments() -> None:
    manager = ContextManager(context_window=1000, provider="bedrock")
    assert ChainsumConversationManager(manager=manager).manager is manager
    with pytest.raises(TypeError, match="not both"):
        ChainsumConversationManager(manager=manager, context_window=1000)
    made = ChainsumConversationManager(context_window=1234, session="s1")
    assert (made.manager.window, made.manager.session, made.manager.provider) == (1234, "s1", "bedrock")


def test_strands_context_manager_argument_replaces_a_conversation_manager() -> None:
    """Why the README says ``conversation_manager=`` and not both: Strands' ``context_manager=`` swaps any
    conversation manager for a no-op one."""
    cm = ChainsumConversationManager(context_window=2000)
    with pytest.warns(UserWarning, match="ignoring co-provided conversation_manager"):
        agent = Agent(model=CannedModel(lambda _: {"role": "assistant", "content": []}), context_manager="auto",
                      conversation_manager=cm, callback_handler=None)  # fmt: skip
    assert agent.conversation_manager is not cm


def test_missing_strands_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "strands.agent.conversation_manager", None)
    monkeypatch.delitem(sys.modules, "chainsum.integrations.strands")
    with pytest.raises(MissingDependencyError, match=r'pip install "chainsum\[strands\]"'):
        importlib.import_module("chainsum.integrations.strands")


def test_dicts_come_back_verbatim_and_odd_messages_survive_compaction() -> None:
    """Kept messages stay the very dicts Strands appended (its session holds those); a user message mixing tool
    results with text (which Strands itself never writes, but a caller may) and a system-role summary record (a
    config for providers whose system prompt lives in the list) still give valid requests."""
    history = long_history()
    history[6]["content"] = [*history[6]["content"], {"text": "and also look at page 2"}]
    cm = ChainsumConversationManager(config=ManagerConfig(summary_role="system"), context_window=2000)
    model = CannedModel(lambda _: {"role": "assistant", "content": [{"text": "Done."}]})
    agent = Agent(model=model, messages=history, tools=[fetch], conversation_manager=cm, callback_handler=None)
    tail = agent.messages[-6:]
    agent("One more question about ORD-0029.")
    assert all(any(m is t for m in agent.messages) for t in tail)  # the same objects, not copies
    assert "[chainsum record" in json.dumps(agent.messages[0])
    assert all(m["role"] in ("user", "assistant") for m in agent.messages)
    check_requests(model, 2000)


def test_nothing_to_do_leaves_the_list_alone() -> None:
    cm = ChainsumConversationManager(context_window=1_000_000)
    model = CannedModel(lambda _: {"role": "assistant", "content": [{"text": "Done."}]})
    agent = Agent(model=model, messages=long_history(), tools=[fetch], conversation_manager=cm, callback_handler=None)
    before = list(agent.messages)
    agent("Anything else?")
    assert all(a is b for a, b in zip(before, agent.messages, strict=False))
    assert len(agent.messages) == len(before) + 2
    assert cm.removed_message_count == 0 and cm.get_state()["chainsum_prefix"] == []


def test_the_example_runs_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = Path(__file__).resolve().parents[2] / "examples" / "strands_agent.py"
    spec = importlib.util.spec_from_file_location("_strands_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "_strands_example", module)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    out = capsys.readouterr().out
    assert "ORD-0015: Here it is: Order ORD-0015" in out
    assert "same as before: True" in out
    assert "the first summary: 'Orders looked up so far: ORD-0001" in out  # the summarization agent's model wrote it


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.booleans()), min_size=1, max_size=12),
    st.lists(st.integers(0, 3), max_size=6),
)
def test_user_turns_merged_step_by_step_equal_a_merge_of_the_whole_history(
    roles: list[tuple[str, bool]], growth: list[int]
) -> None:
    """`_UserTurns` looks only at what is new in a grown request: it gives what `_merge_user_turns` gives for the
    whole history (the very list when nothing merges), however the history grows or changes."""
    from chainsum.integrations._strands import UserTurns as _UserTurns
    from chainsum.integrations._strands import merge_user_turns as _merge_user_turns

    def message(i: int, role: str, tool_result: bool) -> dict[str, Any]:
        result: dict[str, Any] = {"toolResult": {"toolUseId": f"t{i}", "content": []}}
        block = result if tool_result else {"text": f"m{i}"}
        return {"role": role, "content": [block]}

    pool: list[Any] = [message(i, role, result) for i, (role, result) in enumerate(roles)]
    turns = _UserTurns()
    history: list[Any] = pool[:1]
    for step, more in enumerate(growth):
        if step % 3 == 2:
            history = [dict(m) for m in history]  # a copy of the history, equal dicts
        history = history + pool[len(history) : len(history) + more]
        if step % 2:
            turns.merge(list(history))  # the same request twice
        given_list: list[Any] = list(history)
        merged = turns.merge(given_list)
        expected = _merge_user_turns(given_list)
        assert merged == expected
        assert (merged is given_list) == (expected is given_list)
