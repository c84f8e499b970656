"""`ChainsumSession(summarizer=<an Agents SDK Model>)`: a `Model` stub (the way the SDK's own tests fake one) writes
the summaries of a real ``Runner.run`` conversation, receives chainsum's system prompt as its instructions and the
framed transcript as its input (no tools), and has its usage reported. When it fails (a 429, a hang, an empty
answer, a refusal) the session and the input filter raise, so the run does (the SDK's rule for a session or a
filter that raises), the wrapped session untouched and the event saying it aborted; with ``fail_open=True`` the
extractive summarizer takes over and nothing is lost. Summarizer calls never reach ``Runner.run_streamed``'s
events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any
from unittest.mock import Mock

import pytest

pytest.importorskip("agents")

import httpx2 as httpx
import openai
from agents import (
    Agent,
    Model,
    ModelResponse,
    RunConfig,
    Runner,
    SQLiteSession,
    TResponseInputItem,
    Usage,
    set_tracing_disabled,
)
from agents.items import TResponseStreamEvent
from openai.types.responses import ResponseOutputMessage, ResponseOutputRefusal, ResponseOutputText

from chainsum.errors import SummarizerError
from chainsum.formats import dump, load
from chainsum.integrations.openai_agents import ChainsumInputFilter, ChainsumSession, model_summarizer
from chainsum.manager import ManagerEvent, SummarizationEvent, SummarizationFailedEvent
from chainsum.store import MemoryArchive
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


FAILURES = [("rate_limit", "rate_limit"), ("hang", "transport"), ("empty", "empty"), ("refused", "refused")]


def _stored() -> list[TResponseInputItem]:
    """A conversation over the trigger of a `WINDOW` window, as the SDK stores it (Responses input items)."""
    return list(dump(history(), "openai-responses"))


@pytest.mark.parametrize(("fail", "kind"), FAILURES)
@pytest.mark.parametrize("via", ["session", "input_filter"])
def test_a_failing_agents_sdk_model_makes_the_run_raise_with_the_session_untouched(
    fail: str, kind: str, via: str
) -> None:
    """The SDK's rule: a session or a ``call_model_input_filter`` that raises makes ``Runner.run`` raise. Nothing
    was compacted, nothing archived, the wrapped session holds what it held, the agent's model was never asked, and
    the failed event says it aborted."""
    set_tracing_disabled(True)
    summary_model = StubModel(fail=fail)
    answering = StubModel("never sent")
    events: list[ManagerEvent] = []
    archive = MemoryArchive()
    options: dict[str, Any] = {"context_window": WINDOW, "config": CONFIG, "archive": archive}
    underlying = SQLiteSession("conv-raise")
    stored = _stored()

    async def run() -> list[TResponseInputItem]:
        await underlying.add_items(stored)
        agent = Agent(name="helper", model=answering)
        if via == "session":
            session = ChainsumSession(
                "conv-raise", underlying, summarizer=summary_model, on_event=events.append, **options
            )
            assert not session.fail_open
            with pytest.raises(SummarizerError) as caught:
                await Runner.run(agent, "One more question.", session=session)
        else:
            filter_ = ChainsumInputFilter(summarizer=summary_model, on_event=events.append, **options)
            config = RunConfig(call_model_input_filter=filter_, tracing_disabled=True)
            with pytest.raises(SummarizerError) as caught:
                await Runner.run(agent, await underlying.get_items(), session=None, run_config=config)
        assert caught.value.kind == kind
        return await underlying.get_items()

    after = asyncio.run(run())
    underlying.close()
    assert after == stored
    assert summary_model.received and answering.received == []
    session_id = "conv-raise" if via == "session" else "default"
    assert archive.records(session_id) == [] and archive.archived(session_id) == []
    failed = [e for e in events if isinstance(e, SummarizationFailedEvent)]
    assert len(failed) == 1 and failed[0].aborted and failed[0].error_kind == kind
    assert not any(isinstance(e, SummarizationEvent) for e in events)


@pytest.mark.parametrize(("fail", "kind"), FAILURES)
def test_with_fail_open_a_failing_agents_sdk_model_falls_back_and_loses_nothing(
    fail: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    summary_model = StubModel(fail=fail)
    session = ChainsumSession("conv-2", context_window=WINDOW, config=CONFIG, summarizer=summary_model, fail_open=True)
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


def test_objects_that_are_not_the_sdks_are_refused_at_once() -> None:
    """A test double where a model or a session goes (``Mock()`` has every method) is a one-line `TypeError` now,
    not a wrong summary or a hang later."""
    with pytest.raises(TypeError, match=r"^summarizer= has an Agents SDK Model's methods but is a Mock, not one$"):
        ChainsumSession("conv-5", context_window=WINDOW, summarizer=Mock())
    with pytest.raises(TypeError, match=r"^summarizer= has an Agents SDK Model's methods but is a Mock, not one$"):
        ChainsumInputFilter(context_window=WINDOW, summarizer=Mock())
    with pytest.raises(TypeError, match=r"^model_summarizer\(\) takes an Agents SDK Model or a model name; got Mock$"):
        model_summarizer(Mock())
    with pytest.raises(TypeError, match=r"^underlying_session= takes an Agents SDK Session .*; got Mock$"):
        ChainsumSession("conv-6", Mock(), context_window=WINDOW)
    with pytest.raises(TypeError, match=r"^model= is a model name for the context window"):
        ChainsumSession("conv-7", model=StubModel())
    with pytest.raises(TypeError, match=r"^manager= takes a chainsum ContextManager; got Mock$"):
        ChainsumInputFilter(manager=Mock())
    with pytest.raises(TypeError, match=r"^session_id must be a string; got int$"):
        ChainsumSession(7, context_window=WINDOW)  # type: ignore[arg-type]


class StreamingStubModel(StubModel):
    """`StubModel` that also streams, the way the SDK's own fake model does: the summarizer (not streamed) and the
    agent's answer (streamed) are told apart by what they say."""

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        return self._stream(*args, **kwargs)

    async def _stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        from openai.types.responses import Response, ResponseCompletedEvent

        response = await self.get_response(*args, **kwargs)
        yield ResponseCompletedEvent(
            type="response.completed",
            sequence_number=0,
            response=Response(
                id=response.response_id or "resp",
                created_at=0,
                model="stub",
                object="response",
                output=list(response.output),
                parallel_tool_calls=False,
                tool_choice="auto",
                tools=[],
            ),
        )


