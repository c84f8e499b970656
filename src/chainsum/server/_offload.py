"""`Offload`: where the server runs a session's preparation, off the event loop that serves every request.

Why: preparing a request is the manager's work, and most of it is synchronous: reading and counting the history,
store reads and writes (a compaction archives thousands of rows), a wait for the session's summarization lock held
by another instance (up to ``SUMMARIZATION_LOCK_WAIT_SECONDS``), planning and the extractive summarizer (seconds of
CPU on a 20,000-message history). Run on the event loop, any of it froze every other session and ``/healthz`` for
as long as it took (issue 20: 5.7 s for a lock wait, 64 s for a large compaction on PostgreSQL).

How: a pool of worker threads, each with an event loop of its own that lives as long as the thread, so the
manager's async core runs there as it runs anywhere (summarizers are async; an LLM summarizer makes its client in
the loop that calls it). The serving loop only awaits the result. A thread, not a process: the manager's session
state (what it read, counted and mapped) stays in memory between requests, and the store's connection is shared;
the serving loop still gets the interpreter every few milliseconds while a worker computes (the interpreter's switch
interval), which is what keeps another session's request quick (measured in ``bench/bench_offload.py``).

Work handed to a worker cannot be cancelled half way (a thread cannot be interrupted), so `run` keeps waiting for
it when the awaiting request is cancelled (a client that hung up, a shutdown): whatever lock the caller holds is
then released only when the manager is done with the session, never while it still works on it.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["Offload"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Offload:
    """A pool of `workers` threads running coroutines off the serving loop. See the module docstring."""

    def __init__(self, workers: int = 8) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="chainsum-prepare")
        self._local = threading.local()
        self._loops: list[asyncio.AbstractEventLoop] = []
        self._loops_lock = threading.Lock()
        self._running: set[asyncio.Future[Any]] = set()
        """The jobs handed out and not finished, as futures of the serving loop (changed on that loop only)."""
        self._home: asyncio.AbstractEventLoop | None = None
        self._closed = False

    @property
    def busy(self) -> int:
        """Jobs running or queued now."""
        return len(self._running)

    async def run(self, factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """The result of the coroutine `factory()` makes, run to completion on a worker's loop. `factory` is called
        on the worker, so no coroutine object is made on this loop. Cancelling the caller does not stop the work:
        the caller waits for it to end (see the module docstring), then is cancelled."""
        if self._closed:
            raise RuntimeError("the offload pool is closed")
        self._home = asyncio.get_running_loop()
        # the caller's context variables go with the job (an OpenTelemetry span current here is the parent of the
        # compaction's span on the worker)
        context = contextvars.copy_context()
        waiting = asyncio.wrap_future(self._pool.submit(context.run, self._run_here, factory))
        self._running.add(waiting)
        waiting.add_done_callback(self._running.discard)
        try:
            return await asyncio.shield(waiting)
        except asyncio.CancelledError:
            while not waiting.done():
                try:
                    await asyncio.shield(waiting)
                except asyncio.CancelledError:
                    continue
                except Exception:
                    break
            raise

    def _run_here(self, factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
        loop: asyncio.AbstractEventLoop | None = getattr(self._local, "loop", None)
        if loop is None:
            loop = asyncio.new_event_loop()
            self._local.loop = loop
            with self._loops_lock:
                self._loops.append(loop)
        return loop.run_until_complete(factory())

    async def at_home(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run `make()` on the serving loop (the one that last called `run`) and wait for it here: how a worker
        hands back what belongs to the serving loop (publishing an event to the SSE subscribers, the session's
        figures). Called on the serving loop itself (or before any `run`), it just awaits `make()`."""
        home = self._home
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - always called from a coroutine
            here = None
        if home is None or home is here or home.is_closed():
            return await make()

        async def call() -> T:
            return await make()

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call(), home))

    async def close(self, timeout_s: float = 30.0) -> bool:
        """Stop taking work, wait up to `timeout_s` for the jobs running now, then shut the pool down and close the
        workers' loops; returns False when some job was still running at the deadline (it is left to finish on its
        own: a thread cannot be stopped, and the process may exit under it)."""
        self._closed = True
        pending = tuple(self._running)
        finished = True
        if pending:
            _, left = await asyncio.wait(pending, timeout=timeout_s)
            finished = not left
            if left:
                logger.warning(
                    "jobs=<%d>, waited_s=<%.1f> | preparations still running at shutdown", len(left), timeout_s
                )
        await asyncio.to_thread(self._shutdown, finished)
        return finished

    def _shutdown(self, finished: bool) -> None:
        """Shut the pool down and, when its threads are done, close their loops (on this thread: a loop may be
        closed from any thread once nothing runs it, not from one running a loop of its own)."""
        self._pool.shutdown(wait=finished, cancel_futures=True)
        if not finished:
            return
        with self._loops_lock:
            loops, self._loops = self._loops, []
        for loop in loops:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
