"""`ChainsumMiddleware(summarizer=<a LangChain chat model>)`: LangChain's own fake chat model writes the summaries of
a real ``create_agent`` run, receives chainsum's framed transcript, has its usage reported, and when it fails
(a 429, a hang, an empty answer) its error is raised with the history untouched, as LangChain raises, or with
``fail_open=True`` the extractive summarizer takes over and nothing is lost."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

import httpx2 as httpx
import openai
from langchain.agents import AgentState, create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.runtime import Runtime
from pydantic import Field

from chainsum.formats.langchain import from_objects, to_objects
from chainsum.integrations import langchain as integration
from chainsum.integrations._summarizer import ModelSummarizer
from chainsum.integrations.langchain import ChainsumMiddleware, model_summarizer
from chainsum.manager import ManagerEvent, SummarizationEvent
from chainsum.summarize import ExtractiveSummarizer, SummarizerUsage
from chainsum.summarize.llm import make_summarizer
from chainsum.testing.langchain import ScriptedChatModel
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

USAGE = {"input_tokens": 812, "output_tokens": 31, "total_tokens": 843}


def _rate_limit() -> openai.RateLimitError:
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    response = httpx.Response(429, headers={"retry-after": "0"}, request=request)
    return openai.RateLimitError("Rate limit reached for gpt-4.1-mini", response=response, body=None)


class SummaryModel(GenericFakeChatModel):
    """LangChain's fake chat model, recording what it was sent; `fail` makes it raise a 429, hang, or answer
    nothing."""

    received: list[list[BaseMessage]] = Field(default_factory=list[list[BaseMessage]])
    fail: str | None = None

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        """The sync hooks call ``invoke``, as LangChain's own middleware does."""
        self.received.append(list(messages))
        if self.fail == "rate_limit":
            raise _rate_limit()
        if self.fail == "hang":
            time.sleep(3600)
        return super()._generate(messages, stop, run_manager, **kw)

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.received.append(list(messages))
        if self.fail == "rate_limit":
            raise _rate_limit()
        if self.fail == "hang":
            await asyncio.sleep(3600)
        return await super()._agenerate(messages, stop, run_manager, **kw)


def _summary_model(fail: str | None = None) -> SummaryModel:
    answer = AIMessage("" if fail == "empty" else SUMMARY, usage_metadata=USAGE)  # type: ignore[arg-type]
    return SummaryModel(messages=itertools.repeat(answer), fail=fail)


