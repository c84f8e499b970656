"""`create_app`: the FastAPI app of ``chainsum serve``, its long-lived resources opened in the lifespan.

The lifespan opens the store (SQLite file, or PostgreSQL for several workers or hosts), the pooled upstream
client (`_upstream.Upstream`), the event hub's follower, and the session registry; it closes them in reverse
order. Routers reach them through the request (`_state.state_of`), never through module globals.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import sys
from collections.abc import AsyncGenerator, Generator, Sequence
from pathlib import Path
from typing import Any, cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.routing import Route

from ..manager import AnySummarizer
from ..store import SQLiteStore, SqlStore
from ..tokens import HeuristicCounter, TokenCounter
from ._access import closed_by_default, redact_access_log
from ._api import api, open_routes
from ._body import Bodies
from ._errors import ProxyError, api_error, provider_error
from ._front import ChainsumApp
from ._hub import EventHub
from ._mcp import ArchiveEndpoint
from ._metrics import Metrics
from ._proxy import direct as proxy_direct
from ._proxy import routes as proxy_routes
from ._sessions import Sessions
from ._settings import ServerSettings
from ._state import AppState
from ._upstream import Upstream

__all__ = ["create_app", "open_store"]

logger = logging.getLogger(__name__)

_SWITCH_INTERVAL_S = 0.001
"""The interpreter's switch interval while the app runs (`_serving_interpreter`)."""


@contextlib.contextmanager
def _serving_interpreter() -> Generator[None]:
    """The interpreter set up for serving while the app runs, as it was again after.

    Preparations run on worker threads (`_offload`), and a compaction computes there for seconds; what another
    session's request waits for meanwhile is the interpreter's lock (GIL). Two things decide how long:

    - The switch interval: a computing thread hands the lock to the serving loop every switch interval (5 ms by
      default), and one request of another session waits that long at each of its dozen steps: at most 1 ms here.
    - The cyclic garbage collector. A full collection (generation 2) holds the lock for as long as it takes to scan
      every tracked object of the process, and a large compaction's allocations start several of them: a
      20,000-message history set off four or five, of 50-100 ms each, and a request of another session that came
      during one waited for all of it. Most of what each scanned (about 90,000 objects) is what the process made
      before it served: modules, classes, functions, the app and its resources, which never become garbage.
      `gc.freeze` leaves those out of every later collection, which then scans only what the sessions made (10-30
      ms each). Measured (issue 20, `bench/bench_large_compaction.py --part 2`, 3 rounds at load 3): the other
      session's added p99 went from 58-84 ms (SQLite) and 67-139 ms (PostgreSQL) to 17-27 ms and 13-15 ms. Frozen
      objects are still freed as usual when their last reference goes; only a reference cycle among them waits for
      `gc.unfreeze`, at shutdown. No collection before freezing: it takes as long as one of the pauses it saves,
      at every start (a test suite starts many apps), for the little garbage a process holds then.
    """
    switch = sys.getswitchinterval()
    sys.setswitchinterval(min(switch, _SWITCH_INTERVAL_S))
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        sys.setswitchinterval(switch)


def open_store(settings: ServerSettings) -> SqlStore:
    """The store the settings name: PostgreSQL when given, else the SQLite file (``chainsum.db`` by default)."""
    if settings.postgres is not None:
        from ..store import PostgresStore

        return PostgresStore(settings.postgres)
    return SQLiteStore(settings.db or "chainsum.db")


