"""Configuration of the summarizers: ``SUMMARIZATION_MODEL_ID`` builds an LLM summarizer (here against the loopback
`FakeLLMServer`) that the manager really calls, ``SUMMARIZATION_MODEL_PREFERENCE`` is a comma list tried in order,
the extractive summarizer stays the last fallback, and every bad value raises `ConfigError` naming the variable."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chainsum.manager import ConfigError, ManagerConfig, summarizer_specs, summarizers_from_config
from chainsum.manager._manager import ContextManager
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.summarize.llm import AnthropicSummarizer, OpenAISummarizer
from chainsum.testing import FakeLLMServer
from chainsum.testing.fake_llm import FakeRefusal, FakeText
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
