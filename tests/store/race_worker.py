"""The body of one racing process for ``test_store_race.py`` (a module of its own so that spawn can import it)."""

from __future__ import annotations

import os
import time
from typing import Any

from chainsum.messages import Message
from chainsum.store import SummaryRecord, sha256_all
from store.store_support import open_store


def history(n: int) -> list[tuple[str, Message]]:
    return [(f"m{i}", Message.of("user" if i % 2 == 0 else "assistant", f"message number {i}")) for i in range(n)]


def race(kind: str, target: dict[str, Any], session: str, n: int, use_lock: bool, start: Any, results: Any) -> None:
    """Summarize `session` unless someone already did: the manager's protocol, lock (optional) then CAS."""
    store = open_store(kind, target)
    written = 0
    prepared = 0
    start.wait(60)
    try:
        while True:
            with store.try_lock(session, wait_s=0.05) if use_lock else _always() as held:
                if not held:
                    continue
                state = store.get_state(session)
                if state.data.get("summarized_upto", 0) >= n:
                    break
                prepared += 1
                messages = history(n)
                time.sleep(0.3)  # the summarizer call: the other process tries meanwhile
                record = SummaryRecord(
                    id=f"sum-{os.getpid()}",
                    timestamp_ms=int(time.time() * 1000),
                    depth=0,
                    parent_id=None,
                    summary=f"summary by {os.getpid()}",
                    original_message_ids=tuple(i for i, _ in messages),
                    original_sha256=sha256_all([m for _, m in messages]),
                )
                new_state = {"summarized_upto": n, "depth": 1}
                if store.archive_and_record(
                    session, messages, record, expected_version=state.version, new_state=new_state
                ):
                    written += 1
        results.put((prepared, written))
    finally:
        store.close()


class _always:
    def __enter__(self) -> bool:
        return True

    def __exit__(self, *exc: object) -> None:
        return None
