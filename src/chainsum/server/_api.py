"""The session API (``/api/*``), what the web page and operators use: sessions, their context as the model sees
it, the summary-record chain, search over the archive, originals (verified), a manual compaction, the event
stream, and a stateless ``compact``. Plus ``/healthz`` and ``/metrics``.

Every ``/api/*`` call needs the admin token (every session) or a client's own API key (that client's sessions
only; a session it does not own answers 404, as a missing one): `_access.caller_of`. ``/healthz`` is open (it says
nothing of any session); ``/metrics`` needs the admin token unless `ServerSettings.public_metrics`. Every bad input
gets a JSON error naming the field.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, cast

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse
from fastapi.sse import EventSourceResponse, ServerSentEvent

from ..errors import ChainsumError
from ..manager import SummarizationEvent
from ..messages import message_from_dict, message_to_dict
from ..store import SessionInfo, StoredEvent, StoreError, UnknownSummaryError
from ._access import Caller, caller_of
from ._errors import ProxyError
from ._inputs import no_nul, resume_after
from ._sessions import sent_messages
from ._state import AppState, state_of
from ._stateless import compact_document
from ._views import context_entry, masked_ids, record_row

__all__ = ["api", "open_routes"]


api = APIRouter(prefix="/api", dependencies=[Depends(caller_of), Depends(no_nul)])
open_routes = APIRouter()

State = Annotated[AppState, Depends(state_of)]
Who = Annotated[Caller, Depends(caller_of)]


def _own(who: Caller, session: str) -> None:
    """404 for a session the caller does not own: the same answer as for one that does not exist, so a client's
    key cannot even learn which other sessions there are."""
    if not who.owns(session):
        raise ProxyError(404, f"no session {session!r}", "id")


def _session_row(state: AppState, session: str, info: SessionInfo | None = None) -> dict[str, Any]:
    """The session's row: from `info` when the caller has it (a listing, read in one query: a session deleted
    meanwhile must not turn the whole list into a 404), else from the directory and this process."""
    info = info if info is not None else state.store.session_info(session)
    live = state.sessions.get(session)
    if info is None and live is None:
        raise ProxyError(404, f"no session {session!r}", "id")
    data = dict(info.info) if info is not None else {}
    if live is not None:  # this process has newer numbers than its last (background) directory write
        data.update(state.sessions.info(live))
    now = int(time.time() * 1000)
    return {
        "id": session,
        "label": info.label if info is not None else live.key.label if live is not None else session,
        "created_ms": info.created_ms if info is not None else now,
        "active_ms": info.active_ms if info is not None else now,
        "tokens": data.get("tokens", 0),
        "recall_tokens": data.get("recall_tokens", 0),
        "window": data.get("window"),
        "trigger": state.settings.config.trigger_token_ratio,
        "compactions": data.get("compactions", 0),
        "summarized": bool(data.get("summarized", False)),
        "messages": data.get("messages", 0),
        "model": data.get("model", ""),
        "format": data.get("format", ""),
    }


@api.get("/sessions")
async def list_sessions(state: State, who: Who) -> dict[str, Any]:
    infos = await asyncio.to_thread(state.store.sessions)
    return {"sessions": [_session_row(state, i.session, i) for i in infos if who.owns(i.session)]}


@api.get("/sessions/{session}")
async def get_session(session: str, state: State, who: Who) -> dict[str, Any]:
    _own(who, session)
    row = await asyncio.to_thread(_session_row, state, session)
    records = await asyncio.to_thread(state.store.records, session)
    info = await asyncio.to_thread(state.store.session_info, session)
    live = state.sessions.get(session)
    tokens: dict[str, list[int]] = dict(info.info.get("record_tokens") or {}) if info is not None else {}
    if live is not None:
        tokens.update(live.record_tokens)
    events = await asyncio.to_thread(state.store.recent_events, session, 20)
    masked = masked_ids(records)
    try:  # a masking record's label counts the tool results it took out: one read for all of them
        originals = await asyncio.to_thread(state.store.originals, session, masked) if masked else {}
    except StoreError:  # an integrity failure is the originals endpoints' to report; the label goes without counts
        originals = {}
    row["records"] = [record_row(r, tokens.get(r.id, [None, None]), state.counter, originals) for r in records]
    row["events"] = [{"seq": e.seq, "created_ms": e.created_ms, **e.data} for e in events]
    return row


@api.get("/sessions/{session}/context")
async def get_context(session: str, state: State, who: Who) -> dict[str, Any]:
    _own(who, session)
    live = state.sessions.get(session)
    sent = await asyncio.to_thread(sent_messages, live.fmt, live.sent, live.sent_system) if live is not None else []
    if live is not None and sent:
        messages = sent  # the request as it went upstream, not the manager's internal view
        source = "live"
    else:
        snapshot = await asyncio.to_thread(state.store.session_context, session)
        if snapshot is None:
            raise ProxyError(404, f"no context for session {session!r}", "id")
        messages = [message_from_dict(d) for d in cast(list[Any], json.loads(snapshot))]
        source = "snapshot"
    # A block expands through the summary record that wrote it (`/api/summaries/{record_id}/originals`).
    records = {b: r.id for r in await asyncio.to_thread(state.store.records, session) for b in r.blocks}
    entries = [context_entry(state.counter, i, m, records) for i, m in enumerate(messages)]
    row = await asyncio.to_thread(_session_row, state, session)
    history = sum(e["tokens"] for e in entries if e["kind"] != "recall")  # the blocks are `recall_tokens`
    return {
        "id": session,
        "source": source,
        "tokens": history,
        # The request as the model gets it, counted as the gauge counts it (`tokens` is the messages' alone): the
        # recall block and what lies outside the messages (system prompt, tools, answer room, reply priming).
        "total_tokens": row["tokens"],
        "recall_tokens": row["recall_tokens"],
        "outside_tokens": max(0, row["tokens"] - row["recall_tokens"] - history),
        "window": live.window if live is not None else None,
        "recalled": list(live.recalled) if live is not None else [],
        "messages": entries,
    }


@api.get("/sessions/{session}/search")
async def search(
    session: str, state: State, who: Who, q: Annotated[str, Query(min_length=1, max_length=1000)], limit: int = 20
) -> dict[str, Any]:
    _own(who, session)
    if not 1 <= limit <= 200:
        raise ProxyError(400, f"limit {limit}: expected 1 to 200", "limit")
    hits = await asyncio.to_thread(state.store.search, session, q, limit)
    return {
        "hits": [
            {"message_id": h.message_id, "position": h.position, "role": h.role, "snippet": h.snippet, "rank": h.rank}
            for h in hits
        ]
    }


@api.get("/sessions/{session}/originals")
async def session_originals(
    session: str, state: State, who: Who, ids: Annotated[str, Query(min_length=1, max_length=20000)]
) -> dict[str, Any]:
    """Archived messages of the session by id (comma-separated, at most 200; those found, in the order asked),
    each verified against its SHA-256: what a recall block brought back, or a search hit in full."""
    _own(who, session)
    wanted = [i for i in (part.strip() for part in ids.split(",")) if i]
    if not 1 <= len(wanted) <= 200:
        raise ProxyError(400, f"ids: expected 1 to 200 message ids, got {len(wanted)}", "ids")
    try:
        found = await asyncio.to_thread(state.store.originals, session, wanted)
    except StoreError as exc:  # an integrity failure: say so, never show unverified text
        raise ProxyError(500, str(exc), "ids") from None
    return {
        "session": session,
        "verified": True,
        "messages": [{"message_id": i, **message_to_dict(found[i])} for i in wanted if i in found],
        "missing": [i for i in wanted if i not in found],
    }


@api.get("/summaries/{summary}/originals")
async def originals(summary: str, state: State, who: Who) -> dict[str, Any]:
    if not who.admin and not await asyncio.to_thread(_owns_summary, state, who, summary):
        raise ProxyError(404, f"no summary {summary!r}", "id")
    try:
        messages = await asyncio.to_thread(state.store.expand, summary)
    except UnknownSummaryError:
        raise ProxyError(404, f"no summary {summary!r}", "id") from None
    except StoreError as exc:  # an integrity failure: say so, never show unverified text
        raise ProxyError(500, str(exc), "id") from None
    return {"id": summary, "verified": True, "messages": [message_to_dict(m) for m in messages]}


def _owns_summary(state: AppState, who: Caller, summary: str) -> bool:
    """Whether a record of one of the caller's sessions has this id (a record names no session of its own; a
    client has few sessions, each with a short chain, and the admin never comes here)."""
    return any(
        r.id == summary for i in state.store.sessions() if who.owns(i.session) for r in state.store.records(i.session)
    )


@api.delete("/sessions/{session}")
async def delete_session(session: str, state: State, who: Who) -> dict[str, Any]:
    _own(who, session)
    state.sessions.forget(session)
    if not await asyncio.to_thread(state.store.delete_session, session):
        raise ProxyError(404, f"no session {session!r}", "id")
    await state.hub.publish(session, {"type": "session_cleared", "sessionId": session})
    return {"deleted": session}


@api.post("/sessions/{session}/compact")
async def compact_session(session: str, state: State, who: Who) -> Response:
    _own(who, session)
    prepared = await state.sessions.compact_now(session)
    if prepared is not None:
        body: dict[str, Any] = {
            "id": session,
            "status": "compacted" if prepared.changed else "unchanged",
            "tokens_before": prepared.tokens_before,
            "tokens_after": prepared.tokens_after,
        }
        if isinstance(prepared.event, SummarizationEvent):
            # The very event the stream publishes: the caller shows its figures, not a pair of its own.
            body["event"] = prepared.event.to_context_summarized(session).to_json_dict()
        return JSONResponse(body)
    if not await asyncio.to_thread(state.store.request_compact, session):
        raise ProxyError(404, f"no session {session!r}", "id")
    return JSONResponse({"id": session, "status": "requested"}, status_code=202)


def _sse(event: StoredEvent) -> ServerSentEvent:
    """A stored event on the stream: named by its type, its sequence number as the id a client resumes from."""
    return ServerSentEvent(raw_data=json.dumps(event.data), event=event.data.get("type"), id=str(event.seq))


def _stream_session(who: Who, session: str | None = None) -> str | None:
    """The stream's ``?session=`` filter, checked before the stream starts (a 404 then, not a broken stream)."""
    if session is not None:
        _own(who, session)
    return session


