"""`chainsum.integrations.pydantic_ai` with the real pydantic-ai (2.68), driven by its own test models.

Agents with tools replay corpus sessions request by request at a small window (a Claude Code session with
parallel calls and signed thinking, through ``ProcessHistory``; tau-bench runs, through the capability): every
request the model receives is inside the window (or the manager said why it could not be) and valid for the
provider, no tool result is orphaned, lost or replaced by pydantic-ai's "interrupted" stand-in, ``all_messages()``
is a consistent history pydantic-ai persists and reloads, and the originals come back from the archive.

Then pydantic-ai's own bug: a naive history processor (its docs' keep-the-last-messages, issue #2050) orphans tool
returns in the saved history and sends a history that starts with a response, and a processor that drops a tool
return gets it silently answered "interrupted" (v2 repairs instead of failing, so the lost result hides). The same
agent behind `ChainsumHistory` does neither.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Iterator, Sequence
from typing import Any, cast

import pytest
from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    INTERRUPTED_TOOL_RETURN_CONTENT,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from chainsum.errors import MissingDependencyError
from chainsum.formats import load
from chainsum.formats import pydantic_ai as wire
from chainsum.integrations.pydantic_ai import ChainsumCapability, ChainsumHistory
from chainsum.manager import ContextManager, ManagerEvent, Prepared, SummarizationEvent, WindowExceededEvent
from chainsum.messages import Message
from chainsum.rules import validate
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing.pydantic_ai import INSTRUCTIONS, Replay, dumps, orphans, stand_ins
from corpora_support import documents

CLAUDE_CODE = "claude-code/258c7280-ae70-4798-800f-63464d01a85d.jsonl"


@pytest.fixture(autouse=True, scope="module")
def event_loop_for_run_sync() -> Iterator[None]:
    """``Agent.run_sync`` runs on the thread's current event loop and leaves it open for the next call; the tests
    give it one and close it after, so no loop (and its sockets) is left for the garbage collector to warn about."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
    asyncio.set_event_loop(None)


def _corpus(label_prefix: str, limit: int) -> list[tuple[str, tuple[Message, ...]]]:
    found = (d for d in documents(include_subagents=False) if d.label.startswith(label_prefix))
    docs = list(itertools.islice(found, limit))
    return [(d.label, load(d.data, d.format).messages) for d in docs]


def _history(window: int, events: list[ManagerEvent], **kwargs: Any) -> ChainsumHistory:
    return ChainsumHistory(
        context_window=window,
        summarizers=[ExtractiveSummarizer()],
        archive=MemoryArchive(),
        on_event=events.append,
        **kwargs,
    )


