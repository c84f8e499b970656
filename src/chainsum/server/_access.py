"""Who may use the server, and from where: the admin token, a client's own key, the Host and Origin checks.

Three questions, answered before any route runs or inside the session API:

- **Is the request addressed to this server?** (`HostGuard`, every path.) A web page can make a browser send
  requests to ``127.0.0.1:8765`` under a name of its own (DNS rebinding: ``evil.example`` resolved to 127.0.0.1),
  and the browser then treats the answers as that page's own. The name in ``Host`` tells them apart: only the
  loopback names (``localhost``, ``127.0.0.1``, ``[::1]``), the address the server is bound to, the address the
  connection came in on, and the operator's ``--allowed-host`` entries are served, with the port the server listens
  on; anything else gets **421** (Misdirected Request) with a JSON error. Real clients (Claude Code, Codex, the
  SDKs) send ``Host: 127.0.0.1:PORT`` and pass.
- **Is it a cross-site request?** (`HostGuard` too.) ``Origin``, when a browser sends one, must name an allowed
  host with the same port (**403** otherwise); and a POST to the session API needs a JSON body or a header a
  cross-site form cannot send (``Authorization``, ``x-api-key`` or ``X-Chainsum-Request``), so no HTML form and no
  ``text/plain`` POST from another site reaches it (**403**). POST is the one state-changing method a page can
  send cross-site without asking first (``DELETE`` is preflighted, and no cross-origin preflight is answered).
- **Whose sessions may it see?** (`caller_of`, the session API's dependency.) ``Authorization: Bearer <admin
  token>`` sees every session. Any other credential (the ``Authorization`` or ``x-api-key`` a client sends on
  ``/v1``) is a client's own key: it sees only the sessions that key made, recognised by the credential hash that
  already scopes ``/v1`` sessions (`chainsum.server._identity.credential_scope`, part of every session id). No
  credential at all is a 401. With ``no_auth`` (loopback only) every caller is the admin.

The session list, every route taking a session id, the summaries' originals and the event stream all ask
`Caller.owns`, so a client's key never reaches another client's session by any route: a session it does not own
answers 404, as one that does not exist.
"""

from __future__ import annotations

import hmac
import logging
import re
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request

from ..store import SqlStore
from ._errors import ProxyError, api_error, provider_error
from ._identity import credential_scope
from ._settings import ServerSettings
from ._state import state_of

