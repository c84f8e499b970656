"""`make_summarizer`: a summarizer from the short spec the CLI's ``--summarizer`` takes."""

from __future__ import annotations

from ...errors import ChainsumError
from .._protocol import Summarizer
from ._anthropic import AnthropicSummarizer
from ._litellm import LiteLLMSummarizer
from ._openai import OpenAISummarizer

__all__ = ["SUMMARIZER_PROVIDERS", "SUMMARIZER_SPECS", "SummarizerSpecError", "make_summarizer"]

SUMMARIZER_PROVIDERS = ("openai", "anthropic", "litellm")
"""The provider prefixes of ``PROVIDER:MODEL``."""
SUMMARIZER_SPECS = ("extractive", *(f"{p}:MODEL" for p in SUMMARIZER_PROVIDERS))
"""The accepted forms, in the order error messages and help texts list them."""


class SummarizerSpecError(ChainsumError, ValueError):
    """A ``--summarizer`` value that names no summarizer; the message lists the valid forms."""

    def __init__(self, spec: str, reason: str) -> None:
        self.spec = spec
        super().__init__(f"bad summarizer {spec!r}: {reason}; use one of: {', '.join(SUMMARIZER_SPECS)}")


def make_summarizer(spec: str, *, base_url: str | None = None) -> Summarizer:
    """Build the summarizer `spec` names.

    ``extractive`` is the deterministic default that needs no model; ``PROVIDER:MODEL`` builds an LLM summarizer,
    splitting at the first colon only, so model names with colons (Ollama's ``llama3:8b``) pass through. Keys come
    from the provider's environment variable; `base_url` points an LLM summarizer at another endpoint (vLLM,
    Ollama, a gateway) and makes no sense for ``extractive``, which rejects it rather than ignore it.
    Raises `SummarizerSpecError` for anything else, and `MissingDependencyError` when the provider's extra is not
    installed.
    """
    name, sep, model = spec.strip().partition(":")
    name = name.strip().lower()
    model = model.strip()
    if not sep:
        if name != "extractive":
            raise SummarizerSpecError(spec, "unknown summarizer" if name else "empty")
        if base_url is not None:
            raise SummarizerSpecError(spec, "base_url applies only to LLM summarizers")
        from .._extractive import ExtractiveSummarizer  # imported late: the llm package stays a leaf of summarize

        return ExtractiveSummarizer()
    if not model:
        raise SummarizerSpecError(spec, "no model after the colon")
    match name:
        case "openai":
            return OpenAISummarizer(model, base_url=base_url)
        case "anthropic":
            return AnthropicSummarizer(model, base_url=base_url)
        case "litellm":
            return LiteLLMSummarizer(model, base_url=base_url)
        case _:
            raise SummarizerSpecError(spec, f"unknown provider {name!r}")
