"""Events the manager emits when it summarizes, and how they reach users.

- `SummarizationEvent`: what one summarization did (reason, depth, tokens before and after, the token ratio that
  triggered it, messages compressed, duration). `SummarizationFailedEvent`: one that failed (fail open unless
  configured to abort). Both are frozen dataclasses with a `kind` tag; `ManagerEvent` is their union.
- `EventBus`: callbacks, sync or async, subscribed to manager events. Every event is logged, structured; a
  callback that raises is logged and skipped, never breaking the conversation it observes.
- `ContextSummarizedEvent`: the ``context_summarized`` server-sent event of ``specs/summarizing-manager-events.md``
  (a pydantic model: it is a wire shape), with its camelCase JSON, compression ratio, user-facing message and
  `to_sse_format`.
- `detect_summarization(before, after)`: for histories compacted by someone else (an agent framework's own
  conversation manager) or by chainsum out of sight: did a summarization happen between two snapshots?
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TypeAlias, assert_never

from pydantic import BaseModel, ConfigDict, Field

from ..chain import is_summary_message, message_depth, summary_text
from ..messages import Message
from ..store import canonical_json
from ..summarize import SummarizerUsage
from ..tokens import HeuristicCounter, TokenCounter

__all__ = [
    "CONTEXT_SUMMARIZED",
    "ContextSummarizedEvent",
    "EventBus",
    "EventCallback",
    "ManagerEvent",
    "SummarizationEvent",
    "SummarizationFailedEvent",
    "SummarizationReason",
    "WindowExceededEvent",
    "detect_summarization",
    "log_event",
]

logger = logging.getLogger(__name__)

CONTEXT_SUMMARIZED = "context_summarized"
"""The SSE event name and the ``type`` field of `ContextSummarizedEvent`."""

SummarizationReason: TypeAlias = Literal["ratio", "emergency", "refresh", "manual", "detected"]
"""Why a summarization ran: the token ratio reached the trigger; it reached the emergency ratio (cooldown
ignored); ``force_refresh_after_messages`` came due; a caller asked; or `detect_summarization` saw one."""


# events ------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizationEvent:
    """One summarization that replaced part of a history."""

    reason: SummarizationReason
    depth: int
    """Depth of the summary written (as its record and its block say): 1 for a summary of original messages, n + 1
    for one that folded in summaries of depth n, 0 for a pass that wrote no summary (masking, clipping, messages
    moved to the archive)."""
    tokens_before: int
    tokens_after: int
    ratio: float | None = None
    """Estimated tokens / context window when it triggered (None when the window is unknown)."""
    messages_before: int = 0
    messages_after: int = 0
    messages_compressed: int = 0
    """Messages replaced by the summary."""
    duration_s: float = 0.0
    session_id: str = ""
    user_id: str = ""
    summary_text: str = ""
    timestamp: str = ""
    """ISO 8601 UTC."""
    record_ids: tuple[str, ...] = ()
    """The summary records this compaction wrote (`chainsum.store.SummaryRecord.id`)."""
    summarizer_calls: int = 0
    summarizer_usage: SummarizerUsage | None = None
    """Tokens the summarizers' models reported for this compaction's calls, failed ones included; None when no
    summarizer reported any (the extractive summarizer calls no model)."""
    errors: tuple[str, ...] = ()
    """Summarizer failures on the way (a later summarizer, or the model-free path, then did the work)."""
    over_window: bool = False
    """The result is still over the context window: only the system messages and the current turn are left."""
    request_tokens_before: int | None = None
    """Tokens of the request the model would have got without this compaction: `tokens_before` plus the recall
    block it would have carried (`Prepared.tokens_before`). None where not measured (`detect_summarization`)."""
    request_tokens_after: int | None = None
    """Tokens of the request sent after it: `tokens_after` plus its recall block (`Prepared.tokens_after`), what a
    window gauge shows. None where not measured."""
    recall_tokens: int = 0
    """Tokens of the recall block in that request (part of `request_tokens_after`)."""
    window: int | None = None
    """The context window the ratios are of (None when unknown)."""
    model_coverage: float | None = None
    """Share of the conversation this compaction summarized that the configured model read and summarized (0 to
    1; characters of the summarized messages, before excerpting). None when no model summarizer is configured (the
    extractive summarizer's own summaries) or nothing was summarized (masking, clipping, moves to the archive)."""
    model_free: str = ""
    """What of it was summarized model-free and why (the opt-in ``model_tokens_per_compaction`` bound, or the
    model failing); empty when the model read it all."""
    summarized_chars: int = 0
    """Characters of the conversation this compaction summarized (what `model_coverage` is the share of; 0 when
    no model summarizer is configured): a sum over compactions weighs each by its size."""
    model_chars: int = 0
    """Of `summarized_chars`, what the configured model read and summarized."""
    kind: Literal["summarized"] = "summarized"

    @property
    def tokens_removed(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def compression_ratio(self) -> float:
        """Share of the tokens removed (0 to 1), as the spec's ``contextCompressionRatio``."""
        return _compression_ratio(self.tokens_before, self.tokens_after)

    def to_context_summarized(self, session_id: str | None = None) -> ContextSummarizedEvent:
        """The wire event for this summarization (`session_id` overrides the event's own).

        Its before and after are the request's (`request_tokens_before`, `request_tokens_after`) when measured:
        what the model gets, recall block included, so that a client's banner, its window gauge and the proxy's
        ``X-Chainsum-Tokens-*`` headers show one pair. Without them, the history's (`tokens_before`,
        `tokens_after`)."""
        before, after, recall = self.tokens_before, self.tokens_after, None
        if self.request_tokens_before is not None and self.request_tokens_after is not None:
            before, after, recall = self.request_tokens_before, self.request_tokens_after, self.recall_tokens
        return ContextSummarizedEvent.create(
            session_id=self.session_id if session_id is None else session_id,
            tokens_before=before,
            tokens_after=after,
            messages_summarized=self.messages_compressed,
            recall_tokens=recall,
            window=self.window,
            model_coverage=self.model_coverage,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SummarizationFailedEvent:
    """A summarization that failed: the original history was kept (or, with ``abort_on_failure``, the error was
    raised after this event): the spec's "diagnostic event"."""

    reason: SummarizationReason
    depth: int
    """The depth the summary would have had."""
    tokens_before: int
    error: str
    error_kind: str = "transport"
    """`chainsum.errors.SummarizerError.kind` when the failure was one."""
    retryable: bool = False
    aborted: bool = False
    ratio: float | None = None
    duration_s: float = 0.0
    session_id: str = ""
    timestamp: str = ""
    summarizer_usage: SummarizerUsage | None = None
    """Tokens the summarizers' models reported for the failed calls (a provider bills a rejected answer too)."""
    kind: Literal["failed"] = "failed"


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowExceededEvent:
    """A request goes to the model over its context window: what no compaction may remove (the system messages and
    the current turn, the newest user message with it) is larger than the window, or the history could not be
    compacted now (`detail` says why). The provider will probably refuse it; the caller hears it here first."""

    tokens: int
    window: int
    floor_tokens: int
    """Tokens of what no compaction may remove."""
    detail: str
    session_id: str = ""
    timestamp: str = ""
    kind: Literal["over_window"] = "over_window"


ManagerEvent: TypeAlias = SummarizationEvent | SummarizationFailedEvent | WindowExceededEvent
EventCallback: TypeAlias = Callable[[ManagerEvent], object]
"""A subscriber: a plain function, or an async one (its awaitable is awaited); the return value is ignored."""


def _now() -> str:
    return datetime.now(UTC).isoformat()


def log_event(event: ManagerEvent) -> None:
    """The structured log line of an event: info for a summarization, warning for a failure."""
    match event:
        case SummarizationEvent():
            logger.info(
                "reason=<%s>, depth=<%d>, tokens_before=<%d>, tokens_after=<%d>, messages_compressed=<%d>, "
                "duration_s=<%.3f> | context summarized",
                event.reason,
                event.depth,
                event.tokens_before,
                event.tokens_after,
                event.messages_compressed,
                event.duration_s,
            )
        case WindowExceededEvent():
            logger.warning(
                "tokens=<%d>, window=<%d>, floor_tokens=<%d>, detail=<%s> | request over the context window",
                event.tokens,
                event.window,
                event.floor_tokens,
                event.detail,
            )
        case SummarizationFailedEvent():
            logger.warning(
                "reason=<%s>, depth=<%d>, tokens_before=<%d>, error_kind=<%s>, aborted=<%s>, error=<%s> "
                "| summarization failed",
                event.reason,
                event.depth,
                event.tokens_before,
                event.error_kind,
                event.aborted,
                event.error,
            )
        case _:  # pyright: ignore[reportUnnecessaryComparison]
            assert_never(event)


class EventBus:
    """Subscribers to manager events.

    `emit` (async) logs the event, then calls every subscriber in subscription order, awaiting async ones. A
    subscriber that raises is logged with its traceback and skipped: observers (a metrics hook, an SSE queue)
    must never break the conversation they observe. `emit_sync` is for code without an event loop.
    """

    def __init__(self) -> None:
        self._callbacks: list[tuple[EventCallback, frozenset[str] | None]] = []
        self._pending: set[asyncio.Task[None]] = set()

    def subscribe(
        self,
        callback: EventCallback,
        *,
        kinds: Sequence[Literal["summarized", "failed", "over_window"]] | None = None,
    ) -> Callable[[], None]:
        """Call `callback` on each event (only those of `kinds`, when given). Returns a function that
        unsubscribes it."""
        entry = (callback, None if kinds is None else frozenset(kinds))
        self._callbacks.append(entry)

        def unsubscribe() -> None:
            if entry in self._callbacks:
                self._callbacks.remove(entry)

        return unsubscribe

    def __len__(self) -> int:
        return len(self._callbacks)

    def _targets(self, event: ManagerEvent) -> list[EventCallback]:
        return [cb for cb, kinds in self._callbacks if kinds is None or event.kind in kinds]

    async def emit(self, event: ManagerEvent) -> None:
        log_event(event)
        for callback in self._targets(event):
            try:
                result = callback(event)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                logger.exception(
                    "callback=<%s>, event=<%s> | event callback failed; ignored", _name(callback), event.kind
                )

    def emit_sync(self, event: ManagerEvent) -> None:
        """`emit` without awaiting: sync callbacks run now; an async callback's awaitable runs to completion on a
        private loop, or, when a loop is already running in this thread, is scheduled on it as a task."""
        log_event(event)
        for callback in self._targets(event):
            try:
                result = callback(event)
                if inspect.isawaitable(result):
                    self._finish(result, callback, event)
            except Exception:
                logger.exception(
                    "callback=<%s>, event=<%s> | event callback failed; ignored", _name(callback), event.kind
                )

    def _finish(self, awaitable: Awaitable[object], callback: EventCallback, event: ManagerEvent) -> None:
        async def run() -> None:
            try:
                await awaitable
            except Exception:
                logger.exception(
                    "callback=<%s>, event=<%s> | event callback failed; ignored", _name(callback), event.kind
                )

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(run())
            finally:
                loop.close()
            return
        task = loop.create_task(run())
        self._pending.add(task)  # keep a reference until done, or the task may be collected mid-flight
        task.add_done_callback(self._pending.discard)


def _name(callback: object) -> str:
    return getattr(callback, "__qualname__", None) or type(callback).__name__


# the wire event ----------------------------------------------------------------------------------------------------
def _compression_ratio(tokens_before: int, tokens_after: int) -> float:
    return (tokens_before - tokens_after) / tokens_before if tokens_before > 0 else 0.0


class ContextSummarizedEvent(BaseModel):
    """The ``context_summarized`` server-sent event, field for field as the spec defines it, plus optional fields
    a window gauge needs (`recall_tokens`, `window`) and the share the summarizer model read (`model_coverage`),
    left out of the JSON when unknown.

    Python names are snake_case; the JSON form (`to_json_dict`, `to_sse_format`) uses the spec's camelCase
    aliases. Built by `create`, which computes the removed tokens, the compression ratio and the message: a
    client shows these as they are, never figures of its own, so that every place that speaks of one compaction
    gives the same numbers. Either the Python names or the aliases are accepted on input (`model_validate` of a
    received event).
    """

    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")

    type: Literal["context_summarized"] = CONTEXT_SUMMARIZED
    session_id: str = Field(..., alias="sessionId")
    tokens_before: int = Field(..., alias="tokensBefore", description="Token count before summarization")
    tokens_after: int = Field(..., alias="tokensAfter", description="Token count after summarization")
    tokens_removed: int = Field(..., alias="tokensRemoved", description="Tokens removed by summarization")
    messages_summarized: int = Field(..., alias="messagesSummarized", description="Number of messages summarized")
    context_compression_ratio: float = Field(
        ..., alias="contextCompressionRatio", description="Compression ratio (0-1)"
    )
    message: str = Field(..., description="User-friendly message")
    recall_tokens: int | None = Field(
        None,
        alias="recallTokens",
        description="Tokens of archived originals recalled into the request after (part of tokensAfter)",
    )
    window: int | None = Field(None, description="The context window, for a gauge of tokensAfter")
    model_coverage: float | None = Field(
        None,
        alias="modelCoverage",
        description="Share of the summarized conversation the configured summarizer model read (0-1)",
    )

    @classmethod
    def create(
        cls,
        session_id: str,
        tokens_before: int,
        tokens_after: int,
        messages_summarized: int,
        *,
        recall_tokens: int | None = None,
        window: int | None = None,
        model_coverage: float | None = None,
    ) -> ContextSummarizedEvent:
        """The event with its computed fields: ``tokens_removed = before - after``, the ratio ``removed / before``
        (0 when `tokens_before` is 0; not rounded: the spec's example shows 0.29 for 13000/45000, a display
        rounding the client does), and the message ``Context optimized: 13,000 tokens compressed``."""
        tokens_removed = tokens_before - tokens_after
        return cls.model_validate(
            {
                "sessionId": session_id,
                "tokensBefore": tokens_before,
                "tokensAfter": tokens_after,
                "tokensRemoved": tokens_removed,
                "messagesSummarized": messages_summarized,
                "contextCompressionRatio": _compression_ratio(tokens_before, tokens_after),
                "message": f"Context optimized: {tokens_removed:,} tokens compressed",
                "recallTokens": recall_tokens,
                "window": window,
                "modelCoverage": model_coverage,
            }
        )

    def to_json_dict(self) -> dict[str, object]:
        """The camelCase JSON object the client reads: the spec's keys in its order, then the optional ones that
        are known (a client of the spec alone sees exactly the spec's event)."""
        return self.model_dump(by_alias=True, exclude_none=True)

    def to_sse_format(self) -> str:
        """``event: context_summarized\\ndata: {json}\\n\\n``: one server-sent event (the JSON is on one line,
        so the frame is exactly one ``data:`` field)."""
        return f"event: {CONTEXT_SUMMARIZED}\ndata: {json.dumps(self.to_json_dict())}\n\n"

    def display_message(self) -> str:
        """The banner text of chainsum's web page (the server-side twin of ``figures.js``' ``displayMessage``):
        ``Context optimized: 45,000 → 32,000 tokens (13,000 fewer, 29% reduction)``.

        Exact counts, not the spec's ``~13K tokens compressed``: the page shows the same compaction in several
        places (banner, events, the manual trigger's note, the gauge), and a rounded figure beside an exact one
        reads as two different numbers. A request that grew (recalled originals can outweigh what was removed)
        says ``(N more)``, not a negative reduction."""
        return f"Context optimized: {self.figures()}"

    def figures(self) -> str:
        """``45,000 → 32,000 tokens (13,000 fewer, 29% reduction)``: the before/after pair of this compaction."""
        pair = f"{self.tokens_before:,} → {self.tokens_after:,} tokens"
        if self.tokens_removed >= 0:
            percent = _round_half_up(self.context_compression_ratio * 100)
            return f"{pair} ({self.tokens_removed:,} fewer, {percent}% reduction)"
        return f"{pair} ({-self.tokens_removed:,} more)"


def _round_half_up(x: float) -> int:
    """JavaScript's ``Math.round`` (halves go up), which the page uses; Python's round() goes to even."""
    return math.floor(x + 0.5)


# detection ---------------------------------------------------------------------------------------------------------
def _key(message: Message) -> object:
    """A hashable stand-in for comparing messages by value: the message itself, or its canonical JSON when a part
    holds unhashable data (an `Opaque` block's dict)."""
    try:
        hash(message)
    except TypeError:
        return canonical_json(message)
    return message


def detect_summarization(
    before: Sequence[Message],
    after: Sequence[Message],
    *,
    session_id: str = "",
    user_id: str = "",
    counter: TokenCounter | None = None,
    require_marker: bool = False,
) -> SummarizationEvent | None:
    """The summarization that turned `before` into `after`, or None when there was none.

    The spec compares message counts (``len(after) < len(before)``). That misses the usual case, where `after` is
    taken after the agent's turn and so also holds the new messages, and it mistakes a sliding-window trim for a
    summary. So:

    1. `before` is a prefix of `after` (messages only appended): no summarization.
    2. `after` holds a chainsum summary message (`is_summary_message`) that `before` did not: summarized.
    3. Otherwise, unless `require_marker`, a foreign summarizer (Strands' ``SummarizingConversationManager``
       writes its summary as a plain user message at the front): messages of `before` are gone and the first
       message after the retained system messages is new. When that first message is one of `before`'s, the
       oldest messages were only dropped (a trim): no event.

    Counts: ``messages_compressed`` is the number of `before`'s messages no longer in `after` (compared by
    value); ``tokens_after`` counts `after` up to the last message it kept from `before` (so the new turn's
    messages do not hide the reduction), all of it when none was kept. Tokens by `counter` (default heuristic).
    Synchronous, unlike the spec's ``async def``: nothing here waits on I/O.
    """
    if len(after) >= len(before) and list(after[: len(before)]) == list(before):
        return None
    before_set = Counter(_key(m) for m in before)
    new_summaries = [m for m in after if is_summary_message(m) and before_set[_key(m)] == 0]
    if not new_summaries:
        if require_marker:
            return None
        lead = 0
        while lead < min(len(after), len(before)) and after[lead].role == "system" and after[lead] == before[lead]:
            lead += 1
        if lead >= len(after) or before_set[_key(after[lead])] > 0:
            return None  # a trim (or nothing at the front that could be a summary)
        new_summaries = [after[lead]]
    after_set = Counter(_key(m) for m in after)
    removed = sum(max(0, n - after_set[k]) for k, n in before_set.items())
    if removed == 0:
        return None
    last_kept = max((i for i, m in enumerate(after) if before_set[_key(m)] > 0), default=len(after) - 1)
    counter = counter or HeuristicCounter()
    return SummarizationEvent(
        reason="detected",
        depth=max(max(message_depth(m), 1) for m in new_summaries),
        tokens_before=counter.count_messages(before),
        tokens_after=counter.count_messages(after[: last_kept + 1]),
        messages_before=len(before),
        messages_after=len(after),
        messages_compressed=removed,
        session_id=session_id,
        user_id=user_id,
        summary_text="\n".join(summary_text(m) for m in new_summaries if m.role != "assistant" or m.text),
        timestamp=_now(),
    )
