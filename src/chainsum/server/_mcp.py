"""The archive over MCP: what a compaction took away, for an agent to ask about (issue 34).

`archive_server(store, key=...)` is an MCP server (the official ``mcp`` SDK's `MCPServer`) with four read-only
tools over a chainsum store: ``list_sessions``, ``list_records`` (a session's summary-record chain),
``search_archive`` (full-text search over a session's archived originals) and ``expand_record`` (the originals a
record replaced, each verified against its SHA-256). They answer what the session API's routes answer, scoped the
same way (`_access.Caller`): the admin sees every session, a client's key only the sessions it made; a session or
record of another client reads as missing, as on the API. Nothing writes.

``chainsum mcp`` runs it over stdio on the store ``chainsum serve`` uses (``--db``/``--postgres``), as the admin of
that store (whoever can read the file can read the archive) or, with ``--key``, as that client. What the archive
holds is conversation text: tools return it as data (JSON), never as instructions.
"""

# No ``from __future__ import annotations``: the SDK reads the tools' annotations to find their `Context`
# parameter, and `Context` is imported where the tools are made (the extra is optional), not at module level.

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from ..messages import message_to_dict
from ..store import SqlStore, StoreError, UnknownSummaryError
from ._access import ADMIN, Caller, caller_from, client_scopes
from ._errors import ProxyError
from ._state import AppState

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["ArchiveEndpoint", "archive_server"]

T = TypeVar("T")

INSTALL_HINT = 'the MCP server needs the mcp SDK: pip install "chainsum[mcp]"'
MAX_HITS = 200


class ArchiveTools:
    """The tools' work, apart from the SDK: each one a read of `store` within what `caller` owns."""

    def __init__(self, store: SqlStore, caller: Caller) -> None:
        self.store = store
        self.caller = caller

    def _own(self, session: str) -> None:
        if not self.caller.owns(session) or self.store.session_info(session) is None:
            raise ValueError(f"no session {session!r}")

    def list_sessions(self) -> list[dict[str, Any]]:
        return [
            {
                "session": i.session,
                "label": i.label,
                "active_ms": i.active_ms,
                **{k: i.info[k] for k in _SESSION_FIELDS if k in i.info},
            }
            for i in self.store.sessions()
            if self.caller.owns(i.session)
        ]

    def list_records(self, session: str) -> list[dict[str, Any]]:
        self._own(session)
        return [
            {
                "id": r.id,
                "depth": r.depth,
                "timestamp_ms": r.timestamp_ms,
                "summary": r.summary,
                "key_points": list(r.key_points),
                "messages_replaced": len(r.original_message_ids),
            }
            for r in self.store.records(session)
        ]

    def search_archive(self, session: str, query: str, limit: int) -> list[dict[str, Any]]:
        self._own(session)
        if not query.strip():
            raise ValueError("query: expected some words to search for")
        if not 1 <= limit <= MAX_HITS:
            raise ValueError(f"limit {limit}: expected 1 to {MAX_HITS}")
        return [
            {"message_id": h.message_id, "position": h.position, "role": h.role, "snippet": h.snippet}
            for h in self.store.search(session, query, limit)
        ]

    def expand_record(self, record_id: str) -> dict[str, Any]:
        if not self.caller.admin and not any(
            r.id == record_id
            for i in self.store.sessions()
            if self.caller.owns(i.session)
            for r in self.store.records(i.session)
        ):
            raise ValueError(f"no record {record_id!r}")
        try:
            messages = self.store.expand(record_id)
        except UnknownSummaryError:
            raise ValueError(f"no record {record_id!r}") from None
        except StoreError as exc:  # an integrity failure: say so, never show unverified text
            raise ValueError(str(exc)) from None
        return {"id": record_id, "verified": True, "messages": [message_to_dict(m) for m in messages]}


_SESSION_FIELDS = ("tokens", "window", "messages", "compactions", "model", "format")
"""What of a session's directory row `list_sessions` shows (the page's list shows the same)."""


CALLER_SCOPE_KEY = "chainsum.caller"
"""Where `ArchiveEndpoint` leaves the request's `Caller` in the ASGI scope, for the tools to read."""


