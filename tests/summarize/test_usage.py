"""Reported summarizer usage: a meter sums what is reported inside it (concurrent tasks and worker threads
included), nested meters both receive, and nothing is kept when no meter is open."""

from __future__ import annotations

import asyncio
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chainsum.summarize import SummarizerUsage, UsageMeter, metering, report_usage

usages = st.builds(
    SummarizerUsage,
    input_tokens=st.integers(0, 10**6),
    output_tokens=st.integers(0, 10**5),
    requests=st.integers(0, 5),
)


@given(st.lists(usages, max_size=20))
def test_a_meter_sums_what_concurrent_tasks_report(reported: list[SummarizerUsage]) -> None:
    async def one(usage: SummarizerUsage) -> None:
        await asyncio.sleep(0)
        report_usage(usage)

    async def run() -> SummarizerUsage | None:
        with metering() as meter:
            await asyncio.gather(*(one(u) for u in reported))
        report_usage(SummarizerUsage(input_tokens=1))  # after the block: not counted
        return meter.total

    total = asyncio.run(run())
    if not reported:
        assert total is None
    else:
        assert total is not None
        assert total.input_tokens == sum(u.input_tokens for u in reported)
        assert total.output_tokens == sum(u.output_tokens for u in reported)
        assert total.requests == sum(u.requests for u in reported)
        assert total.total_tokens == total.input_tokens + total.output_tokens


def test_nested_meters_both_receive_and_separate_passes_do_not_mix() -> None:
    async def pass_(meter: UsageMeter, tokens: int) -> None:
        with metering(meter):
            await asyncio.sleep(0)
            report_usage(SummarizerUsage(input_tokens=tokens))

    async def run() -> tuple[UsageMeter, UsageMeter, UsageMeter]:
        a, b = UsageMeter(), UsageMeter()
        with metering() as outer:
            await asyncio.gather(pass_(a, 10), pass_(b, 20))
        return a, b, outer

    a, b, outer = asyncio.run(run())
    assert a.total == SummarizerUsage(input_tokens=10)
    assert b.total == SummarizerUsage(input_tokens=20)
    assert outer.total == SummarizerUsage(input_tokens=30, requests=2)


def test_a_report_with_no_meter_open_goes_nowhere_and_threads_add_safely() -> None:
    report_usage(SummarizerUsage(input_tokens=5))  # nothing open: no error, nothing kept
    meter = UsageMeter()
    threads = [
        threading.Thread(target=lambda: [meter.add(SummarizerUsage(output_tokens=1)) for _ in range(500)])
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert meter.total == SummarizerUsage(output_tokens=2000, requests=2000)


@pytest.mark.parametrize("field", ["input_tokens", "output_tokens", "requests"])
def test_a_negative_or_non_int_count_is_refused(field: str) -> None:
    with pytest.raises(ValueError, match=f"SummarizerUsage.{field} must be an int >= 0"):
        SummarizerUsage(**{field: -1})
    with pytest.raises(ValueError, match=field):
        SummarizerUsage(**{field: 1.5})  # type: ignore[arg-type]