def create_app(
    settings: ServerSettings | None = None,
    *,
    store: SqlStore | None = None,
    summarizers: Sequence[AnySummarizer] | None = None,
    counter: TokenCounter | None = None,
    event_poll_s: float = 0.5,
) -> FastAPI:
    """The app. `store`, `summarizers` and `counter` replace what the settings would make (tests,
    and embedding the proxy in an app of one's own); a given `store` is not closed by the app."""
    settings = closed_by_default(settings or ServerSettings.from_env())
    archive = ArchiveEndpoint()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncGenerator[None]:
        opened = store if store is not None else open_store(settings)
        listen: str | None = getattr(opened, "url", None)  # PostgreSQL: LISTEN for other instances' events
        hub = EventHub(opened, poll_s=event_poll_s, listen_url=listen)
        metrics = Metrics()
        the_counter = counter or HeuristicCounter()
        upstream = Upstream(
            connect_timeout_s=min(settings.connect_timeout_s, settings.upstream_timeout_s),
            read_timeout_s=settings.upstream_timeout_s,
        )
        sessions = Sessions(opened, settings, hub, metrics, summarizers=summarizers, counter=the_counter)
        app.state.chainsum = AppState(
            settings=settings,
            store=opened,
            sessions=sessions,
            hub=hub,
            metrics=metrics,
            upstream=upstream,
            counter=the_counter,
            bodies=Bodies(idle_s=settings.session_idle_s),
        )
        await hub.start()
        sessions.start()
        with _serving_interpreter():
            logger.info(
                "upstream=<%s>, anthropic_upstream=<%s> | chainsum serve ready",
                settings.upstream,
                settings.anthropic_upstream,
            )
            try:
                async with archive.running(app.state.chainsum):
                    yield
            finally:
                await sessions.stop()
                # the requests in flight have ended (uvicorn waits for them); a preparation cut off from its request
                # still runs on its worker: let it end, so that its session's lock is released, then close the
                # workers
                await sessions.shutdown(settings.shutdown_timeout_s)
                await sessions.drain()
                await hub.close()
                await upstream.aclose()
                if store is None:
                    opened.close()

    app = ChainsumApp(
        title="chainsum",
        version=_version(),
        lifespan=lifespan,
        docs_url="/api/docs",
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )

    @app.exception_handler(ProxyError)
    async def proxy_error(request: Request, exc: ProxyError) -> JSONResponse:
        if request.url.path.startswith("/v1/"):
            return provider_error(
                "anthropic" if request.url.path == "/v1/messages" else "openai", exc.status, exc.message, exc.field
            )
        return api_error(exc.status, exc.message, exc.field)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = cast(list[dict[str, Any]], exc.errors())
        first: dict[str, Any] = errors[0] if errors else {}
        loc = cast(list[object], first.get("loc") or [])
        where = ".".join(str(p) for p in loc if p not in ("query", "path", "body"))
        return api_error(400, f"{where or 'request'}: {first.get('msg', 'invalid')}", where or None)

    # Host, Origin, cross-site checks (`_access`), and the chat routes answered right behind them, before the app
    # is entered (`_front`)
    app.open_front_door(settings, proxy_direct)
    redact_access_log()
    app.router.routes.extend(proxy_routes)
    # the archive over MCP (streamable HTTP), scoped per request as the session API is (`_mcp.ArchiveEndpoint`)
    app.router.routes.append(Route("/mcp", archive, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    app.include_router(api)
    app.include_router(open_routes)
    _mount_root(app)
    return app


def _mount_root(app: FastAPI) -> None:
    """``GET /`` and ``HEAD /`` answer 200: clients probe the base URL they were given before their first request
    (Claude Code sends ``HEAD /``), and a proxy that answered 404 or 405 there would stop them before they start.
    The answer is the web page (``chainsum.server.static``, its files under ``/static``) when it is shipped, else
    a short JSON line naming the service."""
    static = Path(__file__).parent / "static"
    if not (static / "index.html").is_file():

        @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
        async def bare() -> JSONResponse:
            return JSONResponse({"service": "chainsum", "version": _version()})

        return
    import mimetypes

    from fastapi.responses import FileResponse
    from fastapi.staticfiles import StaticFiles

    # Browsers run ES modules only when served as JavaScript; some systems' tables (the Windows registry) say
    # text/plain for .js, which StaticFiles would send.
    mimetypes.add_type("text/javascript", ".js")
    mimetypes.add_type("text/css", ".css")
    app.mount("/static", StaticFiles(directory=static), name="static")

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(static / "index.html", headers={"Cache-Control": "no-cache"})


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("chainsum")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        return "0"
