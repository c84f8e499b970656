"""Session names are kept exactly: each name its own session, escaped for storage and given back whole, and a
session stored by an earlier version (a lossy name, a 10-digit scope) is still found by the name it was made for."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chainsum.server._identity import SessionKey, escape_name, session_key, unescape_name
from chainsum.store import SQLiteStore
from chainsum.store._migrations import SQLITE_MIGRATIONS
from chainsum.testing import FakeLLMServer
from server.server_support import Running, chat, proxy

WINDOW = 2000
_SAFE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-%")


def key_of(name: str, credential: str = "") -> SessionKey:
    headers = {"authorization": credential} if credential else {}
    return session_key(headers, {"prompt_cache_key": name}, system=None, messages=[])


@given(st.text(min_size=1, max_size=60))
def test_a_name_escapes_to_safe_characters_and_back(name: str) -> None:
    escaped = escape_name(name)
    assert set(escaped) <= _SAFE  # no "~" (the scope separator), nothing a URL or a log would mangle
    assert unescape_name(escaped) == name


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_distinct_names_never_share_a_session(a: str, b: str) -> None:
    if a.strip() and b.strip():
        assert (key_of(a).id == key_of(b).id) == (a == b)
        assert key_of(a, "Bearer one").id != key_of(a, "Bearer two").id


def test_long_names_stay_distinct_and_bounded() -> None:
    a, b = "x" * 2000 + "a", "x" * 2000 + "b"
    assert key_of(a).id != key_of(b).id
    assert len(escape_name(a)) == 480 and "#" in escape_name(a)


def test_the_names_that_used_to_collide_are_two_sessions() -> None:
    first, second = key_of("proj/é"), key_of("proj_è")
    assert first.id != second.id
    assert first.label == "proj/é" and second.label == "proj_è"
    # both had one id before: the id an older version stored them under
    assert first.legacy == second.legacy == "proj__~anon"
    assert key_of("plain-name").legacy is None  # unchanged for a name with nothing to escape and no credential


def send(p: Running, messages: list[dict[str, Any]], session: str) -> httpx.Response:
    r = httpx.post(
        p.openai_url + "/chat/completions",
        json={"model": "gpt-4o", "messages": messages, "prompt_cache_key": session},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return r


def test_through_the_proxy_each_name_is_its_own_session(fake: FakeLLMServer, store: SQLiteStore) -> None:
    with proxy(fake, store, context_window=WINDOW) as p:
        one = send(p, chat(3), "proj/é").headers["x-chainsum-session"]
        two = send(p, chat(3), "proj_è").headers["x-chainsum-session"]
        assert one != two
        with p.api(p.app.state.chainsum.settings.api_token) as api:
            for sid, label in ((one, "proj/é"), (two, "proj_è")):
                r = api.get(f"/api/sessions/{quote(sid, safe='')}")
                assert r.status_code == 200, r.text
                assert r.json()["label"] == label


def test_a_session_stored_by_an_earlier_version_goes_on(
    fake: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The earlier version: schema 2, ids of `_clean(name)` and a 10-digit scope. After the upgrade the same name
    continues its session (no compaction redone, its records kept); another name with the same old id gets its
    own session."""
    path = tmp_path / "old.db"
    credential = "Bearer sk-old-client"
    legacy_id = "proj_x~" + hashlib.sha256(credential.encode()).hexdigest()[:10]

    def old_key(headers: Any, body: Any, *, system: object, messages: Any, scopes: object = None) -> SessionKey:
        return SessionKey(legacy_id, "proj_x", "body")

    history = chat(30)
    with monkeypatch.context() as old:
        old.setattr(SQLiteStore, "_migrations", SQLITE_MIGRATIONS[:2])
        old.setattr("chainsum.server._proxy.session_key", old_key)
        store = SQLiteStore(path)
        with proxy(fake, store, context_window=WINDOW) as p:
            first = _post(p, history, "proj/x", credential)
            assert first.headers["x-chainsum-session"] == legacy_id
            assert first.headers["x-chainsum-summarized"] == "true"
            sent_before = _sent(fake)
        records = [r.id for r in store.records(legacy_id)]
        store.close()
    assert records

    store = SQLiteStore(path)  # migrates to the current version
    try:
        with proxy(fake, store, context_window=WINDOW) as p:
            more = [*history, {"role": "assistant", "content": "The newest is ORD-1029."}]
            more.append({"role": "user", "content": "And its carrier?"})
            again = _post(p, more, "proj/x", credential)
            assert again.headers["x-chainsum-session"] == legacy_id
            assert again.headers["x-chainsum-summarized"] == "false"
            sent = _sent(fake)
            assert sent[: len(sent_before)] == sent_before  # the same session, extended: nothing redone
            assert [r.id for r in store.records(legacy_id)] == records
            other = _post(p, chat(3), "proj_x", credential)  # the same old id: a session of its own now
            assert other.headers["x-chainsum-session"] not in (legacy_id, "")
    finally:
        store.close()


def _post(p: Running, messages: list[dict[str, Any]], name: str, credential: str) -> httpx.Response:
    r = httpx.post(
        p.openai_url + "/chat/completions",
        json={"model": "gpt-4o", "messages": messages, "prompt_cache_key": name},
        headers={"Authorization": credential},
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return r


def _sent(fake: FakeLLMServer) -> list[Any]:
    """The history of the last request the upstream got."""
    body = fake.requests[-1].json
    assert isinstance(body, dict)
    return list(cast(dict[str, Any], body)["messages"])
