"""Bedrock Converse and Gemini ``generateContent`` answers of `chainsum.testing.FakeLLMServer`.

Each function renders one scripted reply the way the provider's service sends it, down to the parts the SDKs read
to classify a failure: Bedrock's error name travels in the ``x-amzn-ErrorType`` header (botocore reads it there
before the body), Gemini's in the body's ``error.status``, with a rate limit's wait as a ``RetryInfo`` detail.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import assert_never

from ._fake_replies import (
    TRUNCATED_JSON,
    FakeEmpty,
    FakeMalformed,
    FakeRateLimit,
    FakeRefusal,
    FakeReply,
    FakeStall,
    FakeStatus,
    FakeText,
    FakeWrongShape,
    HttpReply,
    json_reply,
)

__all__ = ["bedrock_reply", "gemini_reply"]

_BEDROCK_ERRORS = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
"""The exception Bedrock Runtime names for each status it documents for Converse (and, for 401, what AWS's
signature check answers to a key it does not know)."""

_GEMINI_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
"""The ``google.rpc.Code`` names Google's APIs give with each HTTP status."""


def _bedrock_error(status: int, code: str | None, message: str, extra: tuple[tuple[str, str], ...] = ()) -> HttpReply:
    fallback = "InternalServerException" if status >= 500 else "ValidationException"
    name = code or _BEDROCK_ERRORS.get(status) or fallback
    headers = (("x-amzn-ErrorType", f"{name}:http://internal.amazon.com/coral/com.amazon.bedrock/"), *extra)
    return json_reply(status, {"message": message}, headers)


def _converse(text_blocks: Sequence[object], stop_reason: str = "end_turn") -> object:
    return {
        "output": {"message": {"role": "assistant", "content": text_blocks}},
        "stopReason": stop_reason,
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 1},
    }


def bedrock_reply(reply: FakeReply) -> HttpReply:
    """The answer to ``POST /model/{modelId}/converse``."""
    match reply:
        case FakeText():
            return json_reply(200, _converse([{"text": reply.text}]))
        case FakeRateLimit():
            extra = (("retry-after", reply.retry_after),) if reply.retry_after is not None else ()
            return _bedrock_error(429, None, "Too many requests, please wait before trying again.", extra)
        case FakeStatus():
            return _bedrock_error(reply.status, reply.code, reply.message)
        case FakeEmpty():
            return json_reply(200, _converse([] if reply.no_content else [{"text": " \n "}]))
        case FakeMalformed():
            return HttpReply(200, TRUNCATED_JSON, (("content-type", "application/json"),))
        case FakeWrongShape():
            return json_reply(200, {"output": {"message": {"role": "assistant", "content": "not a list"}}})
        case FakeRefusal():
            # a guardrail answers with its canned text as the content: only the stop reason tells it apart
            blocked = [{"text": "Sorry, the model cannot answer this question."}]
            return json_reply(200, _converse(blocked, stop_reason="guardrail_intervened"))
        case FakeStall():  # pragma: no cover - the handler stalls before rendering
            return _bedrock_error(408, None, "stalled")
        case _:
            assert_never(reply)


def _retry_delay(retry_after: str | None) -> list[object]:
    """Gemini's ``RetryInfo`` detail for a wait given in seconds; none for a date or no wait."""
    try:
        seconds = float(retry_after) if retry_after is not None else math.nan
    except ValueError:
        return []
    if not math.isfinite(seconds):
        return []
    return [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{seconds:g}s"}]


def _gemini_error(
    status: int, code: str | None, message: str, details: list[object], headers: tuple[tuple[str, str], ...] = ()
) -> HttpReply:
    name = code or _GEMINI_STATUSES.get(status) or ("INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
    error: dict[str, object] = {"code": status, "message": message, "status": name}
    if details:
        error["details"] = details
    return json_reply(status, {"error": error}, headers)


def _candidates(model: str, parts: list[object] | None, finish: str = "STOP") -> dict[str, object]:
    candidate: dict[str, object] = {"finishReason": finish, "index": 0}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    return {
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
        "responseId": "fake-response",
    }


def gemini_reply(reply: FakeReply, model: str) -> HttpReply:
    """The answer to ``POST .../models/{model}:generateContent`` (the Gemini API's and Vertex AI's)."""
    match reply:
        case FakeText():
            return json_reply(200, _candidates(model, [{"text": reply.text}]))
        case FakeRateLimit():
            headers = (("retry-after", reply.retry_after),) if reply.retry_after is not None else ()
            return _gemini_error(429, None, "Resource has been exhausted.", _retry_delay(reply.retry_after), headers)
        case FakeStatus():
            return _gemini_error(reply.status, reply.code, reply.message, [])
        case FakeEmpty():
            if reply.no_content:
                return json_reply(200, {**_candidates(model, None), "candidates": list[object]()})
            return json_reply(200, _candidates(model, [{"text": "  \n"}]))
        case FakeMalformed():
            return HttpReply(200, TRUNCATED_JSON, (("content-type", "application/json"),))
        case FakeWrongShape():
            return json_reply(200, {"candidates": "not a list", "modelVersion": model})
        case FakeRefusal():
            blocked: dict[str, object] = {
                **_candidates(model, None),
                "candidates": list[object](),
                "promptFeedback": {"blockReason": "SAFETY"},
            }
            return json_reply(200, blocked)
        case FakeStall():  # pragma: no cover - the handler stalls before rendering
            return _gemini_error(504, None, "stalled", [])
        case _:
            assert_never(reply)
