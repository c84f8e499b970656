"""`in_daemon_thread`: await a blocking SDK call (boto3 has no async client) without holding up the event loop.

Not `asyncio.to_thread`: the loop's default executor is joined when the loop closes, so a call stuck in a dead
socket would make ``asyncio.run`` (what chainsum's sync wrappers use) wait for it. A daemon thread is simply left
behind; the SDK's own socket timeouts end it soon after. The manager runs plain-function summarizers the same way.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import TypeVar, cast

__all__ = ["in_daemon_thread"]

T = TypeVar("T")


async def in_daemon_thread(fn: Callable[[], T], *, name: str = "chainsum-llm") -> T:
    """``fn()`` in a daemon thread; its result or its exception. Cancelling the await (a timeout around it) stops
    waiting at once; the thread finishes on its own and its outcome is dropped."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(ok: bool, value: object) -> None:
        if future.done():  # cancelled: nobody is waiting any more
            return
        if ok:
            future.set_result(cast(T, value))
        else:
            future.set_exception(cast(BaseException, value))

    def work() -> None:
        try:
            ok, value = True, cast(object, fn())
        except BaseException as exc:  # handed to the awaiting task, which raises it
            ok, value = False, exc
        try:
            loop.call_soon_threadsafe(deliver, ok, value)
        except RuntimeError:  # the loop is closed: the caller stopped waiting long ago
            pass

    threading.Thread(target=work, name=name, daemon=True).start()
    return await future
