"""A LangChain v1 agent kept inside a 3,000-token window by chainsum, offline.

Run: ``uv run python examples/langchain_agent.py`` (needs ``pip install "chainsum[langchain]"``; no model, no key).

The model is chainsum's `ScriptedChatModel` (LangChain's ``GenericFakeChatModel`` cannot bind tools): it answers
with scripted tool calls, two of them in parallel each turn, whose tools return large logs. The summaries come from
a LangChain chat model given as ``summarizer=``: here LangChain's own ``GenericFakeChatModel`` with a canned summary
and usage (for real use, ``summarizer=ChatOpenAI(model="gpt-4.1-mini")`` or any chat model; chainsum's extractive
summarizer takes over if it fails). After each turn the script prints what the model
received (tokens of the system prompt, tools and messages, against the window) and what chainsum did; at the end,
the originals of the first summary record, read back from the archive.
"""

from __future__ import annotations

import itertools
import json

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from chainsum.formats.langchain import from_objects
from chainsum.integrations.langchain import ChainsumMiddleware
from chainsum.manager import ManagerEvent, SummarizationEvent
from chainsum.testing.langchain import ScriptedChatModel
from chainsum.tokens import HeuristicCounter

WINDOW = 3000
SERVICES = ["checkout", "payments", "inventory", "search", "auth", "mailer"]


@tool
def read_log(service: str) -> str:
    """The last lines of a service's log."""
    lines = [f"2026-11-25T10:{m:02d}:00Z {service} GET /api/{service}/{m} 200 in {40 + m} ms" for m in range(40)]
    lines.insert(17, f"2026-11-25T10:17:30Z {service} ERROR ERR-{4000 + len(service)} timeout calling db-{service}")
    return "\n".join(lines)


def script() -> list[AIMessage]:
    """Per turn: two logs read in parallel, then an answer."""
    out: list[AIMessage] = []
    for k in range(0, len(SERVICES), 2):
        a, b = SERVICES[k], SERVICES[k + 1]
        calls = [{"name": "read_log", "args": {"service": s}, "id": f"call_{s}"} for s in (a, b)]
        out.append(AIMessage(f"Reading the {a} and {b} logs.", tool_calls=calls))
        out.append(AIMessage(f"{a} and {b}: one timeout each, at 10:17:30, against their databases."))
    return out


def main() -> None:
    events: list[ManagerEvent] = []
    model = ScriptedChatModel(responses=script())
    summary = AIMessage(
        "The user is chasing slowness at 10:17; each service log read so far shows one timeout against its database.",
        usage_metadata={"input_tokens": 900, "output_tokens": 25, "total_tokens": 925},
    )
    summarizer = GenericFakeChatModel(messages=itertools.repeat(summary))  # or ChatOpenAI(model="gpt-4.1-mini")
    chainsum = ChainsumMiddleware(  # mode="request" keeps the state
        context_window=WINDOW, summarizer=summarizer, on_event=events.append
    )
    agent = create_agent(
        model,
        tools=[read_log],
        system_prompt="You are an on-call assistant. Quote error ids exactly.",
        middleware=[chainsum],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "incident-42"}}
    counter = HeuristicCounter()
    tools = counter.count_text(json.dumps(convert_to_openai_tool(read_log)))
    for k in range(0, len(SERVICES), 2):
        question = f"Why were {SERVICES[k]} and {SERVICES[k + 1]} slow at 10:17?"
        first = len(model.requests)
        agent.invoke({"messages": [HumanMessage(question)]}, config)
        sent = max(counter.count_messages(from_objects(r)) for r in model.requests[first:]) + tools
        saved = agent.get_state(config).values["messages"]
        print(f"{question}\n  model received at most {sent} of {WINDOW} tokens; saved state: {len(saved)} messages")
    for event in events:
        print(f"  chainsum: {event.kind}, {getattr(event, 'tokens_before', 0)} -> {getattr(event, 'tokens_after', 0)}")
        if isinstance(event, SummarizationEvent) and event.summarizer_usage is not None:
            usage = event.summarizer_usage
            print(f"    summarizer model: {usage.input_tokens} input + {usage.output_tokens} output tokens reported")
    record = chainsum.archive.records("incident-42")[0]
    originals = chainsum.expand(record.id)
    print(f"first summary record {record.id}: {len(originals)} originals in the archive, e.g. {originals[0]!r:.100}")


if __name__ == "__main__":
    main()