@pytest.mark.parametrize("via", ["session", "input_filter"])
def test_summarizer_calls_never_reach_run_streamed_events(via: str) -> None:
    """A compaction inside ``Runner.run_streamed``: every event the user streams is the agent's (its answer), while
    the summary did get written (the summarizer was called in this run and the model received its record)."""
    set_tracing_disabled(True)
    summary_model = StreamingStubModel()
    answering = StreamingStubModel("Streamed answer.")
    events: list[ManagerEvent] = []
    underlying = SQLiteSession("conv-stream")
    session = ChainsumSession(
        "conv-stream",
        underlying,
        context_window=WINDOW,
        config=CONFIG,
        summarizer=summary_model,
        on_event=events.append,
    )
    config = RunConfig(
        call_model_input_filter=session.input_filter if via == "input_filter" else None, tracing_disabled=True
    )
    seen: list[str] = []

    async def run() -> None:
        await underlying.add_items(_stored())
        agent = Agent(name="helper", model=answering)
        if via == "session":
            result = Runner.run_streamed(agent, "One more question.", session=session, run_config=config)
        else:
            result = Runner.run_streamed(agent, await underlying.get_items(), run_config=config)
        async for event in result.stream_events():
            seen.append(repr(event))
        assert result.final_output == "Streamed answer."

    asyncio.run(run())
    underlying.close()
    assert summary_model.received and answering.received
    compactions = [e for e in events if isinstance(e, SummarizationEvent)]
    assert compactions and SUMMARY in compactions[-1].summary_text
    _instructions, sent, _tools = answering.received[-1]
    assert isinstance(sent, list) and SUMMARY in record_text(load(list(sent), "openai-responses").messages)
    assert seen and not any(SUMMARY in s or "FRAMEWORK-MODEL-SUMMARY" in s for s in seen), seen
    assert any("Streamed answer." in s for s in seen)