__all__ = [
    "ADMIN",
    "Caller",
    "HostGuard",
    "caller_of",
    "client_scopes",
    "closed_by_default",
    "host_allowed",
    "redact_access_log",
    "redact_tokens",
]

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
"""Names every server answers to (with its port)."""
_CUSTOM_HEADERS = (b"authorization", b"x-api-key", b"x-chainsum-request")
"""Headers a cross-site HTML form or ``text/plain`` POST cannot carry (a browser asks the server first, and this
server answers no cross-origin preflight)."""
_READ = frozenset({b"host", b"origin", b"content-type", *_CUSTOM_HEADERS})
"""The headers `HostGuard.refusal` reads (the others are not copied)."""
_ADDRESSED = 256
"""Host and Origin pairs whose checks' answers a `HostGuard` keeps."""
_UNCHECKED = (0, "", "")


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling the session API: the admin (every session), or a client whose key hashes to one of
    `scopes` (the sessions whose id ends in ``~<scope>``)."""

    admin: bool
    scopes: frozenset[str] = frozenset()

    def owns(self, session: str) -> bool:
        if self.admin:
            return True
        _, tilde, scope = session.rpartition("~")
        return bool(tilde) and scope in self.scopes


ADMIN = Caller(admin=True)


def client_scopes(secret: str) -> frozenset[str]:
    """The scopes a client key made its sessions under: an OpenAI-style client sends it as ``Authorization: Bearer
    <key>``, an Anthropic-style one as ``x-api-key: <key>``, and the two hash differently (`credential_scope` hashes
    the header's whole value). The page sends whichever key it was given as a bearer token, so both count."""
    return frozenset({credential_scope({"authorization": f"Bearer {secret}"}), credential_scope({"x-api-key": secret})})


def caller_of(request: Request) -> Caller:
    """The session API's dependency: the admin token, else a client's own key, else 401 (see the module
    docstring). The token is compared in constant time; a key is only hashed."""
    state = state_of(request)
    return caller_from(state.settings, state.store, request.headers)


def caller_from(settings: ServerSettings, store: SqlStore, headers: Mapping[str, str]) -> Caller:
    """`caller_of` for any request's `headers` (the MCP endpoint's too), against `settings` and `store`."""
    if settings.no_auth:
        return ADMIN
    scheme, _, value = headers.get("authorization", "").partition(" ")
    bearer = value.strip() if scheme.lower() == "bearer" else ""
    token = settings.api_token
    if token and bearer and hmac.compare_digest(bearer.encode(), token.encode()):
        return ADMIN
    secret = bearer or headers.get("x-api-key", "").strip()
    if not secret:
        raise ProxyError(
            401,
            "missing API token: send Authorization: Bearer <token> (the server's token, or your own API key for "
            "your own sessions)",
            "authorization",
        )
    scopes = client_scopes(secret)
    # A key with no session here is refused rather than shown an empty list: a mistyped admin token then reads as
    # wrong (the page asks again), and a key learns nothing it could not learn by making a session.
    if not any(Caller(admin=False, scopes=scopes).owns(i.session) for i in store.sessions()):
        raise ProxyError(
            401,
            "unknown API token: neither this server's token nor the key of a client with a session here",
            "authorization",
        )
    return Caller(admin=False, scopes=scopes)


def _split(netloc: str, default_port: int) -> tuple[str, int] | None:
    """``name[:port]`` as (lower-case name, port); None when it is not one (a bad port, an empty name)."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        end = netloc.find("]")
        if end < 0:
            return None
        name, rest = netloc[: end + 1], netloc[end + 1 :]
    else:
        name, colon, port = netloc.rpartition(":")
        name, rest = (name, colon + port) if colon else (netloc, "")
    if rest and not (rest.startswith(":") and rest[1:].isdigit()):
        return None
    name = name.rstrip(".")
    if not name:
        return None
    return name, int(rest[1:]) if rest else default_port


def _address(host: str) -> str:
    """An address as it appears in a ``Host`` header (an IPv6 literal in brackets)."""
    host = host.lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def host_allowed(
    netloc: str, *, port: int, local: Iterable[str], allowed: Iterable[str], default_port: int = 80
) -> bool:
    """Whether ``Host`` (or an ``Origin``'s host) `netloc` names this server: a loopback name or one of `local`
    (the bound address, the connection's own) with `port`; or an `allowed` entry (``name`` for any port,
    ``name:port`` for that one, ``*`` for anything)."""
    parsed = _split(netloc, default_port)
    if parsed is None:
        return False
    name, given = parsed
    names = LOOPBACK_NAMES | {_address(h) for h in local if h not in ("", "0.0.0.0", "::")}
    if name in names and given == port:
        return True
    for entry in allowed:
        if entry == "*":
            return True
        wanted = _split(entry, -1)
        if wanted is not None and wanted[0] == name and wanted[1] in (-1, given):
            return True
    return False


class HostGuard:
    """ASGI middleware: the Host, Origin and state-changing checks of the module docstring, before any route.

    A pure ASGI middleware (not Starlette's ``BaseHTTPMiddleware``), so streamed answers pass through unbuffered."""

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.settings = settings
        self._addressed: dict[tuple[bytes, bytes | None, object, object], tuple[int, str, str] | None] = {}
        """The Host and Origin checks' answers by what they read (the two headers, the address the connection came
        in on, the scheme): a client sends the same ones on every request, and parsing them again cost 2 % of a
        chat request's handling. Bounded (`_ADDRESSED`): any Host may come, and a full map is emptied."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message, field = refusal
        path: str = scope.get("path", "")
        logger.info("status=<%d>, path=<%s> | refused: %s", status, path, message)
        if path.startswith("/v1/"):
            response = provider_error("anthropic" if path == "/v1/messages" else "openai", status, message, field)
        else:
            response = api_error(status, message, field)
        await response(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        """(status, message, header) when the request must be refused, else None."""
        headers: dict[bytes, bytes] = {}
        for key, value in scope.get("headers", ()):
            name = bytes(key).lower()
            if name in _READ:
                headers.setdefault(name, bytes(value))
        host, origin = headers.get(b"host", b""), headers.get(b"origin")
        server = scope.get("server")
        checked = (host, origin, tuple(server) if server else None, scope.get("scheme"))
        refused = self._addressed.get(checked, _UNCHECKED)
        if refused is _UNCHECKED:
            refused = self._address_refusal(scope, host, origin)
            if len(self._addressed) >= _ADDRESSED:
                self._addressed.clear()
            self._addressed[checked] = refused
        if refused is not None:
            return refused
        path: str = scope.get("path", "")
        if path.startswith("/api/") and scope.get("method") == "POST":
            media = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
            if media != b"application/json" and not any(h in headers for h in _CUSTOM_HEADERS):
                return (
                    403,
                    "a POST to the session API needs a JSON body (Content-Type: application/json) or an "
                    "Authorization or X-Chainsum-Request header",
                    "content-type",
                )
        return None

    def _address_refusal(self, scope: Scope, host_header: bytes, origin: bytes | None) -> tuple[int, str, str] | None:
        """The Host and Origin checks of `refusal`: (status, message, header) when they refuse, else None."""
        server = scope.get("server")
        port = int(server[1]) if server else self.settings.port
        local = [self.settings.host, str(server[0])] if server else [self.settings.host]
        allowed = self.settings.allowed_hosts
        scheme_port = 443 if scope.get("scheme") == "https" else 80
        host = host_header.decode("latin-1")
        if not host_allowed(host, port=port, local=local, allowed=allowed, default_port=scheme_port):
            return (
                421,
                f"Host {host[:100]!r} is not this server's: use 127.0.0.1:{port} or localhost:{port}, or start "
                "chainsum serve with --allowed-host NAME (CHAINSUM_ALLOWED_HOSTS)",
                "host",
            )
        if origin is not None:
            text = origin.decode("latin-1")
            parts = urlsplit(text) if text != "null" else None
            ok = parts is not None and parts.scheme in ("http", "https") and bool(parts.netloc)
            if not ok or not host_allowed(
                parts.netloc if parts is not None else "",
                port=port,
                local=local,
                allowed=allowed,
                default_port=443 if parts is not None and parts.scheme == "https" else 80,
            ):
                return 403, f"Origin {text[:100]!r} is not allowed: cross-site requests are refused", "origin"
        return None


_TOKEN_IN_QUERY = re.compile(r"(?i)((?:^|[?&])token=)[^&\s\"]*")


def redact_tokens(text: str) -> str:
    """`text` with the value of any ``token=`` query parameter replaced by ``[redacted]``."""
    return _TOKEN_IN_QUERY.sub(r"\1[redacted]", text)


class RedactTokens(logging.Filter):
    """Takes the token out of uvicorn's access log: the page is opened once as ``/?token=...``, and uvicorn logs
    every request's path and query at INFO. The token is printed once, on the console, and nowhere else."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact_tokens(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = redact_tokens(record.msg)
        return True


def redact_access_log() -> None:
    """Install `RedactTokens` on ``uvicorn.access`` (once per process, however many apps are made)."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactTokens) for f in access.filters):
        access.addFilter(RedactTokens())


def closed_by_default(settings: ServerSettings) -> ServerSettings:
    """`settings` with an admin token: the one given, else a fresh random one (an app made with neither a token
    nor `no_auth`, as an embedding application might: the session API then opens to clients' own keys only, and
    the admin token is known to no one). ``chainsum serve`` makes its own first, to print it."""
    if settings.api_token or settings.no_auth:
        return settings
    logger.warning("no api_token configured: the session API opens to clients' own keys only (their own sessions)")
    return replace(settings, api_token=secrets.token_urlsafe(32))
