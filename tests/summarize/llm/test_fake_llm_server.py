"""The shipped fake provider server itself: routing, recording, scripting, and a prompt shutdown."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from chainsum.testing.fake_llm import FakeLLMServer, FakeStall, FakeText


def post(url: str, payload: object) -> tuple[int, object]:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST")
    request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


def test_script_then_default_and_recording() -> None:
    with FakeLLMServer(default=FakeText(text="default")) as server:
        server.script(FakeText(text="first"))
        _, first = post(server.openai_base_url + "/chat/completions", {"model": "m1", "messages": []})
        _, second = post(server.base_url + "/v1/messages", {"model": "m2", "messages": []})
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["choices"][0]["message"]["content"] == "first"
    assert first["model"] == "m1"
    assert second["content"] == [{"type": "text", "text": "default"}]
    assert [r.path for r in server.requests] == ["/v1/chat/completions", "/v1/messages"]
    assert server.requests[1].json == {"model": "m2", "messages": []}


def test_unknown_path_is_404() -> None:
    with FakeLLMServer() as server:
        status, _ = post(server.base_url + "/v1/embeddings", {})
    assert status == 404


def test_closing_ends_a_stall() -> None:
    server = FakeLLMServer(default=FakeStall(seconds=600)).start()
    request = urllib.request.Request(server.openai_base_url + "/chat/completions", data=b"{}", method="POST")
    with pytest.raises(OSError):  # the client gives up first; close() must then not wait the stall out
        urllib.request.urlopen(request, timeout=0.2)
    server.close()
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.port
