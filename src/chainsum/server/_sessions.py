"""`Sessions`: the live sessions of one server process, each with its `ContextManager`, and what is known of them.

A request is prepared under its session's lock (a conversation's turns come one at a time; a retry that arrives
while the first attempt is being prepared waits for it instead of racing it). The manager keeps what it mapped in
the store, so any process serving the session next continues from it; the store's session lease makes one of
several processes summarize while the others wait and take its result.

Each preparation that may call the store, wait or compact runs on a worker thread (`_offload.Offload`), never on
the event loop: the manager's reading, store calls, a wait for another instance's lock and a long compaction hold
up only their own session's request. Its events come back to the loop (`Offload.at_home`) to be published, and the
session's figures are set there. The common request, one more step of a session far from compacting, is prepared
on the loop instead (`Sessions._quiet`): provably quick and in memory alone, it costs about what the hop would.

The session directory (`chainsum.store.SessionDirectory`) is written in the background, at most once a second per
session plus at every compaction: the tokens in use, the window, the compactions, and a snapshot of the context the
model saw, so that the session API of any instance can show it. A failure of any of that is logged and never
delays or fails the proxied request.

Failing open: an error inside chainsum (not the client's malformed input) sends the request upstream unchanged,
publishes a ``summarization_failed`` event and counts it; the conversation goes on. A history chainsum cannot read
goes upstream untouched too (`_passthrough`): `prepare` raises `UnreadableHistory`, and `passthrough` counts it,
logs it and publishes its event once per session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import FormatError
from ..formats import load
from ..manager import (
    AnySummarizer,
    ContextManager,
    ManagerEvent,
    Prepared,
    SummarizationEvent,
    SummarizationFailedEvent,
    WindowExceededEvent,
)
from ..messages import Message, messages_to_list
from ..store import SqlStore
from ..summarize import StructuredSummary
from ..tokens import TokenCounter
from ._hub import EventHub
from ._identity import SessionKey
from ._metrics import Metrics
from ._offload import Offload
from ._passthrough import PassthroughLog, PassthroughReason, UnreadableHistory, passthrough_json
from ._settings import ServerSettings

__all__ = ["Live", "Sessions", "event_json", "failure_json", "sent_messages"]

logger = logging.getLogger(__name__)

_RECORD_FACETS = StructuredSummary
"""Loaded with the server, not in its first compacting request: every compaction's record reads its facets into
a `StructuredSummary`, whose module (lazy in `chainsum.summarize`, for quick imports) builds pydantic models when
it loads, about 0.1 s."""


def event_json(event: ManagerEvent, session: str) -> dict[str, Any]:
    """The JSON an event is published as: the spec's ``context_summarized`` event for a summarization, and two
    events of the same shape (``type``, ``sessionId``, ``message``) for a failure and an overflow."""
    match event:
        case SummarizationEvent():
            return event.to_context_summarized(session).to_json_dict()
        case SummarizationFailedEvent():
            return failure_json(session, event.error, errorKind=event.error_kind, tokensBefore=event.tokens_before)
        case WindowExceededEvent():
            return {
                "type": "window_exceeded",
                "sessionId": session,
                "tokens": event.tokens,
                "window": event.window,
                "message": f"The request is over the context window: {event.detail}",
            }


def failure_json(session: str, error: str, **more: object) -> dict[str, Any]:
    """The ``summarization_failed`` event: a summarizer that failed (the manager's event) or an error inside chainsum
    (the proxy's own fail-open); either way the history went upstream unchanged."""
    return {
        "type": "summarization_failed",
        "sessionId": session,
        "error": error,
        **more,
        "message": "Summarization failed; the history was sent unchanged",
    }


@dataclass(eq=False, slots=True)
class Live:
    """One session served by this process."""

    key: SessionKey
    fmt: str
    window: int
    manager: ContextManager
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    model: str = ""
    last_items: Sequence[Any] | None = None
    """The client's history as last received (a manual compaction runs on it)."""
    last_system: object = None
    last_reserved: int = 0
    last_marks: int = 0
    tools: tuple[object, int, int] | None = None
    """The tool definitions of the last request, their tokens and their ``cache_control`` marks: a client sends
    the same ones every time (Claude Code's are 80 KB), and comparing them (in C) costs a tenth of counting them."""
    sent: Sequence[Any] | None = None
    """The history of the request last sent upstream, in the route's format: the manager's output (records,
    recall blocks, masked and clipped results as they went), or the client's own items when they went unchanged.
    What the session API and the page show: the model's view, not the manager's internal one."""
    sent_system: object = None
    """The system prompt sent beside `sent` where it is a field of its own (Anthropic's ``system``)."""
    tokens: int = 0
    """Tokens of the last request as sent (`Prepared.tokens_after`): the figure the gauge shows."""
    messages: int = 0
    recalled: tuple[str, ...] = ()
    """Archive ids recalled into the last request."""
    recall_tokens: int = 0
    """Tokens of the recall block in the last request (part of `tokens`)."""
    record_tokens: dict[str, list[int]] = field(default_factory=dict[str, list[int]])
    """Tokens before and after the compaction that wrote each summary record (the last 100)."""
    compactions: int = 0
    touched_at: float = 0.0
    used_at: float = 0.0
    """When a request last took this entry (`time.monotonic`): an entry idle for `ServerSettings.session_idle_s`
    leaves memory (`Sessions.evict_idle`)."""
    force_next: bool = False
    """A compaction was asked for (`Sessions.request_compact`) and runs at the next request."""
    taken_up: bool = False
    """The figures the store keeps of the session (compactions, record tokens) were read into this entry: on its first
    preparation, off the event loop (`_take_up`)."""


class Sessions:
    """See the module docstring."""

    def __init__(
        self,
        store: SqlStore,
        settings: ServerSettings,
        hub: EventHub,
        metrics: Metrics,
        *,
        summarizers: Sequence[AnySummarizer] | None = None,
        counter: TokenCounter | None = None,
        touch_every_s: float = 1.0,
        max_live: int = 1024,
        prepare_workers: int = 8,
    ) -> None:
        self.store = store
        self.settings = settings
        self.hub = hub
        self.metrics = metrics
        self.summarizers = summarizers
        self.counter = counter
        self.touch_every_s = touch_every_s
        self.max_live = max_live
        self._live: OrderedDict[str, Live] = OrderedDict()
        self._offload = Offload(prepare_workers)
        """Where each preparation runs: worker threads, so that no store call, lock wait or compaction of one
        session holds up the event loop that serves the others (issue 20)."""
        self._adopted: dict[str, str] = {}
        """Session ids whose session an earlier version stored under another id (`SessionKey.legacy`), to that id."""
        self._sweeper: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._directory_writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chainsum-directory")
        """Where the directory writes run (`_touch`), one at a time: not in the default executor, which the requests'
        own store calls share (`resolve`, the session API, ``/healthz``). A write waits for the store's write
        connection while a compaction archives (a second at times); new sessions touch at once, and their writes
        filled the default executor's few threads, so that a new session's request waited for the whole archive
        (issue 20)."""
        self._passthrough = PassthroughLog()

    # the live sessions -------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._live)

    def get(self, session: str) -> Live | None:
        return self._live.get(session)

    def live(self, key: SessionKey, *, fmt: str, provider: str, window: int) -> Live:
        """The session's live entry, made (or remade, for another window or format) as needed. A new entry takes
        the session up from the store: the manager reads its state there, so a session that left memory
        (`evict_idle`, or another process served it) continues where it was."""
        key = self._stored_key(key)
        live = self._live.get(key.id)
        if live is not None and live.window == window and live.fmt == fmt:
            self._live.move_to_end(key.id)
            live.used_at = time.monotonic()
            return live
        manager = ContextManager(
            self.settings.config,
            context_window=window,
            counter=self.counter,
            summarizers=self.summarizers,
            provider=provider,
            archive=self.store,
            session=key.id,
            format=fmt,
            on_event=lambda event: self._offload.at_home(lambda: self._on_event(key.id, event)),
        )
        fresh = Live(key=key, fmt=fmt, window=window, manager=manager, used_at=time.monotonic())
        if live is not None:
            fresh.lock = live.lock
            fresh.compactions = live.compactions
            fresh.record_tokens = live.record_tokens
            fresh.taken_up = live.taken_up
        self._live[key.id] = fresh
        while len(self._live) > self.max_live:
            self._live.popitem(last=False)
        return fresh

    def forget(self, session: str) -> None:
        self._live.pop(session, None)

    async def resolve(self, key: SessionKey) -> SessionKey:
        """`key`, or, for a session an earlier version stored under `SessionKey.legacy` and that this name is the
        first to ask for (`chainsum.store.SessionDirectory.claim_legacy_session`), `key` with that id: the old
        session goes on, and no other name can take it. One store read (in a thread) when no entry is live, none
        after; call it before `live`."""
        if key.legacy is not None and key.id not in self._adopted and key.id not in self._live:
            if await asyncio.to_thread(self.store.claim_legacy_session, key.legacy, key.id):
                self._adopted[key.id] = key.legacy
        return self._stored_key(key)

    def _stored_key(self, key: SessionKey) -> SessionKey:
        """`key` with the id `resolve` found its session stored under."""
        adopted = self._adopted.get(key.id)
        return key if adopted is None else replace(key, id=adopted, legacy=None)

    # leaving memory ----------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start evicting idle sessions (`evict_idle`) every tenth of `ServerSettings.session_idle_s` (at most a
        minute apart); `stop` ends it."""
        idle = self.settings.session_idle_s
        self._sweeper = asyncio.create_task(self._sweep(min(60.0, idle / 10)), name="chainsum-session-sweeper")

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None

    async def _sweep(self, every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            try:
                self.evict_idle()
            except Exception:  # never end the sweeping for one bad entry
                logger.exception("live=<%d> | evicting idle sessions failed", len(self._live))

    def evict_idle(self, now: float | None = None) -> int:
        """Drop every entry with no request for `ServerSettings.session_idle_s`; returns how many left.

        Why this loses nothing: the manager's state (what it mapped, the records, the archive) is written to the
        store as each request is prepared, so the next request makes a new entry that reads it back; only the
        directory's figures may be up to a second behind, so an entry used since its last directory write is
        written once more on its way out. An entry in use (its lock held) or with a manual compaction waiting
        for its next request stays."""
        now = time.monotonic() if now is None else now
        idle = [
            live
            for live in self._live.values()
            if now - live.used_at >= self.settings.session_idle_s and not live.lock.locked() and not live.force_next
        ]
        for live in idle:
            if live.touched_at < live.used_at and live.last_items is not None:
                self._maybe_touch(live, urgent=True)
            del self._live[live.key.id]
            for name in [n for n, stored in self._adopted.items() if stored == live.key.id]:
                del self._adopted[name]
        if idle:
            logger.debug("evicted=<%d>, live=<%d> | idle sessions left memory", len(idle), len(self._live))
        return len(idle)

    # preparing ---------------------------------------------------------------------------------------------------
    async def prepare(
        self, live: Live, items: Sequence[Any], *, system: object, reserved: int, force: bool = False, marks: int = 0
    ) -> Prepared[Any] | None:
        """The history to send (None: send the client's unchanged, chainsum failed open). Raises
        `UnreadableHistory` for a history chainsum cannot read: the upstream decides whether it is valid."""
        async with live.lock:
            force = force or live.force_next
            live.force_next = False
            last = live.last_items, live.last_system, live.last_reserved, live.last_marks
            live.last_items, live.last_system, live.last_reserved, live.last_marks = items, system, reserved, marks

            async def work() -> Prepared[Any]:  # on a worker thread (`_offload`): never on the serving loop
                if not live.taken_up:
                    self._take_up(live)
                return await live.manager.prepare(
                    items, system=system, reserved_tokens=reserved, force=force, outside_cache_marks=marks
                )

            try:
                prepared = None if force or not live.taken_up else self._quiet(live, items, system, reserved, marks)
                if prepared is None:
                    prepared = await self._offload.run(work)
            except FormatError as exc:
                # a manual compaction runs on the last history that could be read
                live.last_items, live.last_system, live.last_reserved, live.last_marks = last
                live.force_next = force
                raise UnreadableHistory(f"{_field(live.fmt)}: {exc}") from None
            except Exception as exc:
                logger.exception("session=<%s> | preparing failed; sending the history unchanged", live.key.id)
                live.sent, live.sent_system = items, system
                self.metrics.failures.inc()
                failed = failure_json(live.key.id, f"{type(exc).__name__}: {exc}")
                self._background(self.hub.publish(live.key.id, failed))
                return None
            live.sent, live.sent_system = prepared.messages, system
            live.tokens = prepared.tokens_after
            live.recalled = prepared.recalled
            live.recall_tokens = prepared.recall_tokens
            live.messages = len(prepared.messages)
            if prepared.changed:
                live.compactions += 1
            self._maybe_touch(live, urgent=prepared.changed or live.touched_at == 0.0)
            return prepared

    def _quiet(
        self, live: Live, items: Sequence[Any], system: object, reserved: int, marks: int
    ) -> Prepared[Any] | None:
        """The preparation made here, on the event loop, when it is provably quick and in memory alone
        (`ContextManager.prepare_quiet`: a session far from compacting, whose request adds a step to the last one);
        None sends it to a worker. The hop to a worker and back costs about as much as such a preparation, and
        nearly every request of a session is one; what the loop does is bounded by what the request adds (the rest
        of the history is compared in C, as the body was parsed), never by a store call or a compaction."""
        prepared = live.manager.prepare_quiet(items, system=system, reserved_tokens=reserved, outside_cache_marks=marks)
        if prepared is not None:
            self.metrics.inline.inc()
        return prepared

    def _take_up(self, live: Live) -> None:
        """Read what the store keeps of a session new to this entry (store reads: on the worker, see `prepare`)."""
        live.compactions = len(self.store.records(live.key.id))
        known = self.store.session_info(live.key.id)
        if known is not None:
            live.record_tokens = dict(known.info.get("record_tokens") or {})
        live.taken_up = True

    async def shutdown(self, timeout_s: float) -> bool:
        """At shutdown: wait up to `timeout_s` for the preparations running now (each releases its session's
        summarization lock as it ends), then close the worker threads. False when one was still running."""
        finished = await self._offload.close(timeout_s)
        # the directory writes queued now still run (`drain` waits for them); none is queued after
        self._directory_writer.shutdown(wait=False)
        return finished

    def passthrough(self, session: str | None, route: str, reason: PassthroughReason, detail: str) -> None:
        """A request of `session` went upstream untouched: counted every time; logged and published as a
        ``request_passthrough`` event the first time for this session and reason. A request of no session (an
        unknown route) is logged once per `detail` (its path), with no event."""
        self.metrics.passthrough.labels(route=route, reason=reason).inc()
        if self._passthrough.report(session, route, reason, detail) and session is not None:
            self._background(self._publish(session, passthrough_json(session, route, reason, detail)))

    async def _publish(self, session: str, data: dict[str, Any]) -> None:
        try:
            await self.hub.publish(session, data)
        except Exception:
            logger.exception("session=<%s> | publishing an event failed", session)

    async def compact_now(self, session: str) -> Prepared[Any] | None:
        """A manual compaction of a session live here, on its last received history (None when not live here)."""
        live = self._live.get(session)
        if live is None or live.last_items is None:
            return None
        return await self.prepare(
            live,
            live.last_items,
            system=live.last_system,
            reserved=live.last_reserved,
            force=True,
            marks=live.last_marks,
        )

    # events and the directory ------------------------------------------------------------------------------------
    async def _on_event(self, session: str, event: ManagerEvent) -> None:
        match event:
            case SummarizationEvent():
                live = self._live.get(session)
                if live is not None:
                    # The event's own pair (what its JSON says), and the session's tokens set from it before it is
                    # published: a page that refreshes on the event reads the figure the event carries.
                    wire = event.to_context_summarized(session)
                    for rid in event.record_ids:
                        live.record_tokens[rid] = [wire.tokens_before, wire.tokens_after]
                    if event.request_tokens_after is not None:
                        live.tokens = event.request_tokens_after
                        live.recall_tokens = event.recall_tokens
                    while len(live.record_tokens) > 100:
                        del live.record_tokens[next(iter(live.record_tokens))]
                self.metrics.compactions.labels(reason=event.reason).inc()
                self.metrics.summarizer_calls.inc(event.summarizer_calls)
                self.metrics.summarizer_seconds.inc(event.duration_s)
                self.metrics.tokens_removed.inc(max(0, event.tokens_removed))
            case SummarizationFailedEvent():
                self.metrics.failures.inc()
            case WindowExceededEvent():
                pass
        try:
            await self.hub.publish(session, event_json(event, session))
        except Exception:
            logger.exception("session=<%s> | publishing an event failed", session)

    def info(self, live: Live) -> dict[str, Any]:
        return {
            "tokens": live.tokens,
            "recall_tokens": live.recall_tokens,
            "window": live.window,
            "messages": live.messages,
            "compactions": live.compactions,
            "summarized": live.compactions > 0,
            "model": live.model,
            "format": live.fmt,
            "source": live.key.source,
            "record_tokens": dict(live.record_tokens),
        }

    def _maybe_touch(self, live: Live, *, urgent: bool) -> None:
        now = time.monotonic()
        if not urgent and now - live.touched_at < self.touch_every_s:
            return
        live.touched_at = now
        info = self.info(live)
        sent = (live.fmt, live.sent, live.sent_system)
        fallback = live.manager.context()
        self._background(self._touch(live, info, sent, fallback))

    async def _touch(
        self, live: Live, info: dict[str, Any], sent: tuple[str, Sequence[Any] | None, object], fallback: list[Message]
    ) -> None:
        def write() -> bool:
            context = sent_messages(*sent) or fallback
            snapshot = json.dumps(messages_to_list(context), ensure_ascii=False)
            return self.store.touch_session(live.key.id, live.key.label, info, snapshot)

        try:
            if await asyncio.get_running_loop().run_in_executor(self._directory_writer, write):
                live.force_next = True
        except Exception:
            logger.exception("session=<%s> | updating the session directory failed", live.key.id)

    def _background(self, coro: Any) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for the background directory writes (at shutdown, and in tests)."""
        while self._tasks:
            await asyncio.gather(*tuple(self._tasks), return_exceptions=True)


def sent_messages(fmt: str, sent: Sequence[Any] | None, system: object = None) -> list[Message]:
    """The messages of a request as it went upstream (`Live.sent`, `Live.sent_system`), read back from its wire
    items: what the model got, recall blocks and records included, with a system prompt kept in a field of its own
    first. [] when nothing was sent yet or the items cannot be read (a history that went through untouched)."""
    if not sent:
        return []
    try:
        if fmt == "anthropic" and system is not None:
            return list(load({"system": system, "messages": list(sent)}, format=fmt).messages)
        return list(load(list(sent), format=fmt).messages)
    except FormatError:
        return []


def _field(fmt: str) -> str:
    return "input" if fmt == "openai-responses" else "messages"
