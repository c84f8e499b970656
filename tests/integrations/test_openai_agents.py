"""`chainsum.integrations.openai_agents` against the real OpenAI Agents SDK (openai-agents 0.24), driven as the SDK
tests itself: a `Model` subclass that answers from a script, no network, tracing off.

The agents replay the shared corpora (`chainsum.testing.agent_script`): a tau-bench support session (14 runs of the
airline agent one after another, consecutive tool steps merged into parallel pairs) and a Claude Code session (long
runs of tool steps, parallel calls as recorded). The tools answer with the recorded outputs. Every request the model
receives is checked as it arrives: inside the window (instructions, items and tool definitions, counted by a counter
of the test's own), valid for OpenAI (`chainsum.rules`), every function call answered and every output answering a
call. The Runner drops unanswered calls from what it sends, so the session's own items are checked too, after every
run, by the test's own pairing code rather than the module's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Iterable
from typing import Any, cast

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    OpenAIResponsesCompactionSession,
    RunConfig,
    Runner,
    Session,
    SessionSettings,
    SQLiteSession,
    TResponseInputItem,
    function_tool,
    set_tracing_disabled,
)
from agents.run_config import CallModelData, ModelInputData

import chainsum
from chainsum.integrations.openai_agents import (
    LOST_RESULT,
    ChainsumInputFilter,
    ChainsumSession,
    check_history,
    latest,
)
from chainsum.manager import ManagerConfig, SummarizationEvent
from chainsum.messages import Message
from chainsum.store import MemoryArchive, SQLiteStore
from chainsum.testing.agent_script import AgentScript, ModelTurn, ToolStep, concat_scripts, script_from_messages
from chainsum.testing.openai_agents import ModelRequest, ReplayModel, script_tools
from chainsum.tokens import HeuristicCounter
from corpora_support import documents

set_tracing_disabled(True)
RUN = RunConfig(tracing_disabled=True)


# --- the fake model and its tools ---------------------------------------------------------------------------------


def tool_problems(items: Iterable[Any]) -> list[str]:
    """Every function call answered later, every output answering an earlier call (the test's own pairing)."""
    calls: list[str] = []
    answered: set[str] = set()
    problems: list[str] = []
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            calls.append(item["call_id"])
        elif kind == "function_call_output":
            if item["call_id"] not in calls:
                problems.append(f"output without its call: {item['call_id']}")
            answered.add(item["call_id"])
    problems += [f"call without output: {cid}" for cid in calls if cid not in answered]
    return problems


class Checked:
    """Checks every request the model receives (`ReplayModel`'s ``on_request``): inside the window with the
    instructions and tool definitions, valid for OpenAI, every call paired with its output."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.counter = HeuristicCounter()
        self.max_tokens = 0
        self.failures: list[str] = []

    def __call__(self, request: ModelRequest) -> None:
        n = request.index
        messages = chainsum.load(request.input, format="openai-responses").messages
        specs = [
            {"name": t.name, "description": t.description, "parameters": t.params_json_schema} for t in request.tools
        ]
        tokens = (
            self.counter.count_messages(messages)
            + self.counter.count_text(request.instructions or "")
            + self.counter.count_text(json.dumps(specs, sort_keys=True))
        )
        self.max_tokens = max(self.max_tokens, tokens)
        if tokens > self.window:
            self.failures.append(f"request {n}: {tokens} tokens > window {self.window}")
        self.failures += [f"request {n}: {p}" for p in chainsum.validate(messages, "openai")]
        self.failures += [f"request {n}: {p}" for p in tool_problems(request.input)]


def corpus_script(shape: str) -> AgentScript:
    docs = [d for d in documents(include_subagents=False) if d.label.startswith(shape)]
    if shape == "tau-bench":
        parts = [script_from_messages(chainsum.load(d.data, format=d.format).messages, parallel=2) for d in docs[:14]]
        return concat_scripts(parts, label="tau-bench x14")
    doc = docs[0]
    return script_from_messages(chainsum.load(doc.data, format=doc.format).messages, label=doc.label)


def archived_calls(archive: MemoryArchive | SQLiteStore, session: str) -> dict[str, set[str]]:
    """Call id -> the texts of its archived results (a call archived without its result maps to no text)."""
    out: dict[str, set[str]] = {}
    for entry in archive.archived(session):
        message: Message = entry.message
        for call in message.tool_calls:
            out.setdefault(call.id, set())
        for result in message.tool_results:
            out.setdefault(result.call_id, set()).add(result.text)
    return out


# --- agents on the corpora ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "window"),
    # the whole Claude Code session: tests/data holds only its start
    [("tau-bench", 6000), pytest.param("claude-code", 16000, marks=pytest.mark.corpus)],
)
@pytest.mark.slow
def test_an_agent_replaying_a_corpus_session_stays_inside_the_window(shape: str, window: int) -> None:
    script = corpus_script(shape)
    instructions = script.system or "You are a coding agent. Use the tools."
    events: list[Any] = []
    archive = MemoryArchive()
    check = Checked(window)
    model = ReplayModel(on_request=check)
    agent = Agent(name="agent", instructions=instructions, model=model, tools=list(script_tools(script.tools, model)))
    session = ChainsumSession(
        "corpus",
        config=ManagerConfig(),
        context_window=window,
        archive=archive,
        instructions=instructions,
        reserved_tokens=300,
        on_event=events.append,
    )
    run_config = RunConfig(tracing_disabled=True, call_model_input_filter=session.input_filter)
    all_turns = [turn for run in script.runs for turn in run.turns]
    expected = {
        f"call_{k}_{j}": step.output for k, turn in enumerate(all_turns, 1) for j, step in enumerate(turn.calls)
    }

    async def drive() -> None:
        for n, run in enumerate(script.runs):
            model.play(run)
            result = await Runner.run(agent, run.user, session=session, run_config=run_config, max_turns=1000)
            assert result.final_output == run.turns[-1].text
            items = await session.get_items()
            stored = await session.underlying_session.get_items()
            assert stored == items, f"run {n}: the wrapped session holds what the session returns"
            assert tool_problems(items) == [], f"run {n}"
            last = items[-1]
            assert last.get("role") == "assistant" and last["content"][0]["text"] == run.turns[-1].text

    asyncio.run(drive())
    assert model.calls == script.model_calls >= 150
    assert check.failures == []
    assert check.max_tokens > 0.7 * window  # the window was used, not trimmed to the bone
    compactions = [e for e in events if isinstance(e, SummarizationEvent)]
    assert compactions and session.rewrites > 0
    assert sum(len(turn.calls) > 1 for turn in all_turns) > 5  # parallel calls

    # every original is in the store verbatim or in the archive, and every record expands to what it replaced
    stored = asyncio.run(session.underlying_session.get_items())
    in_store = {i["call_id"]: i["output"] for i in stored if i.get("type") == "function_call_output"}
    archived = archived_calls(archive, "corpus")
    for call_id, output in expected.items():
        assert in_store.get(call_id) == output or output in archived.get(call_id, set()), call_id
    records = archive.records("corpus")
    assert len(records) == len(compactions)
    for record in records:
        originals = archive.expand(record.id)
        assert len(originals) == len(record.original_message_ids) > 0


# --- what the SDK does with a session that lost something -----------------------------------------------------------


@function_tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def _history_with_two_calls() -> list[TResponseInputItem]:
    return [
        {"role": "user", "content": "look up a and b"},
        {"type": "function_call", "id": "fc_a", "call_id": "call_a", "name": "lookup", "arguments": '{"key":"a"}'},
        {"type": "function_call", "id": "fc_b", "call_id": "call_b", "name": "lookup", "arguments": '{"key":"b"}'},
        {"type": "function_call_output", "call_id": "call_a", "output": "value of a"},
        {"type": "function_call_output", "call_id": "call_b", "output": "value of b"},
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "a and b looked up", "annotations": []}],
        },
    ]


def _run_once(session: Session, caplog: pytest.LogCaptureFixture) -> list[TResponseInputItem]:
    model = ReplayModel(keep=True)
    model.turns.append(_turn({"text": "ok"}))
    agent = Agent(name="agent", instructions="be brief", model=model, tools=[lookup])
    with caplog.at_level(logging.WARNING):
        asyncio.run(Runner.run(agent, "and now?", session=session, run_config=RUN))
    return model.requests[0].input


def test_the_runner_silently_drops_a_call_whose_result_the_store_lost(caplog: pytest.LogCaptureFixture) -> None:
    lost = [i for i in _history_with_two_calls() if i.get("call_id") != "call_a" or i["type"] == "function_call"]

    plain = SQLiteSession("plain")
    asyncio.run(plain.add_items(lost))
    sent = _run_once(plain, caplog)
    assert [i.get("call_id") for i in sent if i.get("type") == "function_call"] == ["call_b"]  # call_a vanished
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # and nobody said a word
    caplog.clear()

    wrapped = SQLiteSession("wrapped")
    asyncio.run(wrapped.add_items(lost))
    sent = _run_once(ChainsumSession("wrapped", wrapped, context_window=10**6), caplog)
    assert tool_problems(sent) == []
    assert [i.get("call_id") for i in sent if i.get("type") == "function_call"] == ["call_a", "call_b"]
    stand_in = next(i for i in sent if i.get("type") == "function_call_output" and i["call_id"] == "call_a")
    assert stand_in["output"] == LOST_RESULT
    assert any("call_a" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert tool_problems(asyncio.run(wrapped.get_items())) == []  # the store is repaired, the warning said once


def test_the_runner_sends_an_output_whose_call_the_store_lost(caplog: pytest.LogCaptureFixture) -> None:
    lost = [i for i in _history_with_two_calls() if i.get("id") != "fc_a"]

    plain = SQLiteSession("plain")
    asyncio.run(plain.add_items(lost))
    assert tool_problems(_run_once(plain, caplog)) == ["output without its call: call_a"]  # OpenAI answers 400

    wrapped = SQLiteSession("wrapped")
    asyncio.run(wrapped.add_items(lost))
    sent = _run_once(ChainsumSession("wrapped", wrapped, context_window=10**6), caplog)
    assert tool_problems(sent) == []
    assert any("call_a" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_the_sdk_compaction_session_needs_openais_servers() -> None:
    """`OpenAIResponsesCompactionSession` (0.24) compacts by calling ``responses.compact`` on OpenAI: any other model
    name is refused, and without OpenAI's servers (here a closed local port) it cannot compact at all."""
    from openai import APIConnectionError, AsyncOpenAI

    with pytest.raises(ValueError, match="Unsupported model"):
        OpenAIResponsesCompactionSession("s", SQLiteSession("s"), model="llama3.1")
    client = AsyncOpenAI(api_key="test", base_url="http://127.0.0.1:9/v1", max_retries=0)
    sdk = OpenAIResponsesCompactionSession("s", SQLiteSession("s"), client=client, model="gpt-4.1")
    asyncio.run(sdk.add_items(_history_with_two_calls()))
    with pytest.raises(APIConnectionError):
        asyncio.run(sdk.run_compaction({"force": True, "compaction_mode": "input"}))

    session = ChainsumSession("s", context_window=1200, config=ManagerConfig())  # chainsum compacts offline
    asyncio.run(session.add_items(_parallel_history(12)))
    items = asyncio.run(session.get_items())
    assert session.last is not None and session.last.changed and tool_problems(items) == []


# --- the protocol and its corners -----------------------------------------------------------------------------------


def test_it_is_a_session_and_delegates_writes(tmp_path: Any) -> None:
    session = ChainsumSession("s1", db_path=tmp_path / "agents.db", context_window=8000)
    assert isinstance(session, Session)
    assert session.session_id == "s1" and session.session_settings == SessionSettings()
    assert isinstance(session.underlying_session, SQLiteSession)
    assert session.manager.session == "s1"
    items = _history_with_two_calls()

    async def go() -> None:
        await session.add_items(items)
        assert await session.get_items() == items
        # the newest N, counted as the SDK's sessions count them (its own tests hold every session to it); the
        # Runner drops an output whose call the cut left out
        assert await session.get_items(2) == items[-2:]
        assert await session.get_items(5) == items[-5:]
        assert await session.get_items(len(items) + 3) == items
        assert await session.get_items(0) == [] and await session.get_items(-1) == items
        assert await session.pop_item() == items[-1]
        await session.clear_session()
        assert await session.get_items() == []

    asyncio.run(go())
    session.close()
    again = ChainsumSession("s1", db_path=tmp_path / "agents.db", context_window=8000)
    asyncio.run(again.add_items(items[:1]))
    assert asyncio.run(again.get_items()) == items[:1]
    again.close()


def test_one_session_serves_several_threads_and_event_loops(tmp_path: Any) -> None:
    """The SDK's sessions may be shared by threads each running its own event loop (its own tests drive a
    `SQLiteSession` from three ``asyncio.run`` at once): chainsum's session serializes its operations across them
    without hanging (an `asyncio.Lock` would leave the other loops' waiters asleep)."""
    session = ChainsumSession("s-threads", db_path=tmp_path / "threads.db", context_window=8000)
    start = threading.Barrier(4)
    failures: list[BaseException] = []

    def worker(k: int) -> None:
        async def turns() -> None:
            for i in range(5):
                await session.add_items([{"role": "user", "content": f"worker {k} turn {i}"}])
                await session.get_items()

        start.wait()
        try:
            asyncio.run(turns())
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert not any(t.is_alive() for t in threads) and failures == []
    contents = sorted(cast(str, item.get("content")) for item in asyncio.run(session.get_items()))
    assert contents == sorted(f"worker {k} turn {i}" for k in range(4) for i in range(5))
    session.close()


def test_manager_or_its_arguments_not_both() -> None:
    with pytest.raises(TypeError):
        ChainsumSession("s", manager=chainsum.ContextManager(context_window=100), context_window=100)
    with pytest.raises(ValueError):
        ChainsumSession("s", context_window=100, reserved_tokens=-1)


def _parallel_history(turns: int) -> list[TResponseInputItem]:
    items: list[TResponseInputItem] = []
    for t in range(turns):
        items.append({"role": "user", "content": f"question {t}"})
        items.append({"type": "reasoning", "id": f"rs_{t}", "summary": []})
        for k in range(3):
            items.append({"type": "function_call", "call_id": f"c{t}{k}", "name": "lookup", "arguments": "{}"})
        items += [{"type": "function_call_output", "call_id": f"c{t}{k}", "output": f"r{t}{k}"} for k in range(3)]
    return items


def test_each_model_turn_is_read_once_and_written_back_as_the_items_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session and the filter read the SDK's items through the shared `GroupReader`: a request that adds a turn
    converts that turn's runs only (a model turn's reasoning and calls: one run), whether the items are the very
    objects (the filter) or a store's new copies (the session); a compacted history keeps the items read."""
    import chainsum.integrations.openai_agents as module

    runs: list[int] = []
    load = module.load

    def counting(data: Any, format: str | None = None) -> Any:
        runs.append(len(data))
        return load(data, format=format)

    monkeypatch.setattr(module, "load", counting)
    history = _parallel_history(8)  # 8 items a turn: the question, one run of reasoning and 3 calls, 3 outputs
    session = ChainsumSession("once", context_window=100_000, config=ManagerConfig())
    asyncio.run(session.add_items(history[:40]))
    asyncio.run(session.get_items())
    assert sum(runs) == 40 and len(runs) == 5 * 5
    runs.clear()
    asyncio.run(session.add_items(history[40:48]))
    assert asyncio.run(session.get_items()) == history[:48] and runs == [1, 4, 1, 1, 1]
    agent = Agent(name="agent", instructions="be brief")
    input_filter = ChainsumInputFilter(context_window=100_000, config=ManagerConfig())
    data: Any = CallModelData(ModelInputData(list(history[:48]), "be brief"), agent, None)
    asyncio.run(input_filter(data))
    runs.clear()
    data = CallModelData(ModelInputData([*history[:48], *history[48:56]], "be brief"), agent, None)
    out = asyncio.run(input_filter(data))
    assert runs == [1, 4, 1, 1, 1] and all(a is b for a, b in zip(out.input, data.model_data.input, strict=True))
    small = ChainsumSession("small", context_window=600, config=ManagerConfig())
    asyncio.run(small.add_items(history))
    kept = asyncio.run(small.get_items())
    assert small.last is not None and small.last.changed and tool_problems(kept) == []
    assert kept[-8:] == history[-8:]  # the newest turn kept as the store held it
    runs.clear()
    asyncio.run(small.add_items(history[:1]))
    asyncio.run(small.get_items())
    assert runs == [1]  # the compacted history written back is what was read: only the new item is converted


