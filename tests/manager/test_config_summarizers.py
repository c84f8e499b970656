"""Configuration of the summarizers: ``SUMMARIZATION_MODEL_ID`` builds an LLM summarizer (here against the loopback
`FakeLLMServer`) that the manager really calls, ``SUMMARIZATION_MODEL_PREFERENCE`` is a comma list tried in order,
the extractive summarizer stays the last fallback, and every bad value raises `ConfigError` naming the variable."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest

from chainsum.manager import ConfigError, ContextManager, ManagerConfig, summarizer_specs, summarizers_from_config
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.summarize.llm import AnthropicSummarizer, BedrockSummarizer, GeminiSummarizer, OpenAISummarizer
from chainsum.testing import FakeLLMServer
from chainsum.testing.fake_llm import FakeRateLimit, FakeRefusal, FakeStall, FakeText
from manager.manager_support import SYSTEM, Dict, turn


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local endpoint needs no key
    with FakeLLMServer() as fake:
        yield fake


def _history() -> list[Dict]:
    hist: list[Dict] = [SYSTEM]
    for i in range(30):
        hist += turn(i)
    return hist


def _from_env(**env: str) -> ManagerConfig:
    return ManagerConfig.from_env({f"SUMMARIZATION_{k.upper()}": v for k, v in env.items()}, dotenv_path=None)


def test_model_id_builds_an_llm_summarizer_that_the_manager_calls(server: FakeLLMServer) -> None:
    server.script(FakeText(text="The user asked about src/mod_1.py; f_1 computes value 1."))
    config = _from_env(model_id="openai:fake-mini", base_url=server.openai_base_url)
    manager = ContextManager(config, context_window=4000, archive=MemoryArchive())
    assert [type(s) for s in manager.summarizers] == [OpenAISummarizer, ExtractiveSummarizer]
    prepared = manager.prepare_sync(_history())
    assert prepared.changed and prepared.record is not None
    assert [r.path for r in server.requests] == ["/v1/chat/completions"]
    request: Any = server.requests[0].json
    assert request["model"] == "fake-mini"
    assert "src/mod_1.py; f_1 computes value 1." in prepared.record.summary
    assert "State snapshot (extractive)" not in prepared.record.summary  # the model's summary, not the fallback


def test_a_bare_model_name_is_an_openai_compatible_model(server: FakeLLMServer) -> None:
    config = _from_env(model_id="my-local-model", base_url=server.openai_base_url)
    assert summarizer_specs(config) == ["openai:my-local-model"]
    manager = ContextManager(config, context_window=4000, archive=MemoryArchive())
    assert manager.prepare_sync(_history()).changed
    request: Any = server.requests[0].json
    assert request["model"] == "my-local-model"


def test_an_ollama_tag_with_a_colon_is_a_model_not_a_provider(server: FakeLLMServer) -> None:
    config = _from_env(model_id="llama3:8b", base_url=server.openai_base_url)
    assert summarizer_specs(config) == ["openai:llama3:8b"]
    assert summarizer_specs(_from_env(model_id="Anthropic:claude-x")) == ["Anthropic:claude-x"]
    assert summarizer_specs(_from_env(model_id="ft:gpt-4o-mini:acme::x1")) == ["openai:ft:gpt-4o-mini:acme::x1"]
    manager = ContextManager(config, context_window=4000, archive=MemoryArchive())
    assert manager.prepare_sync(_history()).changed
    request: Any = server.requests[0].json
    assert request["model"] == "llama3:8b"


def test_model_preference_is_tried_in_order_and_overrides_model_id(server: FakeLLMServer) -> None:
    server.script(FakeRefusal())  # the first model declines: the next one is asked
    config = _from_env(
        model_preference=" openai:first , openai:second,anthropic:third ",
        model_id="openai:ignored",
        base_url=server.openai_base_url,
    )
    assert summarizer_specs(config) == ["openai:first", "openai:second", "anthropic:third"]
    manager = ContextManager(config, context_window=4000, archive=MemoryArchive())
    kinds = [type(s) for s in manager.summarizers]
    assert kinds == [OpenAISummarizer, OpenAISummarizer, AnthropicSummarizer, ExtractiveSummarizer]
    prepared = manager.prepare_sync(_history())
    assert prepared.record is not None and "A fake summary." in prepared.record.summary
    models: list[Any] = [r.json for r in server.requests]
    assert [m["model"] for m in models] == ["first", "second"]


def test_when_every_model_fails_the_extractive_summarizer_still_summarizes(server: FakeLLMServer) -> None:
    server.default = FakeRefusal()
    config = _from_env(model_preference="openai:a,openai:b", base_url=server.openai_base_url)
    prepared = ContextManager(config, context_window=4000, archive=MemoryArchive()).prepare_sync(_history())
    assert prepared.record is not None and "State snapshot (extractive)" in prepared.record.summary
    assert len(server.requests) == 2


def test_no_model_means_the_extractive_summarizer_alone() -> None:
    for config in (ManagerConfig(), _from_env(model_id="extractive"), _from_env(model_preference="extractive")):
        assert [type(s) for s in summarizers_from_config(config)] == [ExtractiveSummarizer]
    assert [type(s) for s in summarizers_from_config(_from_env(model_preference="extractive,openai:m"))] == [
        ExtractiveSummarizer,
        OpenAISummarizer,
    ]


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SUMMARIZATION_MODEL_ID", "openai:"),
        ("SUMMARIZATION_MODEL_ID", ":model"),
        ("SUMMARIZATION_MODEL_PREFERENCE", "openai:a,:b"),
        ("SUMMARIZATION_MODEL_PREFERENCE", "openai:a, anthropic:"),
    ],
)
def test_a_bad_summarizer_name_raises_config_error_naming_the_variable(variable: str, value: str) -> None:
    config = ManagerConfig.from_env({variable: value}, dotenv_path=None)
    with pytest.raises(ConfigError) as caught:
        ContextManager(config, context_window=4000)  # at start, not at the first summarization
    assert caught.value.name == variable
    assert variable in str(caught.value)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("SUMMARIZATION_SUMMARIZER_TIMEOUT_SECONDS", "0"),
        ("SUMMARIZATION_SUMMARIZER_TIMEOUT_SECONDS", "-1"),
        ("SUMMARIZATION_SUMMARIZER_TIMEOUT_SECONDS", "soon"),
        ("SUMMARIZATION_SUMMARIZER_TIMEOUT_SECONDS", "inf"),
        ("SUMMARIZATION_SUMMARIZER_TIMEOUT_SECONDS", "nan"),
        ("SUMMARIZATION_RECALL_TOKEN_RATIO", "0.6"),
        ("SUMMARIZATION_RECALL_TOKEN_RATIO", "-0.1"),
        ("SUMMARIZATION_SUMMARY_ROLE", "assistant"),
        ("SUMMARIZATION_LOCK_WAIT_SECONDS", "-1"),
        ("SUMMARIZATION_STRATEGY", "sliding"),
        ("SUMMARIZATION_CONTEXT_WINDOW", "0"),
        ("SUMMARIZATION_SUMMARY_RATIO", "0.9"),
    ],
)
def test_a_bad_value_raises_config_error_naming_the_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ManagerConfig.from_env({variable: value}, dotenv_path=None)
    assert caught.value.name == variable and caught.value.value == value
    assert variable in str(caught.value)


def test_the_new_fields_read_from_the_environment() -> None:
    config = _from_env(summarizer_timeout_seconds="2.5", recall_token_ratio="0", summary_role="system")
    assert (config.summarizer_timeout_seconds, config.recall_token_ratio, config.summary_role) == (2.5, 0.0, "system")
    assert ManagerConfig.from_env(config.to_env(), dotenv_path=None) == config


_CLOUD_VARIABLES = (
    "AWS_PROFILE",
    "AWS_REGION",
    "AWS_SESSION_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
)


@pytest.fixture
def cloud_env(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Each SDK pointed at the fake by its own standard variables (dummy AWS credentials, a Gemini key, the OpenAI
    SDK's base URL), nothing from this machine's configuration; also returned, for `ManagerConfig.from_env`."""
    for name in _CLOUD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": "/nonexistent/config",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": server.base_url,
        "GEMINI_API_KEY": "test-key",
        "GOOGLE_GEMINI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": "test-key",
        "OPENAI_BASE_URL": server.openai_base_url,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_the_events_specs_bedrock_model_id_works_as_written(
    server: FakeLLMServer, cloud_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``SUMMARIZATION_MODEL_ID=us.amazon.nova-micro-v1:0``, as specs/summarizing-manager-events.md sets it, is a
    Bedrock model: the compaction is summarized by the Bedrock fake, reached through the AWS SDK's own endpoint
    variable."""
    monkeypatch.setenv("SUMMARIZATION_MODEL_ID", "us.amazon.nova-micro-v1:0")
    config = ManagerConfig.from_env(dotenv_path=None)
    assert summarizer_specs(config) == ["bedrock:us.amazon.nova-micro-v1:0"]
    server.script(FakeText(text="Bedrock says: the user asked about src/mod_1.py."))
    manager = ContextManager(config, context_window=4000, archive=MemoryArchive())
    assert [type(s) for s in manager.summarizers] == [BedrockSummarizer, ExtractiveSummarizer]
    prepared = manager.prepare_sync(_history())
    assert prepared.record is not None and "Bedrock says: the user asked about src/mod_1.py." in prepared.record.summary
    assert {r.path for r in server.requests} == {"/model/us.amazon.nova-micro-v1%3A0/converse"}
    assert {r.model for r in server.requests} == {"us.amazon.nova-micro-v1:0"}


def test_a_preference_list_across_bedrock_gemini_and_openai_retries_then_falls_back(
    server: FakeLLMServer, cloud_env: dict[str, str]
) -> None:
    """Bedrock throttled (a rate limit: retried once, then given up), Gemini refusing (never retried), OpenAI
    answering: the manager's retry and fallback rules hold for the new providers as for the others."""
    server.script(FakeRateLimit(), FakeRateLimit(), FakeRefusal(), FakeText(text="OpenAI wrote this summary."))
    config = ManagerConfig.from_env(
        {**cloud_env, "SUMMARIZATION_MODEL_PREFERENCE": "us.amazon.nova-micro-v1:0, gemini-2.5-flash, openai:mini"},
        dotenv_path=None,
    )
    manager = ContextManager(config, context_window=4000, archive=MemoryArchive())
    kinds = [type(s) for s in manager.summarizers]
    assert kinds == [BedrockSummarizer, GeminiSummarizer, OpenAISummarizer, ExtractiveSummarizer]
    prepared = manager.prepare_sync(_history())
    assert prepared.record is not None and "OpenAI wrote this summary." in prepared.record.summary
    assert [r.path for r in server.requests[:4]] == [
        "/model/us.amazon.nova-micro-v1%3A0/converse",
        "/model/us.amazon.nova-micro-v1%3A0/converse",
        "/v1/models/gemini-2.5-flash:generateContent",
        "/v1/chat/completions",
    ]


@pytest.mark.slow
def test_when_bedrock_and_gemini_time_out_the_extractive_summarizer_still_summarizes(
    server: FakeLLMServer, cloud_env: dict[str, str]
) -> None:
    server.default = FakeStall(seconds=30)
    # the SDKs imported ahead: a first import can take seconds on a loaded machine, and would count as the model's
    importlib.import_module("boto3.session")
    importlib.import_module("google.genai")
    config = ManagerConfig.from_env(
        {
            **cloud_env,
            "SUMMARIZATION_MODEL_PREFERENCE": "bedrock:amazon.nova-lite-v1:0,gemini:gemini-2.5-flash",
            "SUMMARIZATION_SUMMARIZER_TIMEOUT_SECONDS": "3",
        },
        dotenv_path=None,
    )
    prepared = ContextManager(config, context_window=4000, archive=MemoryArchive()).prepare_sync(_history())
    assert prepared.record is not None and "State snapshot (extractive)" in prepared.record.summary
    assert {r.model for r in server.requests} == {"amazon.nova-lite-v1:0", "gemini-2.5-flash"}
