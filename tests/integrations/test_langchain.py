"""`ChainsumMiddleware` in real LangChain v1 agents (``create_agent``, LangGraph's ``InMemorySaver``), driven by a
scripted tool-calling model through recorded sessions of the shared corpora, and LangChain's own
``SummarizationMiddleware`` shown failing where chainsum does not.

What every run asks of every request the model received: it fits the window (system prompt and tool definitions
counted), it validates for the provider, and no ``ToolMessage`` answers a call its request does not hold. Of the
saved state: every checkpoint is free of orphans and of recall blocks, and every original chainsum archived was in
some checkpoint (so ``expand`` gives back real history).
"""

from __future__ import annotations

import asyncio
import json
from functools import cache
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, SummarizationMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from chainsum import validate
from chainsum.chain import RECORD_INTRO, is_record_message
from chainsum.formats import load
from chainsum.formats.langchain import from_objects
from chainsum.integrations.langchain import ChainsumMiddleware
from chainsum.manager import ContextManager, ManagerConfig, SummarizationEvent, is_recall_message
from chainsum.messages import Message
from chainsum.testing.langchain import (
    LangChainScript,
    ScriptedChatModel,
    ScriptedTools,
    agent_script,
    stub_tools,
)
from chainsum.tokens import HeuristicCounter
from corpora_support import documents

CODING_PROMPT = "You are a coding agent working in the user's repository. " * 12


@cache
def _corpus() -> tuple[tuple[str, tuple[Message, ...]], ...]:
    """The conversations these tests replay, read in one pass: the first five tau-bench runs and the two Claude Code
    sessions (the corpora are read in order, and Claude Code comes after tau-bench and tau2)."""
    out: list[tuple[str, tuple[Message, ...]]] = []
    for doc in documents(include_subagents=False):
        tau = doc.label.startswith("tau-bench/") and sum(k.startswith("tau-bench/") for k, _ in out) < 5
        if tau or doc.label.startswith("claude-code/"):
            out.append((doc.label, load(doc.data, doc.format).messages))
        elif doc.label.startswith("bfcl"):
            break
    return tuple(out)


def _script(prefix: str, n: int = 1, *, parallel: int = 1) -> tuple[LangChainScript, ...]:
    found = [agent_script(messages, parallel=parallel) for label, messages in _corpus() if label.startswith(prefix)]
    if len(found) < n:
        pytest.skip("the shared corpora are not here")
    return tuple(found[:n])


def _agent(
    script: LangChainScript,
    *middleware: AgentMiddleware[Any, Any, Any],
    saver: InMemorySaver | None = None,
    system: str | None = None,
    model: ScriptedChatModel | None = None,
) -> tuple[Any, ScriptedChatModel]:
    model = model or ScriptedChatModel(responses=script.responses)
    agent = create_agent(
        model,
        tools=stub_tools(script.tool_names),
        system_prompt=system if system is not None else script.system,
        middleware=[*middleware, ScriptedTools(script.results)],
        checkpointer=saver or InMemorySaver(),
    )
    return agent, model


def _orphans(messages: list[BaseMessage]) -> list[str]:
    """Tool call ids of ToolMessages not answering a call of the AIMessage their run of results follows (an
    independent check, not chainsum's rules)."""
    out: list[str] = []
    open_calls: set[str] = set()
    for m in messages:
        if isinstance(m, AIMessage):
            open_calls = {c["id"] or "" for c in m.tool_calls} | {c.get("id") or "" for c in m.invalid_tool_calls}
        elif isinstance(m, ToolMessage):
            if m.tool_call_id not in open_calls:
                out.append(m.tool_call_id)
        else:
            open_calls = set()
    return out


def _tool_tokens(model: ScriptedChatModel, counter: HeuristicCounter) -> int:
    return sum(counter.count_text(json.dumps(convert_to_openai_tool(t), ensure_ascii=False)) for t in model.tools)


