"""`ChainsumSession(summarizer=<an Agents SDK Model>)`: a `Model` stub (the way the SDK's own tests fake one) writes
the summaries of a real ``Runner.run`` conversation, receives chainsum's system prompt as its instructions and the
framed transcript as its input (no tools), has its usage reported, and when it fails (a 429, a hang, an empty
answer, a refusal) the extractive summarizer takes over and nothing is lost."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("agents")

import httpx2 as httpx
import openai
from agents import Agent, Model, ModelResponse, RunConfig, Runner, TResponseInputItem, Usage, set_tracing_disabled
from agents.items import TResponseStreamEvent
from openai.types.responses import ResponseOutputMessage, ResponseOutputRefusal, ResponseOutputText

from chainsum.formats import load
from chainsum.integrations.openai_agents import ChainsumSession, model_summarizer
from chainsum.manager import ManagerEvent, SummarizationEvent
from chainsum.summarize import ExtractiveSummarizer
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

INPUT_TOKENS, OUTPUT_TOKENS = 1200, 33


def _message(n: int, text: str | None, refusal: str | None = None) -> ResponseOutputMessage:
    content: list[Any] = []
    if text is not None:
        content.append(ResponseOutputText(text=text, type="output_text", annotations=[]))
    if refusal is not None:
        content.append(ResponseOutputRefusal(refusal=refusal, type="refusal"))
    return ResponseOutputMessage(id=f"msg_{n}", type="message", role="assistant", status="completed", content=content)


class StubModel(Model):
    """Answers every request with `reply(n)`, recording (instructions, input, tools); `fail` raises a 429, hangs,
    answers no text or refuses."""

    def __init__(self, reply: str = SUMMARY, fail: str | None = None) -> None:
        self.reply = reply
        self.fail = fail
        self.received: list[tuple[str | None, str | list[TResponseInputItem], list[Any]]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: Any,
        tools: list[Any],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        self.received.append((system_instructions, input, tools))
        n = len(self.received)
        if self.fail == "rate_limit":
            request = httpx.Request("POST", "https://api.openai.com/v1/responses")
            response = httpx.Response(429, headers={"retry-after-ms": "10"}, request=request)
            raise openai.RateLimitError("Rate limit reached", response=response, body=None)
        if self.fail == "hang":
            await asyncio.sleep(3600)
        output = {
            "empty": _message(n, None),
            "refused": _message(n, None, refusal="I can't help with that."),
        }.get(self.fail or "", _message(n, self.reply.format(n=n)))
        usage = Usage(requests=1, input_tokens=INPUT_TOKENS, output_tokens=OUTPUT_TOKENS)
        return ModelResponse(output=[output], usage=usage, response_id=f"resp_{n}")

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("not streamed")


@pytest.mark.parametrize(("turns", "window"), SIZES)
def test_an_agents_sdk_model_writes_the_summaries_of_a_runner_conversation(turns: int, window: int) -> None:
    set_tracing_disabled(True)
    summary_model = StubModel()
    events: list[ManagerEvent] = []
    session = ChainsumSession(
        "conv-1", context_window=window, config=CONFIG, summarizer=summary_model, on_event=events.append
    )
    agent = Agent(name="helper", model=StubModel("Answer {n}: " + "because " * 100))
    run_config = RunConfig(call_model_input_filter=session.input_filter, tracing_disabled=True)

    async def run() -> list[TResponseInputItem]:
        for i in range(turns):
            prompt = f"Question {i}: explain src/mod_{i}.py. " + "detail " * 100
            await Runner.run(agent, prompt, session=session, run_config=run_config)
        return await session.underlying_session.get_items()

    stored = asyncio.run(run())
    session.close()
    assert SUMMARY in record_text(load(stored, "openai-responses").messages)
    assert summary_model.received
    for instructions, given, tools in summary_model.received:
        assert isinstance(given, str) and tools == []
        assert_framed(instructions, given)
    compactions = [e for e in events if isinstance(e, SummarizationEvent)]
    calls = len(summary_model.received)
    assert compactions and sum(e.summarizer_calls for e in compactions) == calls
    usages = [e.summarizer_usage for e in compactions if e.summarizer_usage is not None]
    assert sum(u.input_tokens for u in usages) == INPUT_TOKENS * calls
    assert sum(u.output_tokens for u in usages) == OUTPUT_TOKENS * calls
    assert_model_read(compactions)


@pytest.mark.parametrize(
    ("fail", "kind"),
    [("rate_limit", "rate_limit"), ("hang", "transport"), ("empty", "empty"), ("refused", "refused")],
)
def test_a_failing_agents_sdk_model_falls_back_and_loses_nothing(
    fail: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    summary_model = StubModel(fail=fail)
    session = ChainsumSession("conv-2", context_window=WINDOW, config=CONFIG, summarizer=summary_model)
    event = assert_fell_back(session.manager, history(), kind, caplog, wire="openai-responses")
    session.close()
    assert summary_model.received
    if fail in ("empty", "refused"):
        assert event.summarizer_usage is not None and event.summarizer_usage.input_tokens >= INPUT_TOKENS


def test_strings_and_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    session = ChainsumSession("conv-3", context_window=WINDOW, summarizer="extractive")
    assert [type(s) for s in session.manager.summarizers] == [ExtractiveSummarizer]
    session.close()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    summarizer = model_summarizer("gpt-4.1-mini")  # the SDK's name, through its MultiProvider
    assert isinstance(summarizer.model, Model) and summarizer.name == "openai-agents:gpt-4.1-mini"
    with pytest.raises(TypeError, match="a model from OpenAI Agents SDK; got float"):
        ChainsumSession("conv-4", context_window=WINDOW, summarizer=1.5)
