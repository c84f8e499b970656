"""`GeminiSummarizer` beyond the cases every provider shares (tests/summarize/llm/test_providers.py): Google's error
statuses and retry hints, the SDK's own environment variables, Vertex AI, and a caller's client. The
``google-genai`` SDK talks real HTTP to the loopback `FakeLLMServer`."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator

import httpx
import pytest
from google import genai
from google.genai import errors

from chainsum.errors import MissingDependencyError, SummarizerError
from chainsum.summarize.llm import GeminiSummarizer, make_summarizer
from chainsum.summarize.llm._gemini import _api_error  # pyright: ignore[reportPrivateUsage]
from chainsum.testing.fake_llm import FakeLLMServer, FakeRateLimit, FakeStatus, FakeText

MODEL = "gemini-2.5-flash"
_VARIABLES = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_ENTERPRISE",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def failure(summarizer: GeminiSummarizer) -> SummarizerError:
    with pytest.raises(SummarizerError) as caught:
        asyncio.run(summarizer("transcript"))
    return caught.value


@pytest.mark.parametrize(
    ("status", "kind", "words"),
    [
        (401, "invalid", "auth: HTTP 401 UNAUTHENTICATED"),
        (403, "invalid", "auth: HTTP 403 PERMISSION_DENIED"),
        (400, "invalid", "HTTP 400: INVALID_ARGUMENT"),
        (404, "invalid", "HTTP 404: NOT_FOUND"),
        (429, "rate_limit", "HTTP 429: RESOURCE_EXHAUSTED"),
        (500, "transport", "HTTP 500: INTERNAL"),
        (503, "transport", "HTTP 503: UNAVAILABLE"),
        (504, "transport", "HTTP 504: DEADLINE_EXCEEDED"),
    ],
)
def test_google_statuses_map_onto_the_failure_classes(
    server: FakeLLMServer, status: int, kind: str, words: str
) -> None:
    server.script(FakeStatus(status=status, message="the service said no"))
    error = failure(GeminiSummarizer(MODEL, base_url=server.base_url, api_key="k"))
    assert error.kind == kind
    assert words in str(error) and "the service said no" in str(error)
    assert len(server.requests) == 1  # the SDK's own retries are off


def test_the_wait_of_a_rate_limit_comes_from_retry_info_without_a_header() -> None:
    body = {
        "error": {
            "code": 429,
            "message": "Quota exceeded",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12.5s"},
            ],
        }
    }
    error = _api_error(errors.ClientError(429, body, None))
    assert (error.kind, error.retry_after) == ("rate_limit", 12.5)
    bare = _api_error(errors.ClientError(429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}, None))
    assert (bare.kind, bare.retry_after) == ("rate_limit", None)


def test_the_header_wait_wins_over_retry_info(server: FakeLLMServer) -> None:
    server.script(FakeRateLimit(retry_after="Wed, 21 Oct 2015 07:28:00 GMT"))  # a date: no RetryInfo, header only
    error = failure(GeminiSummarizer(MODEL, base_url=server.base_url, api_key="k"))
    assert (error.kind, error.retry_after) == ("rate_limit", 0.0)


@pytest.mark.parametrize("variable", ["GEMINI_API_KEY", "GOOGLE_API_KEY"])
def test_the_key_comes_from_the_sdks_variables(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "from-env")
    asyncio.run(GeminiSummarizer(MODEL, base_url=server.base_url)("t"))
    assert server.requests[0].headers["x-goog-api-key"] == "from-env"


def test_a_custom_endpoint_needs_no_key(server: FakeLLMServer) -> None:
    asyncio.run(GeminiSummarizer(MODEL, base_url=server.base_url)("t"))
    assert server.requests[0].headers["x-goog-api-key"] == "chainsum-no-key"


def test_the_endpoint_can_come_from_google_gemini_base_url(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.base_url)
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    server.script(FakeText(text="via the SDK's variable"))
    assert asyncio.run(GeminiSummarizer(MODEL)("t")) == "via the SDK's variable"
    assert server.requests[0].model == MODEL


def test_no_key_anywhere_is_a_configuration_failure() -> None:
    error = failure(GeminiSummarizer(MODEL))  # fails building the client, before any request
    assert error.kind == "invalid"
    assert "Gemini client" in str(error)


def test_vertex_ai_with_an_api_key(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    server.script(FakeText(text="from vertex"))
    assert asyncio.run(GeminiSummarizer(MODEL, base_url=server.base_url, api_key="vertex-key")("t")) == "from vertex"
    [request] = server.requests
    assert request.path == f"/v1beta1/publishers/google/models/{MODEL}:generateContent"


def test_vertex_ai_without_credentials_is_a_configuration_failure(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/adc.json")
    summarizer = GeminiSummarizer(MODEL, base_url=server.base_url, vertexai=True, project="p", location="us-central1")
    error = failure(summarizer)
    assert error.kind == "invalid"
    assert server.requests == []


def test_a_callers_client_is_used(server: FakeLLMServer) -> None:
    async def scenario() -> str:
        async with httpx.AsyncClient() as http:  # httpx, not aiohttp: see GeminiSummarizer.client
            options = genai.types.HttpOptions(base_url=server.base_url, httpx_async_client=http)
            client = genai.Client(api_key="callers-key", http_options=options)
            summarizer = GeminiSummarizer(MODEL, client=client)
            with pytest.raises(SummarizerError):
                await summarizer("t")
            text = await summarizer("t")
            client.close()
            return text

    server.script(FakeStatus(status=500), FakeText(text="reused"))
    assert asyncio.run(scenario()) == "reused"
    assert len(server.requests) == 2  # one per call: no retries on the caller's client either
    assert server.requests[0].headers["x-goog-api-key"] == "callers-key"


def test_make_summarizer_builds_gemini_from_the_prefix_or_the_bare_name() -> None:
    assert make_summarizer(f"gemini:{MODEL}") == GeminiSummarizer(MODEL)
    assert make_summarizer(MODEL) == GeminiSummarizer(MODEL)
    assert make_summarizer("Gemini:gemini-exp", base_url="http://127.0.0.1:1") == GeminiSummarizer(
        "gemini-exp", base_url="http://127.0.0.1:1"
    )


def test_missing_sdk_is_reported_when_built_and_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    summarizer = GeminiSummarizer(MODEL, base_url="http://127.0.0.1:9")
    monkeypatch.setitem(sys.modules, "google.genai", None)  # makes the import fail as if not installed
    with pytest.raises(MissingDependencyError, match=r'pip install "chainsum\[gemini\]"'):
        GeminiSummarizer(MODEL)
    with pytest.raises(MissingDependencyError, match=r"chainsum\[gemini\]"):
        asyncio.run(summarizer("t"))
