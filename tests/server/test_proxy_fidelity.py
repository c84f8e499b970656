"""Everything a client sends that chainsum does not edit reaches the upstream unchanged: the whole body byte for
byte when nothing is compacted, and every field and every message chainsum kept as the same JSON value when a
compaction happened. Cache markers, thinking signatures, images and documents, server tool blocks, MCP, containers,
beta headers and the ``?beta=true`` query on Anthropic; encrypted reasoning, ``include``, ``store``,
``prompt_cache_key`` and ``service_tier`` on Responses."""

from __future__ import annotations

import base64
import json
from typing import Any, cast

import httpx

from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.server_support import proxy

PDF = base64.b64encode(b"%PDF-1.4 fake").decode()
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()
EPHEMERAL = {"type": "ephemeral"}
BETA = "mid-conversation-system-2025-11-01,code-execution-2025-08-25,mcp-client-2025-04-04,context-1m-2025-08-07"


def anthropic_recent() -> list[dict[str, Any]]:
    """The last turns of a Claude Code session with every kind of block: what a compaction keeps verbatim."""
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look at the chart and the spec, then search the web."},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
                    "title": "spec.pdf",
                    "citations": {"enabled": True},
                    "cache_control": EPHEMERAL,
                },
            ],
        },
        {"role": "system", "content": [{"type": "text", "text": "Plan mode is on."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "The chart shows Q3.", "signature": "EqQBCkYIBxgCKkD+sig=="},
                {
                    "type": "redacted_thinking",
                    "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
                },
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_01",
                    "name": "web_search",
                    "input": {"query": "Q3 revenue 2026"},
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_01",
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": "https://example.com/q3",
                            "title": "Q3",
                            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5",
                            "page_age": "2 days",
                        }
                    ],
                },
                {
                    "type": "text",
                    "text": "Revenue grew.",
                    "citations": [
                        {
                            "type": "web_search_result_location",
                            "url": "https://example.com/q3",
                            "title": "Q3",
                            "encrypted_index": "Eo8BCioIAhgBIiQ=",
                            "cited_text": "grew 12%",
                        }
                    ],
                },
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_02",
                    "name": "bash_code_execution",
                    "input": {"command": "python -c 'print(1.12*100)'"},
                },
                {
                    "type": "bash_code_execution_tool_result",
                    "tool_use_id": "srvtoolu_02",
                    "content": {
                        "type": "bash_code_execution_result",
                        "stdout": "112.00000000000001\n",
                        "stderr": "",
                        "return_code": 0,
                        "content": [],
                    },
                },
                {
                    "type": "mcp_tool_use",
                    "id": "mcptoolu_01",
                    "name": "lookup",
                    "server_name": "crm",
                    "input": {"id": 7},
                },
                {
                    "type": "mcp_tool_result",
                    "tool_use_id": "mcptoolu_01",
                    "is_error": False,
                    "content": [{"type": "text", "text": "Acme"}],
                },
                {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "/repo/app.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01",
                    "content": [
                        {"type": "text", "text": "def app(): ..."},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                    ],
                    "cache_control": EPHEMERAL,
                },
                {"type": "text", "text": "And now fix it.", "cache_control": EPHEMERAL},
            ],
        },
    ]


