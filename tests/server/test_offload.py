"""Nothing one session does holds up the others (issue 20): its preparation runs on a worker thread (`_offload`),
so a wait for a summarization lock held by another instance, a store call or a long compaction leaves the event
loop free for every other session and ``/healthz``. And `Offload` itself: results, cancellation, closing."""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from chainsum.manager import ManagerConfig
from chainsum.server._offload import Offload  # pyright: ignore[reportPrivateUsage]
from chainsum.store import SQLiteStore, SqlStore
from chainsum.testing import FakeLLMServer
from server.server_support import ADMIN_TOKEN, chat, proxy
from store.store_support import POSTGRES_URL, require_postgres, write_held

WINDOW = 2000
WAIT_S = 3.0

_HOLDER = textwrap.dedent(
    """
    import sys
    from chainsum.store import PostgresStore, SQLiteStore

    kind, where, schema, session = sys.argv[1:5]
    store = SQLiteStore(where) if kind == "sqlite" else PostgresStore(where, schema=schema)
    with store.try_lock(session) as held:
        print("held" if held else "refused", flush=True)
        sys.stdin.read()  # hold it until the test closes our stdin
    store.close()
    """
)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[SqlStore, list[str]]]:
    """A store, and the arguments with which another process opens the same one."""
    if request.param == "sqlite":
        path = tmp_path / "shared.db"
        opened: SqlStore = SQLiteStore(path)
        try:
            yield opened, ["sqlite", str(path), "-"]
        finally:
            opened.close()
        return
    require_postgres()
    import psycopg
    from psycopg import sql

    from chainsum.store import PostgresStore

    schema = f"chainsum_test_{uuid.uuid4().hex}"
    opened = PostgresStore(POSTGRES_URL, schema=schema)
    try:
        yield opened, ["postgres", POSTGRES_URL, schema]
    finally:
        opened.close()
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _post(url: str, session: str, messages: object, timeout: float = 60) -> httpx.Response:
    return httpx.post(
        url + "/v1/chat/completions",
        json={"model": "gpt-4o", "messages": messages},
        headers={"X-Chainsum-Session": session, "Authorization": f"Bearer {ADMIN_TOKEN}"},
        timeout=timeout,
    )