def test_an_item_that_cannot_be_read_is_named_by_its_place_in_the_history() -> None:
    """The reader converts a run of items at a time; a bad item is still reported at its index in the whole list."""
    input_filter = ChainsumInputFilter(context_window=100_000, config=ManagerConfig())
    agent = Agent(name="agent")
    good: list[Any] = _parallel_history(2)
    for bad in ({"type": 5}, "not an item"):
        data: Any = CallModelData(ModelInputData([*good, bad], None), agent, None)
        with pytest.raises(chainsum.errors.FormatError, match=rf"\[{len(good)}\]"):
            asyncio.run(input_filter(data))


def test_latest_never_starts_with_an_orphan_or_a_lone_item() -> None:
    items = _parallel_history(4)
    for n in range(len(items) + 2):
        tail = latest(items, n)
        assert tail == items[len(items) - len(tail) :] and len(tail) <= n
        assert tool_problems(tail) == [], n
        if tail and len(tail) < len(items):
            assert items[len(items) - len(tail) - 1].get("type") != "reasoning", n
    assert latest(items, -1) == items


def test_pending_calls_are_kept_and_an_approval_resumes() -> None:
    @function_tool(needs_approval=True)
    def danger(key: str) -> str:
        """Do it."""
        return f"did {key}"

    model = ReplayModel()
    turns = [
        {"calls": [("danger", '{"key":"a"}')]},
        {"text": "done"},
    ]
    model.turns.extend(_turn(turn) for turn in turns)
    agent = Agent(name="agent", instructions="be brief", model=model, tools=[danger])
    session = ChainsumSession("approval", context_window=10**6)

    async def go() -> list[TResponseInputItem]:
        result = await Runner.run(agent, "do a", session=session, run_config=RUN)
        assert result.interruptions
        pending = await session.get_items()
        assert pending[-1]["type"] == "function_call" and tool_problems(pending) == ["call without output: call_1_0"]
        state = result.to_state()
        state.approve(result.interruptions[0])
        result = await Runner.run(agent, state, session=session, run_config=RUN)
        assert result.final_output == "done"
        return await session.get_items()

    items = asyncio.run(go())
    assert tool_problems(items) == []
    assert [i["output"] for i in items if i.get("type") == "function_call_output"] == ["did a"]