def _check_requests(model: ScriptedChatModel, window: int, provider: str) -> None:
    counter = HeuristicCounter()
    tools = _tool_tokens(model, counter)
    assert model.requests
    for k, request in enumerate(model.requests):
        messages = from_objects(request)
        assert counter.count_messages(messages) + tools <= window, f"request {k} is over the window"
        assert validate(messages, provider) == [], f"request {k}"
        assert _orphans(request) == [], f"request {k}"


def _check_state(agent: Any, config: dict[str, Any], middleware: ChainsumMiddleware, session: str) -> int:
    """The saved state: no checkpoint holds an orphan, a recall block or a message twice, and every original the
    archive holds was in a checkpoint, or is chainsum's own (an older summary record), or is the masked form of a
    message that was, whose original the archive holds too. Returns the number of records.

    In state mode every checkpoint is read (each is small); in request mode the last state holds every message
    ever saved, so only the latest checkpoints are read (reading 300 of 300 messages each takes seconds)."""
    compacts_state = middleware.mode == "state"
    seen: set[Message] = set()
    by_id: dict[str | None, list[Message]] = {}
    for snapshot in agent.get_state_history(config, limit=None if compacts_state else 5):
        messages = snapshot.values.get("messages", [])
        assert _orphans(messages) == []
        assert len({m.id for m in messages}) == len(messages)  # REMOVE_ALL left no duplicate
        canonical = from_objects(messages)
        assert not any(is_recall_message(m) for m in canonical)
        for m in canonical:
            if m not in seen:
                seen.add(m)
                by_id.setdefault(m.id, []).append(m)
    records = middleware.archive.records(session)
    archived = [from_objects(middleware.expand(r.id)) for r in records]
    assert [len(a) for a in archived] == [len(r.original_message_ids) for r in records]
    every = {m for a in archived for m in a}
    for m in every - seen:
        if not is_record_message(m):
            assert any(s in every for s in by_id.get(m.id, [])), f"archived message {m.id} was never saved"
    return len(records)


# --- hundreds of turns from the corpora ---------------------------------------------------------------------------


@pytest.mark.corpus  # the whole session: tests/data holds only its start
@pytest.mark.parametrize("mode", ["state", "request"])
@pytest.mark.slow
def test_a_claude_code_session_stays_inside_the_window(mode: str) -> None:
    """154 model calls of a real Claude Code session (parallel calls, tool output up to 60 KB) at an 8K window, with
    Anthropic's rules, through ``invoke`` (the sync hooks)."""
    (script,) = _script("claude-code/258")
    events: list[object] = []
    middleware = ChainsumMiddleware(mode=mode, context_window=8000, provider="anthropic", on_event=events.append)
    agent, model = _agent(script, middleware, system=CODING_PROMPT)
    config = {"configurable": {"thread_id": "cc"}}
    for turn in script.turns:
        agent.invoke({"messages": [HumanMessage(turn.user)]}, config)
    assert len(model.requests) == len(script.responses) >= 150
    assert any(len(r.tool_calls) > 1 for r in script.responses)  # parallel calls were replayed
    _check_requests(model, 8000, "anthropic")
    assert all(isinstance(r[0], SystemMessage) and r[0].text == CODING_PROMPT for r in model.requests)
    compactions = [e for e in events if isinstance(e, SummarizationEvent)]
    assert len(compactions) >= 10
    state = agent.get_state(config).values["messages"]
    total = len(script.turns) + sum(1 + len(r.tool_calls) for r in script.responses)
    if mode == "request":
        assert len(state) == total  # the saved history is untouched
    else:
        assert len(state) < total / 4  # the saved history is the compacted one
    assert _check_state(agent, config, middleware, "cc") == sum(len(e.record_ids) for e in compactions)


def test_tau_bench_runs_in_parallel_threads_through_ainvoke() -> None:
    """Five tau-bench runs (consecutive calls paired into parallel ones) as five threads of one agent, through
    ``ainvoke`` (the async hooks): one manager and one archive session per thread."""
    scripts = _script("tau-bench/", 5, parallel=2)
    middleware = ChainsumMiddleware(context_window=4000, session="airline")
    model = ScriptedChatModel(responses=[])
    saver = InMemorySaver()

    async def run() -> list[int]:
        records: list[int] = []
        for k, script in enumerate(scripts):
            model.responses, model.position = script.responses, 0
            agent, _ = _agent(script, middleware, saver=saver, model=model)
            config = {"configurable": {"thread_id": f"run{k}"}}
            for turn in script.turns:
                await agent.ainvoke({"messages": [HumanMessage(turn.user)]}, config)
            records.append(_check_state(agent, config, middleware, f"airline/run{k}"))
        return records

    records = asyncio.run(run())
    assert sum(records) >= 5 and all(middleware.archive.records(f"airline/run{k}") for k, n in enumerate(records) if n)
    assert len(model.requests) == sum(len(s.responses) for s in scripts)
    assert any(len(r.tool_calls) > 1 for s in scripts for r in s.responses)
    _check_requests(model, 4000, "openai")
    assert all(middleware.manager_for(f"run{k}").session == f"airline/run{k}" for k in range(5))


@pytest.mark.parametrize("mode", ["state", "request"])
def test_a_resumed_thread_continues_from_the_checkpoint_and_the_archive(mode: str) -> None:
    """A new process (a new middleware on the same store and checkpointer) picks a thread up where it was: the
    requests stay inside the window and valid, and the summary chain goes on from the stored one."""
    script = _script("tau-bench/", 3)[2]
    half = len(script.turns) // 2
    first = LangChainScript(script.system, script.turns[:half], script.results, script.tool_names)
    second = LangChainScript(script.system, script.turns[half:], script.results, script.tool_names)
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "resume"}}
    before = ChainsumMiddleware(mode=mode, context_window=3000)
    agent, _ = _agent(first, before, saver=saver)
    for turn in first.turns:
        agent.invoke({"messages": [HumanMessage(turn.user)]}, config)
    n_before = len(before.archive.records("resume"))
    assert n_before >= 1
    after = ChainsumMiddleware(mode=mode, context_window=3000, archive=before.archive)
    agent, model = _agent(second, after, saver=saver)
    for turn in second.turns:
        agent.invoke({"messages": [HumanMessage(turn.user)]}, config)
    _check_requests(model, 3000, "openai")
    records = after.archive.records("resume")
    assert len(records) > n_before and records[n_before].parent_id == records[n_before - 1].id
    assert _check_state(agent, config, after, "resume") == len(records)


def test_sync_hooks_work_inside_a_running_event_loop() -> None:
    """``invoke`` called from async code: the compaction runs on a worker thread instead of failing to start a loop."""
    (script,) = _script("tau-bench/")

    async def run() -> ScriptedChatModel:
        middleware = ChainsumMiddleware(context_window=3000)
        agent, model = _agent(script, middleware)
        for turn in script.turns:
            agent.invoke({"messages": [HumanMessage(turn.user)]}, {"configurable": {"thread_id": "loop"}})
        assert middleware.archive.records("loop")
        return model

    _check_requests(asyncio.run(run()), 3000, "openai")


# --- what LangChain keeps apart is counted ----------------------------------------------------------------------------