@api.get("/events", response_class=EventSourceResponse)
async def events(
    state: State,
    who: Who,
    after: Annotated[int | None, Depends(resume_after)],
    session: Annotated[str | None, Depends(_stream_session)],
) -> AsyncIterator[ServerSentEvent]:
    """Server-sent events: each ``context_summarized`` (and failure, clear) event of every instance, as it
    happens; ``Last-Event-ID`` (or ``?after=``) replays what a reconnecting client missed. A client's key gets
    its own sessions' events only."""
    sub = state.hub.subscribe(session)
    try:
        if after is not None:
            for event in await asyncio.to_thread(state.store.events, after, session=session, limit=1000):
                if who.owns(event.session):
                    yield _sse(event)
        async for event in sub:
            if who.owns(event.session):
                yield _sse(event)
    finally:
        state.hub.unsubscribe(sub)


@api.post("/compact")
async def compact_stateless(request: Request, state: State) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise ProxyError(400, "request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ProxyError(400, "request body must be a JSON object")
    try:
        return await compact_document(cast(dict[str, Any], body), state.settings.config)
    except ChainsumError as exc:
        raise ProxyError(400, str(exc), "conversation") from None


@open_routes.get("/healthz")
async def healthz(state: State) -> dict[str, Any]:
    await asyncio.to_thread(state.store.last_event_seq)  # the store answers
    return {"status": "ok", "sessions_live": len(state.sessions), "subscribers": state.hub.subscribers}


def _metrics_allowed(request: Request) -> None:
    """``/metrics`` counts every client's traffic: the admin's (or anyone's with `public_metrics`)."""
    settings = state_of(request).settings
    if settings.public_metrics:
        return
    if not caller_of(request).admin:
        raise ProxyError(403, "/metrics needs the admin token (or CHAINSUM_PUBLIC_METRICS=1)", "authorization")


@open_routes.get("/metrics", dependencies=[Depends(_metrics_allowed)])
async def metrics(state: State) -> Response:
    return Response(state.metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")
