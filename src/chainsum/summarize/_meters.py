"""`MeterStack`: the meters open in the current context, for figures a summarizer's call reports from deep inside.

A summarizer is ``transcript -> text`` and stays so; what it learns on the way (the tokens its model reported,
what chunked summarization showed no call) is reported to every meter a caller opened around it. The meters are
kept in a context variable, so concurrent summaries of one pass, each in its own task, add to the meters of that
pass, two passes running at once never mix, and meters opened around an inner one keep receiving (a caller can
total several passes). With none open, a report goes nowhere. Used by the usage meter (`metering`) and the reach
meter (`reaching`).
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Generic, TypeVar

__all__ = ["MeterStack"]

_M = TypeVar("_M")


class MeterStack(Generic[_M]):
    """The meters of one kind open in this context, innermost last."""

    def __init__(self, name: str) -> None:
        self._open: ContextVar[tuple[_M, ...]] = ContextVar(name, default=())

    @contextmanager
    def opened(self, meter: _M) -> Generator[_M]:
        """`meter` open for the code in the block and the tasks it starts."""
        token = self._open.set((*self._open.get(), meter))
        try:
            yield meter
        finally:
            self._open.reset(token)

    def meters(self) -> tuple[_M, ...]:
        """Every meter open here, outermost first."""
        return self._open.get()
