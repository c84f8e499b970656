"""Replay a recorded conversation through a `ContextManager` as an agent would, and report what it cost.

How requests are cut: a model request happens before each assistant message of the recording (the first message
excepted). The caller holds the whole recording so far and gives it to `ContextManager.prepare` every time, as a
chat app reading its database does (the manager maps it onto what it sent last time); with ``adopt=True`` the
caller instead sends back the manager's previous output plus what was recorded since, as an agent framework that
replaces its state does. Consecutive assistant messages (one per content block in some logs) are each a request,
as in ``bench/bench_manager.py``.

Between two compactions each request must be the previous one plus the new messages (DESIGN invariant 10): a
request that is not, and is no compaction (`Prepared.rewritten`), is a *prefix break*, counted in the totals (the
target is 0): it throws away the provider's prompt cache for no reason.

What each request costs, estimated with prompt caching: the longest common prefix of this request's messages and
the previous request's (by identity, else equality) counts as cached input, the rest as fresh input, at the prices
of `Prices` (USD per million tokens). The model's output tokens are not counted: they are the same whatever the
manager does. The summarizer's own work is: its input at `Prices.summarizer_input` and its output (the summaries
it wrote, counted as text) at `Prices.summarizer_output`, charged in the request whose `prepare` called it and
reported apart (`TurnReport.summarizer_cost_usd`) as well as in the cost, so that a setting that compacts less
often but summarizes more at once is weighed with what its summaries cost (0 for the extractive summarizer, which
calls no model, and shown as 0). Token counts are the manager's own counter's: the sum of the messages plus the
reply priming.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import BaseModel

from .._sync import sync_version
from ..messages import Message
from ..rules import validate
from ..tokens import TokenCounter
from ._events import SummarizationEvent, SummarizationFailedEvent
from ._manager import ContextManager
from ._prompt_cache import BreakpointCache
from ._reader import equal_head
from ._recall import is_recall_message
from ._request import Prepared
from ._summarizers import AnySummarizer

__all__ = ["CountingSummarizer", "Prices", "ReplayReport", "TurnReport", "replay", "replay_sync", "request_indices"]

ProgressFn = Callable[[int, int], None]
"""Called after each request with (requests done, requests in all)."""


@dataclass(slots=True)
class CountingSummarizer:
    """Wraps a summarizer, counting its calls, the tokens of the transcripts it was given and of what it answered,
    and the time it took: what `replay` reports, and how the benchmarks count a summarizer's work."""

    inner: AnySummarizer
    counter: TokenCounter
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    """Tokens of the answers: the text, or the JSON text of a structured summary (what a model would have written)."""
    seconds: float = 0.0
    """Wall-clock seconds inside the wrapped summarizer, summed over its calls (calls that run at once overlap; a
    local summarizer such as the extractive one runs on the event loop, one call at a time). Part of the
    ``pipeline`` phase of a `PhaseTimes`."""

    async def __call__(self, transcript: str) -> Any:
        self.calls += 1
        self.input_tokens += self.counter.count_text(transcript)
        started = time.perf_counter()
        result: object = self.inner(transcript)
        if inspect.isawaitable(result):
            result = await cast("Awaitable[object]", result)
        self.seconds += time.perf_counter() - started
        self.output_tokens += self.counter.count_text(_answer_text(result))
        return result


def _answer_text(result: object) -> str:
    """The text a summarizer answered: a string as it is, a structured summary (a pydantic model) as its JSON,
    anything else as ``str`` (the manager rejects what it cannot use, but the call was made and its output paid
    for)."""
    if isinstance(result, str):
        return result
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    return str(result)


