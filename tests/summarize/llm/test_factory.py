"""`make_summarizer`: the CLI's ``--summarizer`` values."""

from __future__ import annotations

import pytest

from chainsum.errors import ChainsumError
from chainsum.summarize import ExtractiveSummarizer
from chainsum.summarize.llm import (
    AnthropicSummarizer,
    LiteLLMSummarizer,
    OpenAISummarizer,
    SummarizerSpecError,
    make_summarizer,
)


def test_extractive() -> None:
    assert isinstance(make_summarizer("extractive"), ExtractiveSummarizer)
    assert isinstance(make_summarizer(" Extractive "), ExtractiveSummarizer)


def test_providers_and_models() -> None:
    openai = make_summarizer("openai:gpt-4o-mini", base_url="http://127.0.0.1:1/v1")
    assert openai == OpenAISummarizer("gpt-4o-mini", base_url="http://127.0.0.1:1/v1")
    assert make_summarizer("anthropic:claude-haiku") == AnthropicSummarizer("claude-haiku")
    assert make_summarizer("litellm:ollama/llama3") == LiteLLMSummarizer("ollama/llama3")


def test_model_names_keep_their_colons() -> None:
    summarizer = make_summarizer("openai:llama3:8b", base_url="http://127.0.0.1:11434/v1")
    assert isinstance(summarizer, OpenAISummarizer)
    assert summarizer.model == "llama3:8b"


@pytest.mark.parametrize(
    "spec", ["", "gpt-4o", "mistral:large", "openai:", "openai: ", "bedrock:", "gemini: ", "us.nova:0"]
)
def test_bad_specs_name_the_valid_forms(spec: str) -> None:
    with pytest.raises(SummarizerSpecError) as caught:
        make_summarizer(spec)
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, ChainsumError)
    message = str(caught.value)
    for form in ("extractive", "openai:MODEL", "anthropic:MODEL", "litellm:MODEL", "bedrock:MODEL", "gemini:MODEL"):
        assert form in message
    assert "us.amazon.nova-micro-v1:0" in message  # the bare forms are named too


def test_base_url_is_refused_for_extractive() -> None:
    with pytest.raises(SummarizerSpecError, match="base_url"):
        make_summarizer("extractive", base_url="http://127.0.0.1:1")
