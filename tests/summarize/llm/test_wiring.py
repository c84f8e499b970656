"""How the LLM summarizers are wired: missing extras, keys, clients the caller owns."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator

import anthropic
import openai
import pytest

from chainsum.errors import MissingDependencyError, SummarizerError
from chainsum.summarize.llm import AnthropicSummarizer, LiteLLMSummarizer, OpenAISummarizer, make_summarizer
from chainsum.testing.fake_llm import FakeLLMServer, FakeStatus, FakeText

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.mark.parametrize(
    ("package", "build"),
    [
        ("openai", lambda: OpenAISummarizer("m")),
        ("anthropic", lambda: AnthropicSummarizer("m")),
        ("litellm", lambda: LiteLLMSummarizer("m")),
        ("openai", lambda: make_summarizer("openai:m")),
    ],
)
def test_missing_sdk_is_reported_when_built(monkeypatch: pytest.MonkeyPatch, package: str, build: object) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # makes `import package` fail as if not installed
    assert callable(build)
    with pytest.raises(MissingDependencyError) as caught:
        build()
    assert caught.value.package == package
    assert f'pip install "chainsum[{package}]"' in str(caught.value)
    assert isinstance(caught.value, ImportError)


@pytest.mark.parametrize("package", ["openai", "anthropic", "litellm"])
def test_missing_sdk_is_reported_when_called(monkeypatch: pytest.MonkeyPatch, package: str) -> None:
    summarizer = {"openai": OpenAISummarizer, "anthropic": AnthropicSummarizer, "litellm": LiteLLMSummarizer}[package](
        "m", base_url="http://127.0.0.1:9"
    )
    monkeypatch.setitem(sys.modules, package, None)  # uninstalled after the summarizer was built
    with pytest.raises(MissingDependencyError, match=f"chainsum\\[{package}\\]"):
        asyncio.run(summarizer("t"))


def test_a_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert asyncio.run(OpenAISummarizer("m", base_url=server.openai_base_url)("t")) == "A fake summary."
    assert server.requests[0].headers["authorization"] == "Bearer chainsum-no-key"


def test_the_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, server: FakeLLMServer) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    asyncio.run(OpenAISummarizer("m", base_url=server.openai_base_url)("t"))
    assert server.requests[0].headers["authorization"] == "Bearer from-env"


def test_no_key_anywhere_is_a_configuration_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    with pytest.raises(SummarizerError) as caught:
        asyncio.run(OpenAISummarizer("m")("t"))  # fails building the client, before any request
    assert caught.value.kind == "invalid"


def test_a_callers_openai_client_is_used_without_its_retries(server: FakeLLMServer) -> None:
    async def scenario() -> str:
        async with openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k", max_retries=5) as client:
            summarizer = OpenAISummarizer("m", client=client)
            with pytest.raises(SummarizerError):
                await summarizer("t")
            return await summarizer("t")

    server.script(FakeStatus(status=500), FakeText(text="reused"))
    assert asyncio.run(scenario()) == "reused"
    assert len(server.requests) == 2  # one per call: the client's own 5 retries were off


def test_a_callers_anthropic_client_is_used_without_its_retries(server: FakeLLMServer) -> None:
    async def scenario() -> str:
        async with anthropic.AsyncAnthropic(base_url=server.base_url, api_key="k", max_retries=5) as client:
            summarizer = AnthropicSummarizer("m", client=client)
            with pytest.raises(SummarizerError):
                await summarizer("t")
            return await summarizer("t")

    server.script(FakeStatus(status=529), FakeText(text="reused"))
    assert asyncio.run(scenario()) == "reused"
    assert len(server.requests) == 2


def test_reasoning_model_settings(server: FakeLLMServer) -> None:
    summarizer = OpenAISummarizer(
        "o-test",
        base_url=server.openai_base_url,
        api_key="k",
        max_tokens=99,
        max_tokens_field="max_completion_tokens",
        temperature=None,
    )
    asyncio.run(summarizer("t"))
    body = server.requests[0].json
    assert isinstance(body, dict)
    assert body["max_completion_tokens"] == 99
    assert "max_tokens" not in body
    assert "temperature" not in body


def test_litellm_without_temperature(server: FakeLLMServer) -> None:
    summarizer = LiteLLMSummarizer("openai/m", base_url=server.openai_base_url, api_key="k", temperature=None)
    asyncio.run(summarizer("t"))
    body = server.requests[0].json
    assert isinstance(body, dict)
    assert "temperature" not in body
