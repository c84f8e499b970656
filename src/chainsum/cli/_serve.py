"""``chainsum serve``: run the proxy, the session API and the web page (``pip install "chainsum[server]"``).

Options become the ``CHAINSUM_*`` variables the app reads (`chainsum.server.ServerSettings.from_env`), so that
every uvicorn worker process, which imports the app on its own, is configured the same way.
"""

from __future__ import annotations

import os
from typing import Annotated

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
    insecure: Annotated[
        bool, typer.Option("--insecure", help="Allow a non-loopback address without CHAINSUM_API_TOKEN.")
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
    }
    try:
        settings = ServerSettings.from_env(None, host=host, port=port, workers=workers, insecure=insecure, **given)
    except (SettingsError, ValueError) as exc:
        fail(str(exc))
    # Checked: now hand the options to the worker processes, which read the environment.
    names = {**VARIABLES, "context_window": "SUMMARIZATION_CONTEXT_WINDOW"}
    for key, value in given.items():
        if value is not None:
            os.environ[names[key]] = str(value)
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
    )
