"""Summarize through Google's Gemini models with the ``google-genai`` SDK (the Gemini API or Vertex AI), imported
only when a summary runs."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ...errors import MissingDependencyError, SummarizerError
from ._blocking import in_daemon_thread
from ._common import LLMSummarizerBase, decode_json, gemini_text, logger, parse_retry_after, require, status_error

if TYPE_CHECKING:
    import httpx
    from google.genai import Client

__all__ = ["GeminiSummarizer"]

_PLACEHOLDER_KEY = "chainsum-no-key"
"""Sent to a custom `base_url` (a gateway or a test server) when no key is configured."""
_KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
"""Where the SDK looks for a Gemini API key (``GOOGLE_API_KEY`` first when both are set)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GeminiSummarizer(LLMSummarizerBase):
    """An async summarizer calling ``generateContent`` (``POST {base_url}/v1beta/models/{model}:generateContent``,
    or Vertex AI's ``.../publishers/google/models/{model}:generateContent``).

    The transcript is the one user turn and `system_prompt` the ``systemInstruction``; `max_tokens` and
    `temperature` go in the generation config. Left as None, `api_key`, `vertexai`, `project` and `location` are
    what the SDK reads itself: ``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``, ``GOOGLE_GENAI_USE_VERTEXAI``,
    ``GOOGLE_CLOUD_PROJECT``, ``GOOGLE_CLOUD_LOCATION`` and Google's application default credentials; `base_url`
    (or ``GOOGLE_GEMINI_BASE_URL``) points it elsewhere, with a placeholder key when none is configured. The reply
    is read from the raw JSON body, not the SDK's model, which turns a malformed ``candidates`` into a list of empty
    candidates. Like `OpenAISummarizer`, each call uses a client of its own unless you pass `client` (used with
    this summarizer's timeout and no retries on each request; you close it).
    """

    vertexai: bool | None = None
    """True: Vertex AI (with `project` and `location`, or a Vertex API key); None: ``GOOGLE_GENAI_USE_VERTEXAI``."""
    project: str | None = None
    """The Google Cloud project for Vertex AI; None: ``GOOGLE_CLOUD_PROJECT``."""
    location: str | None = None
    """The Vertex AI location (``us-central1``, ``global``); None: ``GOOGLE_CLOUD_LOCATION``."""
    client: Client | None = None
    """A ``google.genai.Client`` to reuse; None builds one per call. Where aiohttp is installed the SDK uses it
    unless the client was given ``HttpOptions(httpx_async_client=...)``, and its aiohttp session warns
    (``DeprecationWarning``) on first use."""

    def __post_init__(self) -> None:
        LLMSummarizerBase.__post_init__(self)
        if self.client is None:
            require("google.genai", "gemini")

    async def _complete(self, transcript: str) -> str:
        logger.debug("model=<%s>, chars=<%d> | gemini summarizer request", self.model, len(transcript))
        if self.client is not None:
            return await self._bounded(self.client, transcript)
        # importing the SDK (a second or more, the first time) and building its client (SSL contexts) block:
        # done in a worker thread, so the event loop keeps serving the requests a summary makes room for
        client, http = await in_daemon_thread(self._build, name="chainsum-gemini")
        try:
            return await self._bounded(client, transcript)
        finally:
            await http.aclose()
            await client.aio.aclose()
            client.close()

    def _build(self) -> tuple[Client, httpx.AsyncClient]:
        """A client for one call, and the httpx client under it. chainsum passes its own httpx client: without one
        the SDK picks aiohttp when it is installed, and its subclass of aiohttp's ClientSession raises a
        DeprecationWarning (an error under ``-W error``) on every first request."""
        try:
            import google.genai as genai  # not `from google import genai`, which a stale attribute can satisfy
            import httpx
        except ImportError as exc:
            raise MissingDependencyError("google-genai", "gemini") from exc

        api_key = self.api_key
        uses_vertex = self.vertexai or (self.vertexai is None and _env_true("GOOGLE_GENAI_USE_VERTEXAI"))
        if api_key is None and self.base_url is not None and not uses_vertex and not _env_key():
            api_key = _PLACEHOLDER_KEY
        http = httpx.AsyncClient(timeout=self.timeout)
        try:
            client = genai.Client(
                api_key=api_key,
                vertexai=self.vertexai,
                project=self.project,
                location=self.location,
                http_options=genai.types.HttpOptions(base_url=self.base_url, httpx_async_client=http),
            )
        except ValueError as exc:  # no key, no project: the SDK says which setting is missing
            raise SummarizerError(f"cannot build the Gemini client: {exc}", kind="invalid") from exc
        return client, http

    async def _bounded(self, client: Client, transcript: str) -> str:
        """The request under an ``asyncio`` deadline of `timeout`: the SDK's own timeout is per HTTP exchange, and
        its transport (httpx or aiohttp) decides what a timeout raises."""
        try:
            return await asyncio.wait_for(self._request(client, transcript), self.timeout)
        except TimeoutError:
            raise SummarizerError(f"timed out after {self.timeout}s", kind="transport") from None

    async def _request(self, client: Client, transcript: str) -> str:
        import google.genai.errors as errors
        import google.genai.types as types

        config = types.GenerateContentConfig(
            system_instruction=self.system_prompt,
            max_output_tokens=self.max_tokens,
            temperature=self.temperature,
            should_return_http_response=True,  # the raw body: checked here, field by field
            http_options=types.HttpOptions(
                timeout=max(1, round(self.timeout * 1000)), retry_options=types.HttpRetryOptions(attempts=1)
            ),
        )
        try:
            response = await client.aio.models.generate_content(model=self.model, contents=transcript, config=config)
        except errors.APIError as exc:
            raise _api_error(exc) from exc
        except TimeoutError:
            raise
        except Exception as exc:
            raise _transport_or_invalid(exc) from exc
        raw = response.sdk_http_response
        body = raw.body if raw is not None else None
        if body is None:
            raise SummarizerError("reply has no body", kind="empty")
        return gemini_text(decode_json(body.encode()))


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _env_key() -> bool:
    return any(os.environ.get(name) for name in _KEY_VARIABLES)


