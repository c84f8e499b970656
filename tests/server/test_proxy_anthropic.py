"""``/v1/messages`` driven by the official Anthropic SDK: the system prompt stays a separate field, the history
stays inside the window and valid, and the compaction is announced as a named event that the SDK passes by."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx

from chainsum.formats import load
from chainsum.rules import validate
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from chainsum.testing.fake_llm import FakeText
from chainsum.tokens import HeuristicCounter
from server.cache_support import same_message
from server.server_support import proxy

WINDOW = 2000
SYSTEM = "You are the travel desk. Quote booking codes exactly."


def turns(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        out.append({"role": "user", "content": f"Trip {i}: rebook BK-{500 + i} to Lisbon. " + "flexible dates " * 15})
        out.append({"role": "assistant", "content": [{"type": "text", "text": f"BK-{500 + i} moved. " + "ok " * 30}]})
    return out


def test_a_long_anthropic_conversation_streams_through_compactions(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        client = p.keep(anthropic.Anthropic(base_url=p.url, api_key="sk-ant-test", max_retries=0))
        history: list[dict[str, Any]] = []
        summarized_turns = 0
        for i in range(40):
            history.append({"role": "user", "content": f"Trip {i}: rebook BK-{500 + i}. " + "flexible dates " * 15})
            reply = f"BK-{500 + i} moved to Friday."
            fake.script(FakeText(text=reply))
            with client.messages.with_streaming_response.create(
                model="claude-test-model",
                max_tokens=64,
                system=SYSTEM,
                messages=history,  # type: ignore[arg-type]
                stream=True,
            ) as response:
                summarized = response.headers["x-chainsum-summarized"] == "true"
                events = list(response.parse())
            types = [e.type for e in events]
            # The SDK hands the announcement over as an event of its own type, first, and goes on reading.
            assert types[0] == ("context_summarized" if summarized else "message_start")
            assert types[-1] == "message_stop" and types.count("message_start") == 1  # the stream is whole
            text = "".join(
                e.delta.text for e in events if e.type == "content_block_delta" and e.delta.type == "text_delta"
            )
            assert text == reply
            summarized_turns += summarized
            sent = fake.requests[-1].json
            assert isinstance(sent, dict)
            assert sent["system"] == SYSTEM  # never folded into the messages, never summarized
            messages = list(load(sent["messages"], format="anthropic").messages)
            assert validate(messages, "anthropic") == []
            assert HeuristicCounter().count_messages(messages) + HeuristicCounter().count_text(SYSTEM) <= WINDOW
            # the client's newest message, with the mark the manager puts there once the session is compacted
            assert same_message(sent["messages"][-1], history[-1])
            history.append({"role": "assistant", "content": text})
        assert summarized_turns >= 2


def test_the_named_event_comes_first_and_the_sdk_passes_it_by(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        body = {
            "model": "claude-test-model",
            "max_tokens": 64,
            "system": SYSTEM,
            "messages": [*turns(20), {"role": "user", "content": "Now BK-999 please."}],
            "stream": True,
        }
        fake.script(FakeText(text="Done."))
        with httpx.stream("POST", p.url + "/v1/messages", json=body, headers={"x-api-key": "k"}) as r:
            raw = "".join(r.iter_text())
        assert r.headers["x-chainsum-summarized"] == "true"
        assert raw.startswith("event: context_summarized\ndata: {")
        assert "event: message_start" in raw
        fake.script(FakeText(text="Done again."))
        client = p.keep(anthropic.Anthropic(base_url=p.url, api_key="k2", max_retries=0))
        with client.messages.stream(
            model="claude-test-model",
            max_tokens=64,
            system=SYSTEM,
            messages=[*turns(20), {"role": "user", "content": "Now BK-999 please."}],  # type: ignore[arg-type]
        ) as stream:
            assert stream.get_final_text() == "Done again."


def test_anthropic_session_from_claude_code_metadata(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=8000) as p:
        body = {
            "model": "claude-test-model",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}],
            "metadata": {"user_id": "user_abc_account_123_session_5f0c-77aa"},
        }
        r = httpx.post(p.url + "/v1/messages", json=body, headers={"x-api-key": "k"})
        assert r.status_code == 200 and r.headers["x-chainsum-session"].startswith("5f0c-77aa~")
        claude = httpx.post(
            p.url + "/v1/messages", json=body, headers={"x-api-key": "k", "X-Claude-Code-Session-Id": "cc-1"}
        )
        assert claude.headers["x-chainsum-session"].startswith("cc-1~")
