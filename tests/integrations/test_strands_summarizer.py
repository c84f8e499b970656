"""`ChainsumConversationManager(summarization_agent=<a Strands Agent>)` (the spec's wiring) and
``summarizer=<a Strands Model>``: a canned Strands model (the kind Strands' own tests use) writes the summaries of
a real agent, receives chainsum's framed transcript with no tools, has its usage reported, and when it fails
(throttled, hanging, empty) the extractive summarizer takes over and nothing is lost. The summarization agent
itself is never run: its messages stay empty."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

pytest.importorskip("strands")

from strands import Agent
from strands.models import BedrockModel
from strands.types.content import Message as StrandsMessage
from strands.types.exceptions import ModelThrottledException
from strands.types.streaming import StreamEvent

from chainsum.formats import bedrock
from chainsum.integrations.strands import ChainsumConversationManager, model_summarizer
from chainsum.manager import ManagerEvent, SummarizationEvent
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing.strands import CannedModel, CannedRequest
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

INPUT_TOKENS = 950


def _answer(request: CannedRequest) -> StrandsMessage:
    return {"role": "assistant", "content": [{"text": f"Answer {len(request.messages)}: " + "because " * 100}]}


class HangingModel(CannedModel):
    async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[StreamEvent, None]:
        await asyncio.sleep(3600)
        yield {"messageStop": {"stopReason": "end_turn"}}


def _summary_model(fail: str | None = None) -> CannedModel:
    def respond(request: CannedRequest) -> StrandsMessage:
        if fail == "rate_limit":
            raise ModelThrottledException("ThrottlingException: Too many requests, please wait before trying again.")
        return {"role": "assistant", "content": [] if fail == "empty" else [{"text": SUMMARY}]}

    kind = HangingModel if fail == "hang" else CannedModel
    return kind(respond, summary=None, input_tokens=lambda request: INPUT_TOKENS)


@pytest.mark.parametrize(("turns", "window"), SIZES)
def test_a_summarization_agents_model_writes_the_summaries_of_an_agent_run(turns: int, window: int) -> None:
    summary_model = _summary_model()
    summarization_agent = Agent(model=summary_model, callback_handler=None)
    events: list[ManagerEvent] = []
    manager = ChainsumConversationManager(
        context_window=window, config=CONFIG, summarization_agent=summarization_agent, on_event=events.append
    )
    agent = Agent(model=CannedModel(_answer), conversation_manager=manager, callback_handler=None)
    for i in range(turns):
        agent(f"Question {i}: explain src/mod_{i}.py. " + "detail " * 100)
    assert SUMMARY in record_text(bedrock.load(agent.messages).messages)
    assert summary_model.requests and summarization_agent.messages == []  # only its model was called
    for request in summary_model.requests:
        assert request.tool_specs is None and len(request.messages) == 1
        (block,) = request.messages[0]["content"]
        assert_framed(request.system_prompt, block["text"])
    compactions = [e for e in events if isinstance(e, SummarizationEvent)]
    calls = len(summary_model.requests)
    assert compactions and sum(e.summarizer_calls for e in compactions) == calls
    usages = [e.summarizer_usage for e in compactions if e.summarizer_usage is not None]
    assert len(usages) == len(compactions)
    assert sum(u.input_tokens for u in usages) == INPUT_TOKENS * calls  # the stream's metadata, as reported
    assert sum(u.output_tokens for u in usages) == 10 * calls
    assert_model_read(compactions)


@pytest.mark.parametrize(("fail", "kind"), [("rate_limit", "rate_limit"), ("hang", "transport"), ("empty", "empty")])
def test_a_failing_strands_model_falls_back_and_loses_nothing(
    fail: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``fail_open=True``: chainsum's extractive summarizer takes over."""
    summary_model = _summary_model(fail)
    cm = ChainsumConversationManager(context_window=WINDOW, config=CONFIG, summarizer=summary_model, fail_open=True)
    event = assert_fell_back(cm.manager, history(), kind, caplog)
    if fail == "empty":
        assert event.summarizer_usage is not None and event.summarizer_usage.input_tokens >= INPUT_TOKENS
    if fail != "hang":
        assert summary_model.requests


def test_strings_and_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    cm = ChainsumConversationManager(context_window=WINDOW, summarizer="extractive")
    assert [type(s) for s in cm.manager.summarizers] == [ExtractiveSummarizer]
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    nova = model_summarizer("us.amazon.nova-micro-v1:0")  # what Strands' Agent(model="...") means: Bedrock
    assert isinstance(nova.model, BedrockModel) and nova.model.config["model_id"] == "us.amazon.nova-micro-v1:0"
    agent = Agent(model=_summary_model(), callback_handler=None)
    with pytest.raises(TypeError, match="summarization_agent= or summarizer=, not both"):
        ChainsumConversationManager(context_window=WINDOW, summarization_agent=agent, summarizer="extractive")
    with pytest.raises(TypeError, match="a model from Strands; got int"):
        ChainsumConversationManager(context_window=WINDOW, summarizer=3)
