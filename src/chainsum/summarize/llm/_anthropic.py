"""Summarize through the Anthropic Messages API with the ``anthropic`` SDK, imported only when a summary runs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import MissingDependencyError, SummarizerError
from ._common import LLMSummarizerBase, anthropic_text, decode_json, logger, require, status_error

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["AnthropicSummarizer"]

_PLACEHOLDER_KEY = "chainsum-no-key"
"""Sent to a custom `base_url` (a gateway or a test server) when no key is configured."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AnthropicSummarizer(LLMSummarizerBase):
    """An async summarizer calling ``POST {base_url}/v1/messages``.

    The transcript is the one user message and `system_prompt` the ``system`` field. The key is `api_key`, else
    what the SDK finds itself (``ANTHROPIC_API_KEY`` and its other credential sources), else (only with a custom
    `base_url`) a placeholder. Like `OpenAISummarizer`, each call uses a client of its own unless you pass `client`
    (used with its retries off and this timeout; you close it). `temperature` is not sent: the Messages API
    of the ``anthropic`` SDK chainsum supports (2.12+) has no such parameter.
    """

    client: AsyncAnthropic | None = None
    """A client to reuse; None builds one per call."""

    def __post_init__(self) -> None:
        LLMSummarizerBase.__post_init__(self)
        if self.client is None:
            require("anthropic", "anthropic")

    async def _complete(self, transcript: str) -> str:
        try:
            import anthropic
        except ImportError as exc:
            raise MissingDependencyError("anthropic", "anthropic") from exc

        if self.client is not None:
            return await self._request(self.client.with_options(max_retries=0, timeout=self.timeout), transcript)
        api_key = self.api_key or os.environ.get("ANTHROPIC_API_KEY")
        if api_key is None and self.base_url is not None:
            api_key = _PLACEHOLDER_KEY
        try:
            client = anthropic.AsyncAnthropic(
                api_key=api_key, base_url=self.base_url, timeout=self.timeout, max_retries=0
            )
        except anthropic.AnthropicError as exc:  # no credentials anywhere
            raise SummarizerError(f"cannot build the Anthropic client: {exc}", kind="invalid") from exc
        async with client:
            return await self._request(client, transcript)

    async def _request(self, client: AsyncAnthropic, transcript: str) -> str:
        import anthropic

        logger.debug("model=<%s>, chars=<%d> | anthropic summarizer request", self.model, len(transcript))
        try:
            raw = await client.messages.with_raw_response.create(
                model=self.model,
                system=self.system_prompt,
                messages=[{"role": "user", "content": transcript}],
                max_tokens=self.max_tokens,
            )
        except anthropic.APIStatusError as exc:
            raise status_error(exc.status_code, exc.message, exc.response.headers) from exc
        except anthropic.APITimeoutError as exc:
            raise SummarizerError(f"timed out after {self.timeout}s", kind="transport") from exc
        except anthropic.APIConnectionError as exc:
            raise SummarizerError(f"connection failed: {exc}", kind="transport") from exc
        except anthropic.AnthropicError as exc:  # e.g. APIResponseValidationError, a credentials failure
            raise SummarizerError(f"{type(exc).__name__}: {exc}", kind="invalid") from exc
        return anthropic_text(decode_json(raw.http_response.content))
