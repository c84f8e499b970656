"""The upstream timeout (``--upstream-timeout`` / ``CHAINSUM_UPSTREAM_TIMEOUT_SECONDS``): a slow upstream gets the
client a 504 in its provider's own error shape, on each proxy route, and a bad value is a one-line error."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from chainsum.cli._app import app
from chainsum.server import ServerSettings, SettingsError
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from chainsum.testing.fake_llm import FakeStall, FakeText
from server.server_support import proxy


def test_the_variable_sets_the_timeout_and_an_option_wins() -> None:
    assert ServerSettings.from_env({}).upstream_timeout_s == 600.0
    assert ServerSettings.from_env({"CHAINSUM_UPSTREAM_TIMEOUT_SECONDS": "2.5"}).upstream_timeout_s == 2.5
    given = ServerSettings.from_env({"CHAINSUM_UPSTREAM_TIMEOUT_SECONDS": "2.5"}, upstream_timeout_s=7.0)
    assert given.upstream_timeout_s == 7.0
    for bad in ("soon", "0", "-1", "nan", "inf"):
        with pytest.raises(SettingsError, match=f"CHAINSUM_UPSTREAM_TIMEOUT_SECONDS={bad!r}"):
            ServerSettings.from_env({"CHAINSUM_UPSTREAM_TIMEOUT_SECONDS": bad})


def test_a_bad_option_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHAINSUM_UPSTREAM_TIMEOUT_SECONDS", raising=False)
    result = CliRunner().invoke(app, ["serve", "--upstream-timeout", "0"])
    assert result.exit_code == 2
    assert "--upstream-timeout 0.0" in result.stderr and result.stderr.strip().count("\n") == 0


_BODY: dict[str, Any] = {"model": "gpt-4o", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        ("/v1/chat/completions", _BODY, {"error": {"type": "api_error", "code": None, "param": None}}),
        ("/v1/responses", {"model": "gpt-4o", "input": [{"role": "user", "content": "hi"}]}, {"error": {}}),
        (
            "/v1/messages",
            {**_BODY, "model": "claude-sonnet-4-5"},
            {"type": "error", "error": {"type": "timeout_error"}},
        ),
    ],
    ids=["chat", "responses", "messages"],
)
def test_a_slow_upstream_is_a_504_in_the_provider_shape(
    fake: FakeLLMServer, store: SQLiteStore, path: str, body: dict[str, Any], expected: dict[str, Any]
) -> None:
    with proxy(fake, store, context_window=4000, upstream_timeout_s=0.4) as p:
        fake.script(FakeStall(seconds=5))
        started = time.monotonic()
        r = httpx.post(p.url + path, json=body, headers={"anthropic-version": "2023-06-01"}, timeout=30)
        waited = time.monotonic() - started
        assert r.status_code == 504, r.text
        got = r.json()
        for key, value in expected.items():
            if isinstance(value, dict):
                assert set(value.items()) <= set(got[key].items()), got  # pyright: ignore[reportUnknownArgumentType]
            else:
                assert got[key] == value
        error = got["error"]
        assert "did not answer in time" in error["message"]
        assert 0.4 <= waited < 4.0  # the timeout, not the stall, ended the wait
        # the upstream answering within the timeout is served as usual
        fake.script(FakeText(text="fine"))
        ok = httpx.post(p.url + "/v1/chat/completions", json=_BODY, timeout=30)
        assert ok.status_code == 200
