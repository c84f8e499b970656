"""`ChainsumMiddleware` as a drop-in for LangChain's ``SummarizationMiddleware`` (issue 33): LangChain's arguments
with LangChain's meaning, its failure semantics (the model's error raised, the checkpoint untouched) unless
``fail_open=True``, its summarizer protocol, and summary calls that never reach the agent's stream.

LangChain's own tests of these (``tests/upstream/test_langchain_suite.py``) use 1-3 word messages, which chainsum
declines to compact; here the same contracts are checked at realistic sizes, on real ``create_agent`` agents.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Literal
from unittest.mock import Mock

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import AgentState, create_agent
from langchain_core.language_models import ModelProfile
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, RemoveMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime
from pydantic import Field

from chainsum.integrations.langchain import ChainsumMiddleware
from chainsum.manager import ManagerEvent, SummarizationEvent, SummarizationFailedEvent
from chainsum.summarize.llm import make_summarizer

FILLER = "the deployment log shows a timeout against the orders database at 10:17, retried twice and then dropped; "


def _turn(i: int) -> str:
    return f"Turn {i}: " + FILLER * 6


def _history(n: int) -> list[AnyMessage]:
    out: list[AnyMessage] = []
    for i in range(n):
        out.append(HumanMessage(_turn(i), id=f"h{i}"))
        out.append(AIMessage(f"Answer {i}: " + FILLER * 6, id=f"a{i}"))
    return out


class FlakySummaryModel(GenericFakeChatModel):
    """LangChain's fake chat model that raises a 429 until `working` is set, recording each call's config."""

    working: bool = True
    configs: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AIMessage:
        self.configs.append(dict(config or {}))
        return super().invoke(input, config, **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        if not self.working:
            raise RuntimeError("429 Too Many Requests (simulated)")
        return super()._generate(messages, stop, run_manager, **kw)


def _summary_model(text: str = "Summary of the conversation so far: timeouts at 10:17.") -> FlakySummaryModel:
    return FlakySummaryModel(messages=itertools.repeat(AIMessage(text)))


def test_langchains_arguments_and_attributes() -> None:
    model = _summary_model()
    counter = Mock(return_value=10)
    middleware = ChainsumMiddleware(
        model,
        trigger=[("messages", 50), {"tokens": 4000, "messages": 10}],
        keep=("messages", 6),
        summary_prompt="Summarize: {messages}",
        trim_tokens_to_summarize=2000,
        token_counter=counter,
    )
    assert middleware.model is model
    assert middleware.trigger == [("messages", 50), {"tokens": 4000, "messages": 10}]
    assert middleware.trigger_clauses == [{"messages": 50}, {"tokens": 4000, "messages": 10}]
    assert middleware.keep == ("messages", 6)
    assert middleware.summary_prompt == "Summarize: {messages}"
    assert middleware.trim_tokens_to_summarize == 2000
    assert middleware.token_counter is counter
    assert middleware.summarizer is None  # the chat model writes the summaries
    config = middleware.manager_for(None).config
    assert config.preserve_recent == 6 and config.summarizer_input_cap_tokens == 2000 and config.abort_on_failure
    assert ChainsumMiddleware(model).token_counter is count_tokens_approximately


def test_summarizers_beside_model_write_the_summaries_and_the_model_is_the_profile() -> None:
    profiled = GenericFakeChatModel(messages=iter([]), profile=ModelProfile(max_input_tokens=50_000))
    extractive = make_summarizer("extractive")
    manager = ChainsumMiddleware(profiled, summarizers=[extractive]).manager_for(None)
    assert manager.summarizers == (extractive,) and manager.window == 50_000


def test_the_window_comes_from_context_window_window_model_or_the_profile() -> None:
    profiled = GenericFakeChatModel(messages=iter([]), profile=ModelProfile(max_input_tokens=50_000))
    assert ChainsumMiddleware(profiled, trigger=("fraction", 0.5)).manager_for(None).window == 50_000
    assert ChainsumMiddleware(profiled, context_window=9000).manager_for(None).window == 9000
    assert ChainsumMiddleware(window_model="gpt-4o").manager_for(None).window == 128_000
    with pytest.raises(ValueError, match="Model profile information is required"):
        ChainsumMiddleware(_summary_model(), trigger=("fraction", 0.5))


@pytest.mark.parametrize(
    ("trigger", "error", "match"),
    [
        ({"invalid_metric": 100}, ValueError, "Unsupported trigger metric"),
        ({"fraction": 1.5}, ValueError, "between 0 and 1"),
        ({"tokens": 0}, ValueError, "greater than 0"),
        ({"messages": True}, ValueError, "must be numeric"),
        ({"tokens": 10.5}, ValueError, "must be integers"),
        ({}, ValueError, "at least one of"),
        (["invalid"], TypeError, "Unsupported trigger item type"),
        ("foo", TypeError, "Unsupported trigger type"),
    ],
)
def test_a_bad_trigger_is_one_line_at_construction(trigger: object, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match) as raised:
        ChainsumMiddleware(_summary_model(), trigger=trigger)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("where", "given"),
    [("model", Mock()), ("model", object()), ("model", 42), ("summarizer", object()), ("summarizer", 42)],
)  # a callable summarizer is LangChain's protocol (messages -> str), so a Mock is one
def test_what_is_not_a_langchain_model_is_refused_at_once(where: str, given: object) -> None:
    with pytest.raises(TypeError, match=f"{where}= takes") as raised:
        ChainsumMiddleware(**{where: given}, context_window=8000)
    assert "\n" not in str(raised.value)


def test_a_messages_trigger_fires_at_that_many_messages_and_keep_is_the_verbatim_tail() -> None:
    middleware = ChainsumMiddleware(_summary_model(), trigger=("messages", 12), keep=("messages", 4))
    below = _history(5)  # 10 messages
    assert middleware.before_model(AgentState(messages=below), Runtime()) is None
    at = _history(6)  # 12 messages
    update = middleware.before_model(AgentState(messages=at), Runtime())
    assert update is not None and isinstance(update["messages"][0], RemoveMessage)
    kept = update["messages"][1:]
    assert kept[-4:] == at[-4:]  # the last four as they were, the very objects
    assert "Summary of the conversation so far" in kept[0].text
    assert kept[0].additional_kwargs.get("lc_source") == "summarization"
    assert len(kept) < len(at)


def test_a_langchain_summarizer_gets_the_messages_themselves_and_the_summary_call_config() -> None:
    received: list[list[AnyMessage]] = []
    configs: list[RunnableConfig] = []

    def summarize(messages: list[AnyMessage], config: RunnableConfig) -> str:
        received.append(messages)
        configs.append(config)
        return "Summary: timeouts against the orders database at 10:17."

    middleware = ChainsumMiddleware(
        _summary_model(), trigger=("messages", 12), keep=("messages", 4), summarizer=RunnableLambda(summarize)
    )
    history = _history(6)
    update = middleware.before_model(AgentState(messages=history), Runtime())
    assert update is not None
    assert received and all(m in history for m in received[0])  # the caller's own objects
    assert received[0][0] is history[0]
    assert TAG_NOSTREAM in configs[0]["tags"] and configs[0]["metadata"]["lc_source"] == "summarization"
    assert middleware.summarizer is not None


def test_a_summarizer_answering_no_string_is_a_type_error() -> None:
    middleware = ChainsumMiddleware(trigger=("messages", 12), keep=("messages", 4), summarizer=lambda _: 42)
    with pytest.raises(TypeError, match="must return a str, got int"):
        middleware.before_model(AgentState(messages=_history(6)), Runtime())


def _agent(middleware: ChainsumMiddleware) -> Any:
    main = GenericFakeChatModel(messages=(AIMessage(f"Answer {i}: " + FILLER * 6) for i in itertools.count()))
    return create_agent(model=main, tools=[], middleware=[middleware], checkpointer=InMemorySaver())


def test_a_failing_model_raises_and_the_checkpoint_keeps_the_old_messages_plus_the_new_one() -> None:
    """LangChain's e2e failure test at realistic sizes: the summary model fails (429), the turn raises its error,
    the checkpoint keeps what it had plus the new question; once the model works, the same turn compacts."""
    summary_model = _summary_model()
    summary_model.working = False
    events: list[ManagerEvent] = []
    middleware = ChainsumMiddleware(
        summary_model, trigger=("messages", 8), keep=("messages", 2), on_event=events.append
    )
    agent = _agent(middleware)
    config: Any = {"configurable": {"thread_id": "e2e"}}
    for i in range(3):
        agent.invoke({"messages": [HumanMessage(_turn(i))]}, config)
    before = agent.get_state(config).values["messages"]
    assert len(before) == 6
    agent.invoke({"messages": [HumanMessage(_turn(3))]}, config)  # 7 messages at the model call: below the trigger
    before = agent.get_state(config).values["messages"]
    with pytest.raises(RuntimeError, match="429 Too Many Requests"):
        agent.invoke({"messages": [HumanMessage(_turn(4))]}, config)
    after = agent.get_state(config).values["messages"]
    assert after[:-1] == before and after[-1].content == _turn(4)
    assert [e.aborted for e in events if isinstance(e, SummarizationFailedEvent)] == [True]
    summary_model.working = True
    agent.invoke({"messages": [HumanMessage(_turn(4))]}, config)
    recovered = agent.get_state(config).values["messages"]
    assert len(recovered) < len(after)
    assert any("Summary of the conversation so far" in m.text for m in recovered)
    assert not any(m.text == _turn(0) for m in recovered)
    assert any(isinstance(e, SummarizationEvent) for e in events)


def _compactions(mode: Literal["state", "request"], turns: int) -> int:
    events: list[ManagerEvent] = []
    middleware = ChainsumMiddleware(
        _summary_model(), trigger=("messages", 8), keep=("messages", 2), mode=mode, on_event=events.append
    )
    agent = _agent(middleware)
    config: Any = {"configurable": {"thread_id": "t"}}
    for i in range(turns):
        agent.invoke({"messages": [HumanMessage(_turn(i))]}, config)
    return sum(isinstance(e, SummarizationEvent) for e in events)


def test_in_request_mode_the_trigger_reads_what_the_model_is_sent() -> None:
    """The state keeps growing in request mode: a trigger read on it would compact on every call past it."""
    assert _compactions("request", 12) == _compactions("state", 12) > 1


def test_fail_open_compacts_with_chainsums_fallback_instead() -> None:
    summary_model = _summary_model()
    summary_model.working = False
    middleware = ChainsumMiddleware(summary_model, trigger=("messages", 12), keep=("messages", 4), fail_open=True)
    update = middleware.before_model(AgentState(messages=_history(6)), Runtime())
    assert update is not None and len(update["messages"]) - 1 < 12


def test_the_summary_never_reaches_the_agents_stream() -> None:
    """``stream_mode="messages"`` through a compaction yields the assistant's words only; the summarizer's own
    streamed tokens (``GenericFakeChatModel`` streams word by word) are tagged off the stream."""
    summarizer = _summary_model("SUMMARY-TEXT of the earlier turns, with timeouts at 10:17.")
    middleware = ChainsumMiddleware(summarizer, trigger=("messages", 12), keep=("messages", 4))
    agent = create_agent(
        model=GenericFakeChatModel(messages=iter([AIMessage("Final answer.")])), tools=[], middleware=[middleware]
    )
    parts = [part for part, _ in agent.stream({"messages": _history(6)}, stream_mode="messages")]
    assert "".join(p.text for p in parts if isinstance(p, AIMessage)) == "Final answer."
    assert any("SUMMARY-TEXT" in p.text for p in parts if isinstance(p, HumanMessage))  # the state's record
    assert summarizer.configs and TAG_NOSTREAM in summarizer.configs[0]["tags"]


@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")  # v3 is a beta
def test_the_summary_is_not_in_the_event_projection() -> None:
    """``astream_events(version="v3")``'s messages through a compaction (async hooks): the assistant's answer and
    the history's messages, never the summarizer's own streamed answer."""
    summarizer = _summary_model("SUMMARY-TEXT of the earlier turns, with timeouts at 10:17.")
    events: list[ManagerEvent] = []
    middleware = ChainsumMiddleware(summarizer, trigger=("messages", 12), keep=("messages", 4), on_event=events.append)
    agent = create_agent(
        model=GenericFakeChatModel(messages=iter([AIMessage("Final answer.")])), tools=[], middleware=[middleware]
    )

    async def projected() -> list[str]:
        run = await agent.astream_events({"messages": _history(6)}, version="v3")
        texts: list[str] = []
        async for message in run.messages:
            text = ""
            async for chunk in message.text:
                text += chunk
            texts.append(text)
        return texts

    texts = asyncio.run(projected())
    assert "Final answer." in texts
    # the summarizer's answer is no message of its own: only the state's record (the updated history) quotes it
    assert [t for t in texts if "SUMMARY-TEXT" in t and not t.startswith("[chainsum record")] == []
    assert any(isinstance(e, SummarizationEvent) and "SUMMARY-TEXT" in e.summary_text for e in events)
