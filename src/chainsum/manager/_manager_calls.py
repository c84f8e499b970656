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

`TailGuard` wraps any strategy so its plans never touch the last ``preserve_recent`` messages.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeAlias, cast

from ..chain import safe_cuts
from ..errors import SummarizerError
from ..messages import Message
from ..strategies import (
    AutoStrategy,
    Clip,
    Mask,
    MaskStrategy,
    Plan,
    PlanContext,
    RatioStrategy,
    SafeSplitStrategy,
    SectionsStrategy,
    Step,
    Strategy,
    Summarize,
)
from ..summarize import SummarizerLike, call_summarizer
from ..tokens import TokenCounter
from ._config import ManagerConfig

if TYPE_CHECKING:
    from ..summarize import StructuredSummary

__all__ = [
    "BASE_DELAY_S",
    "MAX_RETRY_AFTER_S",
    "META_ALLOWANCE_TOKENS",
    "AnySummarizer",
    "SleepFn",
    "SummarizerChain",
    "TailGuard",
    "meta_header",
    "strategy_for",
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
    from ..summarize import StructuredSummary

    return isinstance(value, StructuredSummary)


@dataclass(slots=True)
class SummarizerChain:
    """The manager's summarizer for one summarization pass (mutable on purpose: it records what happened)."""

    summarizers: Sequence[AnySummarizer]
    counter: TokenCounter
    cap: int
    sleep: SleepFn
    header: str = ""
    """The meta header for this pass (set by the manager before each pass)."""
    retries: int = 1
    failures: list[SummarizerError] = field(default_factory=list[SummarizerError])
    structured: list[StructuredSummary] = field(default_factory=list["StructuredSummary"])
    calls: int = 0

    async def _one(self, summarizer: AnySummarizer, transcript: str) -> str:
        async def adapted(text: str) -> str:
            result: object = summarizer(text)
            if inspect.isawaitable(result):
                result = await cast("Awaitable[object]", result)
            if _is_structured(result):
                structured = cast("StructuredSummary", result)
                self.structured.append(structured)
                return structured.to_text()
            return cast(str, result)  # call_summarizer checks the type

        text = await call_summarizer(adapted, transcript)
        if text.startswith(("{", "```")):  # a JSON record from a text summarizer: keep its facets too
            from ..summarize import parse_structured_summary

            try:
                parsed = parse_structured_summary(text)
            except SummarizerError:
                return text
            self.structured.append(parsed)
            return parsed.to_text()
        return text

    async def __call__(self, transcript: str) -> str:
        text = _trim_oldest(self.header + transcript, self.cap, self.counter.count_text)
        last: SummarizerError | None = None
        for index, summarizer in enumerate(self.summarizers):
            for attempt in range(self.retries + 1):
                self.calls += 1
                try:
                    return await self._one(summarizer, text)
                except SummarizerError as exc:
                    last = exc
                    self.failures.append(exc)
                    retry = exc.retryable and attempt < self.retries
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
        if last is None:
            raise SummarizerError("no summarizer configured", kind="invalid")
        raise last


@dataclass(frozen=True, slots=True)
class TailGuard:
    """`inner`, except that no step reaches into the last `preserve_recent` messages: a summarized span ending
    inside the tail is shortened to the nearest safe cut before it (dropped when nothing is left), a part edit
    inside the tail is dropped, except a mask or clip planned while the history is over `PlanContext.hard_limit`
    (the window: keeping the tail verbatim would make the request fail; both are archived and reversible).
    `finish` (safe-split's post-processing) passes through."""

    inner: Strategy
    preserve_recent: int
    name: str

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        plan = self.inner.plan(messages, ctx)
        limit = len(messages) - self.preserve_recent
        if not plan or all(_end(s) <= limit for s in plan.steps):
            return plan
        cuts = safe_cuts(messages)
        over_hard = ctx.hard_limit is not None and ctx.counter.count_messages(messages) > ctx.hard_limit
        steps: list[Step] = []
        for step in plan.steps:
            if isinstance(step, Summarize):
                end = min(step.end, limit)
                while end > step.start and not cuts[end]:
                    end -= 1
                if end > step.start:
                    steps.append(step if end == step.end else replace(step, end=end))
            elif step.index < limit or (over_hard and isinstance(step, (Mask, Clip))):
                steps.append(step)
        note = f"{plan.note}; the last {self.preserve_recent} messages kept verbatim"
        return Plan(tuple(steps), note=note)

    def finish(self, messages: Sequence[Message]) -> Sequence[Message]:
        inner_finish = getattr(self.inner, "finish", None)
        if callable(inner_finish):
            return cast("Sequence[Message]", inner_finish(messages))
        return messages


def _end(step: Step) -> int:
    return step.end if isinstance(step, Summarize) else step.index + 1


def strategy_for(
    strategy: str | Strategy, config: ManagerConfig, preserve_recent: int, *, model_free: bool = False
) -> TailGuard:
    """The strategy named in the configuration (or given), guarded to keep `preserve_recent` messages; with
    `model_free` (an emergency at the depth cap), ``auto`` without its summarizing phases, whatever was named."""
    inner: Strategy
    if model_free:
        inner = AutoStrategy(summarize=False)
    elif not isinstance(strategy, str):
        inner = strategy
    elif strategy == "auto":
        inner = AutoStrategy()
    elif strategy == "ratio":
        inner = RatioStrategy(summary_ratio=config.summary_ratio, preserve_recent=preserve_recent)
    elif strategy == "sections":
        inner = SectionsStrategy()
    elif strategy == "safe-split":
        inner = SafeSplitStrategy()
    elif strategy == "mask":
        inner = MaskStrategy()
    else:
        raise ValueError(f"unknown strategy {strategy!r}")
    return TailGuard(inner, preserve_recent, inner.name)