@pytest.mark.parametrize(("turns", "window"), SIZES)
def test_a_langchain_chat_model_writes_the_summaries_of_an_agent_run(turns: int, window: int) -> None:
    answers = [
        AIMessage(f"Answer {i}: f_{i} in src/mod_{i}.py computes {i}. " + "because " * 100) for i in range(turns)
    ]
    agent_model = ScriptedChatModel(responses=answers)
    summarizer = _summary_model()
    events: list[ManagerEvent] = []
    middleware = ChainsumMiddleware(context_window=window, config=CONFIG, summarizer=summarizer, on_event=events.append)
    agent: Any = create_agent(agent_model, tools=[], middleware=[middleware], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t1"}}
    for i in range(turns):
        agent.invoke({"messages": [HumanMessage(f"Question {i}: explain src/mod_{i}.py. " + "detail " * 100)]}, config)
    saved = from_objects(agent.get_state(config).values["messages"])
    assert SUMMARY in record_text(saved)  # the framework model's text is the record in the checkpoint
    assert summarizer.received
    for sent in summarizer.received:
        assert isinstance(sent[0], SystemMessage) and isinstance(sent[1], HumanMessage) and len(sent) == 2
        assert_framed(sent[0].text, sent[1].text)
    compactions = [e for e in events if isinstance(e, SummarizationEvent)]
    assert compactions and sum(e.summarizer_calls for e in compactions) == len(summarizer.received)
    reported = [e.summarizer_usage for e in compactions]
    assert all(u is not None for u in reported)
    assert sum(u.input_tokens for u in reported if u) == USAGE["input_tokens"] * len(summarizer.received)
    assert sum(u.output_tokens for u in reported if u) == USAGE["output_tokens"] * len(summarizer.received)
    assert_model_read(compactions)


@pytest.mark.parametrize(("fail", "kind"), [("rate_limit", "rate_limit"), ("hang", "transport"), ("empty", "empty")])
def test_a_failing_chat_model_falls_back_and_loses_nothing(
    fail: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    summarizer = _summary_model(fail)
    middleware = ChainsumMiddleware(context_window=WINDOW, config=CONFIG, summarizer=summarizer, fail_open=True)
    manager = middleware.manager_for("t1")
    event = assert_fell_back(manager, history(), kind, caplog)
    assert summarizer.received  # it was asked
    if fail == "empty":  # the empty answers were billed: their usage is reported
        assert event.summarizer_usage is not None and event.summarizer_usage.output_tokens >= USAGE["output_tokens"]


def test_a_failing_chat_model_raises_its_own_error_with_the_state_untouched() -> None:
    summarizer = _summary_model("rate_limit")
    middleware = ChainsumMiddleware(context_window=WINDOW, config=CONFIG, summarizer=summarizer)
    messages = to_objects(history())
    before = list(messages)
    with pytest.raises(openai.RateLimitError, match="Rate limit reached"):
        middleware.before_model(AgentState(messages=messages), Runtime())
    assert summarizer.received  # it was asked, and its own error came back
    assert messages == before  # the state as it was
    session = middleware.session_of(None)
    assert middleware.archive.records(session) == [] and middleware.archive.archived(session) == []


def test_a_string_is_langchains_model_name_and_chainsums_specs_go_to_summarizers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain = ChainsumMiddleware(context_window=WINDOW, summarizers=[make_summarizer("extractive")]).manager_for(None)
    assert [type(s) for s in plain.summarizers] == [ExtractiveSummarizer]
    made: list[str] = []

    def init_chat_model(name: str) -> SummaryModel:
        made.append(name)
        return _summary_model()

    monkeypatch.setattr("langchain.chat_models.init_chat_model", init_chat_model)
    summarizer = model_summarizer("openai:gpt-4.1-mini")
    assert made == ["openai:gpt-4.1-mini"] and summarizer.name == "langchain:openai:gpt-4.1-mini"
    manager = ChainsumMiddleware(context_window=WINDOW, summarizer=summarizer).manager_for(None)
    assert manager.summarizers == (summarizer,) and manager.config.abort_on_failure  # LangChain's: it raises
    manager = ChainsumMiddleware(context_window=WINDOW, summarizer=summarizer, fail_open=True).manager_for(None)
    assert manager.summarizers[0] is summarizer and isinstance(manager.summarizers[1], ExtractiveSummarizer)
    assert asyncio.run(summarizer("a transcript")) == SUMMARY
    named = ChainsumMiddleware(context_window=WINDOW, summarizer="openai:gpt-4.1-mini")  # LangChain's meaning
    assert made == ["openai:gpt-4.1-mini"] * 2 and isinstance(named.manager_for(None).summarizers[0], ModelSummarizer)


def test_a_chat_model_with_a_manager_or_with_summarizers_is_refused() -> None:
    with pytest.raises(TypeError, match="not both"):
        ChainsumMiddleware(context_window=WINDOW, summarizer=_summary_model(), summarizers=[ExtractiveSummarizer()])
    with pytest.raises(TypeError, match="not both"):
        ChainsumMiddleware(manager=ChainsumMiddleware(context_window=WINDOW).manager_for(None), summarizer="extractive")
    with pytest.raises(TypeError, match=r"got \['summarizers'\]"):
        ChainsumMiddleware(manager=ChainsumMiddleware(context_window=WINDOW).manager_for(None), summarizers=[])
    assert integration._adapt(object()) is None  # pyright: ignore[reportPrivateUsage]


def test_usage_is_none_when_the_model_reports_none() -> None:
    model = GenericFakeChatModel(messages=itertools.repeat(AIMessage(SUMMARY)))
    manager = ChainsumMiddleware(context_window=WINDOW, config=CONFIG, summarizer=model).manager_for(None)
    event = manager.prepare_sync(history()).event
    assert isinstance(event, SummarizationEvent) and SUMMARY in event.summary_text
    assert event.summarizer_usage is None
    assert SummarizerUsage(input_tokens=1) != event.summarizer_usage
