"""Cache markers through the proxy: a request never goes over Anthropic's limit of 4 ``cache_control`` blocks, and
a marker is never separated from its content: the markers of a summarized span leave with it, every other one of
the client's stays on its own block, and the ones chainsum adds (`chainsum.manager._breakpoints`) go only on the
summary record and, for a client that marks none of its messages, on the last block, never on a recall block. And,
for generated Claude Code-like requests with system messages anywhere, every system message reaches the upstream
verbatim and in order."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any, cast

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainsum.chain import RECORD_INTRO
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from sampling import examples
from server.cache_support import same_message
from server.server_support import Running, proxy

EPHEMERAL = {"type": "ephemeral"}
LIMIT = 4
"""Anthropic: "A maximum of 4 blocks with cache_control may be provided.\""""


def marked(value: Any) -> Iterator[dict[str, Any]]:
    """Every block of a request (system, tools, messages, inside tool results too) that carries ``cache_control``."""
    if isinstance(value, dict):
        block = cast(dict[str, Any], value)
        if "cache_control" in block:
            yield block
        for inner in block.values():
            yield from marked(inner)
    elif isinstance(value, list):
        for inner in cast(list[Any], value):
            yield from marked(inner)


def text(words: str, *, cache: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": words}
    return block | {"cache_control": EPHEMERAL} if cache else block


def send(p: Running, body: dict[str, Any], session: str) -> httpx.Response:
    headers = {"x-api-key": "k", "X-Chainsum-Session": session, "anthropic-beta": "mid-conversation-system"}
    return httpx.post(p.url + "/v1/messages?beta=true", json=body, headers=headers, timeout=30)


def sent_body(fake: FakeLLMServer) -> dict[str, Any]:
    body = fake.requests[-1].json
    assert isinstance(body, dict)
    return cast(dict[str, Any], body)


def test_markers_in_a_summarized_span_leave_with_it_and_the_others_stay_on_their_blocks(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    """Four markers, two of them on old turns that get summarized: after the compaction the two recent ones are
    still on their very blocks, the record carries chainsum's (the room the two summarized ones left), and the
    recall block none."""
    messages: list[dict[str, Any]] = []
    for i in range(30):
        old = i in (1, 3)
        messages.append({"role": "user", "content": [text(f"Question {i}: " + "context " * 60, cache=old)]})
        messages.append({"role": "assistant", "content": [text(f"Answer {i}. " + "detail " * 60)]})
    messages.append({"role": "system", "content": [text("Plan mode is on.")]})
    messages.append({"role": "user", "content": [text("Now the newest question.", cache=True)]})
    system = [text("You are Claude Code.", cache=True)]
    body = {"model": "claude-opus-4-5", "max_tokens": 256, "system": system, "messages": messages}
    assert len(list(marked(body))) == LIMIT
    with proxy(fake, store, context_window=4000) as p:
        r = send(p, body, "cache-1")
        assert r.status_code == 200 and r.headers["x-chainsum-summarized"] == "true"
    sent = sent_body(fake)
    kept = list(marked(sent))
    record = [b for b in kept if b["text"].startswith(RECORD_INTRO)]
    assert len(record) == 1 and kept == [system[0], record[0], messages[-1]["content"][0]]
    written = [m for m in sent["messages"] if m not in messages]
    assert written and [b for b in marked(written)] == record  # the recall block carries none


def holds_results(message: dict[str, Any]) -> bool:
    content = message["content"]
    return isinstance(content, list) and any(
        b.get("type") == "tool_result" for b in cast(list[dict[str, Any]], content)
    )


@st.composite
def claude_code_requests(draw: st.DrawFn) -> dict[str, Any]:
    """An Anthropic request like Claude Code's: questions, answers and tool steps, system messages inside the list
    at random places (never between a call and its result), and up to four cache markers on random text blocks."""
    messages: list[dict[str, Any]] = []
    for i in range(draw(st.integers(2, 30))):
        size = draw(st.integers(1, 80))
        messages.append({"role": "user", "content": [text(f"Question {i}: " + "context " * size)]})
        if draw(st.booleans()):
            call = f"toolu_{i:03d}"
            use = {"type": "tool_use", "id": call, "name": "Read", "input": {"path": f"f{i}.py"}}
            messages.append({"role": "assistant", "content": [text(f"Reading f{i}.py."), use]})
            output = "line\n" * draw(st.integers(1, 200))
            messages.append(
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": output}]}
            )
        messages.append({"role": "assistant", "content": [text(f"Answer {i}. " + "detail " * size)]})
    messages.append({"role": "user", "content": [text("And now?")]})
    for k in range(draw(st.integers(1, 5))):
        places = [j for j in range(len(messages)) if not holds_results(messages[j])]
        at = draw(st.sampled_from(places))
        form = draw(st.sampled_from(["string", "blocks"]))
        words = f"Instruction {k}: " + "obey " * draw(st.integers(1, 20))
        messages.insert(at, {"role": "system", "content": words if form == "string" else [text(words)]})
    lists = [cast(list[dict[str, Any]], m["content"]) for m in messages if isinstance(m["content"], list)]
    blocks = [b for content in lists for b in content if b.get("type") == "text"]
    for block in draw(st.lists(st.sampled_from(blocks), max_size=LIMIT - 1, unique_by=id)):
        block["cache_control"] = EPHEMERAL
    return {
        "model": "claude-opus-4-5",
        "max_tokens": 128,
        "system": [text("You are Claude Code.", cache=True)],
        "messages": messages,
    }


def test_every_system_message_reaches_the_upstream_verbatim_and_in_order(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    compacted: list[bool] = []
    with proxy(fake, store, context_window=2500) as p:

        @settings(
            max_examples=examples(25),
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )
        @given(claude_code_requests())
        def check(body: dict[str, Any]) -> None:
            body = json.loads(json.dumps(body))  # no block shared between two places
            r = send(p, body, uuid.uuid4().hex)
            assert r.status_code == 200, r.text
            assert "x-chainsum-passthrough" not in r.headers
            sent = sent_body(fake)
            compacted.append(r.headers["x-chainsum-summarized"] == "true")
            ours: list[dict[str, Any]] = body["messages"]
            theirs: list[dict[str, Any]] = sent["messages"]
            assert [m for m in theirs if m["role"] == "system"] == [m for m in ours if m["role"] == "system"]
            assert "[system]" not in json.dumps(theirs)
            assert same_message(theirs[-1], ours[-1]) and sent["system"] == body["system"]
            kept = list(marked(sent))
            assert len(kept) <= LIMIT
            # every marker is the client's, or chainsum's on its record or (where the client marked no message)
            # on the newest message's last block
            given_marks = list(marked(body))
            newest: object = theirs[-1]["content"]
            end = cast(list[dict[str, Any]], newest)[-1] if isinstance(newest, list) else None
            client_marks = [b for b in given_marks if b in list(marked(theirs))]
            for block in kept:
                if block in given_marks:
                    continue
                assert block["text"].startswith(RECORD_INTRO) or (block is end and not client_marks), block

        check()
    assert any(compacted)  # the property saw compactions, not only requests that fit
