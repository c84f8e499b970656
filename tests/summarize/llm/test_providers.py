"""The five LLM summarizers against a real loopback server speaking each provider's API.

Every case runs for OpenAI (the SDK against ``/v1/chat/completions``), Anthropic (``/v1/messages``), LiteLLM
(routed to the OpenAI-compatible endpoint through ``api_base``), Bedrock (boto3 against ``/model/{id}/converse``
through ``endpoint_url``) and Gemini (``google-genai`` against ``.../models/{model}:generateContent`` through its
``base_url``), so the failure classes are the same whichever SDK carries the request. No mocks: the SDKs send real
HTTP to `chainsum.testing.fake_llm.FakeLLMServer`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from chainsum.errors import SummarizerError
from chainsum.summarize.llm import (
    DEFAULT_SYSTEM_PROMPT,
    AnthropicSummarizer,
    BedrockSummarizer,
    GeminiSummarizer,
    LiteLLMSummarizer,
    LLMSummarizerBase,
    OpenAISummarizer,
)
from chainsum.testing.fake_llm import (
    FakeEmpty,
    FakeLLMServer,
    FakeMalformed,
    FakeRateLimit,
    FakeRefusal,
    FakeReply,
    FakeStall,
    FakeStatus,
    FakeText,
    FakeWrongShape,
)

# LiteLLM fetches a remote cost map when imported unless told not to; tests never leave loopback.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TIMEOUT = 0.2  # client timeout for the stall case; the server stalls far longer


@dataclass(frozen=True)
class Provider:
    name: str
    build: Callable[..., LLMSummarizerBase]
    path: str
    sent_model: str


def _openai(server: FakeLLMServer, **options: Any) -> LLMSummarizerBase:
    return OpenAISummarizer("gpt-test", base_url=server.openai_base_url, api_key="test-key", **options)


def _anthropic(server: FakeLLMServer, **options: Any) -> LLMSummarizerBase:
    return AnthropicSummarizer("claude-test", base_url=server.base_url, api_key="test-key", **options)


def _litellm(server: FakeLLMServer, **options: Any) -> LLMSummarizerBase:
    return LiteLLMSummarizer("openai/lite-test", base_url=server.openai_base_url, api_key="test-key", **options)


def _bedrock(server: FakeLLMServer, **options: Any) -> LLMSummarizerBase:
    return BedrockSummarizer("us.amazon.nova-micro-v1:0", base_url=server.base_url, region="us-east-1", **options)


def _gemini(server: FakeLLMServer, **options: Any) -> LLMSummarizerBase:
    return GeminiSummarizer("gemini-test", base_url=server.base_url, api_key="test-key", **options)


PROVIDERS = [
    Provider("openai", _openai, "/v1/chat/completions", "gpt-test"),
    Provider("anthropic", _anthropic, "/v1/messages", "claude-test"),
    Provider("litellm", _litellm, "/v1/chat/completions", "lite-test"),
    Provider("bedrock", _bedrock, "/model/us.amazon.nova-micro-v1%3A0/converse", "us.amazon.nova-micro-v1:0"),
    Provider("gemini", _gemini, "/v1/models/gemini-test:generateContent", "gemini-test"),
]


@pytest.fixture(params=PROVIDERS, ids=[p.name for p in PROVIDERS])
def provider(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Provider:
    # boto3 signs with whatever credentials it finds: give it dummy ones, and nothing of this machine's own
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CONFIG_FILE": "/nonexistent",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
        "AWS_EC2_METADATA_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return request.param


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def failure(summarizer: LLMSummarizerBase, *replies: FakeReply, server: FakeLLMServer) -> SummarizerError:
    server.script(*replies)
    with pytest.raises(SummarizerError) as caught:
        asyncio.run(summarizer("transcript"))
    return caught.value


def test_success_returns_stripped_text_and_sends_the_request(provider: Provider, server: FakeLLMServer) -> None:
    server.script(FakeText(text="  The summary.\n"))
    summarizer = provider.build(server, max_tokens=321)

    assert asyncio.run(summarizer("<transcript>hello</transcript>")) == "The summary."

    [request] = server.requests
    assert request.path == provider.path
    assert request.model == provider.sent_model
    body = request.json
    assert isinstance(body, dict)
    if provider.name == "bedrock":
        assert body == {
            "system": [{"text": DEFAULT_SYSTEM_PROMPT}],
            "messages": [{"role": "user", "content": [{"text": "<transcript>hello</transcript>"}]}],
            "inferenceConfig": {"maxTokens": 321, "temperature": 0.0},
        }
    elif provider.name == "gemini":
        assert body == {
            "contents": [{"role": "user", "parts": [{"text": "<transcript>hello</transcript>"}]}],
            "systemInstruction": {"role": "user", "parts": [{"text": DEFAULT_SYSTEM_PROMPT}]},
            "generationConfig": {"maxOutputTokens": 321, "temperature": 0.0},
        }
    elif provider.name == "anthropic":
        assert body["max_tokens"] == 321
        assert body["system"] == DEFAULT_SYSTEM_PROMPT
        assert body["messages"] == [{"role": "user", "content": "<transcript>hello</transcript>"}]
    else:
        assert body["max_tokens"] == 321
        assert body["messages"] == [
            {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
            {"role": "user", "content": "<transcript>hello</transcript>"},
        ]
        assert body["temperature"] == 0


def test_custom_system_prompt_is_sent(provider: Provider, server: FakeLLMServer) -> None:
    asyncio.run(provider.build(server, system_prompt="Summarize the data.")("t"))
    body = server.requests[0].json
    assert isinstance(body, dict)
    if provider.name == "bedrock":
        assert body["system"] == [{"text": "Summarize the data."}]
    elif provider.name == "gemini":
        assert body["systemInstruction"]["parts"] == [{"text": "Summarize the data."}]
    elif provider.name == "anthropic":
        assert body["system"] == "Summarize the data."
    else:
        assert body["messages"][0] == {"role": "system", "content": "Summarize the data."}


def test_rate_limit_carries_retry_after_seconds(provider: Provider, server: FakeLLMServer) -> None:
    error = failure(provider.build(server), FakeRateLimit(retry_after="7"), server=server)
    assert error.kind == "rate_limit"
    assert error.retryable
    assert error.retry_after == 7.0
    assert len(server.requests) == 1  # the SDK did not retry on its own


def test_rate_limit_with_an_http_date(provider: Provider, server: FakeLLMServer) -> None:
    error = failure(provider.build(server), FakeRateLimit(retry_after="Wed, 21 Oct 2015 07:28:00 GMT"), server=server)
    assert error.kind == "rate_limit"
    assert error.retry_after == 0.0  # a date in the past means "now"


def test_rate_limit_without_header(provider: Provider, server: FakeLLMServer) -> None:
    error = failure(provider.build(server), FakeRateLimit(), server=server)
    assert (error.kind, error.retry_after) == ("rate_limit", None)


def test_stall_beyond_the_timeout_is_transport(provider: Provider, server: FakeLLMServer) -> None:
    error = failure(provider.build(server, timeout=TIMEOUT), FakeStall(seconds=30), server=server)
    assert error.kind == "transport"
    assert error.retryable


@pytest.mark.parametrize("status", [500, 503])
def test_server_error_is_transport_and_not_retried_by_the_sdk(
    provider: Provider, server: FakeLLMServer, status: int
) -> None:
    error = failure(provider.build(server), FakeStatus(status=status), server=server)
    assert error.kind == "transport"
    assert str(status) in str(error)
    assert len(server.requests) == 1


def test_client_error_is_invalid(provider: Provider, server: FakeLLMServer) -> None:
    error = failure(provider.build(server), FakeStatus(status=400, message="model not found"), server=server)
    assert error.kind == "invalid"
    assert not error.retryable


@pytest.mark.parametrize("no_content", [False, True], ids=["blank", "no-choices"])
def test_empty_reply_is_empty(provider: Provider, server: FakeLLMServer, no_content: bool) -> None:
    error = failure(provider.build(server), FakeEmpty(no_content=no_content), server=server)
    assert error.kind == "empty"


def test_malformed_json_is_invalid(provider: Provider, server: FakeLLMServer) -> None:
    error = failure(provider.build(server), FakeMalformed(), server=server)
    assert error.kind == "invalid"
    assert not error.retryable


@pytest.mark.filterwarnings(
    # LiteLLM dumps the lenient OpenAI model it built before rejecting it; only its serializer warning is expected
    "ignore:Pydantic serializer warnings:UserWarning"
)
def test_wrong_shape_is_invalid(provider: Provider, server: FakeLLMServer) -> None:
    error = failure(provider.build(server), FakeWrongShape(), server=server)
    assert error.kind == "invalid"


def test_refusal_is_refused(provider: Provider, server: FakeLLMServer) -> None:
    error = failure(provider.build(server), FakeRefusal(), server=server)
    assert error.kind == "refused"
    assert not error.retryable


def test_retry_succeeds_after_one_rate_limit(provider: Provider, server: FakeLLMServer) -> None:
    server.script(FakeRateLimit(retry_after="0"), FakeText(text="second time"))
    assert asyncio.run(provider.build(server, retries=1)("t")) == "second time"
    assert len(server.requests) == 2


def test_retry_after_a_server_error_uses_backoff(provider: Provider, server: FakeLLMServer) -> None:
    server.script(FakeStatus(status=502), FakeText(text="ok"))
    assert asyncio.run(provider.build(server, retries=2, backoff=0.0)("t")) == "ok"
    assert len(server.requests) == 2


def test_validation_failures_are_not_retried(provider: Provider, server: FakeLLMServer) -> None:
    error = failure(provider.build(server, retries=3, backoff=0.0), FakeMalformed(), server=server)
    assert error.kind == "invalid"
    assert len(server.requests) == 1


def test_retries_give_up_after_the_last_attempt(provider: Provider, server: FakeLLMServer) -> None:
    error = failure(
        provider.build(server, retries=1, backoff=0.0), FakeStatus(), FakeStatus(), FakeText(), server=server
    )
    assert error.kind == "transport"
    assert len(server.requests) == 2


def test_connection_refused_is_transport(provider: Provider) -> None:
    with FakeLLMServer() as stopped:
        base_url = stopped.base_url
    # the server has stopped: its port now refuses connections
    summarizer = provider.build(_Dead(base_url), timeout=TIMEOUT)
    with pytest.raises(SummarizerError) as caught:
        asyncio.run(summarizer("t"))
    assert caught.value.kind == "transport"


@dataclass(frozen=True)
class _Dead:
    """Stands in for a server in `Provider.build` with the addresses of one that has stopped."""

    base_url: str

    @property
    def openai_base_url(self) -> str:
        return self.base_url + "/v1"


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="retries"):
        OpenAISummarizer("m", retries=-1)
    with pytest.raises(ValueError, match="timeout"):
        AnthropicSummarizer("m", timeout=0)
    with pytest.raises(ValueError, match="max_tokens"):
        LiteLLMSummarizer("m", max_tokens=0)
    with pytest.raises(ValueError, match="timeout"):
        BedrockSummarizer("m", timeout=-1)
    with pytest.raises(ValueError, match="retries"):
        GeminiSummarizer("m", retries=-2)
