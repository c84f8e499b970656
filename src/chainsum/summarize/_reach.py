"""What of a span no summarizer was shown: the part of model coverage a transcript cannot tell.

Model coverage (`chainsum.manager.SummarizationEvent.model_coverage`) is the share of the conversation a compaction
summarized that the configured model read. The manager's summarizer chain sees each transcript and knows who
answered it (`transcript_reach` measures what a transcript shows); what it cannot see is what chunked
summarization left out of every transcript to keep the calls bounded (`summarize_chunked` with ``max_chunks``:
long messages read as excerpts, or, for thousands of messages, a sample of them). That is reported here, through the
same kind of meter as the usage (`chainsum.summarize._meters.MeterStack`): concurrent summaries of one pass add to
the meter of that pass, two passes never mix, and with no meter open a report goes nowhere.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager

from ._meters import MeterStack

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


_METERS: MeterStack[ReachMeter] = MeterStack("chainsum_reach_meters")


def reaching(meter: ReachMeter) -> AbstractContextManager[ReachMeter]:
    """Open `meter` for what runs in this context (and the tasks it starts)."""
    return _METERS.opened(meter)


def report_unread(chars: int) -> None:
    """`chars` characters of the span being summarized are in no transcript (excerpted or sampled out)."""
    if chars <= 0:
        return
    for meter in _METERS.meters():
        meter.add(chars)
