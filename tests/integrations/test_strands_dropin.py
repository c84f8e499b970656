"""`ChainsumConversationManager` as a drop-in for Strands' ``SummarizingConversationManager`` (issue 33), at
realistic message sizes (Strands' own tests, run in ``tests/upstream``, use histories of a few words a message):
its arguments and attributes, the agent's own model as the default summarizer, Strands' failure semantics, durable
``tracking_id``s (with a Strands session's pruning), an overflow on a short history, test-double agents, and
``pin_first``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import Mock

import pytest
from strands import Agent, tool
from strands.session import FileSessionManager
from strands.types.exceptions import ContextWindowOverflowException

from chainsum import validate
from chainsum.errors import SummarizerError
from chainsum.integrations.strands import ChainsumConversationManager
from chainsum.manager import ManagerConfig, ManagerEvent, SummarizationFailedEvent
from chainsum.summarize import ExtractiveSummarizer
from chainsum.summarize.llm import DEFAULT_SYSTEM_PROMPT
from chainsum.testing.strands import CannedModel, CannedRequest

WINDOW = 2000


@tool
def fetch(page: int) -> str:
    """Fetch one page of a document."""
    return f"page {page} " * 5


def history(turns: int = 20) -> list[dict[str, Any]]:
    """Questions, tool calls and results of some eighty words each: over a 2,000-token window."""
    messages: list[dict[str, Any]] = []
    for t in range(turns):
        messages.append({"role": "user", "content": [{"text": f"Question {t}: what does order ORD-{t:04d} hold?"}]})
        use = {"toolUseId": f"t{t}", "name": "fetch", "input": {"page": t}}
        messages.append({"role": "assistant", "content": [{"toolUse": use}]})
        result = {"toolUseId": f"t{t}", "status": "success", "content": [{"text": f"ORD-{t:04d}: " + "item " * 80}]}
        messages.append({"role": "user", "content": [{"toolResult": result}]})
        messages.append({"role": "assistant", "content": [{"text": f"Order ORD-{t:04d} holds 80 items."}]})
    return messages


def answer(_: CannedRequest) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"text": "Done."}]}


def summary_of(request: CannedRequest) -> str:
    return f"AGENT-MODEL-SUMMARY of a transcript of {len(request.messages[-1]['content'][0]['text'])} characters."


def agent_with(cm: ChainsumConversationManager, model: CannedModel, **kwargs: Any) -> Agent:
    return Agent(model=model, tools=[fetch], conversation_manager=cm, callback_handler=None, **kwargs)


def text_of(messages: list[Any]) -> str:
    return json.dumps(messages)


# arguments ----------------------------------------------------------------------------------------------------------
def test_strands_arguments_positionally_and_as_attributes() -> None:
    cm = ChainsumConversationManager(0.5, 4, context_window=WINDOW)
    assert (cm.summary_ratio, cm.preserve_recent_messages) == (0.5, 4)
    assert (cm.manager.config.summary_ratio, cm.manager.config.preserve_recent) == (0.5, 4)
    default = ChainsumConversationManager(context_window=WINDOW)
    assert (default.summary_ratio, default.preserve_recent_messages, default.summarization_agent) == (0.3, 10, None)
    assert default.summarization_system_prompt is None and default.pin_first is None and default.fail_open is False
    assert ChainsumConversationManager(0.05, context_window=WINDOW).summary_ratio == 0.1  # clamped, as in Strands
    assert ChainsumConversationManager(0.95, context_window=WINDOW).summary_ratio == 0.8
    one = ChainsumConversationManager(preserve_recent_messages=1, context_window=WINDOW)
    assert one.preserve_recent_messages == 1 and one.manager.config.preserve_recent == 2  # chainsum's floor
    cm.summary_ratio = 0.2
    assert cm.manager.config.summary_ratio == 0.2
    assert ChainsumConversationManager(pin_first=-3, context_window=WINDOW).pin_first == 0


def test_proactive_compression_maps_onto_the_trigger() -> None:
    cm = ChainsumConversationManager(proactive_compression={"compression_threshold": 0.6}, context_window=WINDOW)
    assert cm.manager.config.trigger_token_ratio == 0.6 and cm.manager.config.reset_token_ratio < 0.6
    on = ChainsumConversationManager(proactive_compression=True, context_window=WINDOW)
    assert on.manager.config.trigger_token_ratio == 0.7
    off = ChainsumConversationManager(proactive_compression=False, context_window=WINDOW)
    agent = Agent(model=CannedModel(answer), messages=history(), conversation_manager=off, callback_handler=None)
    agent("One more question.")
    assert len(agent.messages) == len(history()) + 2  # no compaction before the model call, as in Strands' default


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"summary_ratio": "0.3"}, TypeError, "summary_ratio must be a number"),
        ({"preserve_recent_messages": -1}, ValueError, "preserve_recent_messages must be 0 or more"),
        ({"preserve_recent_messages": 2.5}, TypeError, "preserve_recent_messages must be an int"),
        ({"pin_first": "2"}, TypeError, "pin_first must be an int"),
        ({"proactive_compression": {"compression_threshold": 1.5}}, ValueError, r"must be in \(0, 1\]"),
        ({"proactive_compression": 0.7}, TypeError, "proactive_compression must be None, a bool"),
        ({"summarization_system_prompt": 3}, TypeError, "summarization_system_prompt must be a str"),
        ({"fail_open": "yes"}, TypeError, "fail_open must be a bool"),
    ],
)
def test_bad_arguments_are_one_line_errors(kwargs: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match) as raised:
        ChainsumConversationManager(context_window=WINDOW, **kwargs)
    assert "\n" not in str(raised.value)


def test_anything_but_an_agent_as_summarization_agent_is_refused_at_once() -> None:
    started = time.perf_counter()
    with pytest.raises(TypeError, match=r"summarization_agent must be a strands Agent, got Mock$"):
        ChainsumConversationManager(summarization_agent=Mock())
    assert time.perf_counter() - started < 1
    agent = Agent(model=CannedModel(answer), callback_handler=None)
    with pytest.raises(ValueError, match="Cannot provide both summarization_agent and summarization_system_prompt"):
        ChainsumConversationManager(summarization_agent=agent, summarization_system_prompt="Summarize.")


# the summarizer --------------------------------------------------------------------------------------------------
def test_the_agents_own_model_summarizes_by_default() -> None:
    cm = ChainsumConversationManager(context_window=WINDOW, summarization_system_prompt="Summarize tersely.")

    def respond(request: CannedRequest) -> dict[str, Any]:
        is_summary = request.tool_specs is None
        return {"role": "assistant", "content": [{"text": summary_of(request)}]} if is_summary else answer(request)

    model = CannedModel(respond, summary=None)
    agent = agent_with(cm, model, messages=history())
    agent("What did order ORD-0003 hold?")
    summaries = [r for r in model.requests if r.tool_specs is None and r.system_prompt == "Summarize tersely."]
    assert summaries and "AGENT-MODEL-SUMMARY" in text_of(agent.messages)
    assert all(r.messages[-1]["content"][0]["text"] not in text_of(agent.messages) for r in summaries)


def test_extractive_stays_an_explicit_choice() -> None:
    cm = ChainsumConversationManager(context_window=WINDOW, summarizer="extractive")
    assert [type(s) for s in cm.manager.summarizers] == [ExtractiveSummarizer]
    model = CannedModel(answer, summary=summary_of)
    agent_with(cm, model, messages=history())("What did order ORD-0003 hold?")
    assert not any(r.system_prompt == DEFAULT_SYSTEM_PROMPT for r in model.requests)


def failing(_: CannedRequest) -> str:
    raise RuntimeError("summary model is down")


def test_a_failing_agent_model_is_raised_from_the_overflow_with_the_history_untouched() -> None:
    events: list[ManagerEvent] = []
    cm = ChainsumConversationManager(context_window=WINDOW, on_event=events.append)
    agent = SimpleNamespace(messages=history(), model=CannedModel(answer, summary=failing))
    before = json.loads(json.dumps(agent.messages))
    overflow = ContextWindowOverflowException("too long")
    with pytest.raises(SummarizerError, match="summary model is down") as raised:
        cm.reduce_context(agent, overflow)  # type: ignore[arg-type]
    assert raised.value.__cause__ is overflow  # Strands: ``raise summarization_error from e``
    assert agent.messages == before and cm.removed_message_count == 0
    assert [e.aborted for e in events if isinstance(e, SummarizationFailedEvent)] == [True]
    cm.reduce_context(agent)  # type: ignore[arg-type]  # without e: best effort, logged, nothing raised
    assert agent.messages == before


def test_a_failing_proactive_compaction_lets_the_model_call_go_on() -> None:
    cm = ChainsumConversationManager(context_window=WINDOW)
    agent = agent_with(cm, CannedModel(answer, summary=failing), messages=history())
    result = agent("One more question.")
    assert str(result).strip() == "Done." and len(agent.messages) == len(history()) + 2


def test_fail_open_writes_chainsums_summary_instead() -> None:
    cm = ChainsumConversationManager(context_window=WINDOW, fail_open=True)
    agent = SimpleNamespace(messages=history(), model=CannedModel(answer, summary=failing))
    cm.reduce_context(agent, ContextWindowOverflowException("too long"))  # type: ignore[arg-type]
    assert len(agent.messages) < len(history()) and cm.summary_message is not None


# ids and sessions --------------------------------------------------------------------------------------------------
def test_every_message_carries_a_durable_tracking_id_through_a_session(tmp_path: Path) -> None:
    cm = ChainsumConversationManager(context_window=WINDOW)
    session = FileSessionManager(session_id="s", storage_dir=str(tmp_path))
    agent = agent_with(cm, CannedModel(answer), session_manager=session)
    for n in range(24):
        agent(f"Question {n}: what does order ORD-{n:04d} hold? " + "Please look it up in detail. " * 20)
    assert cm.removed_message_count > 0 and cm.summary_message in agent.messages
    ids = [m.get("tracking_id") for m in agent.messages]
    assert all(isinstance(i, str) and i for i in ids) and len(set(ids)) == len(ids)
    assert cm.summary_message is not None and cm.get_state()["chainsum_prefix"][0]["tracking_id"] == ids[0]
    held = {r.to_message().get("tracking_id") for r in session._held_records[agent.agent_id]}  # pyright: ignore[reportPrivateUsage]
    assert held <= set(ids)  # the session's records are pruned by tracking_id to what the agent still holds
    restored = agent_with(
        ChainsumConversationManager(context_window=WINDOW),
        CannedModel(answer),
        session_manager=FileSessionManager(session_id="s", storage_dir=str(tmp_path)),
    )
    assert [m.get("tracking_id") for m in restored.messages] == ids
    assert validate(restored.messages, "bedrock") == []


# overflow -------------------------------------------------------------------------------------------------------
class OverflowOnce(CannedModel):
    """Refuses the next request once `armed`, whatever its size (a provider refusing for another reason)."""

    armed = False

    async def stream(self, *args: Any, **kwargs: Any) -> Any:
        system = args[2] if len(args) > 2 else kwargs.get("system_prompt")
        if self.armed and system != DEFAULT_SYSTEM_PROMPT:  # not chainsum's summary request
            self.armed = False
            raise ContextWindowOverflowException("simulated overflow")
        async for event in super().stream(*args, **kwargs):
            yield event


def test_an_overflow_on_a_short_history_keeps_the_window_and_says_why() -> None:
    cm = ChainsumConversationManager(context_window=200_000)
    model = OverflowOnce(answer)
    agent = agent_with(cm, model)
    agent("Hello")
    model.armed = True
    with pytest.raises(ContextWindowOverflowException, match="within the window of 200000") as raised:
        agent("Hello again")
    assert "insufficient messages for summarization" in str(raised.value)
    assert "never compacts" in str(raised.value) and "alone" not in str(raised.value)
    assert cm.manager.window == 200_000  # not 90 % of a few dozen tokens, for the rest of its life
    agent("And again")  # the next turn goes through
    assert cm.manager.window == 200_000


def test_one_refusal_lowers_the_window_only_until_a_call_succeeds() -> None:
    cm = ChainsumConversationManager(context_window=200_000, summarizer="extractive")
    model = OverflowOnce(answer)
    agent = agent_with(cm, model, messages=history())
    model.armed = True
    agent("One more question.")  # refused once, reduced under 90 % of it, retried: succeeds
    assert cm.removed_message_count > 0 and cm.manager.window == 200_000


def test_the_window_is_the_agents_models_without_one_given() -> None:
    cm = ChainsumConversationManager()
    assert cm.manager.window == 200_000  # Strands' own fallback, until the agent is known
    model = CannedModel(answer, context_window_limit=32_000)
    agent_with(cm, model)
    assert cm.manager.window == 32_000


# test doubles and pins --------------------------------------------------------------------------------------------
def test_an_agent_without_system_prompt_or_tool_registry_is_served() -> None:
    cm = ChainsumConversationManager(context_window=WINDOW)
    agent = SimpleNamespace(messages=history(), model=CannedModel(answer, summary=summary_of))
    cm.reduce_context(agent)  # type: ignore[arg-type]
    assert len(agent.messages) < len(history()) and "AGENT-MODEL-SUMMARY" in text_of(agent.messages)
    with_prompt = SimpleNamespace(messages=history(), model=agent.model, system_prompt="word " * 400)
    counted = ChainsumConversationManager(context_window=WINDOW)
    counted.reduce_context(with_prompt)  # type: ignore[arg-type]
    assert text_of(with_prompt.messages).count("Question") < text_of(agent.messages).count("Question")


def test_pin_first_keeps_the_first_messages_in_front() -> None:
    cm = ChainsumConversationManager(context_window=WINDOW, pin_first=2, summarizer="extractive")
    agent = SimpleNamespace(messages=history(), model=CannedModel(answer))
    first = [json.loads(json.dumps(m)) for m in agent.messages[:4]]  # 2, taken on to the end of the tool call
    cm.reduce_context(agent, ContextWindowOverflowException("too long"))  # type: ignore[arg-type]
    assert agent.messages[:4] == first and len(agent.messages) < len(history())
    assert validate(agent.messages, "bedrock") == []


def test_config_is_keyword_only() -> None:
    with pytest.raises(TypeError, match="summary_ratio must be a number"):
        ChainsumConversationManager(ManagerConfig())  # type: ignore[arg-type]
