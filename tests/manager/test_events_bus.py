"""`EventBus` and the structured log of each event."""

from __future__ import annotations

import asyncio
import logging

import pytest

from chainsum.manager._events import EventBus, ManagerEvent, SummarizationEvent, SummarizationFailedEvent, log_event


def summarized(**kw: object) -> SummarizationEvent:
    base: dict[str, object] = {"reason": "ratio", "depth": 1, "tokens_before": 9000, "tokens_after": 3000}
    base.update(kw)
    return SummarizationEvent(**base)  # type: ignore[arg-type]


def failed() -> SummarizationFailedEvent:
    return SummarizationFailedEvent(
        reason="emergency", depth=2, tokens_before=12000, error="429", error_kind="rate_limit"
    )


def test_sync_and_async_callbacks_receive_the_event_in_order() -> None:
    bus = EventBus()
    seen: list[str] = []

    def sync_cb(e: ManagerEvent) -> None:
        seen.append(f"sync:{e.kind}")

    async def async_cb(e: ManagerEvent) -> None:
        await asyncio.sleep(0)
        seen.append(f"async:{e.kind}")

    bus.subscribe(sync_cb)
    bus.subscribe(async_cb)
    asyncio.run(bus.emit(summarized()))
    assert seen == ["sync:summarized", "async:summarized"]


def test_a_failing_callback_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture) -> None:
    bus = EventBus()
    seen: list[ManagerEvent] = []

    def boom(e: ManagerEvent) -> None:
        raise RuntimeError("observer bug")

    async def async_boom(e: ManagerEvent) -> None:
        raise ValueError("async observer bug")

    bus.subscribe(boom)
    bus.subscribe(async_boom)
    bus.subscribe(seen.append)
    with caplog.at_level(logging.ERROR, logger="chainsum.manager._events"):
        asyncio.run(bus.emit(summarized()))
        bus.emit_sync(summarized())
    assert len(seen) == 2
    failures = [r for r in caplog.records if "event callback failed" in r.getMessage()]
    assert len(failures) == 4
    assert all(r.exc_info for r in failures)


def test_unsubscribe_and_kind_filter() -> None:
    bus = EventBus()
    only_failures: list[ManagerEvent] = []
    everything: list[ManagerEvent] = []
    bus.subscribe(only_failures.append, kinds=["failed"])
    unsubscribe = bus.subscribe(everything.append)
    assert len(bus) == 2
    bus.emit_sync(summarized())
    bus.emit_sync(failed())
    unsubscribe()
    unsubscribe()  # twice is harmless
    bus.emit_sync(summarized())
    assert [e.kind for e in only_failures] == ["failed"]
    assert [e.kind for e in everything] == ["summarized", "failed"]
    assert len(bus) == 1


def test_emit_sync_runs_async_callbacks_without_a_loop() -> None:
    bus = EventBus()
    seen: list[int] = []

    async def cb(e: ManagerEvent) -> None:
        await asyncio.sleep(0)
        seen.append(e.depth)

    bus.subscribe(cb)
    bus.emit_sync(summarized(depth=2))
    assert seen == [2]


def test_emit_sync_inside_a_loop_schedules_async_callbacks() -> None:
    bus = EventBus()
    seen: list[int] = []

    async def cb(e: ManagerEvent) -> None:
        seen.append(e.depth)

    bus.subscribe(cb)

    async def main() -> None:
        bus.emit_sync(summarized(depth=3))
        assert seen == []
        for _ in range(3):
            await asyncio.sleep(0)

    asyncio.run(main())
    assert seen == [3]


def test_each_event_is_logged_structured(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="chainsum.manager._events"):
        EventBus().emit_sync(summarized(messages_compressed=7, duration_s=0.25))
        log_event(failed())
    info, warning = caplog.records
    assert info.levelno == logging.INFO
    assert info.getMessage().startswith("reason=<ratio>, depth=<1>, tokens_before=<9000>, tokens_after=<3000>")
    assert info.getMessage().endswith("| context summarized")
    assert "messages_compressed=<7>" in info.getMessage()
    assert isinstance(info.args, tuple)  # lazy %-formatting, no f-string
    assert warning.levelno == logging.WARNING
    assert "error_kind=<rate_limit>" in warning.getMessage()
    assert warning.getMessage().endswith("| summarization failed")


def test_events_are_frozen_values() -> None:
    e = summarized()
    with pytest.raises(AttributeError):
        e.depth = 2  # type: ignore[misc]
    assert e == summarized()
    assert e.kind == "summarized"
    assert failed().kind == "failed"
    assert summarized(tokens_before=0, tokens_after=0).compression_ratio == 0