def _turn(spec: dict[str, Any]) -> ModelTurn:
    calls = tuple(ToolStep(name=n, arguments=a, output="") for n, a in spec.get("calls", ()))
    return ModelTurn(text=spec.get("text", ""), calls=calls)


def test_check_history_answers_lost_calls_and_keeps_pending_ones() -> None:
    items = _history_with_two_calls()
    assert check_history(items) == (items, (), ())
    pending = [*items, {"type": "function_call", "call_id": "call_p", "name": "lookup", "arguments": "{}"}]
    assert check_history(pending) == (pending, (), ())
    lost = [i for i in items if i.get("call_id") != "call_b" or i["type"] == "function_call"]
    fixed, lost_ids, orphans = check_history(lost)
    assert lost_ids == ("call_b",) and orphans == () and tool_problems(fixed) == []
    assert fixed[4] == {"type": "function_call_output", "call_id": "call_b", "output": LOST_RESULT}


def test_check_history_leaves_no_orphan_whatever_item_the_store_lost() -> None:
    """Each single item of a history with parallel calls and reasoning taken out in turn: what `check_history`
    returns pairs every call with an output and is valid for OpenAI; a stand-in sits in its call's own zone."""
    final = {"role": "assistant", "content": "all done"}
    history = [*_parallel_history(3), final, {"role": "user", "content": "thanks"}]
    for gone in range(len(history)):
        damaged = history[:gone] + history[gone + 1 :]
        fixed, lost, orphans = check_history(damaged)
        assert tool_problems(fixed) == [], gone
        assert chainsum.validate(chainsum.load(fixed, format="openai-responses").messages, "openai") == [], gone
        assert len(lost) + len(orphans) == (history[gone].get("type") in ("function_call", "function_call_output"))


