"""Checks on the session API's path and query values that no route could answer otherwise, each a JSON 400
naming the value, before a route (or its event stream) starts.

Why here and not in each route: a NUL character cannot be stored in PostgreSQL's text (psycopg refuses the query
with an error that used to reach the client as a 500, where SQLite simply found nothing), and it is never part of a
session id, a summary id, a message id or a search anyone wrote; one router dependency refuses it wherever it
appears. An event stream has sent its 200 before its generator runs, so a resume point it cannot use (beyond a
64-bit sequence number, or not digits) must be refused before then: `resume_after`.
"""

from __future__ import annotations

import re

from fastapi import Request

from ._errors import ProxyError

__all__ = ["MAX_SEQ", "no_nul", "resume_after"]

MAX_SEQ = (1 << 63) - 1
"""The largest event sequence number either store can hold (SQLite's INTEGER, PostgreSQL's BIGINT)."""

_DIGITS = re.compile(r"[0-9]+")


def no_nul(request: Request) -> None:
    """400 for a path or query value holding a NUL character, naming the parameter."""
    for name, value in (*request.path_params.items(), *request.query_params.multi_items()):
        if isinstance(value, str) and "\x00" in value:
            raise ProxyError(400, f"{name}: contains a NUL character, which no id or search can hold", name)


def resume_after(request: Request) -> int | None:
    """Where a reconnecting event-stream client resumes: ``Last-Event-ID`` (what a browser's ``EventSource``
    sends), else ``?after=``; None for neither. A value that is not a sequence number is a 400 naming it."""
    given = request.headers.get("last-event-id")
    field = "Last-Event-ID"
    if not given:
        given, field = request.query_params.get("after"), "after"
    if given is None or given == "":
        return None
    value = given.strip()
    if not _DIGITS.fullmatch(value) or len(value) > 19 or int(value) > MAX_SEQ:
        raise ProxyError(
            400, f"{field} {given[:40]!r}: expected an event id, a whole number from 0 to {MAX_SEQ}", field
        )
    return int(value)
