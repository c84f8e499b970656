"""Which provider a summarizer spec names: an explicit ``PROVIDER:`` prefix, or a model id that can only be one
provider's.

The events spec configures its summarizer as ``SUMMARIZATION_MODEL_ID=us.amazon.nova-micro-v1:0``: a Bedrock model
id, with no prefix, whose colon is part of the id (the model version). Read naively it is provider
``us.amazon.nova-micro-v1`` with model ``0``, or (under the environment's lenient rule) a model of the
OpenAI-compatible endpoint. So an id shaped like Bedrock's own (an optional cross-region prefix, one of Bedrock's
vendors, a dot) or a Bedrock ARN goes to Bedrock, and ``gemini-...`` to Gemini. The shapes are narrow on purpose:
OpenAI's names (``gpt-4.1-mini``, ``o3``, ``ft:gpt-4o-mini:org::id``) and Ollama's tags (``qwen2.5:7b``,
``mistral:7b``) never have a vendor followed by a dot, so they keep their meaning.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias

__all__ = [
    "BEDROCK_REGION_PREFIXES",
    "BEDROCK_VENDORS",
    "SUMMARIZER_PROVIDERS",
    "Provider",
    "bare_provider",
    "split_spec",
]

Provider: TypeAlias = Literal["openai", "anthropic", "litellm", "bedrock", "gemini"]
SUMMARIZER_PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic", "litellm", "bedrock", "gemini")
"""The provider prefixes of ``PROVIDER:MODEL``."""

BEDROCK_REGION_PREFIXES = ("us", "us-gov", "eu", "apac", "jp", "au", "ca", "global")
"""The geographies of Bedrock's cross-region inference profiles (``us.amazon.nova-micro-v1:0``)."""
BEDROCK_VENDORS = ("amazon", "anthropic", "meta", "mistral", "cohere", "ai21", "deepseek", "qwen", "writer", "openai")
"""The model vendors whose Bedrock ids start ``VENDOR.`` (``anthropic.claude-...``, ``meta.llama...``)."""

_BEDROCK_ID = re.compile(
    rf"(?:(?:{'|'.join(map(re.escape, BEDROCK_REGION_PREFIXES))})\.)?"
    rf"(?:{'|'.join(BEDROCK_VENDORS)})\.[a-z0-9][a-z0-9._:-]*"
)
"""Case-sensitive, as Bedrock's ids are: ``Anthropic.Claude`` is no Bedrock id."""
_BEDROCK_ARN = re.compile(r"arn:aws(?:-[a-z]+)*:bedrock:[a-z0-9-]*:\d*:[A-Za-z0-9._:/-]+")
"""A foundation model, inference profile or provisioned model ARN: each is a valid Converse ``modelId``."""
_GEMINI_ID = re.compile(r"gemini-[a-z0-9][a-z0-9._-]*")


def bare_provider(model: str) -> Literal["bedrock", "gemini"] | None:
    """The provider a model id with no prefix belongs to, when its shape says so; None for any other name."""
    if _BEDROCK_ID.fullmatch(model) or _BEDROCK_ARN.fullmatch(model):
        return "bedrock"
    if _GEMINI_ID.fullmatch(model):
        return "gemini"
    return None


def split_spec(spec: str) -> tuple[Provider, str] | None:
    """``(provider, model)`` for ``PROVIDER:MODEL`` (the prefix in any case, split at its first colon so the model
    keeps its own: ``openai:llama3:8b``) or for a bare Bedrock or Gemini id; None for anything else (``extractive``,
    a bare OpenAI name, a typo). The model may be empty (``openai:``): the caller says what is wrong with that."""
    text = spec.strip()
    name, sep, model = text.partition(":")
    prefix = name.strip().lower()
    if sep:
        for provider in SUMMARIZER_PROVIDERS:
            if prefix == provider:
                return provider, model.strip()
    inferred = bare_provider(text)
    return (inferred, text) if inferred is not None else None
