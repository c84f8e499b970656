"""The archive over MCP (issue 34): with the official SDK's client, an agent lists a store's sessions and records,
searches the archive and expands a record into the originals it replaced; a client's key sees its own sessions
only (another's reads as missing, as on the session API); bad arguments are one-line tool errors. The store is
filled the way users fill it: two clients' conversations compacted through ``chainsum serve``. ``chainsum mcp``
serves the same over stdio."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from chainsum.server import archive_server
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.server_support import ADMIN_TOKEN, chat, proxy

KEYS = {"alice": "sk-alice-1", "bob": "sk-bob-2"}


def converse(url: str) -> None:
    """One conversation of each client, compacted through the proxy at `url`."""
    for who, key in KEYS.items():
        body = {"model": "gpt-4o", "messages": chat(30)}
        headers = {"authorization": f"Bearer {key}", "x-chainsum-session": f"{who}-orders"}
        r = httpx.post(url + "/v1/chat/completions", json=body, headers=headers, timeout=30)
        assert r.status_code == 200 and r.headers["x-chainsum-summarized"] == "true", r.text


@pytest.fixture
def filled(tmp_path: Path, fake: FakeLLMServer) -> Iterator[SQLiteStore]:
    """A store holding one compacted conversation of each client."""
    store = SQLiteStore(tmp_path / "chainsum.db")
    try:
        with proxy(fake, store, context_window=1500) as p:
            converse(p.url)
        yield store
    finally:
        store.close()


def result(answer: Any) -> Any:
    assert not answer.is_error, answer.content
    structured = cast(dict[str, Any], answer.structured_content)
    return structured.get("result", structured)


async def _calls(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async with Client(server) as client:
        return [await client.call_tool(name, arguments) for name, arguments in calls]


def call(server: Any, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    return asyncio.run(_calls(server, list(calls)))


def test_an_agent_lists_searches_and_expands_what_a_compaction_took_away(filled: SQLiteStore) -> None:
    (sessions,) = call(archive_server(filled), ("list_sessions", {}))
    rows = result(sessions)
    assert len(rows) == 2 and all(r["compactions"] >= 1 for r in rows)
    session = next(r["session"] for r in rows if r["label"] == "alice-orders")
    records, hits = call(
        archive_server(filled),
        ("list_records", {"session": session}),
        ("search_archive", {"session": session, "query": "ORD-1003", "limit": 5}),
    )
    (record,) = result(records)[:1]
    assert record["messages_replaced"] > 0 and record["summary"]
    found = result(hits)
    assert found and "ORD-1003" in found[0]["snippet"].replace("[", "").replace("]", "")
    (expanded,) = call(archive_server(filled), ("expand_record", {"record_id": record["id"]}))
    originals = result(expanded)
    assert originals["verified"] is True and len(originals["messages"]) == record["messages_replaced"]
    texts = json.dumps(originals["messages"])
    assert "ORD-1000" in texts  # the first question, taken out by the compaction, comes back verbatim


def test_a_clients_key_sees_its_own_sessions_only(filled: SQLiteStore) -> None:
    everyone = result(call(archive_server(filled), ("list_sessions", {}))[0])
    bobs = next(r["session"] for r in everyone if r["label"] == "bob-orders")
    bob_record = result(call(archive_server(filled), ("list_records", {"session": bobs}))[0])[0]["id"]
    alice = archive_server(filled, key=KEYS["alice"])
    mine, theirs, expand = call(
        alice,
        ("list_sessions", {}),
        ("list_records", {"session": bobs}),
        ("expand_record", {"record_id": bob_record}),
    )
    assert [r["label"] for r in result(mine)] == ["alice-orders"]
    for refused in (theirs, expand):  # another client's session or record reads as missing, not as forbidden
        assert refused.is_error and "no " in refused.content[0].text


def test_bad_arguments_are_one_line_tool_errors(filled: SQLiteStore) -> None:
    session = result(call(archive_server(filled), ("list_sessions", {}))[0])[0]["session"]
    empty, too_many, unknown = call(
        archive_server(filled),
        ("search_archive", {"session": session, "query": "  "}),
        ("search_archive", {"session": session, "query": "ORD", "limit": 10_000}),
        ("expand_record", {"record_id": "no-such-record"}),
    )
    for answer in (empty, too_many, unknown):
        assert answer.is_error and "\n" not in answer.content[0].text


@pytest.mark.slow  # a process of its own
def test_chainsum_mcp_serves_the_archive_over_stdio(filled: SQLiteStore, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "chainsum", "mcp", "--db", str(tmp_path / "chainsum.db")]
    )
    tools, sessions = asyncio.run(_stdio(params))
    assert {"list_sessions", "list_records", "search_archive", "expand_record"} <= tools
    assert sorted(r["label"] for r in sessions) == ["alice-orders", "bob-orders"]


async def _stdio(params: StdioServerParameters) -> tuple[set[str], list[dict[str, Any]]]:
    async with Client(params) as client:
        listed = await client.list_tools()
        answer = await client.call_tool("list_sessions", {})
    return {t.name for t in listed.tools}, result(answer)


async def _over_http(url: str, token: str, other: str = "none") -> tuple[set[str], list[dict[str, Any]], Any]:
    async with httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            listed = await client.list_tools()
            sessions = result(await client.call_tool("list_sessions", {}))
            records = await client.call_tool("list_records", {"session": other})
    return {t.name for t in listed.tools}, sessions, records


def test_chainsum_serve_answers_mcp_at_slash_mcp_scoped_by_each_requests_key(
    fake: FakeLLMServer, tmp_path: Path
) -> None:
    """Streamable HTTP under ``chainsum serve``: the admin token sees every session, a client's key its own only,
    a request without a key is refused with the session API's 401."""
    store = SQLiteStore(tmp_path / "chainsum.db")
    try:
        with proxy(fake, store, context_window=1500) as p:
            converse(p.url)
            url = p.url + "/mcp"
            tools, everyone, _ = asyncio.run(_over_http(url, ADMIN_TOKEN))
            assert {"list_sessions", "list_records", "search_archive", "expand_record"} <= tools
            assert sorted(r["label"] for r in everyone) == ["alice-orders", "bob-orders"]
            bobs = next(r["session"] for r in everyone if r["label"] == "bob-orders")
            _, _, seen = asyncio.run(_over_http(url, KEYS["bob"], bobs))
            assert result(seen)  # bob reads his own records
            _, alices, refused = asyncio.run(_over_http(url, KEYS["alice"], bobs))
            assert [r["label"] for r in alices] == ["alice-orders"]
            assert refused.is_error and "no session" in refused.content[0].text  # bob's reads as missing to alice
            bare = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=10)
            assert bare.status_code == 401 and "missing API token" in bare.text
    finally:
        store.close()
