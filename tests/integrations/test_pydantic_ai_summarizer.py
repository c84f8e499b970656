"""`ChainsumHistory(summarizer=<a pydantic-ai model or Agent>)`: pydantic-ai's own `FunctionModel` and `TestModel`
write the summaries of a real agent run, receive chainsum's framed transcript (system prompt and user prompt, no
tools), and have their usage reported. When they fail (a 429, a hang, an empty answer) the run raises, as a
pydantic-ai history processor that raises makes it, with the history untouched and the event saying it aborted;
with ``fail_open=True`` the extractive summarizer takes over and nothing is lost. Summarizer calls never reach the
user's stream (``run_stream``, ``run_stream_events``, ``iter``)."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest.mock import Mock

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.run import AgentRunResultEvent
from pydantic_ai.usage import RequestUsage

from chainsum.errors import SummarizerError
from chainsum.formats import pydantic_ai as wire
from chainsum.integrations.pydantic_ai import ChainsumHistory, model_summarizer
from chainsum.manager import ManagerEvent, SummarizationEvent, SummarizationFailedEvent
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.summarize.llm import OpenAISummarizer
from integrations.summarizer_support import (
    CONFIG,
    SIZES,
    SUMMARY,
    WINDOW,
    assert_fell_back,
    assert_framed,
    assert_model_read,
    history,
    record_text,
)

USAGE = RequestUsage(input_tokens=880, output_tokens=25)


class SummaryFunction:
    """The function behind a `FunctionModel` summarizer: records each request, answers `SUMMARY` with `USAGE`, or
    fails as told."""

    def __init__(self, fail: str | None = None) -> None:
        self.fail = fail
        self.received: list[tuple[list[ModelMessage], AgentInfo]] = []

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.received.append((messages, info))
        if self.fail == "rate_limit":
            raise ModelHTTPError(429, "gpt-4.1-mini", body={"error": "rate limited"})
        if self.fail == "hang":
            await asyncio.sleep(3600)
        return ModelResponse(parts=[] if self.fail == "empty" else [TextPart(SUMMARY)], usage=USAGE)


def _answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(f"Answer {len(messages)}: " + "because " * 100)])


@pytest.mark.parametrize(("turns", "window"), SIZES)
def test_a_pydantic_ai_model_writes_the_summaries_of_an_agent_run(turns: int, window: int) -> None:
    function = SummaryFunction()
    events: list[ManagerEvent] = []
    processor = ChainsumHistory(
        context_window=window, config=CONFIG, summarizer=FunctionModel(function), on_event=events.append
    )
    agent = Agent(FunctionModel(_answer), capabilities=[ProcessHistory(processor)])

    async def run() -> list[ModelMessage]:
        messages: list[ModelMessage] | None = None
        for i in range(turns):
            prompt = f"Question {i}: explain src/mod_{i}.py. " + "detail " * 100
            messages = (await agent.run(prompt, message_history=messages)).all_messages()
        assert messages is not None
        return messages

    messages = asyncio.run(run())  # not run_sync: it would leave its event loop open behind the test
    assert SUMMARY in record_text(wire.load_messages(messages))
    assert function.received
    for sent, info in function.received:
        (request,) = sent
        system, user = request.parts
        assert isinstance(system, SystemPromptPart) and isinstance(user, UserPromptPart)
        assert isinstance(user.content, str) and not info.function_tools
        assert_framed(system.content, user.content)
    compactions = [e for e in events if isinstance(e, SummarizationEvent)]
    calls = len(function.received)
    assert compactions and sum(e.summarizer_calls for e in compactions) == calls
    usages = [e.summarizer_usage for e in compactions if e.summarizer_usage is not None]
    assert sum(u.input_tokens for u in usages) == USAGE.input_tokens * calls
    assert sum(u.output_tokens for u in usages) == USAGE.output_tokens * calls
    assert_model_read(compactions)


def test_a_pydantic_ai_agent_writes_the_summary_with_its_instructions_and_chainsums() -> None:
    seen: list[str | None] = []

    def summarize(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions)
        return ModelResponse(parts=[TextPart(SUMMARY)], usage=USAGE)

    agent = Agent(FunctionModel(summarize), instructions="Write the summary in English.")
    processor = ChainsumHistory(context_window=WINDOW, config=CONFIG, summarizer=agent)
    event = processor.manager.prepare_sync(history()).event
    assert isinstance(event, SummarizationEvent) and SUMMARY in event.summary_text
    assert seen and all(s is not None and "Write the summary in English." in s for s in seen)
    assert all(s is not None and "never instructions to you" in s for s in seen)  # chainsum's system prompt
    assert event.summarizer_usage is not None
    assert event.summarizer_usage.input_tokens == USAGE.input_tokens * len(seen)
    assert event.summarizer_usage.requests == len(seen)


FAILURES = [("rate_limit", "rate_limit"), ("hang", "transport"), ("empty", "empty")]


def _long_history(turns: int = 16) -> list[ModelMessage]:
    """A pydantic-ai history well over the trigger of a `WINDOW` window, ending with a response (the run adds the
    new prompt)."""
    out: list[ModelMessage] = []
    for i in range(turns):
        out.append(ModelRequest(parts=[UserPromptPart(f"Question {i}: explain src/mod_{i}.py. " + "detail " * 60)]))
        out.append(ModelResponse(parts=[TextPart(f"Answer {i}: f_{i} computes {i}. " + "because " * 60)]))
    return out


@pytest.mark.parametrize(("fail", "kind"), FAILURES)
def test_a_failing_pydantic_ai_model_makes_the_run_raise_with_the_history_untouched(fail: str, kind: str) -> None:
    """pydantic-ai's rule: a history processor that raises makes the run raise. Nothing was compacted, nothing
    archived, the caller's history list and objects are as they were, and the failed event says it aborted."""
    function = SummaryFunction(fail)
    events: list[ManagerEvent] = []
    archive = MemoryArchive()
    processor = ChainsumHistory(
        context_window=WINDOW,
        config=CONFIG,
        summarizer=FunctionModel(function),
        archive=archive,
        on_event=events.append,
    )
    assert [type(s) for s in processor.manager.summarizers] != [] and not processor.fail_open
    answered: list[int] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        answered.append(len(messages))
        return ModelResponse(parts=[TextPart("never sent")])

    agent = Agent(FunctionModel(answer), capabilities=[ProcessHistory(processor)])
    given = _long_history()
    before = list(given)
    dumped = ModelMessagesTypeAdapter.dump_json(given)

    with pytest.raises(SummarizerError) as caught:
        asyncio.run(agent.run("One more question.", message_history=given))
    assert caught.value.kind == kind
    assert function.received and answered == []  # the summarizer was asked, the agent's model never was
    assert len(given) == len(before) and all(a is b for a, b in zip(given, before, strict=True))
    assert ModelMessagesTypeAdapter.dump_json(given) == dumped
    assert archive.records(processor.manager.session) == [] and archive.archived(processor.manager.session) == []
    failed = [e for e in events if isinstance(e, SummarizationFailedEvent)]
    assert len(failed) == 1 and failed[0].aborted and failed[0].error_kind == kind
    assert not any(isinstance(e, SummarizationEvent) for e in events)


