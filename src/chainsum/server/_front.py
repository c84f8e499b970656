"""`ChainsumApp` and its `FrontDoor`: the Host and Origin checks of `_access.HostGuard` on every request, and the
proxy's chat routes answered right behind them, before the FastAPI app is entered at all.

Why: a chat request (``POST /v1/chat/completions``, ``/v1/messages``, ``/v1/responses``) is what the server is for,
and FastAPI's way to its handler cost as much as a fifth of what chainsum adds to a request with nothing to
compact: inside the app its exception middleware, its exit-stack middleware, the router trying each route's pattern
and the wrapper around the endpoint; and around it, even behind a middleware of the app's own, FastAPI's check for
configured OpenTelemetry providers, Starlette's error middleware, FastAPI's exception-telemetry and body-limit
middlewares, on every request (about 4 % of the request's handling). The chat handlers need none of it: they take
the raw request, enforce chainsum's own body limit (``max_body_bytes``), catch their own errors (`_proxy`) and
answer with a plain Starlette response. An error one of them does not catch is answered as Starlette's error
middleware answers it (a 500, ``Internal Server Error``) and raised on, for the server to log (uvicorn: "Exception
in ASGI application") and a test client to raise. Every other path (the session API, the page, ``/v1/models`` and
the other ``/v1`` paths, a chat path under a ``root_path``) goes through the app unchanged.

What is lost: with OpenTelemetry tracer, meter or logger providers configured, FastAPI's native spans and metrics
are recorded for the other paths only, not for the chat routes (chainsum's own ``/metrics`` counts those).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ._access import ASGIApp, HostGuard, Receive, Scope, Send
from ._settings import ServerSettings

__all__ = ["ChainsumApp", "Endpoint", "FrontDoor"]

Endpoint = Callable[[Request], Awaitable[Response]]


class FrontDoor(HostGuard):
    """`HostGuard`, then each ``POST`` to a path of `direct` answered by its endpoint; anything else goes on to `app`.
    A pure ASGI wrapper, so streamed answers pass through unbuffered."""

    def __init__(self, app: ASGIApp, settings: ServerSettings, direct: Mapping[str, Endpoint]) -> None:
        super().__init__(app, settings)
        self.direct = dict(direct)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") == "POST" and not scope.get("root_path"):
            endpoint = self.direct.get(scope.get("path", ""))
            if endpoint is not None and self.refusal(scope) is None:
                await _answer(endpoint, scope, receive, send)
                return
        await super().__call__(scope, receive, send)


async def _answer(endpoint: Endpoint, scope: Scope, receive: Receive, send: Send) -> None:
    """`endpoint`'s response; for an exception it does not catch, what Starlette's error middleware does: a 500,
    then the exception raised on. (Only the endpoint is guarded: an answer that fails while it is sent has begun,
    and the server closes the connection, as it does behind that middleware.)"""
    try:
        response = await endpoint(Request(scope, receive, send))
    except Exception:
        await PlainTextResponse("Internal Server Error", status_code=500)(scope, receive, send)
        raise
    await response(scope, receive, send)


class ChainsumApp(FastAPI):
    """The FastAPI app of ``chainsum serve``, with a `FrontDoor` (`open_front_door`) before everything of FastAPI's
    own: the app, its state and its routes are as any FastAPI app's (tests drive it with ``TestClient``)."""

    front: FrontDoor | None = None

    def open_front_door(self, settings: ServerSettings, direct: Mapping[str, Endpoint]) -> None:
        """Check Host and Origin on every request, and answer the POSTs to `direct`'s paths, before the app."""
        self.front = FrontDoor(self._app, settings, direct)

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        await super().__call__(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        front = self.front
        if front is None:
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self  # what the handlers reach the app's state by (Starlette sets it again for the others)
        if self.root_path:  # as FastAPI sets it: the front door leaves a path under a root_path to the app
            scope["root_path"] = self.root_path
        await front(scope, receive, send)
