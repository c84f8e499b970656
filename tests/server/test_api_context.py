"""``/api/sessions/{id}/context`` shows the history exactly as it was last sent upstream: every message the fake
upstream received, in order (the summary record, the recall blocks where they went, masked tool output as masked),
and on Anthropic the system prompt that went in its own field first; and the directory snapshot another instance
reads says the same."""

from __future__ import annotations

import time
from typing import Any, cast

import httpx
import pytest

from chainsum.formats import load
from chainsum.manager import ManagerConfig
from chainsum.messages import Message
from chainsum.server._views import context_entry
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer, ScriptedSummarizer
from chainsum.tokens import HeuristicCounter
from server.server_support import Running, proxy

WINDOW = 2000
CONFIG = ManagerConfig(preserve_recent=4, recall_token_ratio=0.2)
"""A small tail and room for recall, so that requests after a compaction carry recall blocks."""


def received(fake: FakeLLMServer) -> dict[str, Any]:
    body = fake.requests[-1].json
    assert isinstance(body, dict)
    return cast(dict[str, Any], body)


def shown(p: Running, sid: str, key: str) -> list[dict[str, Any]]:
    context = p.get(f"/api/sessions/{sid}/context", key)
    assert context["source"] == "live"
    return cast(list[dict[str, Any]], context["messages"])


def expected(messages: list[Message]) -> list[dict[str, Any]]:
    """What the API must say of the messages the upstream received (the same function writes each entry; what
    is compared is which messages, in which order, with which content)."""
    counter = HeuristicCounter()
    out = [context_entry(counter, i, m, {}) for i, m in enumerate(messages)]
    for entry in out:
        for block in entry.get("blocks", []):
            block.pop("record_id")
    return out


def comparable(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for entry in entries:
        for block in entry.get("blocks", []):
            block.pop("record_id", None)
    return entries


def question(i: int) -> str:
    return f"Where is order ORD-{1000 + i}? " + "please check " * 12


@pytest.mark.slow
def test_the_context_is_what_the_openai_upstream_received_recall_blocks_and_records_included(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are the order desk."}]
    kinds: set[str] = set()
    headers = {"X-Chainsum-Session": "sent-openai", "Authorization": "Bearer sk"}
    with proxy(fake, store, context_window=WINDOW, config=CONFIG, summarizers=[ScriptedSummarizer()]) as p:
        for i in range(40):
            # every third question asks about the first order again: recall brings it back once it is archived
            text = question(i) if i % 3 else "What did I say about ORD-1000 at the start? " + question(i)
            history.append({"role": "user", "content": text})
            body = {"model": "gpt-4o", "messages": history}
            r = httpx.post(p.openai_url + "/chat/completions", json=body, headers=headers, timeout=30)
            assert r.status_code == 200, r.text
            sid = r.headers["x-chainsum-session"]
            upstream = list(load(received(fake)["messages"], format="openai").messages)
            entries = comparable(shown(p, sid, "sk"))
            assert entries == expected(upstream), f"request {i}"
            kinds |= {e["kind"] for e in entries}
            history.append({"role": "assistant", "content": f"ORD-{1000 + i} is in W{i}. " + "checked " * 12})
    assert {"summary", "recall"} <= kinds, kinds  # the comparison saw records and recall blocks


def test_the_context_is_what_the_anthropic_upstream_received_system_prompt_first(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    """Tool steps whose output gets masked: the masked results are shown as they went, and the system prompt,
    a field of its own on Anthropic's wire, is the first message."""
    system = [{"type": "text", "text": "You are the order desk."}]
    history: list[dict[str, Any]] = [{"role": "user", "content": "Check every warehouse for ORD-1000, please."}]
    kinds: set[str] = set()
    sid, upstream = "", list[Message]()
    headers = {"X-Chainsum-Session": "sent-anthropic", "x-api-key": "k"}
    with proxy(fake, store, context_window=3000, config=CONFIG, summarizers=[ScriptedSummarizer()]) as p:
        p.app.state.chainsum.sessions.touch_every_s = 0.0  # a directory snapshot after every request
        for i in range(14):
            body = {"model": "claude-opus-4-5", "max_tokens": 64, "system": system, "messages": history}
            r = httpx.post(p.url + "/v1/messages", json=body, headers=headers, timeout=30)
            assert r.status_code == 200, r.text
            sid = r.headers["x-chainsum-session"]
            got = received(fake)
            upstream = list(load({"system": got["system"], "messages": got["messages"]}, format="anthropic").messages)
            entries = comparable(shown(p, sid, "k"))
            assert entries == expected(upstream), f"request {i}"
            assert entries[0]["role"] == "system" and entries[0]["text"] == "You are the order desk."
            kinds |= {e["kind"] for e in entries}
            call = f"toolu_{i:03d}"
            use = {"type": "tool_use", "id": call, "name": "search", "input": {"warehouse": f"W{i}"}}
            history.append({"role": "assistant", "content": [{"type": "text", "text": f"Checking W{i}."}, use]})
            output = "\n".join(f"W{i} shelf {k}: ORD-{2000 + k} boxed, weight {k} kg" for k in range(40))
            history.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": output}]}
            )
        assert kinds - {"message"}, kinds  # something chainsum wrote (a record, a masked result) was compared
        # the directory snapshot (what another instance shows) is the same list
        p.app.state.chainsum.sessions.forget(sid)
        deadline = time.monotonic() + 5  # the snapshot is written in the background
        while True:
            snapshot = p.get(f"/api/sessions/{sid}/context", "k")
            assert snapshot["source"] == "snapshot"
            if comparable(snapshot["messages"]) == expected(upstream) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert comparable(snapshot["messages"]) == expected(upstream)