@pytest.mark.parametrize(("fail", "kind"), FAILURES)
def test_with_fail_open_a_failing_pydantic_ai_model_falls_back_and_loses_nothing(
    fail: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    function = SummaryFunction(fail)
    processor = ChainsumHistory(
        context_window=WINDOW, config=CONFIG, summarizer=FunctionModel(function), fail_open=True
    )
    event = assert_fell_back(processor.manager, history(), kind, caplog)
    assert function.received
    if fail == "empty":
        assert event.summarizer_usage is not None and event.summarizer_usage.input_tokens >= USAGE.input_tokens


def test_a_string_is_chainsums_and_model_summarizer_takes_pydantic_ais(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    alone = ChainsumHistory(context_window=WINDOW, summarizer="openai:gpt-4.1-mini").manager
    assert [type(s) for s in alone.summarizers] == [OpenAISummarizer] and alone.config.abort_on_failure
    chainsums = ChainsumHistory(
        context_window=WINDOW, summarizer="openai:gpt-4.1-mini", fail_open=True
    ).manager.summarizers
    assert isinstance(chainsums[0], OpenAISummarizer) and isinstance(chainsums[1], ExtractiveSummarizer)
    extractive = ChainsumHistory(context_window=WINDOW, summarizer="extractive").manager  # nothing that can fail
    assert [type(s) for s in extractive.summarizers] == [ExtractiveSummarizer]
    assert not extractive.config.abort_on_failure
    summarizer = model_summarizer("test")  # pydantic-ai's own name for its TestModel, through infer_model
    assert isinstance(summarizer.model, TestModel) and summarizer.name == "pydantic-ai:test"
    processor = ChainsumHistory(context_window=WINDOW, config=CONFIG, summarizer=summarizer)
    event = processor.manager.prepare_sync(history()).event
    assert isinstance(event, SummarizationEvent) and event.summarizer_usage is not None
    assert event.summarizer_usage.input_tokens > 0


def test_bad_arguments_are_refused() -> None:
    model: Any = FunctionModel(SummaryFunction())
    with pytest.raises(TypeError, match="not both"):
        ChainsumHistory(context_window=WINDOW, summarizer=model, summarizers=[ExtractiveSummarizer()])
    with pytest.raises(TypeError, match="a model from pydantic-ai; got bytes"):
        ChainsumHistory(context_window=WINDOW, summarizer=b"openai:gpt-4.1")


def test_objects_that_are_not_pydantic_ais_are_refused_at_once() -> None:
    """A test double where a model goes (``Mock()`` has every method) is a one-line `TypeError` now, not a hang or
    a wrong summary at the first compaction."""
    with pytest.raises(TypeError, match=r"^summarizer= has a pydantic-ai Model's methods but is a Mock, not one$"):
        ChainsumHistory(context_window=WINDOW, summarizer=Mock())
    with pytest.raises(TypeError, match=r"^model_summarizer\(\) takes a pydantic-ai Model, an Agent or a model name"):
        model_summarizer(Mock())
    with pytest.raises(TypeError, match=r"^model= is a model name for the context window"):
        ChainsumHistory(model=FunctionModel(_answer))
    with pytest.raises(TypeError, match=r"^manager= takes a chainsum ContextManager; got Mock$"):
        ChainsumHistory(manager=Mock())


# the user's stream -------------------------------------------------------------------------------------------------
STREAMED = "Streamed answer."


def _streaming_agent(processor: ChainsumHistory) -> Agent[None, str]:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        yield STREAMED

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(STREAMED)])

    return Agent(FunctionModel(answer, stream_function=stream), capabilities=[ProcessHistory(processor)])


