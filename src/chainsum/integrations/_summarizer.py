"""A framework's own model as chainsum's summarizer: the one adapter every integration shares.

Each integration keeps only its framework's call: a `ModelCall` that sends chainsum's system prompt and the
rendered transcript to the framework's model and answers with the text and the usage it reported (`ModelReply`).
`ModelSummarizer` makes that a chainsum summarizer (``transcript -> summary``), so it goes through everything a
built-in summarizer goes through, in the manager's `SummarizerChain`: the transcript rendered and framed with its
nonce delimiters (`chainsum.summarize.render_transcript`), the meta header and input cap, the timeout (a model that
hangs is abandoned), the retry of transport and rate-limit failures, the size check, and the fallback to the next
summarizer. What this adapter adds is what a framework cannot know: its exceptions mapped onto chainsum's failure
classes (`failure_of`), a reply without text turned into an ``empty`` failure, and the usage reported
(`chainsum.summarize.report_usage`) to the pass's meter, whence `SummarizationEvent.summarizer_usage`.

`take_summarizer` is the rule for an integration's ``summarizer=`` argument, the same in all four:

- a string keeps chainsum's meaning, as everywhere else in chainsum: ``"extractive"`` or ``"PROVIDER:MODEL"``
  (`chainsum.summarize.llm.make_summarizer`: chainsum's own OpenAI, Anthropic or LiteLLM summarizer). A framework's
  own model string goes through the integration's ``model_summarizer("...")`` instead, which says which is meant;
- an object of the framework's model type (or agent, where the framework summarizes with one) is the framework's
  model, through the integration's adapter;
- any other callable is a chainsum summarizer, as in ``summarizers=``.

What a failure of the summarizer given does is the framework's rule unless the user opts out (issue 33): with
``fail_open=False`` it is the only summarizer and the configuration gets ``abort_on_failure``, so the error reaches
the caller as the framework's own summarizing class would raise it, the history untouched and a failed event
(``aborted``) saying so; with ``fail_open=True`` chainsum's extractive summarizer follows it (as for a model named in
the configuration), so a failing model still gets a summary written and the event lists the failure.
``summarizer=`` and ``summarizers=`` together are an error: which one was meant is not clear.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, cast

from ..errors import SummarizerError
from ..manager import ManagerConfig
from ..summarize import ExtractiveSummarizer, SummarizerUsage, report_usage
from ..summarize.llm import DEFAULT_SYSTEM_PROMPT, make_summarizer
from ..summarize.llm._common import status_error

__all__ = [
    "Classify",
    "ModelCall",
    "ModelReply",
    "ModelSummarizer",
    "failure_of",
    "take_summarizer",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ModelReply:
    """What a framework's model answered: its text (None when it gave none) and the usage it reported."""

    text: str | None
    usage: SummarizerUsage | None = None
    refused: str | None = None
    """Why the model declined (a content filter, a guardrail, a refusal), when it said so."""


ModelCall = Callable[[str, str], Awaitable[ModelReply]]
"""``call(system_prompt, transcript)``: one request to the framework's model."""

Classify = Callable[[BaseException], SummarizerError | None]
"""A framework's own exception types mapped onto failure classes; None for one it does not recognise."""


def _no_classify(exc: BaseException) -> SummarizerError | None:
    return None


_PREVIEW = 200


def _detail(exc: BaseException) -> str:
    flat = " ".join(f"{type(exc).__name__}: {exc}".split())
    return flat if len(flat) <= _PREVIEW else flat[:_PREVIEW] + "..."


def _names(exc: BaseException) -> str:
    return " ".join(cls.__name__ for cls in type(exc).__mro__)


_RATE = re.compile(r"RateLimit|Throttl|TooManyRequests|QuotaExceeded|ResourceExhausted")
_TIMEOUT = re.compile(r"Timeout|TimedOut")
_AUTH = re.compile(r"Authentication|PermissionDenied|Unauthori[sz]ed|Forbidden|InvalidApiKey|Credential")
_BAD_REQUEST = re.compile(r"BadRequest|InvalidRequest|UnprocessableEntity|NotFound|ContextWindow|ValidationError")
_TRANSPORT = re.compile(r"Connection|ServiceUnavailable|InternalServer|Overloaded|ServerError|Unavailable")


