"""What of a span no summarizer was shown: the part of model coverage a transcript cannot tell.

Model coverage (`chainsum.manager.SummarizationEvent.model_coverage`) is the share of the conversation a compaction
summarized that the configured model read. The manager's summarizer chain sees each transcript and knows who
answered it (`transcript_reach` measures what a transcript shows); what it cannot see is what chunked
summarization left out of every transcript to keep the calls bounded (`summarize_chunked` with ``max_chunks``:
long messages read as excerpts, or, for thousands of messages, a sample of them). That is reported here, through a
context variable like the usage meter (`chainsum.summarize.metering`), so concurrent summaries of one pass add to
the meter of that pass and two passes never mix. With no meter open, a report goes nowhere.
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["ReachMeter", "reaching", "report_unread"]


class ReachMeter:
    """Adds up the characters of summarized messages that no transcript showed while it is open (`reaching`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._unread = 0

    def add(self, chars: int) -> None:
        with self._lock:
            self._unread += max(0, chars)

    @property
    def unread_chars(self) -> int:
        return self._unread


_meters: ContextVar[tuple[ReachMeter, ...]] = ContextVar("chainsum_reach_meters", default=())


@contextmanager
def reaching(meter: ReachMeter) -> Generator[ReachMeter]:
    """Open `meter` for what runs in this context (and the tasks it starts)."""
    token = _meters.set((*_meters.get(), meter))
    try:
        yield meter
    finally:
        _meters.reset(token)


def report_unread(chars: int) -> None:
    """`chars` characters of the span being summarized are in no transcript (excerpted or sampled out)."""
    if chars <= 0:
        return
    for meter in _meters.get():
        meter.add(chars)
