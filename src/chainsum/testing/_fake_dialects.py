"""Which provider a request to `chainsum.testing.FakeLLMServer` speaks, and its answer in that provider's words.

`route` reads the dialect (and, for Bedrock and Gemini, the model) from the URL path; `render` turns a scripted
reply into that dialect's response. OpenAI Chat Completions, the Responses API and Anthropic Messages are rendered
here; Bedrock Converse and Gemini in `_fake_cloud`; the streamed forms in `_fake_stream`.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from typing import Literal, TypeAlias, assert_never, cast

from ._fake_cloud import bedrock_reply, gemini_reply
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
from ._fake_stream import responses_answer

__all__ = ["STREAMING_DIALECTS", "Dialect", "Route", "render", "route"]

Dialect: TypeAlias = Literal["openai", "anthropic", "responses", "bedrock", "gemini"]
STREAMING_DIALECTS: frozenset[Dialect] = frozenset({"openai", "anthropic", "responses"})
"""Dialects whose ``stream: true`` is answered as a stream (Bedrock and Gemini stream on other paths, not served)."""


@dataclass(frozen=True, slots=True)
class Route:
    dialect: Dialect
    model: str | None = None
    """The model named in the path (Bedrock, Gemini); None where the body names it."""


_PATHS: dict[str, Dialect] = {
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
    "/v1/messages": "anthropic",
    "/v1/responses": "responses",
    "/responses": "responses",
}
_BEDROCK = re.compile(r"/model/(?P<model>[^/]+)/converse")
_GEMINI = re.compile(
    r"/(?:v1|v1beta|v1alpha|v1beta1)/(?:(?:projects/[^/]+/locations/[^/]+/)?publishers/google/)?"
    r"models/(?P<model>[^/:]+):generateContent"
)
"""The Gemini API's path and Vertex AI's (``projects/P/locations/L/publishers/google/models/M``, or
``publishers/google/models/M`` with a Vertex API key)."""


def route(path: str) -> Route | None:
    """The dialect of a POST to `path`; None for a path no dialect serves (answered 404)."""
    dialect = _PATHS.get(path)
    if dialect is not None:
        return Route(dialect)
    if match := _BEDROCK.fullmatch(path):
        return Route("bedrock", urllib.parse.unquote(match["model"]))  # botocore sends the id percent-encoded
    if match := _GEMINI.fullmatch(path):
        return Route("gemini", urllib.parse.unquote(match["model"]))
    return None


def render(reply: FakeReply, dialect: Dialect, model: str) -> HttpReply:
    """The HTTP response for one scripted reply (stalls are handled before this is called)."""
    if dialect == "bedrock":
        return bedrock_reply(reply)
    if dialect == "gemini":
        return gemini_reply(reply, model)
    return _render_chat(reply, dialect, model)


def _error(dialect: Dialect, kind: str, message: str) -> object:
    if dialect != "anthropic":
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return {"type": "error", "error": {"type": kind, "message": message}}


def _openai_completion(model: str, content: str | None, *, refusal: str | None = None, finish: str = "stop") -> object:
    message: dict[str, object] = {"role": "assistant", "content": content, "refusal": refusal}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _anthropic_message(model: str, blocks: list[object], stop_reason: str = "end_turn") -> object:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _success(dialect: Dialect, model: str, text: str) -> HttpReply:
    if dialect == "openai":
        return json_reply(200, _openai_completion(model, text))
    if dialect == "responses":
        return json_reply(200, responses_answer(model, text))
    return json_reply(200, _anthropic_message(model, [{"type": "text", "text": text}]))


def _render_chat(reply: FakeReply, dialect: Dialect, model: str) -> HttpReply:
    """OpenAI Chat Completions, the Responses API and Anthropic Messages."""
    match reply:
        case FakeText():
            return _success(dialect, model, reply.text)
        case FakeRateLimit():
            headers = (("retry-after", reply.retry_after),) if reply.retry_after is not None else ()
            return json_reply(429, _error(dialect, "rate_limit_error", "rate limited"), headers)
        case FakeStatus():
            return json_reply(reply.status, _error(dialect, reply.code or "api_error", reply.message))
        case FakeEmpty():
            if dialect != "anthropic":
                payload = cast(dict[str, object], _openai_completion(model, "  \n"))
                if reply.no_content:
                    payload["choices"] = []
                return json_reply(200, payload)
            blocks: list[object] = [] if reply.no_content else [{"type": "text", "text": " \n "}]
            return json_reply(200, _anthropic_message(model, blocks))
        case FakeMalformed():
            return HttpReply(200, TRUNCATED_JSON, (("content-type", "application/json"),))
        case FakeWrongShape():
            key = "content" if dialect == "anthropic" else "choices"
            return json_reply(200, {"id": "x", "model": model, key: "not a list"})
        case FakeRefusal():
            if dialect != "anthropic":
                completion = _openai_completion(model, None, refusal="I can't help with that.", finish="content_filter")
                return json_reply(200, completion)
            return json_reply(200, _anthropic_message(model, [], stop_reason="refusal"))
        case FakeStall():  # pragma: no cover - the handler stalls before rendering
            return json_reply(504, _error(dialect, "timeout", "stalled"))
        case _:
            assert_never(reply)