_RETRY_DELAY = re.compile(r"(\d+(?:\.\d+)?)s")


def _api_error(exc: Exception) -> SummarizerError:
    """The failure class of an HTTP error from the API: by status, as for every provider (429 rate limit with
    its wait, 401/403 and 400 invalid, 5xx transport). The wait is the ``retry-after`` header or, where Google
    puts it, the ``RetryInfo.retryDelay`` of the error's details."""
    code = cast(object, getattr(exc, "code", None))
    status_name = cast(object, getattr(exc, "status", None))
    message = cast(object, getattr(exc, "message", None)) or str(exc)
    response = cast(object, getattr(exc, "response", None))
    headers = cast(object, getattr(response, "headers", None))
    header_map = cast(Mapping[str, str], headers) if isinstance(headers, Mapping) else None
    if not isinstance(code, int):
        return SummarizerError(f"{type(exc).__name__}: {exc}", kind="invalid")
    detail = f"{status_name}: {message}" if status_name else str(message)
    if code in (401, 403):
        return SummarizerError(f"auth: HTTP {code} {detail}", kind="invalid")
    error = status_error(code, detail, header_map)
    if error.kind == "rate_limit" and error.retry_after is None:
        wait = _retry_info(cast(object, getattr(exc, "details", None)))
        return SummarizerError(error.detail, kind="rate_limit", retry_after=wait)
    return error


def _retry_info(details: object) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"retryDelay": "7s"``) in an error body, if any."""
    error = cast(Mapping[str, object], details).get("error") if isinstance(details, Mapping) else None
    items = cast(Mapping[str, object], error).get("details") if isinstance(error, Mapping) else None
    if not isinstance(items, list):
        return None
    for item in cast(list[object], items):
        delay = cast(Mapping[str, object], item).get("retryDelay") if isinstance(item, Mapping) else None
        if isinstance(delay, str) and (match := _RETRY_DELAY.fullmatch(delay.strip())):
            return parse_retry_after({"retry-after": match[1]})
    return None


def _transport_or_invalid(exc: Exception) -> SummarizerError:
    """What the SDK's transport raised: httpx's and aiohttp's network and timeout errors (and the ``OSError``
    beneath them) are ``transport``; anything else (a client it could not build, a reply it could not take) is
    ``invalid``."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return SummarizerError(f"timed out: {exc}", kind="transport")
    if isinstance(exc, httpx.TransportError | OSError) or _is_aiohttp_error(exc):
        return SummarizerError(f"connection failed: {type(exc).__name__}: {exc}", kind="transport")
    return SummarizerError(f"{type(exc).__name__}: {exc}", kind="invalid")


def _is_aiohttp_error(exc: Exception) -> bool:
    try:
        import aiohttp
    except ImportError:
        return False
    return isinstance(exc, aiohttp.ClientError)
