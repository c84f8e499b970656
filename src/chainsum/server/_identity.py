"""Which session a proxied request belongs to, and whose it is.

A client that names its session is believed: ``X-Chainsum-Session``, else the session header a client sends of its
own accord (Claude Code's ``X-Claude-Code-Session-Id``, ``session-id``, ``x-session-id``), else a field of the body
that identifies the conversation (OpenAI's ``prompt_cache_key``, ``metadata.session_id``, the session part of
Anthropic's ``metadata.user_id``, which Claude Code fills with ``..._session_<uuid>`` or a JSON object holding a
``session_id``). A client that says nothing gets a fingerprint of how its conversation starts (the system prompt
and the first user message), so that the same conversation resent keeps its session.

Every session is scoped by a hash of the client's credentials (``Authorization`` / ``x-api-key``): two clients
naming the same session never share it, and the credential itself appears nowhere (only 16 hex digits of its
SHA-256, which cannot be turned back into a key). The same hash lets a client's key open its own sessions in the
session API (`chainsum.server._access`), so it is long enough that no one can search for another key with the same
digits: 64 bits, where the 10 digits of earlier versions (40 bits) were within reach of one GPU. A session recorded
under a 10-digit scope is shown to the admin token only.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import unquote

__all__ = [
    "SESSION_HEADERS",
    "SessionKey",
    "credential_scope",
    "credential_scopes",
    "escape_name",
    "named_session",
    "session_key",
    "unescape_name",
]

SESSION_HEADERS = ("x-chainsum-session", "x-claude-code-session-id", "session-id", "x-session-id")
"""Headers naming the session, in order of preference (lower case, as Starlette gives them)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._:-]")
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-")
_CLAUDE_SESSION = re.compile(r"_session_([A-Za-z0-9-]+)$")
_MAX_NAME = 96
"""How much of a cleaned name versions before 0.x kept (`_legacy_id`)."""
_MAX_ESCAPED = 480
"""An escaped name longer than this is cut and ends in ``#`` and 32 hex digits of the whole name's SHA-256."""


@dataclass(frozen=True, slots=True)
class SessionKey:
    """A request's session: `id` keys its archive and state; `label` is what people see; `source` says how it was
    recognised (``header``, ``body``, ``fingerprint``)."""

    id: str
    label: str
    source: str
    legacy: str | None = None
    """The id earlier versions stored this session under (a lossy name, a shorter scope) where it differs from
    `id`: a stored session of that id is taken up by the first name that maps to it (`Sessions.live`)."""


def credential_scope(headers: Mapping[str, str]) -> str:
    """16 hex digits of the SHA-256 of the client's credentials (``anon`` when it sent none)."""
    return credential_scopes(headers)[0]


def credential_scopes(headers: Mapping[str, str]) -> tuple[str, str]:
    """The credential scope, and the one of earlier versions (10 hex digits), from one hash (what `session_key`
    takes as `scopes`, for a caller that needs the scope before it: the proxy, to find the client's last body)."""
    secret = headers.get("authorization") or headers.get("x-api-key") or ""
    if not secret:
        return "anon", "anon"
    digest = hashlib.sha256(secret.encode()).hexdigest()
    return digest[:16], digest[:10]


def escape_name(name: str) -> str:
    """`name` as it is kept in a session id: each character outside ``A-Za-z0-9._:-`` as the ``%XX`` of its UTF-8
    bytes (``%`` and the scope separator ``~`` included), so that two names never share an id and `unescape_name`
    gives the name back. Earlier versions replaced such characters with ``_`` (``proj/é`` and ``proj_è`` were one
    session). A name whose escape is over 480 characters keeps its first 447 and ``#`` plus 32 hex digits of the
    SHA-256 of the whole name (``#`` is never part of an escape, so such an id cannot be another name's)."""
    escaped = "".join(
        ch if ch in _SAFE else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")) for ch in name
    )
    if len(escaped) <= _MAX_ESCAPED:
        return escaped
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{escaped[: _MAX_ESCAPED - 33]}#{digest}"


def unescape_name(escaped: str) -> str:
    """The name `escape_name` kept (for a name short enough to be kept whole)."""
    return unquote(escaped, errors="surrogatepass")


def _label(name: str) -> str:
    """What people see: the name, with what no store can hold as text (a NUL, a lone surrogate) shown as U+FFFD."""
    return "".join("\ufffd" if ch == "\x00" or "\ud800" <= ch <= "\udfff" else ch for ch in name)


def _clean(name: str) -> str:
    """The lossy name of earlier versions, for `SessionKey.legacy`."""
    return _UNSAFE.sub("_", name.strip())[:_MAX_NAME]


@functools.lru_cache(maxsize=4096)
def _key(name: str, source: str, scope: str, legacy_scope: str) -> SessionKey:
    """The key of session `name` (remembered: a client names the same session on every request, and escaping and
    labelling its name character by character cost more than the rest of finding its session; the arguments are a
    name and hashes, never a credential)."""
    session = f"{escape_name(name)}~{scope}"
    legacy = f"{_clean(name)}~{legacy_scope}"
    return SessionKey(session, _label(name), source, None if legacy == session else legacy)


def _from_body(body: Mapping[str, Any]) -> str | None:
    key = body.get("prompt_cache_key")
    if isinstance(key, str) and key.strip():
        return key
    metadata = body.get("metadata")
    if not isinstance(metadata, Mapping):
        return None
    meta = cast(Mapping[str, Any], metadata)
    session = meta.get("session_id")
    if isinstance(session, str) and session.strip():
        return session
    user = meta.get("user_id")
    if not isinstance(user, str):
        return None
    if user.startswith("{"):
        try:
            parsed = json.loads(user)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            found = cast(dict[str, Any], parsed).get("session_id")
            if isinstance(found, str) and found.strip():
                return found
        return None
    match = _CLAUDE_SESSION.search(user)
    return match.group(1) if match else None


def _fingerprint(system: object, messages: Sequence[Any]) -> str:
    """The system prompt and the first user message, hashed: what stays the same as a conversation grows."""

    def role(m: object) -> object:
        return cast(Mapping[str, Any], m).get("role") if isinstance(m, Mapping) else None

    first_user: object = next((m for m in messages if role(m) == "user"), messages[0] if messages else None)
    system_messages: list[object] = [m for m in messages[:3] if role(m) == "system"]
    blob = json.dumps([system, system_messages, first_user], sort_keys=True, default=str)
    return "fp-" + hashlib.sha256(blob.encode()).hexdigest()[:16]


def named_session(headers: Mapping[str, str]) -> str:
    """The session a header names: the first of `SESSION_HEADERS` that holds one ("" when none does)."""
    for name in SESSION_HEADERS:
        value = headers.get(name, "").strip()
        if value:
            return value
    return ""


def session_key(
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    *,
    system: object,
    messages: Sequence[Any],
    scopes: tuple[str, str] | None = None,
) -> SessionKey:
    """The session of a request (see the module docstring), its id scoped by the client's credentials
    (`scopes`: their `credential_scopes`, when the caller has them already)."""
    scope, legacy_scope = credential_scopes(headers) if scopes is None else scopes
    value = named_session(headers)
    if value:
        return _key(value, "header", scope, legacy_scope)
    named = _from_body(body)
    if named is not None:
        return _key(named, "body", scope, legacy_scope)
    return _key(_fingerprint(system, messages), "fingerprint", scope, legacy_scope)