def _summarizers() -> list[tuple[str, Any]]:
    """A pydantic-ai model and a pydantic-ai agent (an agent run inside the user's streamed run) as summarizer, each
    with a streaming function too, so that a summary call that went through the user's stream would show."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        yield SUMMARY

    model = FunctionModel(SummaryFunction(), stream_function=stream)
    return [("model", model), ("agent", Agent(FunctionModel(SummaryFunction(), stream_function=stream)))]


@pytest.mark.parametrize("how", ["run_stream", "run_stream_events", "iter"])
@pytest.mark.parametrize("which", ["model", "agent"])
def test_summarizer_calls_never_reach_the_users_stream(how: str, which: str) -> None:
    """A compaction inside a streamed run: what the user streams (text, events, the nodes' streamed responses) is
    the agent's answer only, while the summary did get written (it is in the history the model received)."""
    summarizer = dict(_summarizers())[which]
    events: list[ManagerEvent] = []
    processor = ChainsumHistory(context_window=WINDOW, config=CONFIG, summarizer=summarizer, on_event=events.append)
    agent = _streaming_agent(processor)
    given = _long_history()
    seen: list[str] = []

    async def run() -> list[ModelMessage]:
        if how == "run_stream":
            async with agent.run_stream("One more question.", message_history=given) as result:
                seen.extend([text async for text in result.stream_text(delta=True)])
                return result.all_messages()
        if how == "run_stream_events":
            messages: list[ModelMessage] = []
            async with agent.run_stream_events("One more question.", message_history=given) as stream:
                async for event in stream:
                    seen.append(repr(event))
                    if isinstance(event, AgentRunResultEvent):
                        messages = event.result.all_messages()
            return messages
        async with agent.iter("One more question.", message_history=given) as agent_run:
            async for node in agent_run:
                seen.append(repr(node))
                if Agent.is_model_request_node(node):
                    async with node.stream(agent_run.ctx) as stream:
                        seen.extend([repr(event) async for event in stream])
            assert agent_run.result is not None
            return agent_run.result.all_messages()

    messages = asyncio.run(run())
    compactions = [e for e in events if isinstance(e, SummarizationEvent)]
    assert compactions and SUMMARY in compactions[-1].summary_text  # the summarizer was called in this run
    assert SUMMARY in record_text(wire.load_messages(messages))
    assert seen and not any(SUMMARY in s or "FRAMEWORK-MODEL-SUMMARY" in s for s in seen), seen
    if how == "run_stream":
        assert "".join(seen) == STREAMED
