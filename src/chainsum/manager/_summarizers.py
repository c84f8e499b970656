"""How the manager calls summarizers and strategies: preference list, retry, meta header, input cap, tail guard.

`SummarizerChain` is one `SummarizerLike` that `chainsum.strategies.compact` calls like any other. Behind it:

- the meta header of ``specs/ratio-trigger-summary-chain.md`` (``<meta total_messages=N total_tokens=T
  depth=D />``) before each transcript, so the summarizer knows how much history it stands for;
- the input cap: `compact` already chunks spans whose transcript exceeds the cap (map, then consolidate), given the
  cap minus the header's allowance; a transcript still over the cap is trimmed from the oldest side, as the spec
  says, keeping the instructions;
- the preference list (``summarizerModelPreference``): summarizers are tried in order; a transport or rate-limit
  failure is retried once after ``250 ms * 2**attempt`` (or the server's ``retry_after``, capped), a validation
  failure (``invalid``, ``empty``, ``refused``) is never retried and goes straight to the next summarizer;
- structured output: a summarizer may return a `StructuredSummary` (or its JSON); the history gets its text form
  and the record its facets.

- a bound on time: each call gets `timeout_s` (``SUMMARIZATION_SUMMARIZER_TIMEOUT_SECONDS``); a summarizer that
  hangs is abandoned (a plain function runs in a worker thread, so even one that never returns cannot block the
  event loop) and counts as a transport failure;
- a bound on size: a summary that is not smaller than what it summarizes is a failure (kind ``too_long``), not a
  result, so the next summarizer, or the model-free path, follows;
- usage: what the summarizers' models reported (`chainsum.summarize.report_usage`) during the pass adds up in
  `usage`, failed calls included;
- what the models read: a model summarizer reads every span it replaces by default (chunked at the input cap,
  then consolidated), and the pass adds up how much of the summarized conversation a model read and summarized
  (`model_coverage`: a span the extractive summarizer wrote after the model failed counts as not read). A bound,
  `model_tokens` (``model_tokens_per_compaction``, opt-in), caps the transcript the models read per pass: a call
  past it goes to the configured extractive summarizer, said at WARNING and kept in the pass's figures
  (`bounded_chars`, `model_free_note`), never silently. Issue 32: with the bound on by default (3,000 tokens) a
  configured model read 5.7 % of what a generated 500-message agent session's compactions summarized at 32K, and
  none of a 40-message chat's at 2K in every integration.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias, cast

from ..errors import SummarizerError
from ..summarize import (
    ReachMeter,
    SummarizerLike,
    UsageMeter,
    call_summarizer,
    is_local,
    metering,
    transcript_reach,
)
from ..tokens import TokenCounter

if TYPE_CHECKING:
    from ..summarize import StructuredSummary

__all__ = [
    "BASE_DELAY_S",
    "MAX_RETRY_AFTER_S",
    "META_ALLOWANCE_TOKENS",
    "AnySummarizer",
    "SleepFn",
    "SummarizerChain",
    "meta_header",
    "model_free",
]

logger = logging.getLogger(__name__)

BASE_DELAY_S = 0.25
"""The spec's backoff base: the retry waits ``BASE_DELAY_S * 2**attempt`` seconds."""
MAX_RETRY_AFTER_S = 30.0
"""A server's ``retry_after`` is honoured up to this; beyond it the summarizer counts as failed (a user waiting
for a reply should not wait minutes for a summary)."""
META_ALLOWANCE_TOKENS = 40
"""Tokens kept free under the cap for the meta header."""

SleepFn = Callable[[float], Awaitable[object]]
"""The backoff's sleep (`asyncio.sleep` by default; tests pass one that records and returns at once)."""

AnySummarizer: TypeAlias = "SummarizerLike | Callable[[str], Awaitable[StructuredSummary] | StructuredSummary]"
"""What the manager accepts: a text summarizer, or one returning a `StructuredSummary` (sync or async)."""


_INSTRUCTION_TOKENS = 250
"""About what a transcript's instructions and markers take: a summary is compared with the rest."""


