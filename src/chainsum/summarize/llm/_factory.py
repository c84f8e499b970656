"""`make_summarizer`: a summarizer from the short spec the CLI's ``--summarizer`` takes."""

from __future__ import annotations

from typing import assert_never

from ...errors import ChainsumError
from .._protocol import Summarizer
from ._anthropic import AnthropicSummarizer
from ._bedrock import BedrockSummarizer
from ._gemini import GeminiSummarizer
from ._ids import SUMMARIZER_PROVIDERS, split_spec
from ._litellm import LiteLLMSummarizer
from ._openai import OpenAISummarizer

__all__ = ["SUMMARIZER_PROVIDERS", "SUMMARIZER_SPECS", "SummarizerSpecError", "make_summarizer"]

SUMMARIZER_SPECS = (
    "extractive",
    *(f"{p}:MODEL" for p in SUMMARIZER_PROVIDERS),
    "a Bedrock model id (us.amazon.nova-micro-v1:0)",
    "a Gemini model (gemini-2.5-flash)",
)
"""The accepted forms, in the order error messages and help texts list them: the last two need no prefix."""


class SummarizerSpecError(ChainsumError, ValueError):
    """A ``--summarizer`` value that names no summarizer; the message lists the valid forms."""

    def __init__(self, spec: str, reason: str) -> None:
        self.spec = spec
        super().__init__(f"bad summarizer {spec!r}: {reason}; use one of: {', '.join(SUMMARIZER_SPECS)}")


def make_summarizer(spec: str, *, base_url: str | None = None) -> Summarizer:
    """Build the summarizer `spec` names.

    ``extractive`` is the deterministic default that needs no model; ``PROVIDER:MODEL`` builds an LLM summarizer,
    splitting at the first colon only, so model names with colons (Ollama's ``llama3:8b``) pass through. A Bedrock
    model id (``us.amazon.nova-micro-v1:0``, ``anthropic.claude-...``) or a ``gemini-...`` model needs no prefix
    (`chainsum.summarize.llm._ids` says which shapes count). Credentials come from each provider's own
    environment; `base_url` points an LLM summarizer at another endpoint (vLLM, Ollama, a gateway, a Bedrock VPC
    endpoint) and makes no sense for ``extractive``, which rejects it rather than ignore it.
    Raises `SummarizerSpecError` for anything else, and `MissingDependencyError` when the provider's extra is not
    installed.
    """
    text = spec.strip()
    if text.lower() == "extractive":
        if base_url is not None:
            raise SummarizerSpecError(spec, "base_url applies only to LLM summarizers")
        from .._extractive import ExtractiveSummarizer  # imported late: the llm package stays a leaf of summarize

        return ExtractiveSummarizer()
    found = split_spec(text)
    if found is None:
        name, sep, _ = text.partition(":")
        reason = f"unknown provider {name.strip().lower()!r}" if sep else "unknown summarizer" if text else "empty"
        raise SummarizerSpecError(spec, reason)
    provider, model = found
    if not model:
        raise SummarizerSpecError(spec, "no model after the colon")
    match provider:
        case "openai":
            return OpenAISummarizer(model, base_url=base_url)
        case "anthropic":
            return AnthropicSummarizer(model, base_url=base_url)
        case "litellm":
            return LiteLLMSummarizer(model, base_url=base_url)
        case "bedrock":
            return BedrockSummarizer(model, base_url=base_url)
        case "gemini":
            return GeminiSummarizer(model, base_url=base_url)
        case _:
            assert_never(provider)
