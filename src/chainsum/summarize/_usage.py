"""Token usage a summarizer's model reported, and where it goes.

A summarizer is ``transcript -> text`` (`Summarizer`), and stays so: every place that calls one (the manager's
`SummarizerChain`, `compact`, map-reduce, the structured wrapper, a user's own loop) keeps working with a summarizer
that also knows what its call cost. Such a summarizer calls `report_usage` with what the provider said; the usage
goes to every `UsageMeter` opened around the call with `metering` (a context variable, so concurrent summaries of
one pass, each in its own task, add to the meter of that pass, and two passes running at once never mix). With no
meter open, a report goes nowhere.

The manager opens one meter per summarization pass; the total is `SummarizationEvent.summarizer_usage` (failed
calls included: a provider bills the tokens of an answer that was then rejected as empty or too long).
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass

from ._meters import MeterStack

__all__ = ["SummarizerUsage", "UsageMeter", "metering", "report_usage"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizerUsage:
    """Tokens one or more summarizer calls used, as the model's provider reported them."""

    input_tokens: int = 0
    """Prompt tokens (the transcript, its instructions and the system prompt)."""
    output_tokens: int = 0
    """Tokens of the answer."""
    requests: int = 1
    """Model requests these tokens are the sum of."""

    def __post_init__(self) -> None:
        for name in ("input_tokens", "output_tokens", "requests"):
            value = getattr(self, name)
            if type(value) is not int or value < 0:
                raise ValueError(f"SummarizerUsage.{name} must be an int >= 0, got {value!r}")

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: SummarizerUsage) -> SummarizerUsage:
        return SummarizerUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            requests=self.requests + other.requests,
        )

    def to_dict(self) -> dict[str, int]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens, "requests": self.requests}


class UsageMeter:
    """Adds up the usage reported while it is open (`metering`); thread-safe, since a plain-function summarizer
    runs in a worker thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total: SummarizerUsage | None = None

    def add(self, usage: SummarizerUsage) -> None:
        with self._lock:
            self._total = usage if self._total is None else self._total + usage

    @property
    def total(self) -> SummarizerUsage | None:
        """The sum so far; None when nothing was reported (a summarizer that calls no model, or reports nothing)."""
        return self._total


_METERS: MeterStack[UsageMeter] = MeterStack("chainsum_usage_meters")


@contextmanager
def metering(meter: UsageMeter | None = None) -> Generator[UsageMeter]:
    """Open `meter` (a new one when None) for the code in the block and the tasks it starts; meters opened around
    this one keep receiving too, so a caller can total several passes."""
    with _METERS.opened(UsageMeter() if meter is None else meter) as opened:
        yield opened


def report_usage(usage: SummarizerUsage) -> None:
    """Add `usage` to every meter open in this context (none open: nothing happens)."""
    for meter in _METERS.meters():
        meter.add(usage)
