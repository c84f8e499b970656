"""``chainsum mcp``: the archive of a ``chainsum serve`` store over MCP, on stdio (``pip install "chainsum[mcp]"``).

An agent client starts it as a local MCP server (``claude mcp add chainsum -- chainsum mcp --db chainsum.db``) and
gets read-only tools to list the sessions, their summary records, search the archived originals and expand a record
into what it replaced (`chainsum.server.archive_server`). ``--key`` limits it to the sessions one client's key made.
"""

from __future__ import annotations

from typing import Annotated

import typer

from ._io import fail

__all__ = ["mcp_cmd"]


def mcp_cmd(
    db: Annotated[str | None, typer.Option("--db", help="SQLite store file (default chainsum.db).")] = None,
    postgres: Annotated[str | None, typer.Option("--postgres", help="PostgreSQL URL of the store.")] = None,
    key: Annotated[
        str | None,
        typer.Option("--key", help="Only the sessions this client API key made (as the session API scopes it)."),
    ] = None,
) -> None:
    """Serve a store's archive to an agent over MCP (stdio).

    Read-only tools: list sessions and their summary records, search the archive, expand a record. Needs the
    server and mcp extras: pip install "chainsum[server,mcp]".
    """
    try:
        from ..server import archive_server
        from ..store import PostgresStore, SQLiteStore
    except ImportError as exc:
        fail(f'chainsum mcp needs the server and mcp extras: pip install "chainsum[server,mcp]" ({exc})')
    if db is not None and postgres is not None:
        fail("--db and --postgres: give one store, not both")
    try:
        store = PostgresStore(postgres) if postgres is not None else SQLiteStore(db or "chainsum.db")
    except Exception as exc:  # a store that cannot be opened: one line, what and where
        fail(f"cannot open the store {postgres or db or 'chainsum.db'}: {exc}")
    try:
        server = archive_server(store, key=key)
    except ImportError as exc:
        fail(str(exc))
    try:
        server.run("stdio")
    finally:
        store.close()
