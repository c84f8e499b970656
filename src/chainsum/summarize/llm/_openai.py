"""Summarize through any OpenAI-compatible Chat Completions endpoint with the ``openai`` SDK.

One class covers OpenAI itself and the servers that copy its API (vLLM, Ollama, LM Studio, OpenRouter, LiteLLM's
proxy): point `base_url` at them. The SDK is imported when the summarizer runs, so chainsum works without it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ...errors import MissingDependencyError, SummarizerError
from ._common import LLMSummarizerBase, decode_json, logger, openai_text, require, status_error

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["OpenAISummarizer"]

_PLACEHOLDER_KEY = "chainsum-no-key"
"""Sent to a custom `base_url` when no key is configured: local servers (vLLM, Ollama) ignore the key, but the
SDK refuses to run without one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenAISummarizer(LLMSummarizerBase):
    """An async summarizer calling ``POST {base_url}/chat/completions``.

    The transcript goes in as the user message, `system_prompt` as the system message. The key is `api_key`, else
    ``OPENAI_API_KEY``, else (only with a custom `base_url`) a placeholder. Each call opens and closes its own
    client unless you pass `client`: summaries are rare next to the requests they make room for, and a client
    kept between calls would be tied to the event loop that created it (sync wrappers run a new loop per call).
    A `client` you pass is used with its retries turned off and this summarizer's timeout; you close it.
    """

    client: AsyncOpenAI | None = None
    """A client to reuse (its connection pool, proxies, headers); None builds one per call."""
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    """The request field `max_tokens` is sent as: compatible servers know ``max_tokens``; OpenAI's reasoning
    models accept only ``max_completion_tokens`` (give them ``temperature=None`` too)."""

    def __post_init__(self) -> None:
        LLMSummarizerBase.__post_init__(self)
        if self.client is None:
            require("openai", "openai")

    async def _complete(self, transcript: str) -> str:
        try:
            import openai
        except ImportError as exc:
            raise MissingDependencyError("openai", "openai") from exc

        if self.client is not None:
            return await self._request(self.client.with_options(max_retries=0, timeout=self.timeout), transcript)
        api_key = self.api_key or os.environ.get("OPENAI_API_KEY")
        if api_key is None and self.base_url is not None:
            api_key = _PLACEHOLDER_KEY
        try:
            client = openai.AsyncOpenAI(api_key=api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0)
        except openai.OpenAIError as exc:  # no key anywhere
            raise SummarizerError(f"cannot build the OpenAI client: {exc}", kind="invalid") from exc
        async with client:
            return await self._request(client, transcript)

    async def _request(self, client: AsyncOpenAI, transcript: str) -> str:
        import openai

        logger.debug("model=<%s>, chars=<%d> | openai summarizer request", self.model, len(transcript))
        try:
            raw = await client.chat.completions.with_raw_response.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": self.system_prompt},
                    {"role": "user", "content": transcript},
                ],
                max_tokens=self.max_tokens if self.max_tokens_field == "max_tokens" else openai.omit,
                max_completion_tokens=self.max_tokens
                if self.max_tokens_field == "max_completion_tokens"
                else openai.omit,
                temperature=openai.omit if self.temperature is None else self.temperature,
            )
        except openai.APIStatusError as exc:
            raise status_error(exc.status_code, exc.message, exc.response.headers) from exc
        except openai.APITimeoutError as exc:
            raise SummarizerError(f"timed out after {self.timeout}s", kind="transport") from exc
        except openai.APIConnectionError as exc:
            raise SummarizerError(f"connection failed: {exc}", kind="transport") from exc
        except openai.APIError as exc:  # e.g. APIResponseValidationError: a body the SDK could not accept
            raise SummarizerError(f"{type(exc).__name__}: {exc}", kind="invalid") from exc
        return openai_text(decode_json(raw.http_response.content))
