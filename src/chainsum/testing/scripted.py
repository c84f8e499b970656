"""`ScriptedSummarizer`: a deterministic summarizer double for tests (pydantic-ai's ``FunctionModel`` habit).

It answers from a script, in order: each entry is a summary to return, an exception to raise (a
`SummarizerError` of any kind, or anything else, to test wrapping), or a function of the transcript returning
either. When the script runs out (or is empty) it answers a default derived from the transcript:
``summary of N messages [digest]``, where N is the number of blocks `parse_transcript` reads back and the digest
is the first 12 hex digits of the transcript's sha256, so equal inputs give equal summaries and a test can tell
which span a summary came from.

It records every call (`calls`: transcript, start and end on the event loop's clock, outcome) and the
highest number of calls in flight at once (`max_concurrency`), so tests can check bounded concurrency without
timing anything. Latency is an `asyncio.sleep` (a number, or one number per call). Unlike chainsum's values this
object is mutable on purpose: it is a recorder.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from ..summarize._transcript import parse_transcript

__all__ = ["ScriptEntry", "ScriptedCall", "ScriptedSummarizer", "default_summary"]

ScriptEntry: TypeAlias = "str | BaseException | Callable[[str], str | BaseException]"
"""One scripted answer: text to return, an exception to raise, or a function of the transcript giving either."""


def default_summary(transcript: str) -> str:
    """``summary of N messages [digest]``: deterministic, and different for different transcripts."""
    parsed = parse_transcript(transcript)
    count = len(parsed.blocks) if parsed.kind is not None else 1
    digest = hashlib.sha256(transcript.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    noun = "message" if count == 1 else "messages"
    return f"summary of {count} {noun} [{digest}]"


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """One recorded call."""

    index: int
    transcript: str
    started: float
    """`loop.time()` when the call began (after nothing: before the latency sleep)."""
    ended: float
    outcome: str | BaseException
    """The summary returned or the exception raised."""


class ScriptedSummarizer:
    """A summarizer that follows a script: ``ScriptedSummarizer(["first", SummarizerError("x", kind="rate_limit")])``.

    `latency` is seconds slept before answering: one number for every call, or a sequence (one per call, the last
    repeated). `repeat` replays the script from the start when it runs out instead of using the default answer.
    """

    def __init__(
        self,
        script: Sequence[ScriptEntry] | Callable[[str], str | BaseException] = (),
        *,
        latency: float | Sequence[float] = 0.0,
        repeat: bool = False,
        default: Callable[[str], str] = default_summary,
    ) -> None:
        self._script: tuple[ScriptEntry, ...] = (script,) if callable(script) else tuple(script)
        self._function = callable(script)
        self._latency = (latency,) if isinstance(latency, int | float) else tuple(latency)
        if any(value < 0 for value in self._latency):
            raise ValueError("latency must be >= 0")
        self._repeat = repeat
        self._default = default
        self.calls: list[ScriptedCall] = []
        self.in_flight = 0
        self.max_concurrency = 0
        self._started = 0

    @property
    def transcripts(self) -> list[str]:
        """The transcripts of the finished calls, in the order they finished."""
        return [call.transcript for call in self.calls]

    @property
    def call_count(self) -> int:
        """Calls started so far (finished or not)."""
        return self._started

    def _entry(self, index: int) -> ScriptEntry | None:
        if self._function:
            return self._script[0]
        if not self._script:
            return None
        if index < len(self._script):
            return self._script[index]
        return self._script[index % len(self._script)] if self._repeat else None

    def _delay(self, index: int) -> float:
        if not self._latency:
            return 0.0
        return float(self._latency[min(index, len(self._latency) - 1)])

    async def __call__(self, transcript: str) -> str:
        index = self._started
        self._started += 1
        loop = asyncio.get_running_loop()
        started = loop.time()
        self.in_flight += 1
        self.max_concurrency = max(self.max_concurrency, self.in_flight)
        outcome: str | BaseException
        try:
            await asyncio.sleep(self._delay(index))
            entry = self._entry(index)
            if entry is None:
                outcome = self._default(transcript)
            elif isinstance(entry, str | BaseException):
                outcome = entry
            else:
                outcome = entry(transcript)
        except BaseException as exc:  # cancellation or a failing script function: record, then re-raise
            self.calls.append(ScriptedCall(index, transcript, started, loop.time(), exc))
            raise
        finally:
            self.in_flight -= 1
        self.calls.append(ScriptedCall(index, transcript, started, loop.time(), outcome))
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome
