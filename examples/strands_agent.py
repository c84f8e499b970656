"""A Strands agent kept inside a small context window by chainsum, offline.

Run: ``uv run python examples/strands_agent.py`` (needs ``pip install "chainsum[strands]"``; no model, no network).

The model is a canned one (`chainsum.testing.strands.CannedModel`, the kind of `Model` subclass Strands' own tests
use): it looks the order up with a tool, then answers. Summaries come from a dedicated summarization agent, as in
Strands' ``SummarizingConversationManager(summarization_agent=...)``: here another canned model that lists the
orders the transcript names (for real use, ``Agent(model="us.amazon.nova-micro-v1:0")``, a cheaper model; only its
model is called; if it fails, the error is raised as Strands' own manager raises it, unless ``fail_open=True``
lets chainsum's extractive summarizer take over). Without a summarization agent, the agent's own model would
write them, as in Strands. The window is 2,000 tokens, so
after a dozen questions the oldest turns are summarized; the originals go to a SQLite archive, and the Strands
session (a `FileSessionManager`) restores the compacted history. Swap in ``BedrockModel(...)`` (or any Strands
model) and the model's real ``context_window=`` for real use.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from strands import Agent, tool
from strands.session import FileSessionManager
from strands.types.content import Message

from chainsum.integrations.strands import ChainsumConversationManager
from chainsum.manager import ManagerEvent, SummarizationEvent
from chainsum.store import SQLiteStore
from chainsum.testing.strands import CannedModel, CannedRequest


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up in the shop's database."""
    n = int(order_id.split("-")[1])
    lines = "\n".join(f"- item {k}: SKU-{n * 100 + k} x{k % 3 + 1}" for k in range(12))
    return f"Order {order_id}: shipped to warehouse W{n % 4}, {12} lines\n{lines}"


def respond(request: CannedRequest) -> Message:
    """Call the tool for the order the newest question names, then answer from its result."""
    last = request.messages[-1]["content"]
    if any("toolResult" in block for block in last):
        result = last[0]["toolResult"]["content"][0]["text"]
        return {"role": "assistant", "content": [{"text": "Here it is: " + result.splitlines()[0]}]}
    question = [block["text"] for block in last if "text" in block][-1]  # after chainsum's recall block, if any
    order = question.rsplit(" ", 1)[-1].rstrip("?")
    use = {"toolUseId": f"call-{len(request.messages)}", "name": "lookup_order", "input": {"order_id": order}}
    return {"role": "assistant", "content": [{"toolUse": use}]}


def summarize(request: CannedRequest) -> Message:
    """The summarization agent's model: chainsum's framed transcript in, the orders it names out."""
    transcript = request.messages[-1]["content"][0]["text"]
    orders = sorted(set(re.findall(r"ORD-\d{4}", transcript)))
    return {"role": "assistant", "content": [{"text": f"Orders looked up so far: {', '.join(orders)}."}]}


def main(folder: Path | None = None) -> None:
    folder = folder or Path(tempfile.mkdtemp(prefix="chainsum-strands-"))
    archive = SQLiteStore(folder / "chainsum.db")
    events: list[str] = []
    summarizer_tokens: list[int] = []
    # for real use: Agent(model="us.amazon.nova-micro-v1:0")
    summarization_agent = Agent(model=CannedModel(summarize, summary=None), callback_handler=None)

    def on_event(event: ManagerEvent) -> None:
        events.append(event.kind)
        if isinstance(event, SummarizationEvent) and event.summarizer_usage is not None:
            summarizer_tokens.append(event.summarizer_usage.input_tokens)

    def make_agent() -> Agent:
        return Agent(
            model=CannedModel(respond),
            tools=[lookup_order],
            system_prompt="You are the shop's order assistant. Use lookup_order for every question.",
            conversation_manager=ChainsumConversationManager(
                context_window=2000,  # the model's window (tokens)
                archive=archive,  # where the originals go
                session="orders",
                summarization_agent=summarization_agent,  # its model writes the summaries
                on_event=on_event,
            ),
            session_manager=FileSessionManager(session_id="orders", storage_dir=str(folder)),
            callback_handler=None,
        )

    agent = make_agent()
    for n in range(1, 16):
        result = agent(f"Where is order ORD-{n:04d}?")
        print(f"ORD-{n:04d}: {str(result).strip()[:60]} ({len(agent.messages)} messages in context)")
    cm = agent.conversation_manager
    assert isinstance(cm, ChainsumConversationManager)
    print(f"\ncompactions: {events.count('summarized')}, messages removed from context: {cm.removed_message_count}")
    records = archive.records("orders")
    print(f"summary records: {len(records)}; the first replaced {len(archive.expand(records[0].id))} originals")
    print(f"the first summary: {records[0].summary.splitlines()[0][:90]!r}")
    print(f"summarizer model: {sum(summarizer_tokens)} input tokens over {len(summarizer_tokens)} compactions")

    restored = make_agent()  # a new process would do the same: the session gives back the compacted history
    print(f"restored from the session: {len(restored.messages)} messages, same as before: "
          f"{[m['content'] for m in restored.messages] == [m['content'] for m in agent.messages]}")  # fmt: skip
    archive.close()


if __name__ == "__main__":
    main()