def test_without_instructions_the_session_would_not_know_the_request_is_full() -> None:
    """The session never sees the agent's instructions: given them, it compacts a history that alone would fit."""
    history = _parallel_history(12)
    instructions = "policy: " + "always check the reservation first. " * 200
    blind = ChainsumSession("blind", context_window=2500, config=ManagerConfig())
    told = ChainsumSession("told", context_window=2500, config=ManagerConfig(), instructions=instructions)
    for session in (blind, told):
        asyncio.run(session.add_items(history))
        asyncio.run(session.get_items())
    assert blind.last is not None and not blind.last.changed
    assert told.last is not None and told.last.changed and told.last.tokens_after <= 2500


def test_the_filter_alone_leaves_the_session_untouched() -> None:
    script = corpus_script("tau-bench")
    script = AgentScript(label=script.label, system=script.system, runs=script.runs[:40])
    check = Checked(5000)
    model = ReplayModel(on_request=check)
    agent = Agent(name="agent", instructions=script.system, model=model, tools=list(script_tools(script.tools, model)))
    store = SQLiteStore(":memory:")
    input_filter = ChainsumInputFilter(context_window=5000, config=ManagerConfig(), archive=store, session="f")
    session = SQLiteSession("untouched")
    run_config = RunConfig(tracing_disabled=True, call_model_input_filter=input_filter)

    async def go() -> int:
        added = 0
        for run in script.runs:
            model.play(run)
            before = len(await session.get_items())
            await Runner.run(agent, run.user, session=session, run_config=run_config, max_turns=100)
            added += len(await session.get_items()) - before
        return added

    added = asyncio.run(go())
    assert check.failures == []
    items = asyncio.run(session.get_items())
    assert len(items) == added and tool_problems(items) == []  # everything the Runner saved, as it saved it
    assert sum(i.get("type") == "function_call" for i in items) == sum(
        len(t.calls) for r in script.runs for t in r.turns
    )
    records = store.records("f")
    assert records and all(store.expand(r.id) for r in records)