@dataclass(frozen=True, slots=True, kw_only=True)
class Prices:
    """USD per million tokens. The defaults are round examples, not any provider's current price list."""

    input: float = 3.00
    """Fresh (uncached) prompt tokens."""
    cached: float = 0.30
    """Prompt tokens read from the provider's prompt cache."""
    summarizer_input: float = 0.0
    """Tokens sent to the summarizer (0: the extractive summarizer calls no model)."""
    summarizer_output: float = 0.0
    """Tokens the summarizer wrote (0: the extractive summarizer calls no model)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnReport:
    """One model request of the replay."""

    request: int
    """0-based number of the request."""
    message_index: int
    """Index in the recording of the assistant message this request produced."""
    messages: int
    """Messages sent."""
    context_tokens: int
    """Tokens sent (after `prepare`)."""
    cached_input_tokens: int
    """Of `context_tokens`, the prefix unchanged since the previous request."""
    compacted: bool
    """`prepare` wrote at least one summary record for this request."""
    reason: str | None
    """Why it compacted (``trigger``, ``emergency``, ...), or why it failed (``failed:KIND``); None otherwise."""
    record_ids: tuple[str, ...]
    summarizer_calls: int
    summarizer_input_tokens: int
    cost_usd: float
    """The request with prompt caching, and the summarizer calls its `prepare` made (`summarizer_cost_usd`)."""
    valid: bool | None
    """Valid for the provider's rules (None when the replay was told not to check)."""
    over_window: bool
    seconds: float
    """Time spent in `prepare`."""
    recalled: tuple[str, ...] = ()
    """Archive ids of the originals recalled into this request."""
    prefix_break: bool = False
    breakpoint_cached_tokens: int | None = None
    """Of `context_tokens`, what Anthropic's cache would serve given the ``cache_control`` marks the request carries
    (`chainsum.manager._prompt_cache`); None unless the replay targets Anthropic."""
    """Not the previous request plus new messages, and no compaction either (see the module docstring)."""
    summarizer_output_tokens: int = 0
    summarizer_cost_usd: float = 0.0
    """What the summarizer calls of this request cost (input and output priced; part of `cost_usd`)."""
    model_coverage: float | None = None
    """Share of what this request's compaction summarized that the configured model read
    (`SummarizationEvent.model_coverage`); None when it summarized nothing or no model is configured."""
    summarized_chars: int = 0
    model_chars: int = 0
    """The characters `model_coverage` is the share of, and the model's part: the totals weigh by them."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "message_index": self.message_index,
            "messages": self.messages,
            "context_tokens": self.context_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "compacted": self.compacted,
            "reason": self.reason,
            "record_ids": list(self.record_ids),
            "summarizer_calls": self.summarizer_calls,
            "summarizer_input_tokens": self.summarizer_input_tokens,
            "summarizer_output_tokens": self.summarizer_output_tokens,
            "summarizer_cost_usd": round(self.summarizer_cost_usd, 8),
            "cost_usd": round(self.cost_usd, 8),
            "valid": self.valid,
            "over_window": self.over_window,
            "seconds": round(self.seconds, 6),
            "recalled": list(self.recalled),
            "prefix_break": self.prefix_break,
            "model_coverage": None if self.model_coverage is None else round(self.model_coverage, 6),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayReport:
    """Every request of a replay, and the totals (each total is the sum, or the max, over `turns`)."""

    session: str
    window: int
    provider: str
    strategy: str
    prices: Prices
    trigger_tokens: int
    """The window times the manager's trigger ratio: where a compaction is due."""
    turns: tuple[TurnReport, ...] = field(default_factory=tuple[TurnReport, ...])
    failures: int = 0
    """Summarizations that failed (the history was kept)."""
    final_depth: int = 0
    """The manager's summary chain depth at the end."""

    def totals(self) -> dict[str, Any]:
        t = self.turns
        sent = sum(x.context_tokens for x in t)
        cached = sum(x.cached_input_tokens for x in t)
        return {
            "requests": len(t),
            "compactions": sum(x.compacted for x in t),
            "failures": self.failures,
            "summarizer_calls": sum(x.summarizer_calls for x in t),
            "summarizer_input_tokens": sum(x.summarizer_input_tokens for x in t),
            "summarizer_output_tokens": sum(x.summarizer_output_tokens for x in t),
            "max_context_tokens": max((x.context_tokens for x in t), default=0),
            "input_tokens": sent,
            "cached_input_tokens": cached,
            # what the provider's prompt cache could serve: a compaction, or any earlier change, resets it
            "cache_hit_share": round(cached / sent, 6) if sent else None,
            "cost_usd": round(sum(x.cost_usd for x in t), 8),
            # of which the summarizer's calls (0 with the extractive summarizer, which calls no model)
            "summarizer_cost_usd": round(sum(x.summarizer_cost_usd for x in t), 8),
            # of what the compactions summarized, the share the configured model read (None: no model configured)
            "model_coverage": self.model_coverage(),
            "over_window": sum(x.over_window for x in t),
            # requests that rewrote what was sent before without compacting: each one a prompt cache thrown away
            "prefix_breaks": sum(x.prefix_break for x in t),
            # Anthropic only: what the cache_control marks (the manager's: a recording holds none) make cacheable
            "breakpoint_cached_input_tokens": bp if (bp := self._breakpoint_cached()) is not None else None,
            "breakpoint_cache_hit_share": round(bp / sent, 6) if bp is not None and sent else None,
            "recalled": sum(len(x.recalled) for x in t),
            "invalid": sum(x.valid is False for x in t),
            "final_depth": self.final_depth,
            "seconds": round(sum(x.seconds for x in t), 6),
        }

    def model_coverage(self) -> float | None:
        """Of everything the replay's compactions summarized, the share the configured model read (weighed by
        characters); None when no model summarizer is configured or nothing was summarized."""
        summarized = sum(x.summarized_chars for x in self.turns)
        if not summarized:
            return None
        return round(sum(x.model_chars for x in self.turns) / summarized, 6)

    def _breakpoint_cached(self) -> int | None:
        counts = [x.breakpoint_cached_tokens for x in self.turns]
        return sum(c for c in counts if c is not None) if counts and None not in counts else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "context_window": self.window,
            "trigger_tokens": self.trigger_tokens,
            "provider": self.provider,
            "strategy": self.strategy,
            "prices_usd_per_mtok": {
                "input": self.prices.input,
                "cached": self.prices.cached,
                "summarizer_input": self.prices.summarizer_input,
                "summarizer_output": self.prices.summarizer_output,
            },
            "turns": [x.to_dict() for x in self.turns],
            "totals": self.totals(),
        }