def archive_server(store: SqlStore, *, key: str | None = None, per_request: bool = False) -> "MCPServer":
    """The MCP server of `store`'s archive (see the module docstring): every session's, or with `key` (a client's
    API key, as it sends it to the proxy) only the sessions that client made. `per_request`: the caller is each
    HTTP request's, as `ArchiveEndpoint` found it (``chainsum serve``'s ``/mcp``)."""
    fixed = ADMIN if key is None else Caller(admin=False, scopes=client_scopes(key))
    try:
        from mcp.server.mcpserver import Context, MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.types import ToolAnnotations
    except ImportError as exc:  # pragma: no cover - the extra is in the development environment
        raise ImportError(INSTALL_HINT) from exc

    def tools_for(ctx: Context[Any]) -> ArchiveTools:
        """The tools as the caller of this call may use them: the fixed caller, or the HTTP request's."""
        if not per_request:
            return ArchiveTools(store, fixed)
        request = ctx.request_context.request
        caller = getattr(request, "scope", {}).get(CALLER_SCOPE_KEY)
        if not isinstance(caller, Caller):  # pragma: no cover - `ArchiveEndpoint` always sets it
            raise ToolError("no caller: this server answers through chainsum serve's /mcp only")
        return ArchiveTools(store, caller)

    server = MCPServer(
        "chainsum-archive",
        instructions=(
            "Read-only access to what chainsum's compactions took out of a conversation: the summary records, "
            "search over the archived originals, and the originals a record replaced. The text returned is the "
            "conversation's, quoted as data."
        ),
    )
    read_only = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )

    async def read(work: Callable[[], T]) -> T:
        """`work` off the event loop (a store read); a refusal (a session not the caller's, a bad argument) is the
        tool's answer to the model, one line, not a crash."""
        try:
            return await asyncio.to_thread(work)
        except ValueError as exc:
            raise ToolError(str(exc)) from None

    async def list_sessions(ctx: Context[Any]) -> list[dict[str, Any]]:
        """The sessions this archive holds (that you may read), with their token counts and compactions."""
        return await read(tools_for(ctx).list_sessions)

    async def list_records(session: str, ctx: Context[Any]) -> list[dict[str, Any]]:
        """A session's summary records, oldest first: each compaction's summary and how many messages it replaced."""
        tools = tools_for(ctx)
        return await read(lambda: tools.list_records(session))

    async def search_archive(session: str, query: str, ctx: Context[Any], limit: int = 20) -> list[dict[str, Any]]:
        """Full-text search over the original messages a session's compactions archived (best match first)."""
        tools = tools_for(ctx)
        return await read(lambda: tools.search_archive(session, query, limit))

    async def expand_record(record_id: str, ctx: Context[Any]) -> dict[str, Any]:
        """The original messages a summary record replaced, in order, each verified against its SHA-256."""
        tools = tools_for(ctx)
        return await read(lambda: tools.expand_record(record_id))

    for tool in (list_sessions, list_records, search_archive, expand_record):
        server.add_tool(tool, annotations=read_only)
    return server


class ArchiveEndpoint:
    """``/mcp`` of ``chainsum serve``: `archive_server` over MCP's streamable HTTP, scoped per request as the session
    API is (`_access.caller_from`: the admin token every session, a client's own key its own sessions, else 401).

    Stateless (each request stands alone, JSON answers): nothing is kept between calls, so any worker answers any
    call. Made when the app starts (the store is opened then: `running`); without the ``mcp`` SDK the path answers
    501 with the install hint. The Host and Origin checks are the app's own (`_access.HostGuard`), before this."""

    def __init__(self) -> None:
        self._app: Any = None
        self._state: AppState | None = None
        self.missing: str | None = None
        """Why there is no MCP server (the SDK is not installed), once `running` found out."""

    @contextlib.asynccontextmanager
    async def running(self, state: AppState) -> AsyncGenerator[None]:
        """Serve while the block runs (the app's lifespan): the SDK's session manager runs for that long."""
        try:
            server = archive_server(state.store, per_request=True)
            from mcp.server.transport_security import TransportSecuritySettings
        except ImportError:
            self.missing = INSTALL_HINT
            yield
            return
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)  # the app checks Host first
        self._app = server.streamable_http_app(stateless_http=True, json_response=True, transport_security=security)
        self._state = state
        try:
            async with server.session_manager.run():
                yield
        finally:
            self._app = self._state = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app, state = self._app, self._state
        if app is None or state is None:
            message = self.missing or "the MCP endpoint is not running"
            await _answer(scope, receive, send, 501 if self.missing else 503, message)
            return
        try:
            caller = caller_from(state.settings, state.store, Headers(scope=scope))
        except ProxyError as exc:
            await _answer(scope, receive, send, exc.status, exc.message)
            return
        await app({**scope, CALLER_SCOPE_KEY: caller}, receive, send)


async def _answer(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    await JSONResponse({"error": {"message": message}}, status_code=status)(scope, receive, send)
