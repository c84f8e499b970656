"""The summarizers a `ManagerConfig` names: ``SUMMARIZATION_MODEL_PREFERENCE`` or ``SUMMARIZATION_MODEL_ID``, then the
extractive summarizer as the last fallback before the model-free path."""

from __future__ import annotations

import logging

from ..summarize import ExtractiveSummarizer
from ..summarize.llm import SUMMARIZER_PROVIDERS, bare_provider, make_summarizer
from ._config import ConfigError, ManagerConfig
from ._summarizers import AnySummarizer

__all__ = ["summarizer_specs", "summarizers_from_config"]

logger = logging.getLogger(__name__)


def summarizer_specs(config: ManagerConfig) -> list[str]:
    """The summarizer specs of `config`, in order (``PROVIDER:MODEL``). A Bedrock model id or a ``gemini-...``
    name without a prefix is that provider's (the events spec's ``us.amazon.nova-micro-v1:0`` works as written);
    any other name without a known provider prefix is a model of the OpenAI-compatible endpoint, colons and all:
    Ollama's ``llama3:8b`` is a model, not a provider."""
    raw = config.model_preference if config.model_preference else config.model_id
    specs: list[str] = []
    for part in (raw or "").split(","):
        spec = part.strip()
        if not spec:
            continue
        bare = bare_provider(spec)
        if bare is not None:  # a Bedrock id or a Gemini name: its colon is the model's version, not a prefix
            spec = f"{bare}:{spec}"
        provider = spec.partition(":")[0].strip().lower()
        if spec.lower() != "extractive" and (":" not in spec or (provider and provider not in SUMMARIZER_PROVIDERS)):
            if ":" in spec:  # a tag (Ollama's llama3:8b) or a fine-tune (ft:gpt-4o-mini:org::id), or a typo
                logger.warning(
                    "summarizer=<%s> | %r is not a provider prefix (%s): using it as a model of the OpenAI-compatible "
                    "endpoint",
                    spec,
                    provider,
                    ", ".join(SUMMARIZER_PROVIDERS),
                )
            spec = "openai:" + spec
        specs.append(spec)
    return specs


def summarizers_from_config(config: ManagerConfig) -> tuple[AnySummarizer, ...]:
    """The summarizers `config` names, each built now (a missing SDK or a bad name raises here, at start), and the
    extractive summarizer last: when the models fail, a deterministic summary still beats none."""
    out: list[AnySummarizer] = []
    for spec in summarizer_specs(config):
        if spec.lower() == "extractive":
            out.append(ExtractiveSummarizer())
            continue
        try:
            out.append(make_summarizer(spec, base_url=config.base_url))
        except ValueError as exc:
            name = "SUMMARIZATION_MODEL_PREFERENCE" if config.model_preference else "SUMMARIZATION_MODEL_ID"
            raise ConfigError(
                name, spec, "PROVIDER:MODEL (openai:, anthropic:, litellm:) or a model name", detail=str(exc)
            ) from None
    if not any(isinstance(s, ExtractiveSummarizer) for s in out):
        out.append(ExtractiveSummarizer())
    return tuple(out)
