"""A pydantic-ai agent whose history chainsum keeps inside a small context window, offline.

Run: ``uv run python examples/pydantic_ai_agent.py``. No model, no API key, no network: the agent's model is
pydantic-ai's own `FunctionModel` (it calls two tools in parallel for every question, then answers), and the summaries
come from another `FunctionModel` given as ``summarizer=`` (it lists the orders the transcript mentions; pydantic-ai
reports its usage). Swap ``FunctionModel(...)`` for ``"openai:gpt-4o"`` (and ``context_window=`` for
``model="gpt-4o"``) to use a real model, and the summarizer for ``model_summarizer("openai:gpt-4.1-mini")`` (a plain
string ``summarizer="openai:gpt-4.1-mini"`` means chainsum's own OpenAI summarizer).

It asks twenty questions in one conversation at a 3,000-token window and prints, per question, the messages
pydantic-ai keeps and each compaction (tokens before and after); then the first summary record and the originals it
replaced, read back from the archive as pydantic-ai messages.
"""

from __future__ import annotations

import re

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from chainsum.integrations.pydantic_ai import ChainsumHistory
from chainsum.manager import ManagerEvent, SummarizationEvent, WindowExceededEvent
from chainsum.store import MemoryArchive


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A new question gets two parallel tool calls; tool results get an answer."""
    last = messages[-1]
    n = len(messages)
    if isinstance(last, ModelRequest) and any(isinstance(p, UserPromptPart) for p in last.parts):
        return ModelResponse(
            parts=[
                TextPart("Let me look at the order and its invoice."),
                ToolCallPart("get_order", {"order_id": f"ORD-{7700 + n}"}, tool_call_id=f"call_o{n}"),
                ToolCallPart("get_invoice", {"order_id": f"ORD-{7700 + n}"}, tool_call_id=f"call_i{n}"),
            ]
        )
    return ModelResponse(parts=[TextPart(f"Order ORD-{7700 + n - 2} shipped; its invoice total is 42.00 EUR.")])


def summarizing_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The summarizer's model: it gets chainsum's system prompt and the framed transcript, and names the orders."""
    transcript = str(messages[-1].parts[-1].content)
    orders = sorted(set(re.findall(r"ORD-\d+", transcript)))
    return ModelResponse(parts=[TextPart(f"Orders looked up: {', '.join(orders)}; all shipped, invoices 42.00 EUR.")])


def main() -> None:
    events: list[ManagerEvent] = []
    archive = MemoryArchive()
    history = ChainsumHistory(
        context_window=3_000,
        summarizer=FunctionModel(summarizing_model),  # or model_summarizer("openai:gpt-4.1-mini")
        archive=archive,
        session="example",
        on_event=events.append,
    )
    agent = Agent(
        FunctionModel(scripted_model),
        instructions="You are a support agent. Use the tools.",
        capabilities=[ProcessHistory(history)],
    )

    @agent.tool_plain
    def get_order(order_id: str) -> str:
        return f"{order_id}: status=shipped carrier=DHL tracking=JD0146 items=" + "widget, " * 40

    @agent.tool_plain
    def get_invoice(order_id: str) -> str:
        return f"{order_id}: invoice INV-{order_id[-4:]} total=42.00 EUR lines=" + "1x widget 1.05 EUR; " * 30

    messages: list[ModelMessage] | None = None
    for q in range(20):
        seen = len(events)
        result = agent.run_sync(f"Question {q}: where is my order, and what did it cost?", message_history=messages)
        messages = result.all_messages()  # pydantic-ai keeps what was sent: the compacted history
        notes = [f"compacted {e.tokens_before} -> {e.tokens_after}" for e in events[seen:] if e.kind == "summarized"]
        print(f"question {q:2d}: {len(messages):3d} messages kept" + "".join(f", {n}" for n in notes))

    compactions = sum(isinstance(e, SummarizationEvent) for e in events)
    used = [e.summarizer_usage for e in events if isinstance(e, SummarizationEvent) and e.summarizer_usage]
    print(f"summarizer model: {sum(u.input_tokens for u in used)} input tokens, {sum(u.requests for u in used)} calls")
    over = sum(isinstance(e, WindowExceededEvent) for e in events)
    print(f"\n{compactions} compactions at a 3,000-token window; requests over it: {over}")
    record = archive.records("example")[0]
    originals = history.expand(record.id)
    print(f"\nfirst summary record {record.id} ({len(record.summary)} characters) replaced:")
    for m in originals[:6]:
        print(f"  {type(m).__name__}: {[type(p).__name__ for p in m.parts]}")
    print(f"  ... {len(originals)} pydantic-ai messages in all, checked against their SHA-256")


if __name__ == "__main__":
    main()
