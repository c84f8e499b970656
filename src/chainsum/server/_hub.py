"""`EventHub`: every ``context_summarized`` (and failure) event, from any instance, to every subscriber.

Events are written to the store's event log first (`chainsum.store.SessionDirectory.add_event`); one follower task
per process reads the log after the last sequence number it saw and hands each event to the subscribers' queues.
So an event raised by one worker or host reaches the ``/api/events`` subscribers of all of them, through the
database they already share: PostgreSQL wakes the follower with ``LISTEN``/``NOTIFY`` (a listening connection in a
thread); SQLite, on one host, is polled (`poll_s`). A local publish wakes the local follower at once.

A subscriber that falls behind (its queue full) loses its oldest events, never blocks the proxy; the log stays in
the store, so a client reconnecting with ``Last-Event-ID`` gets what it missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..store import SessionDirectory, StoredEvent
from ..store._directory import EVENTS_CHANNEL

__all__ = ["EventHub", "Subscription"]

logger = logging.getLogger(__name__)


@dataclass(eq=False, slots=True)
class Subscription:
    """One subscriber: the events of `session` (all when None), in order, through a bounded queue."""

    session: str | None
    queue: asyncio.Queue[StoredEvent] = field(default_factory=lambda: asyncio.Queue[StoredEvent](maxsize=1000))
    dropped: int = 0

    def offer(self, event: StoredEvent) -> None:
        if self.session is not None and event.session != self.session:
            return
        if self.queue.full():
            self.queue.get_nowait()
            self.dropped += 1
        self.queue.put_nowait(event)

    async def __aiter__(self) -> AsyncIterator[StoredEvent]:
        while True:
            yield await self.queue.get()


class EventHub:
    """See the module docstring. `start` in the app's lifespan, `close` at its end."""

    def __init__(self, store: SessionDirectory, *, poll_s: float = 0.5, listen_url: str | None = None) -> None:
        self.store = store
        self.poll_s = poll_s
        self.listen_url = listen_url
        """A PostgreSQL URL to ``LISTEN`` on (None: poll only)."""
        self._subs: set[Subscription] = set()
        self._wake = asyncio.Event()
        self._last = 0
        self._task: asyncio.Task[None] | None = None
        self._stop = threading.Event()
        self._listener: threading.Thread | None = None

    async def start(self) -> None:
        self._last = await asyncio.to_thread(self.store.last_event_seq)
        self._task = asyncio.create_task(self._follow(), name="chainsum-event-follower")
        if self.listen_url is not None:
            loop = asyncio.get_running_loop()
            self._listener = threading.Thread(
                target=self._listen, args=(loop, self.listen_url), name="chainsum-event-listener", daemon=True
            )
            self._listener.start()

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._listener is not None:
            await asyncio.to_thread(self._listener.join, 5)

    async def publish(self, session: str, data: Mapping[str, Any]) -> int:
        """Write an event to the log and wake the local follower; returns its sequence number."""
        seq = await asyncio.to_thread(self.store.add_event, session, data)
        self._wake.set()
        return seq

    def subscribe(self, session: str | None = None) -> Subscription:
        sub = Subscription(session)
        self._subs.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subs.discard(sub)

    @property
    def subscribers(self) -> int:
        return len(self._subs)

    async def _follow(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
            self._wake.clear()
            try:
                while True:
                    batch = await asyncio.to_thread(self.store.events, self._last, limit=500)
                    for event in batch:
                        for sub in tuple(self._subs):
                            sub.offer(event)
                        self._last = event.seq
                    if len(batch) < 500:
                        break
            except Exception:  # a store hiccup must not end the stream for everyone: try again at the next wake
                logger.exception("after=<%d> | reading the event log failed", self._last)

    def _listen(self, loop: asyncio.AbstractEventLoop, url: str) -> None:
        """PostgreSQL ``LISTEN`` in a thread: each notification wakes the follower. Reconnects after a failure."""
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {EVENTS_CHANNEL}")
                    while not self._stop.is_set():
                        for _ in conn.notifies(timeout=0.5, stop_after=1):
                            loop.call_soon_threadsafe(self._wake.set)
            except Exception:
                logger.warning("url=<postgres> | event listener lost its connection; retrying", exc_info=True)
                self._stop.wait(1.0)