async def _in_thread(fn: Callable[[str], object], text: str) -> object:
    """`fn(text)` in a daemon thread, in a copy of the caller's context (so what it reports reaches the pass's
    usage meter). Not the loop's default executor: a call that never returns would make the loop's shutdown wait
    for it for ever; a daemon thread is simply left behind."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    future: asyncio.Future[object] = loop.create_future()

    def deliver(ok: bool, value: object) -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(cast(BaseException, value))

    def work() -> None:
        try:
            ok, value = True, context.run(fn, text)
        except BaseException as exc:  # handed to the awaiting task, which reports it
            ok, value = False, exc
        try:
            loop.call_soon_threadsafe(deliver, ok, value)
        except RuntimeError:  # the loop is gone: the caller stopped waiting long ago
            pass

    threading.Thread(target=work, name="chainsum-summarizer", daemon=True).start()
    return await future


def _is_async(summarizer: object) -> bool:
    call = getattr(summarizer, "__call__", None)  # noqa: B004 - the bound __call__ of an object, not callability
    return inspect.iscoroutinefunction(summarizer) or inspect.iscoroutinefunction(call)


def meta_header(total_messages: int, total_tokens: int, depth: int) -> str:
    return f"<meta total_messages={total_messages} total_tokens={total_tokens} depth={depth} />\n"


def _trim_oldest(text: str, cap: int, count: Callable[[str], int]) -> str:
    """`text` cut to `cap` tokens by dropping its oldest transcript content: the head (meta header and
    instructions, up to the line opening the transcript) is kept, then as much of the end as fits."""
    if count(text) <= cap:
        return text
    opening = text.find("<transcript_")
    head_end = text.find("\n", opening) + 1 if opening >= 0 else 0
    head, body = text[:head_end], text[head_end:]
    lo, hi, best = 0, len(body), ""
    while lo <= hi:
        keep = (lo + hi) // 2
        candidate = f"{head}[... {len(body) - keep} older characters trimmed ...]\n{body[len(body) - keep :]}"
        if count(candidate) <= cap:
            best, lo = candidate, keep + 1
        else:
            hi = keep - 1
    return best or head


def _is_structured(value: object) -> bool:
    """Whether a summarizer answered with a `StructuredSummary`. Asked after every summary, and the module that
    defines it (pydantic models, built on import: about 100 ms) is loaded only by a summarizer that makes one:
    while it is not loaded, no value can be one."""
    module = sys.modules.get(_STRUCTURED)
    return module is not None and isinstance(value, module.StructuredSummary)


_STRUCTURED = "chainsum.summarize._structured"


def model_free(summarizer: object) -> bool:
    """The summarizer (or the one it wraps, through ``inner``: `CountingSummarizer`) calls no model and costs
    nothing to call: it says ``local = True``, as the extractive summarizer does (`chainsum.summarize.is_local`,
    the one rule, which the executor's dry run and summary check follow too)."""
    return is_local(summarizer)


@dataclass(slots=True)
class SummarizerChain:
    """The manager's summarizer for one summarization pass (mutable on purpose: it records what happened)."""

    summarizers: Sequence[AnySummarizer]
    counter: TokenCounter
    cap: int
    sleep: SleepFn
    header: str = ""
    """The meta header for this pass (set by the manager before each pass)."""
    timeout_s: float | None = None
    """Longest one call may take; None: no bound."""
    retries: int = 1
    failures: list[SummarizerError] = field(default_factory=list[SummarizerError])
    structured: list[StructuredSummary] = field(default_factory=list["StructuredSummary"])
    calls: int = 0
    hung: set[int] = field(default_factory=set[int])
    """Summarizers (by index) that let a call run into the timeout during this pass: not called again in it, so
    one `prepare` waits for a hanging summarizer once, not once per summary its plan needs."""
    usage: UsageMeter = field(default_factory=UsageMeter)
    """Tokens the summarizers' models reported during this pass (`chainsum.summarize.report_usage`)."""
    model_tokens: int | None = None
    """Most transcript tokens the model summarizers may read in this pass, the instructions' allowance
    (``_INSTRUCTION_TOKENS``) off each call; None: no bound (see the module)."""
    model_read: int = 0
    """Transcript tokens handed to model summarizers so far in this pass (as `model_tokens` counts them), failed
    calls included."""
    text_chars: int = 0
    """Characters of the conversation the summarizers of this pass were shown (`transcript_reach`; consolidations
    of partial summaries are not counted again). Counted only when a model summarizer is configured (`models`):
    coverage is about the user's model."""
    model_chars: int = 0
    """Of `text_chars`, what a model summarizer read and summarized."""
    bounded_chars: int = 0
    """Of `text_chars`, what went to a model-free summarizer because the pass was past `model_tokens`."""
    failed_chars: int = 0
    """Of `text_chars`, what a model-free summarizer wrote after every model summarizer failed on it."""
    unanswered: SummarizerError | None = None
    """The last failure no summarizer of the chain answered after (every candidate failed on one transcript): what
    ``abort_on_failure`` raises, since the strategy may still have compacted model-free around it."""
    reach: ReachMeter = field(default_factory=ReachMeter)
    """What chunked summarization left out of every transcript of this pass (excerpts of long messages, or a
    sample of thousands of them: `chainsum.summarize.report_unread`), opened by the caller around the pass."""

    @property
    def summarized_chars(self) -> int:
        """What `model_coverage` is the share of: the conversation shown to the summarizers and what chunked
        summarization showed none of (0 when no model summarizer is configured)."""
        return self.text_chars + self.reach.unread_chars if self.models and self.text_chars else 0

    @property
    def models(self) -> bool:
        """Whether a model summarizer is configured (one that is not `model_free`)."""
        return any(not model_free(s) for s in self.summarizers)

    @property
    def local(self) -> bool:
        """Every summarizer of the chain calls no model (`chainsum.summarize.is_local` reads this): the executor then
        neither checks its summaries against their spans nor measures what it read as a model's, so a session with
        the extractive summarizer alone does not parse each transcript again for a coverage nobody reports."""
        return not self.models

    @property
    def model_coverage(self) -> float | None:
        """Share of the conversation this pass summarized that a model summarizer read (0 to 1); None when no
        model summarizer is configured or nothing was summarized."""
        if not self.text_chars or not self.models:
            return None
        return min(1.0, self.model_chars / self.summarized_chars)

    def model_free_note(self) -> str:
        """What of this pass's summarized conversation no model read, and why; empty when a model read all of it
        (or none is configured). A record and its event carry it, so a reader learns which summary text came from
        the extractive summarizer."""
        if not self.models or not self.text_chars:
            return ""
        said: list[str] = []
        if self.bounded_chars:
            said.append(
                f"{self.bounded_chars:,} of {self.text_chars:,} characters summarized model-free: past "
                f"model_tokens_per_compaction ({self.model_tokens})"
            )
        if self.failed_chars:
            said.append(
                f"{self.failed_chars:,} of {self.text_chars:,} characters summarized model-free: the model failed"
            )
        if self.reach.unread_chars:
            said.append(
                f"{self.reach.unread_chars:,} characters of long messages shown to no summarizer: the span needed "
                "more calls than a summary may take (read as excerpts)"
            )
        return "; ".join(said)

    async def _one(self, index: int, summarizer: AnySummarizer, transcript: str) -> str:
        async def adapted(text: str) -> str:
            if _is_async(summarizer):
                result: object = summarizer(text)
            else:  # a plain function may block: in a thread, so the timeout holds and the event loop stays free
                result = await _in_thread(summarizer, text)
            if inspect.isawaitable(result):
                result = await cast("Awaitable[object]", result)
            if _is_structured(result):
                structured = cast("StructuredSummary", result)
                self.structured.append(structured)
                return structured.to_text()
            return cast(str, result)  # call_summarizer checks the type

        try:
            with metering(self.usage):
                text = await asyncio.wait_for(call_summarizer(adapted, transcript), self.timeout_s)
        except TimeoutError:
            self.hung.add(index)
            raise SummarizerError(f"no answer within {self.timeout_s:g} s", kind="transport") from None
        if self.counter.count_text(text) >= max(1, self.counter.count_text(transcript) - _INSTRUCTION_TOKENS):
            raise SummarizerError(
                f"the summary ({len(text)} characters) is not smaller than what it summarizes", kind="too_long"
            )
        if text.startswith(("{", "```")):  # a JSON record from a text summarizer: keep its facets too
            from ..summarize import parse_structured_summary

            try:
                parsed = parse_structured_summary(text)
            except SummarizerError:
                return text
            self.structured.append(parsed)
            return parsed.to_text()
        return text

    def _candidates(self, tokens: int) -> list[tuple[int, AnySummarizer]]:
        """The summarizers to try for a transcript of `tokens`, in order: all of them while the models may read
        it; past `model_tokens`, the model-free ones only. With none configured (summarizers given explicitly, all
        models), all of them: the bound leaves nobody to read the rest, and the models read it as before."""
        listed = list(enumerate(self.summarizers))
        if self.model_tokens is None or self.model_read + tokens <= self.model_tokens:
            return listed
        free = [(i, s) for i, s in listed if model_free(s)]
        if free and len(free) < len(listed):
            # said, not silent: an operator who configured a model sees why this summary is the extractive one
            logger.warning(
                "tokens=<%d>, read=<%d>, bound=<%d> | transcript past the model summarizers' bound for this "
                "compaction; the extractive summarizer summarizes it (SUMMARIZATION_MODEL_TOKENS_PER_COMPACTION)",
                tokens,
                self.model_read,
                self.model_tokens,
            )
        return free or listed

    def _count(self, transcript: str, sent: str, summarizer: AnySummarizer, bounded: bool) -> None:
        """Add what the summarizer that answered `transcript` (sent as `sent`: with the header, maybe trimmed)
        summarized of the conversation to the pass's figures."""
        shown = transcript_reach(transcript)
        if shown is None:
            return
        read = max(0, shown - max(0, len(self.header) + len(transcript) - len(sent)))
        self.text_chars += shown
        if not model_free(summarizer):
            self.model_chars += read
        elif bounded:
            self.bounded_chars += shown
        else:
            self.failed_chars += shown

    async def __call__(self, transcript: str) -> str:
        text = _trim_oldest(self.header + transcript, self.cap, self.counter.count_text)
        # what the bound counts is the history read: the instructions, the same in every call, are left out
        tokens = max(0, self.counter.count_text(text) - _INSTRUCTION_TOKENS) if self.model_tokens is not None else 0
        last: SummarizerError | None = None
        candidates = self._candidates(tokens)
        counting = self.models
        bounded = counting and all(model_free(s) for _, s in candidates)
        for index, summarizer in candidates:
            if self.model_tokens is not None and not model_free(summarizer):
                self.model_read += tokens
            if index in self.hung:
                last = SummarizerError(
                    f"summarizer {index} hung earlier in this pass; not called again", kind="transport"
                )
                continue
            for attempt in range(self.retries + 1):
                self.calls += 1
                try:
                    summary = await self._one(index, summarizer, text)
                except SummarizerError as exc:
                    last = exc
                    self.failures.append(exc)
                    retry = exc.retryable and attempt < self.retries and index not in self.hung
                    delay = BASE_DELAY_S * 2**attempt if exc.retry_after is None else exc.retry_after
                    if retry and delay > MAX_RETRY_AFTER_S:
                        retry = False
                    logger.warning(
                        "summarizer=<%d>, attempt=<%d>, kind=<%s>, retry=<%s>, delay_s=<%.3f>, output=<%s> "
                        "| summarizer call failed",
                        index,
                        attempt,
                        exc.kind,
                        retry,
                        delay if retry else 0.0,
                        exc.detail[:200],
                    )
                    if not retry:
                        break
                    await self.sleep(delay)
                    continue
                if counting:
                    self._count(transcript, text, summarizer, bounded)
                return summary
        if last is None:
            raise SummarizerError("no summarizer configured", kind="invalid")
        self.unanswered = last
        raise last
