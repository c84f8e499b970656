"""Counting, bounded access to the summarizer for one `compact` call."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from ..chain import contains_tool_call_reasoning, summary_messages
from ..messages import Message, Part, Text, ToolResult
from ..strategies import Summarize, SummarizePart, TranscriptCase
from ..summarize import CountLines, SummarizerLike, call_summarizer, summarize_chunked, transcript_reach
from ..tokens import HeuristicCounter, TokenCounter
from ._excerpt import excerpt_text

__all__ = ["ProgressCallback", "SummarizerRun"]

ProgressCallback = Callable[[int, int, str], object]
"""``progress(done, total, phase)``: summarizer calls finished, calls planned so far (each round adds its estimate;
the total is corrected when a span turns out to need more chunks), and what the current round does (its plan's
note)."""


class SummarizerRun:
    """The summarizer as one `compact` call uses it: every call under one semaphore, counted, reported."""

    def __init__(
        self,
        summarizer: SummarizerLike,
        counter: TokenCounter,
        *,
        concurrency: int,
        cap: int,
        max_chunks: int,
        progress: ProgressCallback | None,
    ) -> None:
        self.summarizer = summarizer
        self.counter = counter
        self.concurrency = concurrency
        self.cap = cap
        self.max_chunks = max_chunks
        self.progress = progress
        self.semaphore = asyncio.Semaphore(concurrency)
        self.calls = 0
        self.shown_chars = 0
        """Characters of the conversation the summarizer was shown (`transcript_reach`), when it calls a model."""
        self.input_tokens = 0
        self.done = 0
        self.total = 0
        self.phase = ""

    def plan_calls(self, steps: Sequence[Summarize | SummarizePart], messages: Sequence[Message], phase: str) -> None:
        """A round with `steps` starts: add their estimated calls to the progress total (a span longer than the cap
        is chunked: about one call per cap's worth, at most `max_chunks`, plus the consolidation)."""
        self.phase = phase
        for step in steps:
            if isinstance(step, Summarize):
                tokens = self.counter.count_messages(messages[step.start : step.end])
                chunks = min(self.max_chunks, -(-tokens // max(1, int(self.cap * 0.85))))
                self.total += 1 if chunks <= 1 else chunks + 1
            else:
                self.total += 1
        self._report()

    def _report(self) -> None:
        if self.progress is not None:
            self.progress(self.done, max(self.total, self.done), self.phase)

    async def call(self, transcript: str) -> str:
        """One summarizer call, under the semaphore shared by every step and chunk of the run."""
        async with self.semaphore:
            self.calls += 1
            if self.calls > self.total:
                self.total = self.calls  # a span needed more chunks than estimated
            self.input_tokens += self.counter.count_text(transcript)
            try:
                summary = await call_summarizer(self.summarizer, transcript)
                if not getattr(self.summarizer, "local", False):
                    self.shown_chars += transcript_reach(transcript) or 0
                return summary
            finally:
                self.done += 1
                self._report()

    def coverage(self, unread_chars: int) -> float | None:
        """Of the conversation this run summarized, the share its summarizer read (`CompactResult.model_coverage`);
        None for a model-free summarizer (``local = True``) or when nothing was summarized. `unread_chars`: what
        chunked summarization showed no call (`chainsum.summarize.ReachMeter`)."""
        if not self.shown_chars:
            return None
        return self.shown_chars / (self.shown_chars + unread_chars)

    async def summarize(
        self,
        messages: Sequence[Message],
        case: TranscriptCase,
        context: Sequence[Message],
        *,
        snapshot: bool = False,
        target_tokens: int | None = None,
    ) -> str:
        """One summary of `messages`: a single call when the transcript fits the cap, else map-reduce over at most
        `max_chunks` chunks (longer messages are excerpted to fit that many)."""
        return await summarize_chunked(
            self.call,
            messages,
            case=case,
            context=context,
            max_input_tokens=self.cap,
            count_tokens=self.counter.count_text,
            concurrency=self.concurrency,
            snapshot=snapshot,
            target_tokens=target_tokens,
            max_chunks=self.max_chunks,
            count_lines=self._count_lines(),
        )

    def _count_lines(self) -> CountLines | None:
        """How a chunk's transcript is measured from its lines, when the counter can (the default one remembers
        the bodies it counted: a transcript of them costs the marker lines); None: as a whole text."""
        counter = self.counter
        if not isinstance(counter, HeuristicCounter):
            return None
        return lambda lines, text: counter.count_joined(lines, "\n", joined=text)

    async def step(
        self, step: Summarize | SummarizePart, messages: Sequence[Message], role: str
    ) -> list[Message] | Message:
        """The replacement for one summarizing step (the messages standing for a span, or the edited message)."""
        if isinstance(step, Summarize):
            keep = set(step.keep)
            span = [m for i, m in enumerate(messages[step.start : step.end], step.start) if i not in keep]
            context = [messages[i] for i in (*step.context, *step.keep)]
            summary = await self.summarize(
                span, step.case, context, snapshot=step.form == "snapshot", target_tokens=step.target_tokens
            )
            if step.excerpt_from is not None:  # a record's own span (`check_plan`)
                left = max(0, (step.target_tokens or 0) - self.counter.count_text(summary))
                tail = messages[step.excerpt_from : step.end]
                excerpt = excerpt_text(
                    [m for i, m in enumerate(tail, step.excerpt_from) if i not in keep],
                    step.excerpt_tokens + left,
                    self.counter,
                )
                if excerpt:
                    summary = f"{summary}\n\n{excerpt}"
            return summary_messages(
                summary,
                step.form,
                span,
                role="system" if role == "system" else "user",
                contains_reasoning=step.form == "pair" and contains_tool_call_reasoning(span),
            )
        message = messages[step.index]
        part = message.parts[step.part]
        summary = await self.summarize([message.with_parts((part,))], "ai", ())
        return message.with_parts(replace_part(message.parts, step.part, part_summary(part, summary)))


def part_summary(part: Part, summary: str) -> Part:
    if isinstance(part, ToolResult):
        return ToolResult(
            call_id=part.call_id,
            name=part.name,
            content="Summary of tool output:\n" + summary,
            is_error=part.is_error,
            extras=part.extras,
        )
    return Text(text="Summary of a long text:\n" + summary)


def replace_part(parts: tuple[Part, ...], index: int, new: Part) -> tuple[Part, ...]:
    return (*parts[:index], new, *parts[index + 1 :])