class _Canonical:
    """Canonical messages of pydantic-ai histories, each message object read once (requests share most)."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[ModelMessage, tuple[Message, ...]]] = {}

    def __call__(self, messages: list[ModelMessage]) -> list[Message]:
        out: list[Message] = []
        for m in messages:
            hit = self._seen.get(id(m))
            if hit is None or hit[0] is not m:
                hit = (m, wire.load_messages([m]))
                self._seen[id(m)] = hit
            out.extend(hit[1])
        return out


def _request_tokens(history: ChainsumHistory, received: Any, canonical: list[Message]) -> int:
    counter = history.manager.counter
    messages = counter.count_messages(canonical)
    instructions = counter.count_text(received.instructions) if received.instructions else 0
    return messages + instructions + history.tool_tokens(received.tools)


def _check_replay(
    replay: Replay, history: ChainsumHistory, final: list[ModelMessage], window: int, provider: str, events: list[Any]
) -> None:
    """What every corpus replay must show (module docstring)."""
    assert len(replay.received) >= 120
    floors = [e.floor_tokens for e in events if isinstance(e, WindowExceededEvent)]
    over = 0
    read = _Canonical()
    for n, received in enumerate(replay.received):
        messages = received.messages
        canonical = read(messages)
        # inside the window, unless the current turn alone is larger (the manager said so, DESIGN invariant 8)
        if _request_tokens(history, received, canonical) > window:
            over += 1
        # valid for the provider, and for OpenAI's rules too; no orphan, no stand-in for a lost result
        assert validate(canonical, provider) == [], n
        assert validate(canonical, "openai") == [], n
        assert orphans(messages) == [], n
        assert stand_ins(messages) == [], n
    assert over <= len(floors) and all(f > window for f in floors)
    assert any(isinstance(e, SummarizationEvent) for e in events)

    # every result a tool produced reached the model verbatim, or is in the archive verbatim
    session = history.manager.session
    archive = history.manager.archive
    assert isinstance(archive, MemoryArchive)
    archived = {(r.call_id, r.text) for e in archive.archived(session) for r in e.message.tool_results}
    seen = {
        (p.tool_call_id, p.content)
        for r in replay.received for m in r.messages for p in m.parts if isinstance(p, ToolReturnPart)
    }  # fmt: skip
    for call_id, outputs in replay.produced.items():
        for output in outputs:
            assert (call_id, output) in seen or (call_id, output) in archived, call_id

    # all_messages(): a valid history pydantic-ai persists and reads back as it was
    assert isinstance(final[-1], ModelResponse) and orphans(final) == []
    assert validate(wire.load_messages(final), provider) == []
    again = ModelMessagesTypeAdapter.validate_json(dumps(final))
    assert dumps(again) == dumps(final)

    # the originals expand from the archive, as pydantic-ai messages, and read back to what was archived
    records = archive.records(session)
    assert records
    for record in records[:: max(1, len(records) // 5)]:
        originals = archive.expand(record.id)
        expanded = history.expand(record.id)
        assert expanded and all(isinstance(m, ModelRequest | ModelResponse) for m in expanded)
        canonical = wire.load_messages(expanded)
        assert [m.text for m in canonical] == [m.text for m in originals]
        assert [r.call_id for m in canonical for r in m.tool_results] == [
            r.call_id for m in originals for r in m.tool_results
        ]


@pytest.mark.corpus  # the whole session: tests/data holds only its start
@pytest.mark.slow
def test_a_claude_code_session_through_process_history() -> None:
    """152 model requests of a real Claude Code session (22 of them with parallel calls, signed thinking) at an
    8K window, the processor in ``ProcessHistory`` as pydantic-ai v2 documents it."""
    ((_, messages),) = _corpus(CLAUDE_CODE, 1)
    events: list[ManagerEvent] = []
    window = 8_000
    history = _history(window, events, provider="anthropic")
    replay = Replay(messages)
    capabilities = [ProcessHistory(history)]
    agent = Agent(replay.model(), instructions=INSTRUCTIONS, tools=replay.tools(), capabilities=capabilities)
    final = replay.run(agent)
    responses = {id(m): m for r in replay.received for m in r.messages if isinstance(m, ModelResponse)}
    parallel = [m for m in responses.values() if sum(isinstance(p, ToolCallPart) for p in m.parts) > 1]
    assert len(parallel) >= 10
    _check_replay(replay, history, final, window, "anthropic", events)


@pytest.mark.slow
def test_tau_bench_runs_through_the_capability() -> None:
    """Ten tau-bench airline runs one after the other (their system prompt kept as the agent's), the processor
    put straight into ``capabilities=`` (pydantic-ai calls it as a factory and gets `ChainsumCapability`)."""
    runs = _corpus("tau-bench/", 10)
    system = next(m.text for m in runs[0][1] if m.role == "system")
    messages = tuple(m for _, ms in runs for m in ms if m.role != "system")
    events: list[ManagerEvent] = []
    window = 6_000
    history = _history(window, events)
    replay = Replay(messages)
    agent = Agent(replay.model(), system_prompt=system, tools=replay.tools(), capabilities=[history])
    final = replay.run(agent)
    _check_replay(replay, history, final, window, "openai", events)
    # the system prompt survived every compaction verbatim, first
    for received in replay.received:
        first = received.messages[0]
        assert isinstance(first, ModelRequest) and isinstance(first.parts[0], SystemPromptPart)
        assert first.parts[0].content == system


# --- pydantic-ai's own bug, and chainsum's answer to it ------------------------------------------------------------


class _Script:
    """A deterministic agent turn: the user asks, the model calls `read` twice in parallel (`steps` times in a row),
    then answers."""

    def __init__(self, steps: int = 1) -> None:
        self.received: list[list[ModelMessage]] = []
        self.infos: list[AgentInfo] = []
        self.produced: dict[str, str] = {}
        self.n = 0
        self.steps = steps
        self._left = 0

    def model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.received.append(list(messages))
            self.infos.append(info)
            last = messages[-1]
            self.n += 1
            if isinstance(last, ModelRequest) and any(isinstance(p, UserPromptPart) for p in last.parts):
                self._left = self.steps
            if self._left:
                self._left -= 1
                return ModelResponse(parts=[
                    TextPart(f"Reading both files ({self.n})."),
                    ToolCallPart("read", {"path": f"src/a{self.n}.py"}, tool_call_id=f"a{self.n}"),
                    ToolCallPart("read", {"path": f"src/b{self.n}.py"}, tool_call_id=f"b{self.n}"),
                ])  # fmt: skip
            return ModelResponse(parts=[TextPart(f"Done ({self.n}): both files define total(). " + "ok " * 40)])

        return FunctionModel(respond)

    def agent(self, capabilities: list[Any], tools: Sequence[Tool[None]] = ()) -> Agent[None, str]:
        agent = Agent(self.model(), instructions="Be brief.", capabilities=capabilities, tools=tools)

        @agent.tool
        async def read(ctx: RunContext[None], path: str) -> str:
            output = f"# {path}\n" + "def total(order): return order['total_cents']\n" * 12
            self.produced[ctx.tool_call_id or ""] = output
            return output

        return agent

    def run(self, agent: Agent[None, str], turns: int) -> list[ModelMessage]:
        history: list[ModelMessage] | None = None
        for turn in range(turns):
            history = agent.run_sync(f"Question {turn}: why does total() fail?", message_history=history).all_messages()
        return history or []


def test_pydantic_ais_documented_summarizing_processor_orphans_tool_returns_issue_2050() -> None:
    """pydantic-ai's documented ``summarize_old_messages`` (summarize the oldest ten messages, keep the last one)
    inside a tool loop keeps a request of tool returns whose calls it summarized away. Issue #2050 got a 400 from
    OpenAI for that; v2 instead drops the orphaned returns before sending, without a word: the model gets a history
    that starts with a response (Anthropic refuses that) and never sees the results of the calls it just made."""
    summarizer = TestModel(custom_output_text="Summary of the earlier conversation.")
    summarize_agent = Agent(summarizer, instructions="Summarize this conversation, focusing on the technical talk.")
    outputs: list[list[ModelMessage]] = []

    async def summarize_old_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
        if len(messages) > 10:  # the documented example, as written
            summary = await summarize_agent.run(message_history=messages[:10])
            messages = summary.new_messages() + messages[-1:]
        outputs.append(list(messages))
        return messages

    script = _Script()
    script.run(script.agent([ProcessHistory(summarize_old_messages)]), turns=4)  # nothing raised
    assert len(outputs) == len(script.received)
    hidden = 0
    for processed, received in zip(outputs, script.received, strict=True):
        lost = set(orphans(processed))
        if not lost:
            continue
        assert "orphan-tool-result" in {p.rule for p in validate(wire.load_messages(processed), "openai")}
        assert lost <= set(script.produced)  # the tools ran and returned these results...
        sent = {p.tool_call_id for m in received for p in m.parts if isinstance(p, ToolReturnPart)}
        assert not lost & sent  # ...and the model never got them
        assert isinstance(received[0], ModelResponse)
        assert "first-message-role" in {p.rule for p in validate(wire.load_messages(received), "anthropic")}
        hidden += 1
    assert hidden


def drop_old_tool_returns(messages: list[ModelMessage]) -> list[ModelMessage]:
    """A naive "save tokens" processor: leave out requests that only hold tool returns, but the newest."""
    return [
        m for m in messages[:-1]
        if not (isinstance(m, ModelRequest) and m.parts and all(isinstance(p, ToolReturnPart) for p in m.parts))
    ] + messages[-1:]  # fmt: skip


def test_pydantic_ai_answers_a_lost_result_with_an_interrupted_stand_in() -> None:
    """v2 has no check that a processor kept each call's result: it writes "interrupted" in its place and sends
    that, so the model is told a tool that ran never finished, and nothing fails."""
    script = _Script()
    script.run(script.agent([ProcessHistory(drop_old_tool_returns)]), turns=3)
    made_up = [p for r in script.received for p in stand_ins(r)]
    assert made_up
    assert {p.content for p in made_up} == {INTERRUPTED_TOOL_RETURN_CONTENT}
    assert {p.tool_call_id for p in made_up} <= set(script.produced)  # each of these tools did produce a result


def test_chainsum_keeps_every_call_with_its_result() -> None:
    """The same agent behind `ChainsumHistory` at a window small enough to compact nearly every turn."""
    script = _Script()
    events: list[ManagerEvent] = []
    history = _history(1_500, events)
    final = script.run(script.agent([ProcessHistory(history)]), turns=12)
    assert sum(isinstance(e, SummarizationEvent) for e in events) >= 5
    for received in script.received:
        assert isinstance(received[0], ModelRequest)
        assert orphans(received) == []
        assert validate(wire.load_messages(received), "anthropic") == []
        assert not any(isinstance(p, ToolReturnPart) and p.content == INTERRUPTED_TOOL_RETURN_CONTENT
                       for m in received for p in m.parts)  # fmt: skip
    assert orphans(final) == [] and validate(wire.load_messages(final), "openai") == []
    archive = history.manager.archive
    assert isinstance(archive, MemoryArchive)
    archived = {(r.call_id, r.text) for e in archive.archived("default") for r in e.message.tool_results}
    sent = {(p.tool_call_id, p.content) for r in script.received for m in r for p in m.parts
            if isinstance(p, ToolReturnPart)}  # fmt: skip
    assert all((i, out) in sent or (i, out) in archived for i, out in script.produced.items())


# --- the adapter's own behaviour -----------------------------------------------------------------------------------


def test_below_the_trigger_pydantic_ais_own_list_and_objects_go_through() -> None:
    seen: list[tuple[list[ModelMessage], list[ModelMessage]]] = []
    history = ChainsumHistory(context_window=100_000)

    async def spy(ctx: RunContext[None], messages: list[ModelMessage]) -> list[ModelMessage]:
        out = await history(ctx, messages)
        seen.append((messages, out))
        return out

    agent = Agent(TestModel(), capabilities=[ProcessHistory(spy)])

    @agent.tool_plain
    def lookup(order: str) -> str:
        return f"order {order}: shipped"

    result = agent.run_sync("Where is order ORD-7731?")
    assert len(seen) == 2
    assert all(given is out for given, out in seen)
    assert history.last is not None and not history.last.changed
    assert result.all_messages()[-1] is not None and orphans(result.all_messages()) == []


def test_objects_read_once_and_kept_across_a_compaction(monkeypatch: pytest.MonkeyPatch) -> None:
    """A message object already read is not read again (about the two new ones per request); after a compaction,
    each wire message that came back whole is the very object pydantic-ai gave, and a rebuilt one keeps the live
    object's own fields (its instructions).

    Turns of three tool steps at a 5,000-token window: the compaction masks the older turns' output, which rebuilds
    the requests pydantic-ai gave that hold it. (One step a turn at 1,500 tokens masked nothing once the kept tail
    gave way to the budget, f58fc9c: each compaction summarized what the masks were for, instead of the next
    request compacting again and masking inside the kept tail.)"""
    script = _Script(steps=3)
    events: list[ManagerEvent] = []
    history = _history(5_000, events)
    calls: list[int] = []
    real = wire.load

    def counting(data: Any) -> Any:
        calls.append(len(data))
        return real(data)

    pairs: list[tuple[list[ModelMessage], list[ModelMessage], bool]] = []

    async def spy(ctx: RunContext[None], messages: list[ModelMessage]) -> list[ModelMessage]:
        given = list(messages)
        out = await history(ctx, messages)
        assert history.last is not None
        pairs.append((given, out, history.last.changed))
        return out

    monkeypatch.setattr(wire, "load", counting)
    script.run(script.agent([ProcessHistory(spy)]), turns=4)
    monkeypatch.undo()
    assert set(calls) == {1}
    assert len(calls) <= 3 * len(pairs)
    compacted = [(given, out) for given, out, changed in pairs if changed]
    assert compacted and any(isinstance(e, SummarizationEvent) for e in events)
    from_live: list[ModelRequest] = []
    for given, out in compacted:
        assert out[-1] is given[-1]  # the current turn: pydantic-ai's own object
        originals = {id(m) for m in given}
        kept = [m for m in out if id(m) in originals]
        rebuilt = [m for m in out if id(m) not in originals]
        assert kept and rebuilt
        # a request rebuilt from one pydantic-ai gave (a tool result masked) keeps its run id and instructions
        from_live += [m for m in rebuilt if isinstance(m, ModelRequest) and m.run_id is not None]
    assert from_live and {m.instructions for m in from_live} == {"Be brief."}


def _process(history: ChainsumHistory, messages: list[ModelMessage]) -> list[ModelMessage]:
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(history.process(messages))
    finally:
        loop.close()


def test_parts_added_after_sending_and_rewritten_lists_are_read_again() -> None:
    """The previous list's objects are reused without reading them again, except what pydantic-ai may change after
    sending (it adds parts to the request it sent): those are compared again; another list entirely is read anew."""
    history = ChainsumHistory(context_window=100_000)
    first = ModelRequest(parts=[UserPromptPart("look at src/app.py")])
    _process(history, [first])
    first.parts = [*first.parts, UserPromptPart("and src/db.py")]  # as pydantic-ai records a capability load
    answer = ModelResponse(parts=[TextPart("both read")])
    _process(history, [first, answer, ModelRequest(parts=[UserPromptPart("thanks")])])
    assert [m.text for m in history.manager.context()] == ["look at src/app.py", "and src/db.py", "both read", "thanks"]
    other = [ModelRequest(parts=[UserPromptPart("another conversation")])]
    assert _process(history, other) is other
    assert [m.text for m in history.manager.context()] == ["another conversation"]


def test_a_part_appended_in_place_to_the_newest_request_is_read() -> None:
    """pydantic-ai 2.68 replaces a message's parts list when it adds to it (``request.parts = [*request.parts,
    ...]``) and swaps a message for a copy (its realtime cut), never appending in place; a processor or capability
    of the user's placed before chainsum's may append in place, and that edit is read too (the reader's snapshot
    holds the parts as they were, not the list that changed)."""
    history = ChainsumHistory(context_window=100_000)
    request = ModelRequest(parts=[UserPromptPart("look at src/app.py")])
    messages: list[ModelMessage] = [request]
    _process(history, messages)
    cast(list[Any], request.parts).append(UserPromptPart("and src/db.py"))  # the very list, edited in place
    _process(history, messages)
    assert [m.text for m in history.manager.context()] == ["look at src/app.py", "and src/db.py"]


def test_a_result_that_breaks_pydantic_ais_rules_is_not_used(caplog: pytest.LogCaptureFixture) -> None:
    """Defence in depth: should the manager ever hand back a history that is empty or ends with a response,
    pydantic-ai would raise; the processor sends the history as it came instead, and says so."""
    history = ChainsumHistory(context_window=100_000)
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("hi")]),
        ModelResponse(parts=[TextPart("hello")]),
        ModelRequest(parts=[UserPromptPart("again")]),
    ]

    async def broken(items: Any, **_: Any) -> Prepared[Any]:
        return Prepared(list(items)[:2])

    history.manager.prepare = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="chainsum.integrations.pydantic_ai"):
        out = _process(history, messages)
    assert out is messages
    assert "breaks pydantic-ai's rules" in caplog.text


def test_manager_keyword_arguments_or_a_manager() -> None:
    manager = ContextManager(context_window=5_000)
    assert ChainsumHistory(manager=manager).manager is manager
    made = ChainsumHistory(model="gpt-4o", session="s1")
    assert made.manager.window == 128_000 and made.manager.session == "s1"
    with pytest.raises(TypeError, match="not both"):
        ChainsumHistory(manager=manager, context_window=5_000)
    cap = ChainsumHistory(context_window=5_000).capability()
    assert isinstance(cap, ChainsumCapability) and cap.get_serialization_name() is None


@pytest.mark.parametrize("form", ["with the run context", "without it", "called by a processor of the user's"])
def test_a_processor_with_or_without_the_run_context(form: str) -> None:
    """pydantic-ai's two processor forms: ``ProcessHistory(history)`` (the first parameter is a ``RunContext``, so
    it passes the context), ``ProcessHistory(history.process)`` (messages only), and the history called by a
    processor of the user's with the messages alone. Each compacts the same long history inside the window."""
    events: list[ManagerEvent] = []
    history = _history(1500, events)
    processor: Any
    if form == "with the run context":
        processor = history
    elif form == "without it":
        processor = history.process
    else:

        async def mine(messages: list[ModelMessage]) -> list[ModelMessage]:
            return await history(messages)  # type: ignore[call-overload]  # the untyped callers' way

        processor = mine
    received: list[int] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received.append(len(messages))
        return ModelResponse(parts=[TextPart("ok")])

    given: list[ModelMessage] = []
    for i in range(12):
        given.append(ModelRequest(parts=[UserPromptPart(f"Question {i} about src/mod_{i}.py. " + "detail " * 60)]))
        given.append(ModelResponse(parts=[TextPart(f"Answer {i}: f_{i} computes {i}. " + "because " * 60)]))
    agent = Agent(FunctionModel(answer), capabilities=[ProcessHistory(processor)])
    # on the module's loop (`event_loop_for_run_sync`): `asyncio.run` would leave the thread with no current loop,
    # and pydantic-ai's next `run_sync` would make one that is never closed
    result = asyncio.get_event_loop().run_until_complete(agent.run("One more question.", message_history=given))
    assert result.output == "ok" and received and received[0] < len(given) + 1
    assert any(isinstance(e, SummarizationEvent) for e in events)


