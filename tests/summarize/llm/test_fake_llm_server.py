"""The shipped fake provider server itself: routing, recording, scripting, and a prompt shutdown."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from chainsum.testing.fake_llm import FakeLLMServer, FakeRateLimit, FakeStall, FakeStatus, FakeText


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


def test_bedrock_and_gemini_routes_take_the_model_from_the_path() -> None:
    with FakeLLMServer(default=FakeText(text="hello")) as server:
        _, converse = post(server.base_url + "/model/us.amazon.nova-micro-v1%3A0/converse", {"messages": []})
        _, gemini = post(server.base_url + "/v1beta/models/gemini-test:generateContent", {"contents": []})
        _, vertex = post(
            server.base_url + "/v1beta1/projects/p/locations/l/publishers/google/models/gemini-v:generateContent", {}
        )
    assert isinstance(converse, dict) and isinstance(gemini, dict) and isinstance(vertex, dict)
    assert converse["output"]["message"]["content"] == [{"text": "hello"}]
    assert converse["stopReason"] == "end_turn"
    assert gemini["candidates"][0]["content"]["parts"] == [{"text": "hello"}]
    assert (gemini["modelVersion"], vertex["modelVersion"]) == ("gemini-test", "gemini-v")
    assert [r.model for r in server.requests] == ["us.amazon.nova-micro-v1:0", "gemini-test", "gemini-v"]


def test_errors_carry_each_providers_name_for_them() -> None:
    request_headers: dict[str, str] = {}
    with FakeLLMServer() as server:
        server.script(FakeStatus(status=403), FakeStatus(status=403), FakeRateLimit(retry_after="2"))
        request = urllib.request.Request(server.base_url + "/model/m/converse", data=b"{}", method="POST")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=5)
        with caught.value:
            request_headers = dict(caught.value.headers.items())
            bedrock_body = json.loads(caught.value.read())
        status, gemini = post(server.base_url + "/v1beta/models/g:generateContent", {})
        limited_status, limited = post(server.base_url + "/v1beta/models/g:generateContent", {})
    assert request_headers["x-amzn-ErrorType"].startswith("AccessDeniedException:")
    assert bedrock_body == {"message": "internal error"}
    assert status == 403 and isinstance(gemini, dict)
    assert gemini["error"]["status"] == "PERMISSION_DENIED"
    assert limited_status == 429 and isinstance(limited, dict)
    assert limited["error"]["details"] == [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}]


def test_a_bedrock_stream_request_is_answered_whole() -> None:
    # Bedrock and Gemini stream on paths of their own (converse-stream, streamGenerateContent), not served here
    with FakeLLMServer() as server:
        status, body = post(server.base_url + "/model/m/converse", {"stream": True})
        missing, _ = post(server.base_url + "/model/m/converse-stream", {})
    assert status == 200 and isinstance(body, dict) and "output" in body
    assert missing == 404
