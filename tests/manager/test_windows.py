"""`context_window(model_id)`: exact names, provider prefixes, dated snapshots and tags, overrides, unknown ids."""

from __future__ import annotations

import pytest

from chainsum.errors import ChainsumError
from chainsum.manager._windows import (
    CONTEXT_WINDOWS,
    UnknownModelError,
    context_window,
    known_window,
    normalize_model_id,
)


@pytest.mark.parametrize(
    ("model_id", "tokens"),
    [
        # exact
        ("gpt-4o", 128_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1", 1_047_576),
        ("o1", 200_000),
        ("o1-mini", 128_000),
        ("o3-mini", 200_000),
        ("o4-mini", 200_000),
        ("gpt-5", 272_000),
        ("gemini-1.5-pro", 2_097_152),
        ("gemini-2.5-flash", 1_048_576),
        ("gpt-3.5-turbo", 16_385),
        # dated snapshots and variants: the longest known prefix
        ("gpt-4o-2024-08-06", 128_000),
        ("gpt-4o-mini-2024-07-18", 128_000),
        ("gpt-4.1-mini-2025-04-14", 1_047_576),
        ("gpt-4.1-nano", 1_047_576),
        ("o1-mini-2024-09-12", 128_000),
        ("gpt-5-mini-2025-08-07", 272_000),
        ("gpt-5-chat-latest", 128_000),
        ("gpt-5.1", 272_000),
        ("claude-3-5-sonnet-20241022", 200_000),
        ("claude-3-7-sonnet-latest", 200_000),
        ("claude-sonnet-4-20250514", 200_000),
        ("claude-sonnet-4-5-20250929", 200_000),
        ("claude-opus-4-1-20250805", 200_000),
        ("claude-haiku-4-5", 200_000),
        ("claude-2.1", 100_000),
        ("gemini-2.5-pro-preview-05-06", 1_048_576),
        ("gemini-2.0-flash-lite-001", 1_048_576),
        # provider prefixes
        ("openai/gpt-4o", 128_000),
        ("anthropic/claude-3-5-haiku-20241022", 200_000),
        ("openrouter/anthropic/claude-3.5-sonnet", 200_000),
        ("models/gemini-2.5-pro", 1_048_576),
        ("ollama/llama3.1", 131_072),
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", 200_000),
        ("us.amazon.nova-micro-v1:0", 128_000),
        ("meta.llama3-1-70b-instruct-v1:0", 131_072),
        # open models, Hugging Face and Ollama spellings
        ("meta-llama/Llama-3.1-8B-Instruct", 131_072),
        ("meta-llama/Meta-Llama-3-8B-Instruct", 8_192),
        ("llama3.2:3b", 131_072),
        ("llama3.3:70b-instruct-q4_K_M", 131_072),
        ("Qwen/Qwen2.5-7B-Instruct", 32_768),
        ("qwen3:8b", 32_768),
        ("mistralai/Mistral-7B-Instruct-v0.3", 32_768),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", 32_768),
        ("mixtral:8x22b", 65_536),
        ("mixtral:8x7b", 32_768),
        ("mistral-nemo:12b", 131_072),
        ("deepseek-ai/DeepSeek-V3-0324", 131_072),
        ("deepseek-r1:14b", 131_072),
        ("google/gemma-2-9b-it", 8_192),
        ("gemma3:27b", 131_072),
        ("gemma3:1b", 32_768),
        ("google/gemma-3-12b-it", 131_072),
        ("microsoft/Phi-3-mini-4k-instruct", 4_096),
        ("microsoft/Phi-3-mini-128k-instruct", 131_072),
        ("microsoft/phi-4", 16_384),
        ("phi4-mini", 131_072),
        ("GPT-4O", 128_000),
    ],
)
def test_known_models(model_id: str, tokens: int) -> None:
    assert context_window(model_id) == tokens


def test_prefix_must_end_at_a_separator() -> None:
    """``gpt-4`` must not answer for ``gpt-4o`` (it would, with a bare prefix, if ``gpt-4o`` were missing)."""
    table = {"gpt-4": 8192}
    with pytest.raises(UnknownModelError):
        context_window("gpt-4o", table=table)
    assert context_window("gpt-4-0613", table=table) == 8192


def test_overrides_add_and_replace() -> None:
    assert context_window("my-finetune-v2", {"my-finetune": 16_000}) == 16_000
    assert context_window("llama3.1:8b", {"llama3.1:8b": 8192}) == 8192  # Ollama's num_ctx, say
    assert context_window("llama3.1:70b", {"llama3.1:8b": 8192}) == 131_072
    assert context_window("GPT-4o", {"gpt-4o": 64_000}) == 64_000
    assert context_window("vllm/served-model", {"Served-Model": 4096}) == 4096


def test_a_table_of_ones_own() -> None:
    table = {"house-model": 50_000}
    assert context_window("house-model-2025", table=table) == 50_000
    with pytest.raises(UnknownModelError):
        context_window("gpt-4o", table=table)


def test_bad_override_values() -> None:
    for bad in (0, -5, True):
        with pytest.raises(ValueError, match="positive integer"):
            context_window("gpt-4o", {"x": bad})


def test_unknown_model_lists_close_names() -> None:
    with pytest.raises(UnknownModelError) as info:
        context_window("gtp-4o")
    err = info.value
    assert isinstance(err, ChainsumError)
    assert isinstance(err, LookupError)
    assert err.model_id == "gtp-4o"
    assert "gpt-4o" in err.close
    assert "'gtp-4o'" in str(err)
    assert "gpt-4o" in str(err)
    assert "SUMMARIZATION_CONTEXT_WINDOW" in str(err)


def test_unknown_model_with_nothing_close() -> None:
    with pytest.raises(UnknownModelError) as info:
        context_window("zzzzzzzz")
    assert info.value.close == ()
    assert "close names" not in str(info.value)


def test_normalize_model_id() -> None:
    assert normalize_model_id(" OpenAI/GPT-4o ") == ["openai/gpt-4o", "gpt-4o"]
    assert normalize_model_id("us.anthropic.claude-3-haiku-20240307-v1:0") == [
        "us.anthropic.claude-3-haiku-20240307-v1:0",
        "claude-3-haiku-20240307-v1:0",
    ]


def test_table_is_read_only_lower_case_and_positive() -> None:
    with pytest.raises(TypeError):
        CONTEXT_WINDOWS["x"] = 1  # type: ignore[index]
    for name, tokens in CONTEXT_WINDOWS.items():
        assert name == name.lower().strip()
        assert tokens >= 4096


@pytest.mark.parametrize("window", [0, -3])
def test_a_window_that_is_not_positive_says_so(window: int) -> None:
    """Not "unknown", and not the budget rule's ">= 0": a window holds at least one token."""
    from chainsum.manager import ContextManager, ManagerConfig

    with pytest.raises(ChainsumError, match=f"context_window must be a positive number of tokens, got {window}"):
        ContextManager(ManagerConfig(), context_window=window)


def test_known_window_answers_the_table_without_an_error_search() -> None:
    """What the proxy asks of every request's model: the window where the table knows it, None where it does not
    (no closest-name search: it cost 0.14 ms a request for a local model), the same as `context_window`."""
    assert known_window("claude-sonnet-4-6") == context_window("claude-sonnet-4-6")
    assert known_window("gpt-4o-2024-08-06") == context_window("gpt-4o-2024-08-06")
    assert known_window("my-local-llama-70b-instruct") is None
    with pytest.raises(UnknownModelError):
        context_window("my-local-llama-70b-instruct")
