"""The scripted replies of `chainsum.testing.FakeLLMServer`, and the HTTP response each dialect renders them into.

The reply types are provider-neutral (a rate limit, a stall, a refusal); each dialect module turns one into the
status, headers and body its provider would send, so one script exercises every SDK's handling of the same failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, TypeAlias

__all__ = [
    "FakeEmpty",
    "FakeMalformed",
    "FakeRateLimit",
    "FakeRefusal",
    "FakeReply",
    "FakeStall",
    "FakeStatus",
    "FakeText",
    "FakeWrongShape",
    "HttpReply",
    "json_reply",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeText:
    """A successful completion whose text is `text`."""

    kind: Literal["text"] = "text"
    text: str = "A fake summary."
    """The assistant text; also the summary a summarizer should return (after stripping)."""
    delay_s: float = 0.0
    """When the request asks to stream: the pause before each streamed chunk (a slow model)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeRateLimit:
    """HTTP 429 in the provider's error format (Bedrock's ``ThrottlingException``, Gemini's
    ``RESOURCE_EXHAUSTED``)."""

    kind: Literal["rate_limit"] = "rate_limit"
    retry_after: str | None = None
    """The ``retry-after`` header as sent (delay seconds or an HTTP date); None sends no header. Gemini also gets
    delay seconds as the ``RetryInfo.retryDelay`` of its error details, where Google's API puts the hint."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeStall:
    """Accept the request and send nothing for `seconds`, to trip a client timeout. Closing the server ends the
    stall early, so a test never waits the full time on shutdown."""

    kind: Literal["stall"] = "stall"
    seconds: float = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeStatus:
    """An error status (500 by default) with a provider-style JSON error body."""

    kind: Literal["status"] = "status"
    status: int = 500
    message: str = "internal error"
    code: str | None = None
    """The provider's name for the error: Bedrock's ``x-amzn-ErrorType`` (``AccessDeniedException``,
    ``ModelTimeoutException``, ...), Gemini's ``error.status`` (``PERMISSION_DENIED``, ...), OpenAI's and
    Anthropic's ``error.type``. None: the name the provider uses for `status`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeEmpty:
    """A well-formed success with no text: whitespace content, or (with `no_content`) no choices / no blocks."""

    kind: Literal["empty"] = "empty"
    no_content: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeMalformed:
    """HTTP 200, ``application/json``, and a body that is not JSON."""

    kind: Literal["malformed"] = "malformed"


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeWrongShape:
    """HTTP 200 with valid JSON of the wrong shape (``choices`` / ``content`` / ``candidates`` is a string, not a
    list)."""

    kind: Literal["wrong_shape"] = "wrong_shape"


@dataclass(frozen=True, slots=True, kw_only=True)
class FakeRefusal:
    """The model declined: OpenAI's ``message.refusal`` with ``finish_reason: content_filter``, Anthropic's
    ``stop_reason: refusal``, Bedrock's ``stopReason: guardrail_intervened``, Gemini's
    ``promptFeedback.blockReason: SAFETY``."""

    kind: Literal["refusal"] = "refusal"


FakeReply: TypeAlias = (
    FakeText | FakeRateLimit | FakeStall | FakeStatus | FakeEmpty | FakeMalformed | FakeWrongShape | FakeRefusal
)
"""One scripted answer to one request."""


@dataclass(frozen=True, slots=True)
class HttpReply:
    """What the server sends back for one request: status, body and any headers beyond ``content-type``."""

    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


TRUNCATED_JSON = b'{"choices": [{"message": {"content": "trunc'
"""The body of a `FakeMalformed` reply: JSON cut off mid-string."""


def json_reply(status: int, payload: object, headers: tuple[tuple[str, str], ...] = ()) -> HttpReply:
    return HttpReply(status, json.dumps(payload).encode(), headers)
