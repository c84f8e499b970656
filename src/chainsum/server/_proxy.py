"""The proxy routes: ``POST /v1/chat/completions``, ``POST /v1/messages``, ``POST /v1/responses``,
``GET /v1/models``, and every other path under ``/v1``, forwarded untouched (`other`).

Each request: read the body (413 over the limit, 400 when it is not a JSON object or its history is not a list,
in the provider's error shape naming the field: only what is not a chat request at all; parsed from what changed
since the same client's previous body, `_body`); find its session
(`_identity`) and window (the ``X-Chainsum-Context-Window`` header, else the configured window, else the model
table; an unknown model is passed through untouched and says so in ``X-Chainsum-Skipped``); prepare the history
(`_sessions`); send the body upstream (the client's own bytes when nothing changed) and relay the answer
unchanged, as it arrives. A request the provider compacts itself (``context_management``, a ``compaction`` item or
block: `_native`) is forwarded untouched and says so in ``X-Chainsum-Skipped``. A history chainsum cannot read (a
role, block or shape it does not know) goes upstream as the client's own bytes, with ``X-Chainsum-Passthrough`` on
the answer (`_passthrough`): the upstream decides what is valid.

A compaction is announced to a streaming client before the first chunk. On the OpenAI routes it is an SSE comment
line, ``: context_summarized {json}``, which every SSE parser skips (the OpenAI Python SDK turns every *named*
event into a chunk and fails on an unknown one); a client that sends ``X-Chainsum-Events: named`` gets the named
event instead. The Anthropic SDK passes unknown named events by, so ``/v1/messages`` gets ``event:
context_summarized``. Every response carries ``X-Chainsum-Session``, ``X-Chainsum-Summarized``,
``X-Chainsum-Tokens-Before``, ``X-Chainsum-Tokens-After`` and ``Server-Timing: chainsum;dur=MS`` (chainsum's own
time on the request before the upstream's, after any entries of the upstream's).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ..manager import Prepared, SummarizationEvent, count_marks, known_window
from ..tokens import CalibratedCounter, TokenCounter, json_tokens
from ._errors import Dialect, ProxyError, provider_error
from ._identity import credential_scopes, named_session, session_key
from ._native import provider_compaction
from ._passthrough import DETAIL_HEADER, HEADER, UnreadableHistory, header_value
from ._sessions import Live
from ._state import AppState, state_of
from ._upstream import UpstreamError, client_headers, upstream_headers

__all__ = ["direct", "routes"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _Route:
    name: str
    dialect: Dialect
    fmt: str
    provider: str
    history: str
    """The body field holding the history."""
    upstream_path: str
    """Below the upstream base URL (OpenAI bases end in /v1, Anthropic's does not)."""


_CHAT = _Route("chat", "openai", "openai", "openai", "messages", "/chat/completions")
_MESSAGES = _Route("messages", "anthropic", "anthropic", "anthropic", "messages", "/v1/messages")
_RESPONSES = _Route("responses", "openai", "openai-responses", "openai", "input", "/responses")


async def _read_body(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) past `limit` bytes. Read off the ASGI channel as Starlette's
    `Request.stream` reads it (a disconnect raises `ClientDisconnect`), without its generator around each chunk: a
    Claude Code body comes in a dozen chunks."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ProxyError(413, f"request body of {int(declared):,} bytes is over the limit of {limit:,} bytes")
    chunks: list[bytes] = []
    size = 0
    receive = request.receive
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ProxyError(413, f"request body is over the limit of {limit:,} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _serialize(body: Mapping[str, Any]) -> bytes:
    """The body with its new history as JSON bytes (orjson; the standard library for what orjson cannot write)."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def _window(headers: Mapping[str, str], state: AppState, model: str) -> int | None:
    given = headers.get("x-chainsum-context-window")
    if given is not None:
        if not given.strip().isdigit() or int(given) < 1:
            raise ProxyError(400, f"X-Chainsum-Context-Window {given!r}: expected a positive whole number of tokens")
        return int(given)
    if state.settings.context_window is not None:
        return state.settings.context_window
    return known_window(model) if model else None


def _tool_facts(live: Live, tools: object, counter: TokenCounter, dialect: Dialect) -> tuple[int, int]:
    """The tokens of the request's tool definitions, and how many of their blocks carry ``cache_control`` (they
    count towards Anthropic's 4 with the ones the manager may add): counted once for as long as the session's
    client sends the same definitions (`Live.tools`). A `CalibratedCounter`'s count moves with its factor, so it is
    asked each time (it remembers its base count itself)."""
    known = live.tools
    if known is not None and known[0] == tools:
        if known[0] is not tools:  # the same definitions, new objects: kept, so that the next compare is by identity
            live.tools = (tools, known[1], known[2])  # (`Bodies` hands the next request this very object)
        tokens = json_tokens(counter, tools) if isinstance(counter, CalibratedCounter) else known[1]
        return tokens, known[2]
    facts = json_tokens(counter, tools), count_marks(tools) if dialect == "anthropic" else 0
    live.tools = (tools, *facts)
    return facts


def _reserve(body: Mapping[str, Any], window: int, tool_tokens: int) -> int:
    """Tokens the request needs beyond its history: its tool definitions (`tool_tokens`), and the answer it asks
    room for (at most a quarter of the window: a client asking for the whole window still gets a history)."""
    reserved = tool_tokens
    for name in ("max_completion_tokens", "max_tokens", "max_output_tokens"):
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            reserved += min(value, window // 4)
            break
    return reserved


def _announcement(route: _Route, headers: Mapping[str, str], data: Mapping[str, Any]) -> bytes:
    payload = json.dumps(data, separators=(",", ":"))
    named = route.dialect == "anthropic" or headers.get("x-chainsum-events", "").strip().lower() == "named"
    if named:
        return f"event: {data['type']}\ndata: {payload}\n\n".encode()
    return f": {data['type']} {payload}\n\n".encode()


async def _proxy(request: Request, route: _Route) -> Response:
    state = state_of(request)
    started = time.perf_counter()
    try:
        return await _handle(request, route, state, started)
    except ProxyError as exc:
        state.metrics.count_request(route.name, exc.status)
        return provider_error(route.dialect, exc.status, exc.message, exc.field)


def _skipped(route: _Route, body: Mapping[str, Any], raw: bytes) -> str | None:
    """Why a request has no history of its own to compact (None: it has one). The provider compacts it
    (`provider_compaction`); or, on Responses, the upstream keeps the conversation (``previous_response_id``,
    ``conversation``), or the request names no list (a string ``input``, or none with a stored ``prompt``): valid
    requests, forwarded as they are."""
    if (native := provider_compaction(body, raw, route.history)) is not None:
        return native
    if route.name != "responses":
        return None
    for name in ("previous_response_id", "conversation"):
        if body.get(name):
            return name
    items = body.get(route.history)
    if isinstance(items, str):
        return "string input"
    return "no input" if items is None else None


def _client(route: _Route, headers: Mapping[str, str], scopes: tuple[str, str]) -> tuple[str, ...]:
    """Whose body a request is, known before it is read (`Bodies.parse` reads it against that client's previous
    one): its route, its credentials' scope and the session a header names (clients that name none share one
    previous body per credentials: a body that is another session's is only read whole)."""
    return (route.name, scopes[0], named_session(headers))


def _lookup(scope: Mapping[str, Any]) -> dict[str, str]:
    """The request's headers as a plain dict, for the dozen lookups a request makes (Starlette's `Headers` scans
    and decodes the raw list on each); a name sent twice reads as its first value, as `Headers.get` reads it."""
    raw = cast(list[tuple[bytes, bytes]], scope["headers"])
    return {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in reversed(raw)}


async def _handle(request: Request, route: _Route, state: AppState, started: float) -> Response:
    raw = await _read_body(request, state.settings.max_body_bytes)
    headers = _lookup(request.scope)
    scopes = credential_scopes(headers)
    body = state.bodies.parse(raw, _client(route, headers, scopes), route.history)
    given_model = body.get("model")
    model = given_model if isinstance(given_model, str) else ""  # the upstream says what it makes of another value
    items = body.get(route.history)
    skipped = _skipped(route, body, raw)
    if skipped is None and not isinstance(items, list):
        raise ProxyError(400, f"{route.history}: expected a list of messages", route.history)
    extra: dict[str, str] = {}
    prepared: Prepared[Any] | None = None
    window = None if skipped is not None else _window(headers, state, model)
    if skipped is not None:
        extra["X-Chainsum-Skipped"] = skipped
    elif window is None:
        extra["X-Chainsum-Skipped"] = "unknown model (set X-Chainsum-Context-Window)"
    elif items:
        try:
            prepared = await _prepare(route, state, headers, scopes, body, cast(list[Any], items), window, extra)
        except Exception:  # a bug of chainsum's must not fail the request: it goes as it came (fail open)
            logger.exception("route=<%s> | preparing the request failed; sending it unchanged", route.name)
            state.metrics.failures.inc()
            extra["X-Chainsum-Error"] = "chainsum failed; request sent unchanged"
    state.metrics.observe_prepare(route.name, time.perf_counter() - started)
    content = raw
    event: SummarizationEvent | None = None
    if prepared is not None:
        if prepared.messages is not items:
            content = _serialize({**body, route.history: list(prepared.messages)})
        if isinstance(prepared.event, SummarizationEvent):
            event = prepared.event
        extra["X-Chainsum-Summarized"] = "true" if event is not None else "false"
        extra["X-Chainsum-Tokens-Before"] = str(prepared.tokens_before)
        extra["X-Chainsum-Tokens-After"] = str(prepared.tokens_after)
    # chainsum's own time on the request (reading, preparing, writing the body), apart from the upstream's: what
    # an operator compares with the upstream's latency, in the standard header browsers' devtools show
    extra["Server-Timing"] = f"chainsum;dur={(time.perf_counter() - started) * 1000:.2f}"
    base = state.settings.anthropic_upstream if route.dialect == "anthropic" else state.settings.upstream
    return await _forward(request, route, state, f"{base.rstrip('/')}{route.upstream_path}", content, extra, event)


async def _prepare(
    route: _Route,
    state: AppState,
    headers: Mapping[str, str],
    scopes: tuple[str, str],
    body: Mapping[str, Any],
    history: list[Any],
    window: int,
    extra: dict[str, str],
) -> Prepared[Any] | None:
    """The request's session, and the history to send (None: the client's, unchanged). A history chainsum cannot
    read is the client's to send and the upstream's to judge: it goes unchanged, and the answer says so."""
    system: object = body.get("system") if route.dialect == "anthropic" else body.get("instructions")
    key = session_key(headers, body, system=system, messages=history, scopes=scopes)
    key = await state.sessions.resolve(key)
    live = state.sessions.live(key, fmt=route.fmt, provider=route.provider, window=window)
    model = body.get("model")
    live.model = model if isinstance(model, str) else ""
    extra["X-Chainsum-Session"] = live.key.id  # an older version's id, for a session it stored
    tool_tokens, marks = _tool_facts(live, body.get("tools"), state.counter, route.dialect)
    try:
        prepared = await state.sessions.prepare(
            live, history, system=system, reserved=_reserve(body, window, tool_tokens), marks=marks
        )
    except UnreadableHistory as exc:
        state.sessions.passthrough(key.id, route.name, "unreadable-history", exc.detail)
        extra[HEADER] = "unreadable-history"
        extra[DETAIL_HEADER] = header_value(exc.detail)
        return None
    if prepared is None:
        extra["X-Chainsum-Error"] = "summarization failed; history sent unchanged"
    return prepared


def _with_timing(upstream: dict[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The upstream's headers with ours over them, but ``Server-Timing`` joined: the upstream's entries (in
    whatever case it spelled the name), then chainsum's."""
    theirs = [upstream.pop(k) for k in list(upstream) if k.lower() == "server-timing"]
    out = {**upstream, **extra}
    if theirs:
        out["Server-Timing"] = ", ".join([*theirs, *([extra["Server-Timing"]] if "Server-Timing" in extra else [])])
    return out


async def _forward(
    request: Request,
    route: _Route,
    state: AppState,
    url: str,
    content: bytes,
    extra: dict[str, str],
    event: SummarizationEvent | None,
) -> Response:
    query: bytes = request.scope.get("query_string", b"")
    sent = time.perf_counter()
    try:
        response = await state.upstream.send(
            request.method,
            url + (f"?{query.decode('latin-1')}" if query else ""),
            upstream_headers(request.headers),
            content,
        )
    except UpstreamError as exc:
        raise ProxyError(504 if exc.timeout else 502, f"upstream {url} {exc}") from None
    state.metrics.observe_upstream(route.name, time.perf_counter() - sent)
    state.metrics.count_request(route.name, response.status)
    prefix = b""
    if event is not None and response.streaming and response.status == 200:
        session = extra.get("X-Chainsum-Session", "")
        prefix = _announcement(route, request.headers, event.to_context_summarized(session).to_json_dict())
    out_headers = _with_timing(client_headers(response.headers), extra)
    if not response.streaming and response.length_known:
        # A whole answer of known length (a non-streaming completion, an error): read it and send it in one piece,
        # without the streaming machinery (a task group, chunked encoding), which costs milliseconds a request.
        try:
            body = await response.read()
        except UpstreamError as exc:
            raise ProxyError(502, f"upstream {url} {exc}") from None
        return Response(body, status_code=response.status, headers=out_headers)
    return StreamingResponse(response.relay(prefix), status_code=response.status, headers=out_headers)


async def chat_completions(request: Request) -> Response:
    return await _proxy(request, _CHAT)


async def messages(request: Request) -> Response:
    return await _proxy(request, _MESSAGES)


async def responses(request: Request) -> Response:
    return await _proxy(request, _RESPONSES)


def _upstream_url(request: Request, state: AppState) -> tuple[Dialect, str]:
    """Where a path under ``/v1`` with no route of its own goes: Anthropic's upstream for its paths
    (``/v1/messages/...``) and for any request of its SDK (which always sends ``anthropic-version``), else the
    OpenAI-style one, whose base ends in ``/v1``. The path goes as the client encoded it (``raw_path``): decoded,
    a ``%0A`` in it would be a line break in the upstream request line."""
    raw: bytes = request.scope.get("raw_path") or request.url.path.encode()
    path = raw.decode("latin-1")
    if path.startswith("/v1/messages") or "anthropic-version" in request.headers:
        return "anthropic", f"{state.settings.anthropic_upstream.rstrip('/')}{path}"
    return "openai", f"{state.settings.upstream.rstrip('/')}{path.removeprefix('/v1')}"


async def models(request: Request) -> Response:
    """Passed through to the upstream (the client's credentials go with it): Anthropic's for its SDK, else the
    OpenAI-style one."""
    state = state_of(request)
    dialect, url = _upstream_url(request, state)
    try:
        return await _forward(request, _Route("models", dialect, "", "", "", ""), state, url, b"", {}, None)
    except ProxyError as exc:
        return provider_error(dialect, exc.status, exc.message, exc.field)


async def other(request: Request) -> Response:
    """Any other path under ``/v1`` (Anthropic's ``messages/count_tokens`` and ``messages/batches``, OpenAI's
    ``embeddings`` and ``files``, what a provider adds next): chainsum has nothing to do there, so it forwards the
    request as it came (method, query, headers, body) and relays the answer, with ``X-Chainsum-Passthrough:
    unknown-route``; a client that calls an endpoint chainsum does not know still works through it."""
    state = state_of(request)
    dialect, url = _upstream_url(request, state)
    try:
        raw = await _read_body(request, state.settings.max_body_bytes)
        state.sessions.passthrough(None, "other", "unknown-route", request.url.path)
        extra = {HEADER: "unknown-route"}
        return await _forward(request, _Route("other", dialect, "", "", "", ""), state, url, raw, extra, None)
    except ProxyError as exc:
        state.metrics.count_request("other", exc.status)
        return provider_error(dialect, exc.status, exc.message, exc.field)


routes = [
    Route("/v1/chat/completions", chat_completions, methods=["POST"]),
    Route("/v1/messages", messages, methods=["POST"]),
    Route("/v1/responses", responses, methods=["POST"]),
    Route("/v1/models", models, methods=["GET"]),
    Route("/v1/{path:path}", other, methods=["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]),
]
"""Plain Starlette routes, not FastAPI's: a proxy route takes the raw request and answers with raw bytes, so
FastAPI's per-request work (solving dependencies, validating a response model) would be spent for nothing, and
it is a measurable part of what the proxy adds to a request."""

direct = {"/v1/chat/completions": chat_completions, "/v1/messages": messages, "/v1/responses": responses}
"""The chat routes by path, for `_front.FrontDoor`, which answers their POSTs without the app's router (the routes
above serve the same paths for anything it passes on)."""