@pytest.mark.parametrize("outside", ["system prompt", "tools"])
def test_the_system_prompt_and_the_tools_are_counted_against_the_window(outside: str) -> None:
    """Messages at 70 % of the window (below the 80 % trigger), and a system prompt or tool definitions worth 40 %
    more, which LangChain keeps out of ``request.messages``: the model still receives a request inside the window,
    so they were counted (the saved state, in request mode, keeps everything)."""
    history: list[BaseMessage] = [HumanMessage("Where is my order?")]
    for k in range(30):
        history += [AIMessage(f"note {k}: " + "details " * 40), HumanMessage(f"and {k}?")]
    counter = HeuristicCounter()
    window = int(counter.count_messages(from_objects(history)) / 0.7)
    words = "Follow the airline policy exactly. " * (window // 14)
    tools = stub_tools(["lookup"])
    if outside == "system prompt":
        prompt, tools[0].description = words, "Look up an order."
    else:
        prompt, tools[0].description = "You are an airline agent.", words
    model = ScriptedChatModel(responses=[AIMessage("ok")])
    agent = create_agent(
        model, tools=tools, system_prompt=prompt, middleware=[ChainsumMiddleware(mode="request", context_window=window)]
    )
    agent.invoke({"messages": history})
    (request,) = model.requests
    outside_tokens = counter.count_text(prompt) + _tool_tokens(model, counter)
    assert outside_tokens > 0.35 * window
    assert request[0].text == prompt and len(request) < len(history)
    _check_requests(model, window, "openai")


def test_a_system_role_summary_joins_the_system_prompt() -> None:
    """With ``summary_role="system"`` the record goes into ``request.system_message`` (one system prompt), through
    ``request.override(system_message=...)``."""
    (script,) = _script("tau-bench/")
    config = ManagerConfig(summary_role="system")
    middleware = ChainsumMiddleware(mode="request", config=config, context_window=3000)
    agent, model = _agent(script, middleware)
    for turn in script.turns:
        agent.invoke({"messages": [HumanMessage(turn.user)]}, {"configurable": {"thread_id": "sys"}})
    merged = [r for r in model.requests if RECORD_INTRO in r[0].text]
    assert merged, "no request carried a record"
    assert all(sum(isinstance(m, SystemMessage) for m in r) == 1 for r in model.requests)
    assert all(r[0].text.startswith(script.system or "") for r in merged)


# --- LangChain's own bugs, reproduced, and chainsum without them ------------------------------------------------------


def _policy_run(middleware: AgentMiddleware[Any, Any, Any]) -> ScriptedChatModel:
    responses: list[AIMessage] = []
    for t in range(8):
        call = {"name": "lookup", "args": {"q": f"order {t}"}, "id": f"c{t}"}
        responses += [AIMessage("", tool_calls=[call]), AIMessage(f"Order {t}: " + "status shipped " * 30)]
    script = LangChainScript(None, [], {f"c{t}": "ORD details " * 60 for t in range(8)}, ["lookup"])
    agent, model = _agent(script, middleware, model=ScriptedChatModel(responses=responses))
    config = {"configurable": {"thread_id": "policy"}}
    agent.invoke(
        {"messages": [SystemMessage("POLICY: never refund a basic economy fare."), HumanMessage("q0")]}, config
    )
    for t in range(1, 8):
        agent.invoke({"messages": [HumanMessage(f"what about order {t}?")]}, config)
    return model


def _has_policy(request: list[BaseMessage]) -> bool:
    return any(isinstance(m, SystemMessage) and "POLICY" in m.text for m in request)


def test_langchain_summarizes_away_a_system_prompt_kept_in_the_messages_and_chainsum_does_not() -> None:
    summarizer = ScriptedChatModel(responses=[AIMessage("a summary")] * 20)
    theirs = _policy_run(SummarizationMiddleware(summarizer, trigger=("messages", 8), keep=("messages", 4)))
    assert summarizer.requests  # it summarized...
    assert _has_policy(theirs.requests[0]) and not _has_policy(theirs.requests[-1])  # ...the policy with the rest
    assert "POLICY" in summarizer.requests[0][-1].text
    for mode in ("state", "request"):
        events: list[object] = []
        ours = _policy_run(ChainsumMiddleware(mode=mode, context_window=1200, on_event=events.append))
        assert any(isinstance(e, SummarizationEvent) for e in events)
        assert all(_has_policy(r) and isinstance(r[0], SystemMessage) for r in ours.requests)
        _check_requests(ours, 1200, "openai")


def _mixed_orphan_history() -> list[BaseMessage]:
    """LangChain #38352's shape: at the cut, a run of ToolMessages mixing a result whose AIMessage is gone (an
    application trimmed its history) with one whose AIMessage is there. LangChain's cut point stops at the first
    AIMessage sharing any id, keeping the orphan."""
    history: list[BaseMessage] = [SystemMessage("You are a support agent.")]
    for t in range(8):
        call = {"name": "lookup", "args": {"q": f"{t}"}, "id": f"c{t}"}
        history += [
            HumanMessage(f"question {t} about order ORD-{t} " * 10),
            AIMessage("", tool_calls=[call]),
            ToolMessage(f"result {t} " * 60, tool_call_id=f"c{t}"),
            AIMessage(f"answer {t}"),
        ]
    return [
        *history,
        HumanMessage("and the last one?"),
        AIMessage("", tool_calls=[{"name": "lookup", "args": {"q": "last"}, "id": "b"}]),
        ToolMessage("result of a call trimmed away", tool_call_id="gone"),
        ToolMessage("result b", tool_call_id="b"),
        AIMessage("fine"),
        HumanMessage("thanks, anything else?"),
    ]


def test_langchain_keeps_an_orphaned_tool_message_issue_38352_and_chainsum_does_not() -> None:
    history = _mixed_orphan_history()
    script = LangChainScript(None, [], {}, ["lookup"])
    summarizer = ScriptedChatModel(responses=[AIMessage("a summary")])
    agent, theirs = _agent(script, SummarizationMiddleware(summarizer, trigger=("messages", 8), keep=("messages", 4)))
    theirs.responses = [AIMessage("done")]
    agent.invoke({"messages": history}, {"configurable": {"thread_id": "38352"}})
    assert summarizer.requests  # LangChain summarized, and the model got the orphan:
    assert _orphans(theirs.requests[0]) == ["gone"]
    assert [p.rule for p in validate(from_objects(theirs.requests[0]), "openai")] == ["orphan-tool-result"]
    for mode in ("state", "request"):
        middleware = ChainsumMiddleware(mode=mode, context_window=1500)
        agent, ours = _agent(script, middleware)
        ours.responses = [AIMessage("done")]
        agent.invoke({"messages": history}, {"configurable": {"thread_id": "38352"}})
        _check_requests(ours, 1500, "openai")
        assert middleware.archive.records("38352")
        archived = [a.message for a in middleware.archive.archived("38352")]  # type: ignore[attr-defined]
        assert any(m.tool_results and m.tool_results[0].call_id == "gone" for m in archived)


# --- smaller guarantees -----------------------------------------------------------------------------------------------


def test_a_masked_result_keeps_its_artifact_object() -> None:
    """A tool's ``artifact`` is any Python object; the archive keeps its repr, and a result masked in the saved state
    still carries the very object."""
    artifact = object()
    (script,) = _script("tau-bench/")
    history: list[BaseMessage] = []
    for turn in script.turns:
        history.append(HumanMessage(turn.user))
        for r in turn.responses:
            history.append(r)
            for c in r.tool_calls:
                call_id = c["id"] or ""
                history.append(ToolMessage(script.results[call_id], tool_call_id=call_id, artifact=artifact))
    history.append(HumanMessage("Anything else?"))
    model = ScriptedChatModel(responses=[AIMessage("No.")])
    agent = create_agent(
        model, tools=stub_tools(script.tool_names), middleware=[ChainsumMiddleware(context_window=4000)]
    )
    saved = agent.invoke({"messages": history})["messages"]
    results = [m for m in saved if isinstance(m, ToolMessage)]
    masked = [m for m in results if m.text != script.results[m.tool_call_id]]
    assert masked, "nothing was masked in the saved state"
    assert all(m.artifact is artifact for m in results)


def test_request_mode_adds_no_state_node_and_arguments_are_checked() -> None:
    model = ScriptedChatModel()
    nodes = {
        mode: set(
            create_agent(model, tools=[], middleware=[ChainsumMiddleware(mode=mode, context_window=4000)])
            .get_graph()
            .nodes
        )
        for mode in ("state", "request")
    }
    assert "ChainsumMiddleware.before_model" in nodes["state"]
    assert "ChainsumMiddleware.before_model" not in nodes["request"]
    manager = ContextManager(context_window=4000)
    assert ChainsumMiddleware(manager=manager).manager_for("any") is manager
    with pytest.raises(TypeError):
        ChainsumMiddleware(manager=manager, context_window=4000)
    with pytest.raises(TypeError):
        ChainsumMiddleware(context_window=4000, format="openai")
    with pytest.raises(ValueError, match="mode"):
        ChainsumMiddleware(context_window=4000, mode="both")  # type: ignore[arg-type]
    with pytest.raises(Exception, match="context window"):
        ChainsumMiddleware()
