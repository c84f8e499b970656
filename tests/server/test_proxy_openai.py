"""The proxy driven by the official OpenAI SDK, streaming and not, through a real uvicorn server to the fake
upstream: what the upstream receives stays inside the window and valid, the client's answers are intact, and a
compaction is announced exactly when it happens, in a way the SDK tolerates."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import openai
import pytest

from chainsum.formats import load
from chainsum.rules import validate
from chainsum.server._proxy import _with_timing  # pyright: ignore[reportPrivateUsage]
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from chainsum.testing.fake_llm import FakeText
from chainsum.tokens import HeuristicCounter
from server.server_support import proxy

WINDOW = 2000


def question(i: int) -> str:
    return f"Question {i}: what does order ORD-{1000 + i} contain? " + "please explain in detail " * 12


def answer(i: int) -> str:
    return f"Order ORD-{1000 + i} holds item SKU-{i}. " + "it ships soon and is insured " * 8


def upstream_tokens(body: Any) -> int:
    conv = load(body["messages"], format="openai")
    return HeuristicCounter().count_messages(list(conv.messages))


@pytest.mark.slow
def test_a_long_conversation_stays_inside_the_window_and_streams_intact(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        client = p.keep(openai.OpenAI(base_url=p.openai_url, api_key="sk-test", max_retries=0))
        history: list[Any] = [{"role": "system", "content": "You are the order desk. Keep answers short."}]
        announced: list[int] = []
        compactions_seen = 0
        for i in range(60):
            history.append({"role": "user", "content": question(i)})
            fake.script(FakeText(text=answer(i)))
            before = len(fake.requests)
            if i % 2:
                with client.chat.completions.with_streaming_response.create(
                    model="gpt-4o", messages=history, stream=True
                ) as response:
                    summarized = response.headers["x-chainsum-summarized"] == "true"
                    sid = response.headers["x-chainsum-session"]
                    text = "".join(chunk.choices[0].delta.content or "" for chunk in response.parse() if chunk.choices)
            else:
                raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=history)
                summarized = raw.headers["x-chainsum-summarized"] == "true"
                sid = raw.headers["x-chainsum-session"]
                text = raw.parse().choices[0].message.content or ""
            assert text == answer(i)  # the client's answer is the upstream's, whole
            assert len(fake.requests) == before + 1
            sent = fake.requests[-1].json
            assert upstream_tokens(sent) <= WINDOW
            assert validate(list(load(sent["messages"], format="openai").messages), "openai") == []  # type: ignore[index]
            assert sent["messages"][0] == history[0]  # type: ignore[index]  # the system prompt, verbatim
            assert sent["messages"][-1] == history[-1]  # type: ignore[index]  # the newest question, verbatim
            compactions = len(store.records(sid))
            assert summarized == (compactions > compactions_seen)
            compactions_seen = compactions
            if summarized:
                announced.append(i)
            history.append({"role": "assistant", "content": text})
        assert len(announced) >= 3  # the conversation is 10x the window: it was compacted, more than once
        assert sum(upstream_tokens({"messages": history[:1] + history[-2:]}) for _ in (0,)) < WINDOW


def stream_raw(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[httpx.Headers, str]:
    with httpx.stream(
        "POST", url + "/v1/chat/completions", json=body, headers={"Authorization": "Bearer sk-x", **(headers or {})}
    ) as response:
        return response.headers, "".join(response.iter_text())


def grown_history(n: int) -> list[dict[str, str]]:
    history: list[dict[str, str]] = [{"role": "system", "content": "You are the order desk."}]
    for i in range(n):
        history += [{"role": "user", "content": question(i)}, {"role": "assistant", "content": answer(i)}]
    history.append({"role": "user", "content": question(n)})
    return history


def test_the_announcement_is_a_comment_line_before_the_first_chunk_or_a_named_event_on_request(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        body = {"model": "gpt-4o", "messages": grown_history(14), "stream": True}
        fake.script(FakeText(text="first"))
        headers, text = stream_raw(p.url, body, {"X-Chainsum-Session": "s1"})
        assert headers["x-chainsum-summarized"] == "true"
        first, _, rest = text.partition("\n\n")
        assert first.startswith(": context_summarized {")
        event = json.loads(first.removeprefix(": context_summarized "))
        assert event["type"] == "context_summarized" and event["sessionId"] == headers["x-chainsum-session"]
        assert event["tokensBefore"] == int(headers["x-chainsum-tokens-before"])
        assert event["tokensAfter"] == int(headers["x-chainsum-tokens-after"])  # one pair: the request's
        assert event["tokensBefore"] - event["tokensAfter"] == event["tokensRemoved"] > 0
        assert event["message"] == f"Context optimized: {event['tokensRemoved']:,} tokens compressed"
        assert event["window"] == WINDOW and event["recallTokens"] >= 0  # the gauge's fields, after the spec's
        assert list(event) == [
            "type",
            "sessionId",
            "tokensBefore",
            "tokensAfter",
            "tokensRemoved",
            "messagesSummarized",
            "contextCompressionRatio",
            "message",
            "recallTokens",
            "window",
        ]
        assert rest.startswith("data: {") and rest.rstrip().endswith("data: [DONE]")

        fake.script(FakeText(text="second"))
        named = {"model": "gpt-4o", "messages": grown_history(14), "stream": True}
        headers, text = stream_raw(p.url, named, {"X-Chainsum-Session": "s2", "X-Chainsum-Events": "named"})
        assert headers["x-chainsum-summarized"] == "true"
        assert text.startswith("event: context_summarized\ndata: {")

        fake.script(FakeText(text="third"))  # the same session again: nothing new to compact, nothing announced
        again = {"model": "gpt-4o", "messages": [*grown_history(14), {"role": "assistant", "content": "second"}]}
        again["messages"].append({"role": "user", "content": "and then?"})
        headers, text = stream_raw(p.url, {**again, "stream": True}, {"X-Chainsum-Session": "s2"})
        assert headers["x-chainsum-summarized"] == "false"
        assert text.startswith("data: {")


def test_the_openai_sdk_reads_a_stream_that_carries_the_announcement(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        client = p.keep(
            openai.OpenAI(
                base_url=p.openai_url, api_key="sk-test", max_retries=0, default_headers={"X-Chainsum-Session": "sdk"}
            )
        )
        fake.script(FakeText(text="All orders ship on Monday."))
        with client.chat.completions.with_streaming_response.create(
            model="gpt-4o",
            messages=grown_history(14),
            stream=True,  # type: ignore[arg-type]
        ) as response:
            assert response.headers["x-chainsum-summarized"] == "true"
            chunks = list(response.parse())
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "All orders ship on Monday."
        assert chunks[-1].choices[0].finish_reason == "stop"


def test_a_retried_or_edited_history_is_never_answered_with_a_stale_context(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        client = p.keep(
            openai.OpenAI(
                base_url=p.openai_url, api_key="sk-test", max_retries=0, default_headers={"X-Chainsum-Session": "r"}
            )
        )
        history = grown_history(14)
        client.chat.completions.create(model="gpt-4o", messages=history)  # type: ignore[arg-type]
        client.chat.completions.create(model="gpt-4o", messages=history)  # type: ignore[arg-type]  # a retry
        first, retried = fake.requests[-2].json, fake.requests[-1].json
        assert first["messages"] == retried["messages"]  # type: ignore[index]
        edited = [*history[:-1], {"role": "user", "content": "Forget that. Where is parcel PCL-777?"}]
        client.chat.completions.create(model="gpt-4o", messages=edited)  # type: ignore[arg-type]
        sent = fake.requests[-1].json["messages"]  # type: ignore[index]
        assert sent[-1]["content"] == "Forget that. Where is parcel PCL-777?"
        assert "Question 14" not in json.dumps(sent)  # the replaced question is gone, not answered from memory
        branched = [*history[:3], {"role": "user", "content": "New branch: status of ORD-4242?"}]
        client.chat.completions.create(model="gpt-4o", messages=branched)  # type: ignore[arg-type]
        sent = fake.requests[-1].json["messages"]  # type: ignore[index]
        # short again: sent as it is, plus (maybe) a recall block of archived messages, never the old summary
        assert [m for m in sent if not str(m["content"]).startswith("[chainsum recall:")] == branched
        assert "[chainsum record" not in json.dumps(sent)


def test_sessions_are_named_by_header_body_or_fingerprint_and_scoped_by_credentials(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store, context_window=8000) as p:
        url = p.url + "/v1/chat/completions"
        msgs = [{"role": "user", "content": "hello"}]

        def session(headers: dict[str, str], **body: Any) -> str:
            r = httpx.post(url, json={"model": "gpt-4o", "messages": msgs, **body}, headers=headers)
            assert r.status_code == 200
            return r.headers["x-chainsum-session"]

        a = session({"Authorization": "Bearer key-a", "X-Chainsum-Session": "chat 1"})
        b = session({"Authorization": "Bearer key-b", "X-Chainsum-Session": "chat 1"})
        # same name, two clients; the name kept exactly, its space escaped (never mapped onto "chat_1")
        assert a.startswith("chat%201~") and b.startswith("chat%201~") and a != b
        assert "key-a" not in a
        assert session({"Authorization": "Bearer key-a", "session-id": "cc"}).startswith("cc~")
        assert session({"Authorization": "Bearer key-a"}, prompt_cache_key="pk").startswith("pk~")
        assert session({"Authorization": "Bearer key-a"}, metadata={"session_id": "ms"}).startswith("ms~")
        fp1 = session({"Authorization": "Bearer key-a"})
        assert fp1.startswith("fp-") and fp1 == session({"Authorization": "Bearer key-a"})


def test_responses_route_compacts_a_whole_input_and_passes_a_continuation_untouched(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        client = p.keep(openai.OpenAI(base_url=p.openai_url, api_key="sk-test", max_retries=0))
        items: list[Any] = []
        for i in range(14):
            items += [
                {"role": "user", "content": question(i)},
                {"role": "assistant", "content": answer(i)},
            ]
        items.append({"role": "user", "content": question(14)})
        raw = client.responses.with_raw_response.create(model="gpt-4o", input=items, instructions="Be brief.")
        assert raw.parse().output_text == "A fake summary."
        assert raw.headers["x-chainsum-summarized"] == "true"
        sent = fake.requests[-1].json
        assert sent["instructions"] == "Be brief."  # type: ignore[index]
        assert len(sent["input"]) < len(items) and sent["input"][-1] == items[-1]  # type: ignore[index]
        body = {"model": "gpt-4o", "previous_response_id": "resp_1", "input": [{"role": "user", "content": "more"}]}
        r = httpx.post(
            p.openai_url + "/responses", content=json.dumps(body), headers={"content-type": "application/json"}
        )
        assert r.status_code == 200 and r.headers["x-chainsum-skipped"] == "previous_response_id"
        assert fake.requests[-1].json == body


def test_models_are_passed_through(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store) as p:
        client = p.keep(openai.OpenAI(base_url=p.openai_url, api_key="sk-test", max_retries=0))
        assert [m.id for m in client.models.list()] == ["fake-model"]
        assert fake.requests[-1].headers["authorization"] == "Bearer sk-test"


def test_an_unknown_model_without_a_window_goes_through_untouched(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store) as p:
        body = {"model": "my-local-llama-finetune", "messages": grown_history(30)}
        r = httpx.post(p.openai_url + "/chat/completions", json=body)
        assert r.status_code == 200 and "unknown model" in r.headers["x-chainsum-skipped"]
        assert fake.requests[-1].json == body
        windowed = httpx.post(
            p.openai_url + "/chat/completions", json=body, headers={"X-Chainsum-Context-Window": str(WINDOW)}
        )
        assert windowed.headers["x-chainsum-summarized"] == "true"
        assert upstream_tokens(fake.requests[-1].json) <= WINDOW


def test_a_streamed_responses_answer_comes_through_a_compaction_whole(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        client = p.keep(openai.OpenAI(base_url=p.openai_url, api_key="sk-test", max_retries=0))
        items: list[Any] = []
        for i in range(14):
            items += [{"role": "user", "content": question(i)}, {"role": "assistant", "content": answer(i)}]
        items.append({"role": "user", "content": question(14)})
        fake.script(FakeText(text="Order ORD-1014 ships on Friday."))
        with client.responses.with_streaming_response.create(model="gpt-4o", input=items, stream=True) as response:
            assert response.headers["x-chainsum-summarized"] == "true"
            events = list(response.parse())
        types = [e.type for e in events]
        assert types[0] == "response.created" and types[-1] == "response.completed"
        deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        assert deltas == "Order ORD-1014 ships on Friday."
        sent = fake.requests[-1].json
        assert isinstance(sent, dict) and sent["stream"] is True
        assert len(sent["input"]) < len(items) and sent["input"][-1] == items[-1]


def test_the_query_string_and_the_models_route_reach_the_upstream(fake: FakeLLMServer, store: SQLiteStore) -> None:
    # Azure-style deployments put the API version in the query string; it must reach the upstream as sent.
    with proxy(fake, store, context_window=WINDOW) as p:
        client = p.keep(
            openai.OpenAI(
                base_url=p.openai_url, api_key="sk-q", max_retries=0, default_query={"api-version": "2025-01-01"}
            )
        )
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
        listed = client.models.list()
    assert [(r.path, r.query) for r in fake.requests] == [
        ("/v1/chat/completions", "api-version=2025-01-01"),
        ("/v1/models", "api-version=2025-01-01"),
    ]
    assert [m.id for m in listed.data]


def test_each_answer_says_chainsums_own_time_in_server_timing(fake: FakeLLMServer, store: SQLiteStore) -> None:
    """``Server-Timing: chainsum;dur=MS``: what chainsum spent on the request before the upstream's part, on a
    request it compacted and on one it did not, never more than the whole request took."""
    with proxy(fake, store, context_window=WINDOW) as p:
        for n, summarized in ((1, "false"), (14, "true")):
            started = time.perf_counter()
            r = httpx.post(
                p.url + "/v1/chat/completions",
                json={"model": "gpt-4o", "messages": grown_history(n)},
                headers={"Authorization": "Bearer sk-x", "X-Chainsum-Session": "timed"},
            )
            whole_ms = (time.perf_counter() - started) * 1000
            assert r.status_code == 200 and r.headers["x-chainsum-summarized"] == summarized
            name, _, value = r.headers["server-timing"].partition(";dur=")
            assert name == "chainsum" and 0 < float(value) < whole_ms


def test_the_upstreams_server_timing_entries_come_first() -> None:
    merged = _with_timing(
        {"server-timing": "db;dur=3", "content-type": "application/json"}, {"Server-Timing": "chainsum;dur=1.50"}
    )
    assert merged == {"content-type": "application/json", "Server-Timing": "db;dur=3, chainsum;dur=1.50"}
    assert _with_timing({"x": "1"}, {"Server-Timing": "chainsum;dur=2"}) == {
        "x": "1",
        "Server-Timing": "chainsum;dur=2",
    }
