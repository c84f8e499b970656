"""``chainsum serve``: run the proxy, the session API and the web page (``pip install "chainsum[server]"``).

Options become the ``CHAINSUM_*`` variables the app reads (`chainsum.server.ServerSettings.from_env`), so that
every uvicorn worker process, which imports the app on its own, is configured the same way.
"""

from __future__ import annotations

import os
import secrets
import signal
from types import FrameType
from typing import Annotated, cast

import typer

from ._io import fail
from ._options import tokens

__all__ = ["serve_cmd"]


def serve_cmd(
    host: Annotated[str, typer.Option("--host", help="Address to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8765,
    upstream: Annotated[
        str | None,
        typer.Option("--upstream", help="OpenAI-style base URL (ends in /v1). Env: CHAINSUM_UPSTREAM_URL."),
    ] = None,
    anthropic_upstream: Annotated[
        str | None,
        typer.Option("--anthropic-upstream", help="Anthropic base URL. Env: CHAINSUM_ANTHROPIC_UPSTREAM_URL."),
    ] = None,
    db: Annotated[str | None, typer.Option("--db", help="SQLite store file (default chainsum.db).")] = None,
    postgres: Annotated[
        str | None, typer.Option("--postgres", help="PostgreSQL URL: the store for several workers or hosts.")
    ] = None,
    workers: Annotated[int, typer.Option("--workers", help="Worker processes (needs --db or --postgres).")] = 1,
    context_window: Annotated[
        str | None,
        typer.Option(
            "--context-window",
            metavar="TOKENS",
            help="Window for every request (else the model table, or the header).",
        ),
    ] = None,
    upstream_timeout_s: Annotated[
        float | None,
        typer.Option(
            "--upstream-timeout",
            metavar="SECONDS",
            help="Longest wait for the upstream (to connect, and between two chunks of an answer); past it, a 504. "
            "Default 600. Env: CHAINSUM_UPSTREAM_TIMEOUT_SECONDS.",
        ),
    ] = None,
    session_idle_s: Annotated[
        float | None,
        typer.Option(
            "--session-idle-timeout",
            metavar="SECONDS",
            help="A session with no request for this long leaves memory (its state stays in the store). "
            "Default 600. Env: CHAINSUM_SESSION_IDLE_SECONDS.",
        ),
    ] = None,
    no_auth: Annotated[
        bool,
        typer.Option(
            "--no-auth",
            help="No token: any local process or web page can read and delete every session. Loopback hosts only. "
            "Env: CHAINSUM_NO_AUTH=1.",
        ),
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            metavar="NAME[:PORT]",
            help="Also answer requests whose Host is NAME (repeatable; * for any); others get 421. "
            "Env: CHAINSUM_ALLOWED_HOSTS (comma-separated).",
        ),
    ] = None,
    public_metrics: Annotated[
        bool, typer.Option("--public-metrics", help="/metrics without the token. Env: CHAINSUM_PUBLIC_METRICS=1.")
    ] = False,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn log level.")] = "info",
) -> None:
    # The docstring is the command's help: plain text, its first paragraph the line in chainsum --help.
    """Serve the compacting proxy, the session API and the web page.

    The proxy answers /v1/chat/completions, /v1/messages and /v1/responses. Needs the server extra:
    pip install "chainsum[server]".
    """
    try:
        import uvicorn

        from ..server import VARIABLES, ServerSettings, SettingsError
    except ImportError as exc:
        fail(f'chainsum serve needs the server extra: pip install "chainsum[server]" ({exc})')
    window = tokens(context_window, "--context-window")
    given: dict[str, object] = {
        "upstream": upstream,
        "anthropic_upstream": anthropic_upstream,
        "db": db,
        "postgres": postgres,
        "context_window": window or None,
        "upstream_timeout_s": upstream_timeout_s,
        "session_idle_s": session_idle_s,
        "no_auth": no_auth or None,
        "allowed_hosts": tuple(allowed_host) if allowed_host else None,
        "public_metrics": public_metrics or None,
    }
    try:
        settings = ServerSettings.from_env(None, host=host, port=port, workers=workers, **given)
    except (SettingsError, ValueError) as exc:
        fail(str(exc))
    # Checked: now hand the options to the worker processes, which read the environment.
    names = {**VARIABLES, "context_window": "SUMMARIZATION_CONTEXT_WINDOW"}
    for key, value in given.items():
        if value is not None:
            os.environ[names[key]] = _env_text(value)
    _announce(settings.host, settings.port, no_auth=settings.no_auth, token=settings.api_token)
    # uvicorn takes SIGTERM over while it serves, shuts down gracefully, then raises the signal again with the handler
    # found before it: this one, so that a clean stop exits 0 (a service manager reads a signalled exit as a failure),
    # as does a SIGTERM that comes before uvicorn has started.
    signal.signal(signal.SIGTERM, _stopped)
    uvicorn.run(
        "chainsum.server._factory:app_from_env",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        log_level=log_level,
        proxy_headers=False,
        # Longer than clients keep an idle connection (httpx: 5 s, the default of uvicorn too): the client closes
        # first, so it never sends a request on a connection the server is closing at that moment.
        timeout_keep_alive=65,
        # SIGTERM: stop accepting, give the requests in flight this long to finish, then the app's shutdown (its
        # preparations end, session locks are released, the pools close) and exit 0.
        timeout_graceful_shutdown=max(1, round(settings.shutdown_timeout_s)),
    )


def _stopped(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    raise SystemExit(0)


def _env_text(value: object) -> str:
    """An option as its variable is written: a flag as ``1``, hosts comma-separated."""
    if isinstance(value, tuple):
        return ",".join(str(v) for v in cast(tuple[object, ...], value))
    return "1" if value is True else str(value)


def _announce(host: str, port: int, *, no_auth: bool, token: str | None) -> None:
    """Say where the page is, on the console. Closed by default, like Jupyter: with no token configured, one is made
    for this run, handed to the workers through ``CHAINSUM_API_TOKEN`` and printed here, once, in the page's URL (the
    page keeps it and takes it out of the address bar); it is never logged."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    if no_auth:
        typer.echo(
            f"chainsum serve: --no-auth: every local process and web page can read, compact and delete every "
            f"session. The page: {url}",
            err=True,
        )
        return
    if token is None:
        token = secrets.token_urlsafe(32)
        os.environ["CHAINSUM_API_TOKEN"] = token
        typer.echo(f"chainsum serve: open the page at {url}?token={token}", err=True)
        typer.echo(
            "  (a token made for this run; set CHAINSUM_API_TOKEN to choose one. A client's own API key opens "
            "its own sessions.)",
            err=True,
        )
        return
    typer.echo(f"chainsum serve: the page is at {url} (it asks for CHAINSUM_API_TOKEN, or your own API key)", err=True)
