"""The interpreter as the app sets it up while it serves (`_app._serving_interpreter`, issue 20): what the process made
before it started is frozen out of the cyclic garbage collector, whose full collections hold the interpreter's lock
for as long as they scan (a large compaction starts several), and the switch interval is at most 1 ms; both are
as they were again after shutdown."""

from __future__ import annotations

import gc
import sys

import httpx

from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.server_support import chat, proxy


def _tracked(marker: object) -> bool:
    """Whether the collector scans `marker` (`gc.get_objects` lists what it scans, not what is frozen)."""
    return any(o is marker for o in gc.get_objects())


def test_what_was_made_before_start_is_left_out_of_collections_while_serving(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    switch = sys.getswitchinterval()
    before = [object()]  # a container the collector tracks, made before the app starts
    assert gc.get_freeze_count() == 0
    assert _tracked(before)
    with proxy(fake, store) as running:
        assert not _tracked(before)
        assert gc.get_freeze_count() > 0
        assert sys.getswitchinterval() <= 0.001
        # the app serves as usual, and what the sessions make is collected as usual
        with httpx.Client(base_url=running.url, timeout=30) as client:
            r = client.post(
                "/v1/chat/completions",
                json={"model": "gpt-4o", "messages": chat(4)},
                headers={"X-Chainsum-Session": "frozen"},
            )
        assert r.status_code == 200
        during = [object()]
        assert _tracked(during)
    assert gc.get_freeze_count() == 0
    assert _tracked(before)
    assert sys.getswitchinterval() == switch
