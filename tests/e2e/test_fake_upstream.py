"""The scripted upstream speaks each provider's streaming format well enough for the providers' own SDKs, and decides
its answers from the request as the end-to-end tests assume. Default suite: no client needed, about a second."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from e2e.agent_script import FINAL_ANSWER, STEPS, Step, call_id, encrypted_reasoning, signature, step
from e2e.fake_upstream import FakeUpstream, Persona


def _args(the_step: Step) -> dict[str, Any]:
    return {"command": the_step.command}


def _persona(route: Any, prefix: str) -> Persona:
    return Persona(route=route, tool_name="run", arguments=_args, id_prefix=prefix, compact_prompt="COMPACT NOW")


@pytest.fixture
def messages_fake() -> Iterator[FakeUpstream]:
    with FakeUpstream(_persona("messages", "toolu_")) as fake:
        yield fake


TOOL = {"name": "run", "description": "run a command", "input_schema": {"type": "object", "properties": {}}}


def test_anthropic_sdk_reads_the_stream(messages_fake: FakeUpstream) -> None:
    client = anthropic.Anthropic(base_url=messages_fake.base_url, api_key="k", max_retries=0)
    history: list[Any] = [{"role": "user", "content": "go"}]
    with client.messages.stream(model="m", max_tokens=100, messages=history, tools=[TOOL]) as stream:
        message = stream.get_final_message()
    client.close()
    thinking, text, use = message.content
    assert thinking.type == "thinking" and thinking.signature == signature(1)
    assert text.type == "text" and text.text == "Running step 1."
    assert use.type == "tool_use" and use.id == call_id("toolu_", 1) and use.input == {"command": step(1).command}
    assert message.stop_reason == "tool_use"
    assert [r.kind for r in messages_fake.received] == ["main"]


def test_the_answer_follows_the_newest_step(messages_fake: FakeUpstream) -> None:
    client = anthropic.Anthropic(base_url=messages_fake.base_url, api_key="k", max_retries=0)
    last = call_id("toolu_", STEPS)
    history: list[Any] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": last, "name": "run", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": last, "content": "out"}]},
    ]
    final = client.messages.create(model="m", max_tokens=100, messages=history, tools=[TOOL])
    history.append({"role": "user", "content": "COMPACT NOW please"})
    summary = client.messages.create(model="m", max_tokens=100, messages=history, tools=[TOOL])
    side = client.messages.create(model="m", max_tokens=100, messages=[{"role": "user", "content": "title?"}])
    client.close()
    assert [b.text for b in final.content if b.type == "text"] == [FINAL_ANSWER]
    assert f"E2E-STEP-{STEPS:02d}" in "".join(b.text for b in summary.content if b.type == "text")
    kinds = [(r.kind, r.answered) for r in messages_fake.received]
    assert kinds == [("main", STEPS + 1), ("compact", STEPS), ("side", 0)]
    assert side.content[0].type == "text"


def test_openai_sdk_reads_the_responses_stream() -> None:
    with FakeUpstream(_persona("responses", "call_")) as fake:
        client = openai.OpenAI(base_url=f"{fake.base_url}/v1", api_key="k", max_retries=0)
        tool: Any = {"type": "function", "name": "run", "parameters": {"type": "object", "properties": {}}}
        with client.responses.stream(model="m", input="go", tools=[tool]) as stream:
            response = stream.get_final_response()
        client.close()
    reasoning, message, call = response.output
    assert reasoning.type == "reasoning" and reasoning.encrypted_content == encrypted_reasoning(1)
    assert message.type == "message" and message.content[0].type == "output_text"
    assert call.type == "function_call" and call.call_id == call_id("call_", 1)
    assert json.loads(call.arguments) == {"command": step(1).command}


def test_openai_sdk_reads_the_chat_chunks() -> None:
    with FakeUpstream(_persona("chat", "call_")) as fake:
        client = openai.OpenAI(base_url=f"{fake.base_url}/v1", api_key="k", max_retries=0)
        tool: Any = {"type": "function", "function": {"name": "run", "parameters": {"type": "object"}}}
        messages: Any = [{"role": "user", "content": "go"}]
        with client.chat.completions.stream(model="m", messages=messages, tools=[tool]) as stream:
            completion = stream.get_final_completion()
        client.close()
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls or []
    assert call.type == "function" and call.id == call_id("call_", 1)
    assert json.loads(call.function.arguments) == {"command": step(1).command}
