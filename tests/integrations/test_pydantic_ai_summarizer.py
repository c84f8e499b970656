"""`ChainsumHistory(summarizer=<a pydantic-ai model or Agent>)`: pydantic-ai's own `FunctionModel` and `TestModel`
write the summaries of a real agent run, receive chainsum's framed transcript (system prompt and user prompt, no
tools), have their usage reported, and when they fail (a 429, a hang, an empty answer) the extractive summarizer
takes over and nothing is lost."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, SystemPromptPart, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage

from chainsum.formats import pydantic_ai as wire
from chainsum.integrations.pydantic_ai import ChainsumHistory, model_summarizer
from chainsum.manager import ManagerEvent, SummarizationEvent
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


@pytest.mark.parametrize(("fail", "kind"), [("rate_limit", "rate_limit"), ("hang", "transport"), ("empty", "empty")])
def test_a_failing_pydantic_ai_model_falls_back_and_loses_nothing(
    fail: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    function = SummaryFunction(fail)
    processor = ChainsumHistory(context_window=WINDOW, config=CONFIG, summarizer=FunctionModel(function))
    event = assert_fell_back(processor.manager, history(), kind, caplog)
    assert function.received
    if fail == "empty":
        assert event.summarizer_usage is not None and event.summarizer_usage.input_tokens >= USAGE.input_tokens


def test_a_string_is_chainsums_and_model_summarizer_takes_pydantic_ais(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    chainsums = ChainsumHistory(context_window=WINDOW, summarizer="openai:gpt-4.1-mini").manager.summarizers
    assert isinstance(chainsums[0], OpenAISummarizer) and isinstance(chainsums[1], ExtractiveSummarizer)
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
