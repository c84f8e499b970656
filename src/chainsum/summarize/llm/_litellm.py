"""Summarize through LiteLLM, which reaches a hundred providers behind one OpenAI-shaped call.

LiteLLM is imported when a summary runs (its import takes seconds). It reads a remote cost map at import unless
``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set; chainsum leaves that choice to the application rather than change
the process environment behind its back.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import cast

from ...errors import MissingDependencyError, SummarizerError
from ._common import LLMSummarizerBase, logger, openai_text, require, status_error

__all__ = ["LiteLLMSummarizer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LiteLLMSummarizer(LLMSummarizerBase):
    """An async summarizer calling ``litellm.acompletion``.

    `model` is LiteLLM's ``provider/model`` name (``anthropic/claude-...``, ``openai/gpt-...``, ``ollama/...``);
    `base_url` becomes ``api_base``; a None `api_key` lets LiteLLM read the provider's environment variable.
    LiteLLM's retries are off (``num_retries=0``, ``max_retries=0``) for the reason given in
    `LLMSummarizerBase`.
    """

    def __post_init__(self) -> None:
        LLMSummarizerBase.__post_init__(self)
        require("litellm", "litellm")

    async def _complete(self, transcript: str) -> str:
        try:
            import litellm
        except ImportError as exc:
            raise MissingDependencyError("litellm", "litellm") from exc

        # LiteLLM's signature carries untyped parameters; we pass plain values and check the reply ourselves
        acompletion = cast(Callable[..., Awaitable[object]], litellm.acompletion)  # pyright: ignore[reportUnknownMemberType]
        logger.debug("model=<%s>, chars=<%d> | litellm summarizer request", self.model, len(transcript))
        options: dict[str, object] = {} if self.temperature is None else {"temperature": self.temperature}
        try:
            response = await acompletion(
                model=self.model,
                messages=[
                    {"role": "system", "content": self.system_prompt},
                    {"role": "user", "content": transcript},
                ],
                api_base=self.base_url,
                api_key=self.api_key,
                timeout=self.timeout,
                max_tokens=self.max_tokens,
                num_retries=0,
                max_retries=0,
                **options,
            )
        except Exception as exc:  # LiteLLM raises many types across providers; classify them all
            raise _classify(exc) from exc
        finally:
            await _drain_logging()
        return openai_text(_as_payload(response))


_DRAIN_SECONDS = 5.0


async def _drain_logging() -> None:
    """Let LiteLLM finish the logging it queued for this call before we return.

    ``acompletion`` queues its success handler on a background worker of the running loop. When the loop ends
    right after the call (``asyncio.run`` per summary, as chainsum's sync wrappers do), the worker is cancelled
    before it starts and the handler is left unawaited: lost callbacks and a ``RuntimeWarning`` (BerriAI/litellm
    #8842, #13970). Waiting for the queue here costs nothing measurable with no callbacks configured. The worker
    is LiteLLM-internal, so any failure to reach it is ignored: the summary matters, the log does not.
    """
    try:
        from litellm.litellm_core_utils.logging_worker import (  # pyright: ignore[reportMissingTypeStubs]
            GLOBAL_LOGGING_WORKER,
        )

        await asyncio.wait_for(GLOBAL_LOGGING_WORKER.flush(), _DRAIN_SECONDS)
    except Exception as exc:  # an internal API moved, or a callback hung: never fail a summary over logging
        logger.debug("error=<%s> | could not drain litellm logging", type(exc).__name__)


def _classify(exc: Exception) -> SummarizerError:
    """The failure class of a LiteLLM exception.

    LiteLLM's exceptions subclass the ``openai`` SDK's, so status and timeout are read the same way. Two of its
    habits need care: it reports a reply it could not parse (bad JSON, wrong shape) as a 500, so the cause chain
    is checked first and such a reply is ``invalid``, not a retryable ``transport``; and it keeps the provider's
    response headers (``retry-after``) on ``litellm_response_headers`` rather than on ``response``.
    """
    import openai
    from litellm.exceptions import ContentPolicyViolationError

    if _unparseable(exc):
        return SummarizerError(f"reply could not be parsed: {exc}", kind="invalid")
    if isinstance(exc, ContentPolicyViolationError):
        return SummarizerError(f"content policy: {exc}", kind="refused")
    if isinstance(exc, openai.APITimeoutError):
        return SummarizerError(f"timed out: {exc}", kind="transport")
    if isinstance(exc, openai.APIConnectionError):
        return SummarizerError(f"connection failed: {exc}", kind="transport")
    if isinstance(exc, openai.APIStatusError):
        return status_error(exc.status_code, str(exc), _headers(exc))
    return SummarizerError(f"{type(exc).__name__}: {exc}", kind="transport")


def _unparseable(exc: BaseException) -> bool:
    """Whether the failure was a reply LiteLLM could not read (JSON syntax or shape), found on the cause chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, json.JSONDecodeError) or "Invalid response object" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def _headers(exc: BaseException) -> Mapping[str, str] | None:
    """The provider's response headers: LiteLLM's copy first, then the exception's own response."""
    kept = cast(object, getattr(exc, "litellm_response_headers", None))
    if isinstance(kept, Mapping) and kept:
        return cast(Mapping[str, str], kept)
    response = cast(object, getattr(exc, "response", None))
    headers = cast(object, getattr(response, "headers", None))
    return cast(Mapping[str, str], headers) if isinstance(headers, Mapping) else None


def _as_payload(response: object) -> object:
    """A LiteLLM ``ModelResponse`` as the plain Chat Completions JSON that `openai_text` checks.

    Read attribute by attribute rather than with ``model_dump``: a provider's odd field would make pydantic warn
    on dump, and only four fields matter here.
    """
    choices = cast(object, getattr(response, "choices", None))
    if not isinstance(choices, list):
        return {"choices": choices}
    plain: list[object] = []
    for choice in cast(list[object], choices):
        message = cast(object, getattr(choice, "message", None))
        refusal = cast(object, getattr(message, "refusal", None))
        extra = cast(object, getattr(message, "provider_specific_fields", None))
        if refusal is None and isinstance(extra, Mapping):
            refusal = cast(Mapping[str, object], extra).get("refusal")
        plain.append(
            {
                "finish_reason": cast(object, getattr(choice, "finish_reason", None)),
                "message": None
                if message is None
                else {"content": cast(object, getattr(message, "content", None)), "refusal": refusal},
            }
        )
    return {"choices": plain}
