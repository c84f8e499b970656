"""The body of one racing process for ``test_manager_processes.py`` (its own module, so spawn can import it)."""

from __future__ import annotations

from typing import Any

from chainsum.manager import ContextManager, ManagerConfig
from chainsum.messages import Message
from chainsum.testing import ScriptedSummarizer
from store.store_support import open_store


def history() -> list[Message]:
    out = [Message.of("system", "You are a careful assistant.")]
    for i in range(16):
        out.append(Message.of("user", f"question {i}: what about item-{i:03d} and its 4{i}ms latency?"))
        out.append(Message.of("assistant", f"answer {i}: item-{i:03d} is fine; latency 4{i}ms is within budget."))
    return out


def prepare_once(kind: str, target: dict[str, Any], start: Any, results: Any) -> None:
    """Open the shared store, wait for the starting gun, and prepare the same over-full history as the other process."""
    store = open_store(kind, target)
    try:
        summarizer = ScriptedSummarizer(latency=0.4)  # slow enough that the other process arrives meanwhile
        manager = ContextManager(
            ManagerConfig(min_messages=4, strategy="ratio"),
            context_window=700,
            archive=store,
            session="shared",
            summarizers=[summarizer],
        )
        messages = history()
        start.wait(60)
        prepared = manager.prepare_sync(messages)
        results.put((len(prepared.records), len(prepared.messages), summarizer.call_count))
    finally:
        store.close()