def test_a_failed_store_rewrite_restores_the_history(caplog: pytest.LogCaptureFixture) -> None:
    class Flaky(SQLiteSession):
        fail = True

        async def add_items(self, items: list[TResponseInputItem]) -> None:
            if self.fail and len(items) > 1:
                self.fail = False
                raise OSError("disk full")
            await super().add_items(items)

    store = Flaky("flaky")
    store.fail = False
    history = _parallel_history(12)
    asyncio.run(store.add_items(history))
    store.fail = True
    session = ChainsumSession("flaky", store, context_window=1200, config=ManagerConfig())
    with caplog.at_level(logging.ERROR):
        items = asyncio.run(session.get_items())
    assert session.last is not None and session.last.changed and len(items) < len(history)
    assert asyncio.run(store.get_items()) == history  # put back
    assert session.rewrites == 0 and any("restoring" in r.getMessage() for r in caplog.records)


def test_a_cancelled_get_items_still_finishes_the_store_rewrite() -> None:
    """Cancelled after the wrapped session was cleared and before the compacted items were added: the rewrite
    finishes (an empty session would have lost the conversation) and the cancellation is raised after it."""

    class Slow(SQLiteSession):
        adding: asyncio.Event | None = None

        async def add_items(self, items: list[TResponseInputItem]) -> None:
            if self.adding is not None:
                self.adding.set()
                await asyncio.sleep(0.05)
            await super().add_items(items)

    store = Slow("slow")
    history = _parallel_history(12)
    asyncio.run(store.add_items(history))
    session = ChainsumSession("slow", store, context_window=1200, config=ManagerConfig())

    async def go() -> list[TResponseInputItem]:
        store.adding = asyncio.Event()
        task = asyncio.create_task(session.get_items())
        await store.adding.wait()  # cleared, now adding
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        store.adding = None
        return await store.get_items()

    stored = asyncio.run(go())
    assert session.rewrites == 1 and 0 < len(stored) < len(history) and tool_problems(stored) == []


def test_the_module_names_its_extra_when_the_sdk_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys

    from chainsum.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "agents", None)
    monkeypatch.delitem(sys.modules, "chainsum.integrations.openai_agents")
    with pytest.raises(MissingDependencyError, match=r"chainsum\[openai-agents\]"):
        importlib.import_module("chainsum.integrations.openai_agents")
