"""LLM summarizers: any OpenAI-compatible endpoint, Anthropic, LiteLLM, Amazon Bedrock and Gemini, each an async
``transcript -> summary``.

The SDKs are optional extras, imported only when a summary runs; building a summarizer whose SDK is missing raises
`chainsum.errors.MissingDependencyError` with the pip command. Every failure is a `chainsum.errors.SummarizerError`
whose ``kind`` says whether retrying can help; the SDKs' own retries are off so the caller's policy is the only one.
"""

from ._anthropic import AnthropicSummarizer
from ._bedrock import BedrockRuntimeClient, BedrockSummarizer
from ._common import DEFAULT_SYSTEM_PROMPT, LLMSummarizerBase, parse_retry_after
from ._factory import SUMMARIZER_PROVIDERS, SUMMARIZER_SPECS, SummarizerSpecError, make_summarizer
from ._gemini import GeminiSummarizer
from ._ids import bare_provider, split_spec
from ._litellm import LiteLLMSummarizer
from ._openai import OpenAISummarizer

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "SUMMARIZER_PROVIDERS",
    "SUMMARIZER_SPECS",
    "AnthropicSummarizer",
    "BedrockRuntimeClient",
    "BedrockSummarizer",
    "GeminiSummarizer",
    "LLMSummarizerBase",
    "LiteLLMSummarizer",
    "OpenAISummarizer",
    "SummarizerSpecError",
    "bare_provider",
    "make_summarizer",
    "parse_retry_after",
    "split_spec",
]