def request_indices(messages: Sequence[Message]) -> list[int]:
    """The indices of the assistant messages that a model request produced: every assistant message but a first."""
    return [i for i, m in enumerate(messages) if i > 0 and m.role == "assistant"]


class _Tokens:
    """Per-message token counts memoized by identity (the history keeps the same objects from request to request),
    so a replay counts each message once."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._memo: dict[int, tuple[object, int]] = {}
        self._priming: int | None = None

    def of(self, m: Message) -> int:
        hit = self._memo.get(id(m))
        if hit is not None and hit[0] is m:
            return hit[1]
        n = self.counter.count_message(m)
        self._memo[id(m)] = (m, n)
        return n

    def total(self, messages: Sequence[Message]) -> int:
        if not messages:
            return 0
        if self._priming is None:
            first = messages[0]
            self._priming = self.counter.count_messages([first]) - self.counter.count_message(first)
        return self._priming + sum(self.of(m) for m in messages)


async def replay(
    messages: Sequence[Message],
    manager: ContextManager,
    *,
    counting: CountingSummarizer | None = None,
    prices: Prices | None = None,
    check_valid: bool = True,
    progress: ProgressFn | None = None,
    adopt: bool = False,
) -> ReplayReport:
    """Feed `messages` to `manager` one request at a time (see the module docstring) and report each request.

    `counting` is the summarizer wrapper the manager was built with, if any: its counts are attributed to the
    request whose `prepare` made the calls. `check_valid` validates every request against the manager's provider
    (quadratic in the history length; benchmarks turn it off)."""
    prices = prices or Prices()
    tokens = _Tokens(manager.counter)
    cuts = request_indices(messages)
    turns: list[TurnReport] = []
    failures = 0
    history: list[Message] = []
    previous: Sequence[Message] = ()
    anthropic = BreakpointCache() if manager.provider == "anthropic" else None
    pos = 0
    for n, cut in enumerate(cuts):
        history.extend(messages[pos:cut])
        pos = cut
        calls0 = counting.calls if counting else 0
        tokens0 = counting.input_tokens if counting else 0
        out0 = counting.output_tokens if counting else 0
        started = time.perf_counter()
        prepared = await manager.prepare(history)
        seconds = time.perf_counter() - started
        sent = list(prepared.messages)
        reason: str | None = None
        coverage: tuple[float | None, int, int] = (None, 0, 0)
        if isinstance(prepared.event, SummarizationEvent):
            reason = prepared.event.reason
            event = prepared.event
            coverage = (event.model_coverage, event.summarized_chars, event.model_chars)
        elif isinstance(prepared.event, SummarizationFailedEvent):
            failures += 1
            reason = f"failed:{prepared.event.error_kind}"
        context = prepared.tokens_after
        # the manager's cache marks taken off: the one it moves to the newest message is no prefix break
        plain = list(manager.unmarked(sent))
        k = equal_head(plain, previous)
        breakpoint_cached = min(context, anthropic.read(sent, tokens.total)) if anthropic is not None else None
        cached = min(context, tokens.total(sent[:k])) if k else 0
        s_calls = (counting.calls - calls0) if counting else 0
        s_tokens = (counting.input_tokens - tokens0) if counting else 0
        s_out = (counting.output_tokens - out0) if counting else 0
        s_cost = (s_tokens * prices.summarizer_input + s_out * prices.summarizer_output) / 1e6
        cost = ((context - cached) * prices.input + cached * prices.cached) / 1e6 + s_cost
        turns.append(
            TurnReport(
                request=n,
                message_index=cut,
                messages=len(sent),
                context_tokens=context,
                cached_input_tokens=cached,
                compacted=prepared.changed,
                reason=reason,
                record_ids=tuple(r.id for r in prepared.records),
                summarizer_calls=s_calls,
                summarizer_input_tokens=s_tokens,
                cost_usd=cost,
                valid=(not validate(sent, manager.provider)) if check_valid else None,
                over_window=prepared.over_window,
                seconds=seconds,
                recalled=prepared.recalled,
                prefix_break=bool(previous) and k < len(previous) and not prepared.rewritten,
                summarizer_output_tokens=s_out,
                summarizer_cost_usd=s_cost,
                breakpoint_cached_tokens=breakpoint_cached,
                model_coverage=coverage[0],
                summarized_chars=coverage[1],
                model_chars=coverage[2],
            )
        )
        if adopt:
            history = [m for m in sent if m.role != "user" or m not in recall_messages(prepared)]
        previous = plain
        if progress is not None:
            progress(n + 1, len(cuts))
    strategy = manager.strategy if isinstance(manager.strategy, str) else type(manager.strategy).__name__
    return ReplayReport(
        session=manager.session,
        window=manager.window,
        provider=manager.provider,
        strategy=strategy,
        prices=prices,
        trigger_tokens=int(manager.window * manager.config.trigger_token_ratio),
        turns=tuple(turns),
        failures=failures,
        final_depth=manager.state.depth,
    )


def recall_messages(prepared: Prepared[Message]) -> list[Message]:
    """The recall block of a prepared request (a caller adopting the output leaves it out: it is per request)."""
    return [m for m in prepared.messages if is_recall_message(m)] if prepared.recalled else []


replay_sync = sync_version(replay)