@pytest.mark.slow
def test_a_session_waiting_for_another_instances_lock_holds_up_no_other_request(
    fake: FakeLLMServer, backend: tuple[SqlStore, list[str]]
) -> None:
    store, where = backend
    config = ManagerConfig(lock_wait_seconds=WAIT_S)
    with proxy(fake, store, context_window=WINDOW, config=config) as p:
        # the stored id of each session (a name is scoped by the client's credentials): from a first request
        locked = _post(p.url, "locked", chat(2)).headers["x-chainsum-session"]
        _post(p.url, "other", chat(2)).raise_for_status()
        with subprocess.Popen(
            [sys.executable, "-c", _HOLDER, *where, locked], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        ) as holder:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            waited: list[float] = []

            def over_the_window() -> None:  # must compact, and waits for the lock first
                started = time.monotonic()
                response = _post(p.url, "locked", chat(40))
                waited.append(time.monotonic() - started)
                assert response.status_code == 200

            history = chat(2)
            with httpx.Client(timeout=30) as client:

                def probe(health: list[float], other: list[float]) -> None:
                    nonlocal history
                    started = time.monotonic()
                    assert client.get(p.url + "/healthz").status_code == 200
                    health.append(time.monotonic() - started)
                    started = time.monotonic()
                    r = client.post(
                        p.url + "/v1/chat/completions",
                        json={"model": "gpt-4o", "messages": history},
                        headers={"X-Chainsum-Session": "other", "Authorization": f"Bearer {ADMIN_TOKEN}"},
                    )
                    other.append(time.monotonic() - started)
                    assert r.status_code == 200
                    history = [*history, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more?"}]
                    time.sleep(0.05)

                base_health: list[float] = []
                base_other: list[float] = []
                for _ in range(10):  # the same probes with nothing waiting: what this machine takes anyway
                    probe(base_health, base_other)
                thread = threading.Thread(target=over_the_window)
                thread.start()
                time.sleep(0.2)  # it is waiting now
                health: list[float] = []
                other: list[float] = []
                while thread.is_alive() and len(health) < 30:
                    probe(health, other)
            thread.join(30)
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(10)
        # the waiting request did wait (the lock was held elsewhere) while the others were answered
        assert waited and waited[0] >= WAIT_S * 0.9
        assert len(health) >= 10, health
        # A loop held for the wait shows as one probe taking the rest of it (about 2.8 s) and the others none: too few
        # probes and a huge first. Within 50 ms (the figure) of what the same probes took with nothing
        # waiting, by the median and by nine in ten of them; on a loaded test machine a single probe may take longer
        # than that with nothing blocking at all (CI once saw one take 1.6 s amid 30 of 5-20 ms), so the slowest
        # one is held only to less than the wait.
        for base, during in ((base_health, health), (base_other, other)):
            assert statistics.median(during) < statistics.median(base) + 0.05, (base, during)
            assert _ninth_decile(during) < statistics.median(base) + 0.05, (base, during)
        assert max(health + other) < WAIT_S * 0.8, (health, other)


def test_new_sessions_and_healthz_are_answered_while_the_store_writes(
    fake: FakeLLMServer, backend: tuple[SqlStore, list[str]]
) -> None:
    """A compaction holds the store's write connection while it archives (a 20,000-message one: 0.6 s on SQLite and
    1.7 s on PostgreSQL at load 5). Meanwhile new sessions are answered, their reads on the store's reader and their
    first directory writes queued on a thread of their own; with the writes in the default executor, its few
    threads (min(32, CPUs + 4)) filled with them and the next new session waited for the whole archive. So do 40
    new sessions and ``/healthz`` here, with the write held until they are done."""
    store, _ = backend
    with proxy(fake, store) as p, write_held(store), httpx.Client(timeout=10) as client:
        for i in range(40):
            r = client.post(
                p.url + "/v1/chat/completions",
                json={"model": "gpt-4o", "messages": chat(4)},
                headers={"X-Chainsum-Session": f"new-{i}", "Authorization": f"Bearer {ADMIN_TOKEN}"},
            )
            assert r.status_code == 200, r.text
        assert client.get(p.url + "/healthz").status_code == 200


def _ninth_decile(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


# -- Offload ---------------------------------------------------------------------------------------------------------


def test_offload_runs_coroutines_on_worker_threads_each_with_a_lasting_loop() -> None:
    async def main() -> None:
        offload = Offload(2)
        home = threading.get_ident()

        async def where() -> tuple[int, asyncio.AbstractEventLoop]:
            await asyncio.sleep(0)
            return threading.get_ident(), asyncio.get_running_loop()

        got = [await offload.run(where) for _ in range(4)]
        assert all(ident != home for ident, _ in got)
        loops = {id(loop) for _, loop in got}
        assert len(loops) <= 2  # one loop per worker thread, kept between calls
        assert await offload.close(5)
        assert all(loop.is_closed() for _, loop in got)
        with pytest.raises(RuntimeError, match="closed"):
            await offload.run(where)

    asyncio.run(main())


def test_a_blocking_job_leaves_the_serving_loop_free() -> None:
    async def main() -> None:
        offload = Offload(2)

        async def block() -> str:
            time.sleep(0.5)  # noqa: ASYNC251  # a store call or a lock wait of the old kind
            return "done"

        job = asyncio.ensure_future(offload.run(block))
        ticks = 0
        started = time.monotonic()
        while not job.done():
            await asyncio.sleep(0.01)
            ticks += 1
        assert job.result() == "done"
        assert ticks >= 0.5 / 0.01 / 4, ticks  # the loop kept turning (it would not turn once if it were blocked)
        assert time.monotonic() - started < 5
        await offload.close(5)

    asyncio.run(main())


def test_a_cancelled_caller_waits_for_the_job_before_it_lets_go() -> None:
    async def main() -> None:
        offload = Offload(1)
        lock = asyncio.Lock()
        finished = threading.Event()

        async def slow() -> None:
            await asyncio.sleep(0.3)
            finished.set()

        async def caller() -> None:
            async with lock:
                await offload.run(slow)

        task = asyncio.ensure_future(caller())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # the lock was held until the job had finished: nothing else could take the session meanwhile
        assert finished.is_set()
        await offload.close(5)

    asyncio.run(main())


def test_at_home_runs_on_the_serving_loop_and_close_waits_for_running_jobs() -> None:
    async def main() -> None:
        offload = Offload(2)
        home = asyncio.get_running_loop()
        seen: list[asyncio.AbstractEventLoop] = []

        async def on_home() -> str:
            seen.append(asyncio.get_running_loop())
            return "published"

        async def job() -> str:
            await asyncio.sleep(0.2)
            return await offload.at_home(on_home)

        running = asyncio.ensure_future(offload.run(job))
        await asyncio.sleep(0.05)
        assert await offload.close(5)  # waited for the job, which needed this loop meanwhile
        assert running.result() == "published" and seen == [home]

    asyncio.run(main())


def test_close_gives_up_on_a_job_past_its_deadline() -> None:
    async def main() -> None:
        offload = Offload(1)
        release = threading.Event()

        async def stuck() -> None:
            release.wait(10)

        running = asyncio.ensure_future(offload.run(stuck))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        assert not await offload.close(0.2)
        assert time.monotonic() - started < 2
        release.set()
        await running
        assert await offload.close(5)  # now it can close its loop

    asyncio.run(main())
