"""`chainsum._sync.run_sync`, behind every ``*_sync`` function: the same result from the main thread, another
thread and inside a running event loop, and one private loop reused by the main thread."""

from __future__ import annotations

import asyncio
import threading

from chainsum._sync import run_sync


async def _which_loop() -> asyncio.AbstractEventLoop:
    await asyncio.sleep(0)
    return asyncio.get_running_loop()


def test_the_main_thread_reuses_one_private_loop() -> None:
    first = run_sync(_which_loop)
    assert run_sync(_which_loop) is first and not first.is_closed()


def test_another_thread_and_a_running_loop_get_loops_of_their_own() -> None:
    main = run_sync(_which_loop)
    seen: list[asyncio.AbstractEventLoop] = []
    worker = threading.Thread(target=lambda: seen.append(run_sync(_which_loop)))
    worker.start()
    worker.join()

    async def inside() -> asyncio.AbstractEventLoop:
        return run_sync(_which_loop)  # a sync hook called from async code

    nested = asyncio.run(inside())
    assert seen[0] is not main and nested is not main
    assert seen[0].is_closed() and nested.is_closed()  # not left open for the garbage collector


def test_a_failing_coroutine_raises_and_the_loop_stays_usable() -> None:
    async def boom() -> None:
        raise KeyError("x")

    try:
        run_sync(boom)
    except KeyError:
        pass
    else:  # pragma: no cover
        raise AssertionError("no KeyError")
    assert run_sync(_which_loop) is run_sync(_which_loop)