def anthropic_body(old_turns: int) -> dict[str, Any]:
    old: list[dict[str, Any]] = []
    for i in range(old_turns):
        old.append({"role": "user", "content": f"Earlier question {i} about the billing module. " + "context " * 60})
        old.append({"role": "assistant", "content": [{"type": "text", "text": f"Answer {i}. " + "detail " * 60}]})
    return {
        "model": "claude-opus-4-5",
        "max_tokens": 1024,
        "system": [
            {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
            {"type": "text", "text": "Project instructions.", "cache_control": EPHEMERAL},
        ],
        "tools": [{"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}}],
        "messages": [*old, *anthropic_recent()],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "container": {
            "id": "container_011CQ",
            "skills": [{"type": "anthropic", "skill_id": "pdf", "version": "latest"}],
        },
        "mcp_servers": [
            {"type": "url", "url": "https://mcp.example.com/sse", "name": "crm", "authorization_token": "t"}
        ],
        "metadata": {"user_id": "user_abc_account_1_session_4b3c-11"},
        # an edit that leaves the turns to chainsum (one that compacts or clears them makes the request the
        # provider's: tests/server/test_proxy_native_compaction.py)
        "context_management": {
            "edits": [{"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}}]
        },
        "temperature": 1,
        "stream": False,
    }


def sent_body(fake: FakeLLMServer) -> dict[str, Any]:
    body = fake.requests[-1].json
    assert isinstance(body, dict)
    return cast(dict[str, Any], body)


def assert_kept_verbatim(
    body: dict[str, Any], sent: dict[str, Any], history: str, recent: int, *, key_order: bool = True
) -> None:
    """Every field but the history arrives as it was sent; the history's last `recent` items arrive verbatim, and
    every item before them is one of the client's items unchanged or one chainsum wrote (a record, a recall block).
    With `key_order`, the kept items are the client's own, their keys in its order (Responses items that shared a
    turn with compacted ones are written again from their messages: the same values, keys in the writer's order)."""
    assert {k: v for k, v in sent.items() if k != history} == {k: v for k, v in body.items() if k != history}
    assert list(sent) == list(body)  # the key order too
    original: list[Any] = body[history]
    out: list[Any] = sent[history]
    ours = [m for m in out if m not in original]
    assert ours and all("chainsum record" in json.dumps(m) or "chainsum recall" in json.dumps(m) for m in ours)
    theirs = [m for m in out if m in original]
    assert len(theirs) < len(original) and theirs[-recent:] == original[-recent:]
    if key_order:
        assert [json.dumps(m) for m in theirs[-recent:]] == [json.dumps(m) for m in original[-recent:]]


def test_an_anthropic_request_with_every_kind_of_block_reaches_the_upstream_byte_identical(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    body = anthropic_body(2)
    raw = json.dumps(body, indent=2, ensure_ascii=True).encode()
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01", "anthropic-beta": BETA}
    with proxy(fake, store, context_window=200_000) as p:
        r = httpx.post(p.url + "/v1/messages?beta=true", content=raw, headers=headers, timeout=30)
        assert r.status_code == 200 and r.headers["x-chainsum-summarized"] == "false"
        assert "x-chainsum-passthrough" not in r.headers  # chainsum read all of it
    received = fake.requests[-1]
    assert received.raw == raw and received.query == "beta=true"
    assert received.headers["anthropic-beta"] == BETA and received.headers["anthropic-version"] == "2023-06-01"


def test_a_compaction_keeps_every_anthropic_field_and_every_kept_message_unchanged(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    body = anthropic_body(40)  # the images and the document of the recent turns count about 4,700 tokens
    headers = {"x-api-key": "k", "anthropic-beta": BETA}
    with proxy(fake, store, context_window=12_000) as p:
        r = httpx.post(p.url + "/v1/messages?beta=true", json=body, headers=headers, timeout=30)
        assert r.status_code == 200 and r.headers["x-chainsum-summarized"] == "true"
    assert fake.requests[-1].query == "beta=true" and fake.requests[-1].headers["anthropic-beta"] == BETA
    assert_kept_verbatim(body, sent_body(fake), "messages", len(anthropic_recent()))


def responses_recent() -> list[dict[str, Any]]:
    return [
        {"role": "developer", "content": "From now on, answer in French."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Quel temps fait-il ?"}]},
        {
            "type": "reasoning",
            "id": "rs_01",
            "summary": [{"type": "summary_text", "text": "Weather lookup."}],
            "encrypted_content": "gAAAAABo-encrypted-reasoning==",
        },
        {
            "type": "web_search_call",
            "id": "ws_01",
            "status": "completed",
            "action": {"type": "search", "query": "météo Lisbonne"},
        },
        {
            "type": "function_call",
            "id": "fc_01",
            "call_id": "call_01",
            "name": "get_weather",
            "arguments": '{"city":"Lisbon"}',
        },
        {"type": "function_call_output", "call_id": "call_01", "output": '{"temp": 21}'},
        {
            "type": "message",
            "id": "msg_01",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Il fait 21 °C.", "annotations": []}],
        },
        {"role": "system", "content": "Keep answers short."},
        {"role": "user", "content": "Et demain ?"},
    ]


def responses_body(old_turns: int) -> dict[str, Any]:
    old: list[dict[str, Any]] = []
    for i in range(old_turns):
        old.append({"role": "user", "content": f"Earlier question {i} about the trip. " + "context " * 60})
        old.append({"role": "assistant", "content": f"Answer {i}. " + "detail " * 60})
    return {
        "model": "gpt-5",
        "instructions": "You are a travel agent.",
        "input": [*old, *responses_recent()],
        "include": ["reasoning.encrypted_content", "web_search_call.action.sources"],
        "store": False,
        "prompt_cache_key": "trip-42",
        "service_tier": "priority",
        "reasoning": {"effort": "medium", "summary": "auto"},
        "tools": [{"type": "web_search"}, {"type": "function", "name": "get_weather", "parameters": {}}],
        "text": {"verbosity": "low"},
        "max_output_tokens": 512,
    }


def test_a_responses_request_with_encrypted_reasoning_reaches_the_upstream_byte_identical(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    body = responses_body(2)
    raw = json.dumps(body, ensure_ascii=False, indent=1).encode()
    with proxy(fake, store, context_window=200_000) as p:
        r = httpx.post(p.openai_url + "/responses", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 200 and r.headers["x-chainsum-summarized"] == "false"
        assert "x-chainsum-passthrough" not in r.headers
    assert fake.requests[-1].raw == raw


def test_a_compaction_keeps_every_responses_field_and_every_kept_item_unchanged(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    body = responses_body(30)
    with proxy(fake, store, context_window=4000) as p:
        r = httpx.post(p.openai_url + "/responses", json=body, timeout=30)
        assert r.status_code == 200 and r.headers["x-chainsum-summarized"] == "true"
    assert_kept_verbatim(body, sent_body(fake), "input", len(responses_recent()), key_order=False)


def test_openai_chat_system_and_developer_messages_anywhere_come_through_a_compaction_verbatim(
    fake: FakeLLMServer, store: SQLiteStore
) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are the order desk."}]
    for i in range(30):
        messages.append({"role": "user", "content": f"Where is order ORD-{i}? " + "please check " * 30})
        if i in (2, 17):
            messages.append({"role": "developer", "content": [{"type": "text", "text": f"Policy {i}: be terse."}]})
        if i == 9:
            messages.append({"role": "system", "content": "Refunds need a manager.", "name": "ops"})
        messages.append({"role": "assistant", "content": f"ORD-{i} ships Monday. " + "checked " * 30})
    messages.append({"role": "user", "content": "And the newest one?"})
    body = {"model": "gpt-4o", "messages": messages, "prompt_cache_key": "desk", "service_tier": "flex"}
    with proxy(fake, store, context_window=3000) as p:
        r = httpx.post(p.openai_url + "/chat/completions", json=body, timeout=30)
        assert r.status_code == 200 and r.headers["x-chainsum-summarized"] == "true"
    sent = sent_body(fake)
    instructions = [m for m in messages if m["role"] in ("system", "developer")]
    assert [m for m in sent["messages"] if m["role"] in ("system", "developer")] == instructions
    assert {k: v for k, v in sent.items() if k != "messages"} == {k: v for k, v in body.items() if k != "messages"}
    assert sent["messages"][-1] == messages[-1] and len(sent["messages"]) < len(messages)
