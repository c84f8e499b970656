"""Counting, bounded access to the summarizer for one `compact` call."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from ..chain import contains_tool_call_reasoning, summary_messages
from ..messages import Message, Part, Text, ToolResult
from ..strategies import Summarize, SummarizePart, TranscriptCase
from ..summarize import (
    CountLines,
    SummarizerLike,
    call_summarizer,
    check_summary,
    is_extractive,
    is_local,
    summarize_chunked,
    transcript_reach,
)
from ..tokens import HeuristicCounter, TokenCounter
from ._excerpt import excerpt_text

__all__ = ["ProgressCallback", "SummarizerRun"]

logger = logging.getLogger(__name__)

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
        max_chunks: int | None,
        progress: ProgressCallback | None,
        check_summaries: bool = True,
    ) -> None:
        self.summarizer = summarizer
        self.local = is_local(summarizer)
        """The summarizer calls no model: its output is not checked, and its reading is no model coverage."""
        self.check_summaries = check_summaries and not self.local
        """Whether a model's summary of a span is checked against it (`chainsum.summarize.check_summary`): not for a
        summarizer that calls no model (the extractive one writes the digest itself), nor for a dry run's
        stand-ins."""
        self.checked = 0
        """Summaries the check appended to."""
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
        is chunked: about one call per cap's worth, at most `max_chunks` when set, plus the consolidation)."""
        self.phase = phase
        for step in steps:
            if isinstance(step, Summarize):
                tokens = self.counter.count_messages(messages[step.start : step.end])
                chunks = -(-tokens // max(1, int(self.cap * 0.85)))
                if self.max_chunks is not None:
                    chunks = min(self.max_chunks, chunks)
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
                if not self.local:
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
        """One summary of `messages`: a single call when the transcript fits the cap, else map-reduce over its
        chunks, at most `max_chunks` when it is set (longer messages are then excerpted to fit that many)."""
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

    def _checked(
        self,
        summary: str,
        step: Summarize,
        messages: Sequence[Message],
        span: Sequence[Message],
        context: Sequence[Message],
    ) -> str:
        """`summary` (a model's, of `span`) with what it left out of the span appended from the extractive digest,
        within the step's length target and under what the span costs (`check_summary`). Without a target (a
        strategy that asks for none), within the larger of the summary's length and 30 % of the span's (the
        extractive summarizer's own bound). The identifiers checked for are those the newest turn names: the
        messages from the newest user message on that stay in the history."""
        span_tokens = self.counter.count_messages(span)
        own = self.counter.count_text(summary)
        room = step.target_tokens if step.target_tokens is not None else max(own, span_tokens * 3 // 10)
        room = min(room, span_tokens - 1)
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        first = users[-1] if users else len(messages)
        keep = set(step.keep)
        newest = [m for i, m in enumerate(messages) if i >= first and (not step.start <= i < step.end or i in keep)]
        result = check_summary(
            summary,
            span,
            room_tokens=room,
            newest=newest,
            case=step.case,
            context=context,
            count=self.counter.count_text,
        )
        if result.added:
            self.checked += 1
            logger.info(
                "missing=<%d>, added=<%d>, tokens=<%d>, room=<%d> | model summary checked against its span: what it "
                "left out appended from the extractive digest",
                len(result.missing),
                len(result.added),
                self.counter.count_text(result.text),
                room,
            )
        elif result.missing:
            logger.debug(
                "missing=<%d>, room=<%d> | model summary left items out; no room to add them", len(result.missing), room
            )
        return result.text

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
            if self.check_summaries and not is_extractive(summary):
                summary = self._checked(summary, step, messages, span, context)
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
