"""Requests the proxy cannot fully read go upstream untouched, and say so (DESIGN invariant 12).

The upstream decides what is valid, not chainsum: a body shaped like a chat request whose history holds a role, a
block or a shape chainsum's format readers do not know (a provider's new beta, a client's extension) is sent as the
client's very bytes. The proxy then answers with what the upstream said plus ``X-Chainsum-Passthrough`` (one of
`PassthroughReason`, a short fixed token that scripts can test) and ``X-Chainsum-Passthrough-Detail`` (what was not
understood, and where). It counts the request in ``chainsum_passthrough_total`` (labels ``route`` and ``reason``,
both from fixed sets), and the first time a session does so for a reason, logs a warning and publishes a
``request_passthrough`` event on the session: a client that keeps sending what chainsum cannot read (every turn of
a conversation holds the turns before it) is reported once, not on every request.

Only a body that is not a chat request at all (not JSON, not an object, its history not a list) is answered with a
400 by the proxy itself (`_proxy`).
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from typing import Any, Final, Literal, TypeAlias

__all__ = [
    "DETAIL_HEADER",
    "EVENT_TYPE",
    "HEADER",
    "PassthroughLog",
    "PassthroughReason",
    "UnreadableHistory",
    "header_value",
    "passthrough_json",
]

logger = logging.getLogger(__name__)

HEADER: Final = "X-Chainsum-Passthrough"
DETAIL_HEADER: Final = "X-Chainsum-Passthrough-Detail"
EVENT_TYPE: Final = "request_passthrough"

PassthroughReason: TypeAlias = Literal["unreadable-history", "unknown-route"]
"""Why a request went upstream untouched: ``unreadable-history``: its history (``messages``, ``input``) holds
something chainsum's reader for the route's format does not know (an unknown role, content block, field or beta
shape); ``unknown-route``: a path under ``/v1`` chainsum has no route for (Anthropic's ``messages/count_tokens``
and ``messages/batches``, OpenAI's ``embeddings``, ``files``, ...), which it forwards as it came."""

_MAX_DETAIL = 300
_UNSAFE = re.compile(r"[^\x20-\x7e]+")


class UnreadableHistory(Exception):
    """The history of a request cannot be read (`detail` says what and where); the request goes through untouched."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def header_value(text: str) -> str:
    """`text` as a header value: printable ASCII on one line (the detail may quote the client's own text), at most
    300 characters."""
    clean = _UNSAFE.sub(" ", text).strip()
    return clean if len(clean) <= _MAX_DETAIL else clean[: _MAX_DETAIL - 3] + "..."


def passthrough_json(session: str, route: str, reason: PassthroughReason, detail: str) -> dict[str, Any]:
    """The ``request_passthrough`` event: same shape as the others (``type``, ``sessionId``, ``message``)."""
    return {
        "type": EVENT_TYPE,
        "sessionId": session,
        "route": route,
        "reason": reason,
        "detail": detail,
        "message": "chainsum could not read this request; it went to the upstream untouched",
    }


class PassthroughLog:
    """Which (session, reason) pairs were already reported, the most recent `limit` of them: one warning and one
    event per session and reason, however many requests follow."""

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()

    def first(self, session: str, reason: PassthroughReason) -> bool:
        """True the first time `session` passes a request through for `reason` (then remembered)."""
        key = (session, reason)
        if key in self._seen:
            self._seen.move_to_end(key)
            return False
        self._seen[key] = None
        while len(self._seen) > self.limit:
            self._seen.popitem(last=False)
        return True

    def report(self, session: str | None, route: str, reason: PassthroughReason, detail: str) -> bool:
        """Log the warning when this is the first time for the session and reason (a request of no session, on an
        unknown route, the first time for its `detail`: the path); returns whether it was (the caller then
        publishes the event)."""
        if not self.first(session if session is not None else detail, reason):
            return False
        logger.warning(
            "session=<%s>, route=<%s>, reason=<%s>, detail=<%s> | request sent upstream untouched",
            session or "-",
            route,
            reason,
            detail,
        )
        return True
