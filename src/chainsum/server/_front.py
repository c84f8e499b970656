"""`FrontDoor`: the app's one middleware: the Host and Origin checks of `_access.HostGuard` on every request, and the
proxy's chat routes answered right behind them.

Why: a chat request (``POST /v1/chat/completions``, ``/v1/messages``, ``/v1/responses``) is what the server is for,
and FastAPI's way to its handler (its exception middleware, its exit-stack middleware, the router trying each route's
pattern, the wrapper around the endpoint) cost as much as a fifth of what chainsum adds to a request with nothing to
compact. Those handlers need none of it: they take the raw request, catch their own errors (`_proxy`) and answer
with a plain Starlette response. Every other path (the session API, the page, ``/v1/models`` and the other ``/v1``
paths, a chat path under a ``root_path``) goes through the app as before, and an error a handler does not catch
still reaches Starlette's error middleware, which stays outside this one (a 500, logged).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request
from starlette.responses import Response

from ._access import ASGIApp, HostGuard, Receive, Scope, Send
from ._settings import ServerSettings

__all__ = ["Endpoint", "FrontDoor"]

Endpoint = Callable[[Request], Awaitable[Response]]


class FrontDoor(HostGuard):
    """`HostGuard`, then each ``POST`` to a path of `direct` answered by its endpoint; anything else goes on to the app.
    A pure ASGI middleware, so streamed answers pass through unbuffered."""

    def __init__(self, app: ASGIApp, settings: ServerSettings, direct: Mapping[str, Endpoint]) -> None:
        super().__init__(app, settings)
        self.direct = dict(direct)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") == "POST" and not scope.get("root_path"):
            endpoint = self.direct.get(scope.get("path", ""))
            if endpoint is not None and self.refusal(scope) is None:
                response = await endpoint(Request(scope, receive, send))
                await response(scope, receive, send)
                return
        await super().__call__(scope, receive, send)
