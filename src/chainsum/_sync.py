"""One way to run chainsum's async core from synchronous code, used by every ``*_sync`` function.

Outside an event loop, the coroutine runs on a private loop, in the main thread the same one every time (not
`asyncio.run`: on CPython 3.11 its SIGINT handling formats the repr of the main task, which formats every message
it was given, 80 ms on a 300-message session). Inside a running loop (a sync hook called from an async framework,
as Strands and LangChain do), starting another loop in the same thread fails, so the coroutine runs on a private
loop in a worker thread while the caller waits: the caller's loop is blocked for that time, as any sync call
blocks it, but nothing deadlocks, since the work never needs the caller's loop.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

__all__ = ["run_sync", "sync_version"]

T = TypeVar("T")


def _run(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(factory())
    finally:
        _close(loop)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    try:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()


_main_loop: asyncio.AbstractEventLoop | None = None
_main_lock = threading.Lock()


def _run_on_main(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """In the main thread, one private loop serves every call (closed at exit): a `prepare_sync` with nothing to
    do takes microseconds, and making and closing a loop (a socket pair, an executor shutdown) would cost ten
    times that. A call made while another is running on it (from a callback) gets a loop of its own."""
    global _main_loop
    if not _main_lock.acquire(blocking=False):
        return _run(factory)
    try:
        if _main_loop is None or _main_loop.is_closed():
            _main_loop = asyncio.new_event_loop()
            atexit.register(_close, _main_loop)
        return _main_loop.run_until_complete(factory())
    finally:
        _main_lock.release()


def run_sync(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """The result of the coroutine `factory()` makes, from sync code, inside or outside a running event loop.

    `factory` (a zero-argument function returning the coroutine, e.g. ``lambda: compact(...)``) is called where the
    coroutine runs, so no coroutine object is created that could be left unawaited."""
    try:
        asyncio.get_running_loop()
        running = True
    except RuntimeError:
        running = False
    if not running:  # outside the except block: an error of the coroutine is not chained to "no running loop"
        if threading.current_thread() is threading.main_thread():
            return _run_on_main(factory)
        return _run(factory)
    # the caller's context variables go with it (an OpenTelemetry span current here is the parent of what runs)
    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="chainsum-sync") as pool:
        return pool.submit(context.run, _run, factory).result()


P = ParamSpec("P")


def sync_version(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The synchronous twin of coroutine function `fn`: same parameters, same result, run by `run_sync`."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(lambda: fn(*args, **kwargs))

    wrapper.__doc__ = f"`{fn.__name__}` for synchronous code, inside a running event loop too (see `run_sync`)."
    return wrapper