def failure_of(exc: BaseException, classify: Classify = _no_classify) -> SummarizerError:
    """The chainsum failure class of an exception a framework's model raised.

    In order: the framework's own mapping (`classify`); an HTTP status on the exception (``status_code``, as the
    OpenAI, Anthropic and pydantic-ai errors carry, read with `status_error`: 429 rate limit, 408/409/5xx transport,
    other 4xx invalid, with the server's ``retry-after``); the Python timeout; then the exception's class names
    (its whole MRO: rate limit or throttling, timeout, authentication, bad request, connection). Anything else is a
    transport failure: retried once, then the next summarizer, so a model failing in a way nobody foresaw still
    falls back and loses nothing.
    """
    if isinstance(exc, SummarizerError):
        return exc
    known = classify(exc)
    if known is not None:
        return known
    status = getattr(exc, "status_code", None)
    if type(status) is int and 400 <= status <= 599:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        return status_error(status, _detail(exc), cast(Mapping[str, str], headers) if headers is not None else None)
    if isinstance(exc, TimeoutError):
        return SummarizerError(_detail(exc), kind="transport")
    names = _names(exc)
    if _RATE.search(names):
        return SummarizerError(_detail(exc), kind="rate_limit")
    if _TIMEOUT.search(names) or _TRANSPORT.search(names):
        return SummarizerError(_detail(exc), kind="transport")
    if _AUTH.search(names) or _BAD_REQUEST.search(names):
        return SummarizerError(_detail(exc), kind="invalid")
    return SummarizerError(_detail(exc), kind="transport")


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSummarizer:
    """A chainsum summarizer calling a framework's model (see the module docstring).

    Async, ``transcript -> summary``: usable wherever chainsum takes a summarizer (``summarizers=``, `compact`,
    `ContextManager`), not only through the integration that made it.
    """

    name: str
    """What the model is, for logs and error messages (``"langchain:ChatOpenAI"``)."""
    call: ModelCall
    model: object = None
    """The framework's object that `call` uses (the chat model, the agent), for callers who want to look at it."""
    classify: Classify = _no_classify
    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    """Sent as the system prompt: the transcript is data to summarize, never instructions (as for the built-in
    LLM summarizers)."""

    async def __call__(self, transcript: str) -> str:
        try:
            reply = await self.call(self.system_prompt, transcript)
        except Exception as exc:  # the framework's own error types: mapped, so the manager can act on the kind
            error = failure_of(exc, self.classify)
            logger.debug("summarizer=<%s>, kind=<%s> | framework model failed", self.name, error.kind)
            raise error from exc
        if reply.usage is not None:  # billed whatever the answer turns out to be
            report_usage(reply.usage)
        if reply.refused is not None:
            raise SummarizerError(f"{self.name} declined: {reply.refused[:_PREVIEW]}", kind="refused")
        text = reply.text.strip() if isinstance(reply.text, str) else ""
        if not text:
            raise SummarizerError(f"{self.name} answered without text", kind="empty")
        return text


def take_summarizer(
    kwargs: dict[str, Any],
    adapt: Callable[[object], ModelSummarizer | None],
    framework: str,
    *,
    fail_open: bool,
) -> None:
    """Replace ``summarizer=`` in an integration's keyword arguments by ``summarizers=`` (the rule in the module
    docstring). `adapt` turns an object of the framework's model type into a `ModelSummarizer`, or returns None.
    Without `fail_open` the configuration (``config=``, else the environment's) gets ``abort_on_failure``."""
    if "summarizer" not in kwargs:
        return
    given: object = kwargs.pop("summarizer")
    if given is None:
        return
    if kwargs.get("summarizers") is not None:
        raise TypeError("pass summarizer= (one, with the extractive fallback) or summarizers= (the list), not both")
    summarizer: Any
    if isinstance(given, str):
        summarizer = make_summarizer(given)  # chainsum's spec; a bad one raises its one-line SummarizerSpecError
    else:
        summarizer = adapt(given)
        if summarizer is None:
            if not callable(given):
                raise TypeError(
                    f"summarizer= takes a chainsum summarizer spec (a string), a callable transcript -> summary, or a "
                    f"model from {framework}; got {type(given).__name__}"
                )
            summarizer = given
    if isinstance(summarizer, ExtractiveSummarizer) or not fail_open:
        kwargs["summarizers"] = [summarizer]
    else:
        kwargs["summarizers"] = [summarizer, ExtractiveSummarizer()]
    if not fail_open and not isinstance(summarizer, ExtractiveSummarizer):
        config = kwargs.get("config")
        kwargs["config"] = replace(
            config if isinstance(config, ManagerConfig) else ManagerConfig.from_env(), abort_on_failure=True
        )