def _big_tools() -> list[Tool[None]]:
    def unused(**_: Any) -> str:
        return "unused"

    field = {"type": "string", "description": "what this field of the order record holds " * 4}
    schema: dict[str, Any] = {"type": "object", "properties": {f"field_{i}": field for i in range(10)}}
    return [Tool.from_schema(unused, f"extra_{k}", "an extra tool " * 10, schema) for k in range(5)]


@pytest.mark.parametrize("form", ["capability", "processor"])
def test_tool_definitions_and_instructions_are_counted(form: str) -> None:
    """Large tool schemas take a good part of a small window: the capability (from the request) and the processor
    (from the run's tool manager) count them, and the instructions, so the whole request the model gets fits."""
    events: list[ManagerEvent] = []
    window = 4_000
    history = _history(window, events)
    script = _Script()
    capability = history.capability() if form == "capability" else ProcessHistory(history)
    script.run(script.agent([capability], tools=_big_tools()), turns=8)
    tools = history.tool_tokens(script.infos[-1].function_tools)
    assert tools > window // 4
    assert any(isinstance(e, SummarizationEvent) for e in events)
    counter = history.manager.counter
    for received, info in zip(script.received, script.infos, strict=True):
        instructions = counter.count_text(info.instructions or "")
        sent = (
            counter.count_messages(wire.load_messages(received))
            + instructions
            + history.tool_tokens(info.function_tools)
        )
        assert sent <= window
    assert history.last is not None and history.last.tokens_after >= tools


def test_missing_pydantic_ai_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "pydantic_ai", None)
    monkeypatch.setitem(sys.modules, "pydantic_ai.messages", None)
    monkeypatch.delitem(sys.modules, "chainsum.integrations.pydantic_ai")
    with pytest.raises(MissingDependencyError, match=r'pip install "chainsum\[pydantic-ai\]"'):
        importlib.import_module("chainsum.integrations.pydantic_ai")
    with pytest.raises(MissingDependencyError, match=r"chainsum\[pydantic-ai\]"):
        wire.dump_messages([])
