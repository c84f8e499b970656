"""An OpenAI Agents SDK agent whose session chainsum keeps inside a small context window, offline.

Run: ``uv run python examples/openai_agents_agent.py``

The model is a stand-in (a `Model` subclass answering from a script, the way the SDK's own tests fake one), so no API
key or network is needed, and the summaries come from another stand-in `Model` given as ``summarizer=`` (it lists
the error ids the transcript holds, and reports its usage as a real model does). With real models, pass
``model="gpt-4.1"`` to the `Agent` and ``summarizer=OpenAIResponsesModel(...)``, or
``model_summarizer("gpt-4.1-mini")`` (the SDK's model names), to the session; nothing else changes. Forty
questions, each answered after one tool call that reads a long log, go through a 6,000-token window: the session
compacts, the wrapped `SQLiteSession` holds the summary record and the newest items, and every item taken out comes
back, verified, from chainsum's archive.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

from agents import (
    Agent,
    Model,
    ModelResponse,
    RunConfig,
    Runner,
    TResponseInputItem,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from agents.items import TResponseStreamEvent
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from chainsum.integrations.openai_agents import ChainsumSession
from chainsum.manager import ManagerEvent, SummarizationEvent
from chainsum.store import SQLiteStore

ERRORS = {
    "billing": "ERR-4512",
    "search": "ERR-2210",
    "auth": "ERR-1403",
    "checkout": "ERR-5031",
    "payments": "ERR-7788",
}


@function_tool
def read_log(service: str) -> str:
    """Read a service's recent log."""
    lines = [f"{service} 10:{i:02d}:00 INFO request {i} ok latency={20 + i}ms" for i in range(25)]
    return "\n".join([*lines, f"{service} 10:41:07 ERROR {ERRORS.get(service, 'ERR-0000')} pool exhausted"])


class StandInModel(Model):
    """Asked a question, it calls `read_log`; given the log, it answers with the error line it found."""

    def __init__(self) -> None:
        self.calls = 0

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        self.calls += 1
        assert isinstance(input, list)
        last: Any = input[-1]
        if last.get("type") == "function_call_output":
            error = next(line for line in str(last["output"]).splitlines() if "ERROR" in line)
            text = ResponseOutputText(text=f"Found it: {error}", type="output_text", annotations=[])
            message = ResponseOutputMessage(
                id=f"msg_{self.calls}", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=f"resp_{self.calls}")
        service = list(ERRORS)[len(input) % len(ERRORS)]
        call = ResponseFunctionToolCall(
            id=f"fc_{self.calls}",
            call_id=f"call_{self.calls}",
            name="read_log",
            arguments=f'{{"service": "{service}"}}',
            type="function_call",
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=f"resp_{self.calls}")

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("this example does not stream")


class StandInSummarizer(Model):
    """Given chainsum's framed transcript, it answers with the error ids in it, and the usage a provider reports."""

    async def get_response(
        self, system_instructions: str | None, input: str | list[TResponseInputItem], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        errors = sorted(set(re.findall(r"ERR-\d+", str(input))))
        text = ResponseOutputText(
            text=f"Failures seen so far: {', '.join(errors)}.", type="output_text", annotations=[]
        )
        message = ResponseOutputMessage(
            id="msg_s", type="message", role="assistant", status="completed", content=[text]
        )
        usage = Usage(requests=1, input_tokens=len(str(input)) // 4, output_tokens=20)
        return ModelResponse(output=[message], usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("this example does not stream")


def report(event: ManagerEvent) -> None:
    if isinstance(event, SummarizationEvent):
        usage = event.summarizer_usage
        spent = f", summarizer {usage.input_tokens:,} + {usage.output_tokens} tokens" if usage else ""
        print(f"  compacted: {event.tokens_before:,} -> {event.tokens_after:,} tokens ({event.reason}{spent})")


async def main() -> None:
    set_tracing_disabled(True)
    instructions = "You are an on-call assistant. Read the logs before answering."
    agent = Agent(name="on-call", instructions=instructions, model=StandInModel(), tools=[read_log])
    archive = SQLiteStore(":memory:")  # a file path keeps the originals across restarts

    # The five lines of adoption: a session, and a filter for what a run adds.
    session = ChainsumSession(
        "on-call-1",
        context_window=6000,
        instructions=instructions,
        archive=archive,
        summarizer=StandInSummarizer(),  # an Agents SDK Model; the extractive summarizer takes over if it fails
        on_event=report,
    )
    run_config = RunConfig(call_model_input_filter=session.input_filter, tracing_disabled=True)
    for n in range(40):
        result = await Runner.run(agent, f"Question {n}: what is failing?", session=session, run_config=run_config)
        if n % 10 == 9:
            print(f"question {n}: {result.final_output}")

    stored = await session.underlying_session.get_items()
    records = archive.records("on-call-1")
    print(f"stored items: {len(stored)} (the summary record and the newest turns); summary records: {len(records)}")
    originals = archive.expand(records[0].id)  # each checked against the SHA-256 in the record
    first = originals[0]
    preview = first.tool_results[0].text if first.tool_results else first.text
    print(f"the first record replaced {len(originals)} messages; the first ({first.role}): {preview[:60]!r}...")
    session.close()


if __name__ == "__main__":
    asyncio.run(main())
