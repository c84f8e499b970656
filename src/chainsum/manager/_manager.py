"""`ContextManager`: call `prepare` before every model request; it summarizes when the context is filling up.

Order of work in `prepare` (``specs/ratio-trigger-summary-chain.md``):

1. Convert and count only what is new. The previous call's input (its item objects) and its canonical messages are
   kept; when the new input starts with the very same objects (checked by identity) only the tail is converted
   and counted. Plain OpenAI-format dicts come back as dicts (the caller's own objects for kept messages).
2. Decide (`_manager_policy.decide`): nothing to do is the common case, and then the caller's own list object
   comes back, with no chain build, validation or copy.
3. Summarize under the session lock: re-read the stored state (another process may have summarized), run the
   strategy through `chainsum.strategies.compact` with a budget of ``reset_token_ratio * window`` (so the result
   lands under the hysteresis reset) and the window as its hard limit (past it, and only then, ``auto`` may clip
   the current turn's tool output), with the summarizer preference list, retry and input cap of
   `SummarizerChain`. Depth strategy: still over the trigger after a pass, a second pass follows when the depth
   guard allows; when it does not, the pass is retried once with ``preserve_recent`` reduced (never below 2), as it
   is when a first pass finds nothing outside the verbatim tail while the history is over the window.
4. Check: valid for the provider and smaller than the input, else the input is kept.
5. Archive every removed original with its record and the new state in one transaction; only then is the shorter
   history returned. A failed archive write returns the input.
6. Emit a `SummarizationEvent` (or `SummarizationFailedEvent`) through the event bus and the log.

One manager serves one session; calls for it are expected one at a time (as a conversation's turns are).
"""

from __future__ import annotations

import asyncio
import logging
import operator
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar, cast, overload

from ..errors import SummarizerError
from ..formats import openai_chat
from ..messages import Message
from ..strategies import CompactResult, Strategy, compact
from ..summarize import ExtractiveSummarizer
from ..tokens import HeuristicCounter, TiktokenCounter, TokenCounter
from ._archive import Archive, MemoryArchive
from ._config import ManagerConfig
from ._events import (
    EventBus,
    EventCallback,
    ManagerEvent,
    SummarizationEvent,
    SummarizationFailedEvent,
    SummarizationReason,
)
from ._manager_build import build_record, removed_messages, summary_text
from ._manager_calls import META_ALLOWANCE_TOKENS, AnySummarizer, SleepFn, SummarizerChain, meta_header, strategy_for
from ._manager_policy import SessionState, decide, is_armed
from ._records import SummaryRecord
from ._windows import context_window as window_of

__all__ = ["ContextManager", "Prepared"]

logger = logging.getLogger(__name__)

M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class Prepared(Generic[M]):
    """What `ContextManager.prepare` returns: the history to send, and what happened to it."""

    messages: Sequence[M]
    """The caller's own list when nothing changed; a new list (same kind of items) after a summarization."""
    event: ManagerEvent | None = None
    """The summarization (or the failure) of this call, if any."""
    record: SummaryRecord | None = None
    """The last record written by this call (a second pass writes two: see `records`)."""
    records: tuple[SummaryRecord, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.records)


@dataclass(frozen=True, slots=True)
class _Pass:
    result: CompactResult
    record: SummaryRecord
    state: SessionState
    removed: int


class _Abort(Exception):
    """Internal: a pass ended without a usable result (`detail` says why)."""

    def __init__(self, kind: str, detail: str, error: SummarizerError | None = None) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.error = error


class ContextManager:
    """Keeps one session's history inside the model's context window. See the module docstring."""

    def __init__(
        self,
        config: ManagerConfig | None = None,
        *,
        model: str | None = None,
        context_window: int | None = None,
        counter: TokenCounter | None = None,
        summarizers: Sequence[AnySummarizer] | None = None,
        strategy: str | Strategy | None = None,
        provider: str = "openai",
        archive: Archive | None = None,
        session: str = "default",
        on_event: EventCallback | None = None,
        sleep: SleepFn = asyncio.sleep,
    ) -> None:
        self.config = config or ManagerConfig()
        window = context_window or self.config.context_window
        if window is None:
            model = model or self.config.model_id
            if model is None:
                raise ValueError("the context window is unknown: pass model=, context_window= or set it in config")
            window = window_of(model)
        if window <= 0:
            raise ValueError(f"context_window must be positive, got {window}")
        self.window = window
        self.counter: TokenCounter = counter or HeuristicCounter()
        self.summarizers: tuple[AnySummarizer, ...] = tuple(summarizers or (ExtractiveSummarizer(),))
        self.strategy: str | Strategy = strategy or self.config.strategy
        self.provider = provider
        self.archive: Archive = archive if archive is not None else MemoryArchive()
        self.session = session
        self.events = EventBus()
        if on_event is not None:
            self.events.subscribe(on_event)
        self._sleep = sleep
        self._state: SessionState | None = None
        self._items: list[object] = []
        self._messages: list[Message] = []
        self._dicts = False
        self._additive = isinstance(self.counter, HeuristicCounter | TiktokenCounter)
        self._sum = 0
        self._priming: int | None = None
        self.last_ratio = 0.0
        """The token ratio the last `prepare` saw."""

    # state -------------------------------------------------------------------------------------------------------
    def _load_state(self) -> SessionState:
        stored = self.archive.get_state(self.session)
        return SessionState.from_data(stored.version, stored.data)

    @property
    def state(self) -> SessionState:
        if self._state is None:
            self._state = self._load_state()
        return self._state

    def _write_state(self, new: SessionState) -> SessionState | None:
        """Compare-and-set `new` over the current version; None when another writer got there first."""
        current = self.state
        if not self.archive.compare_and_set_state(self.session, current.version, new.to_data()):
            logger.info("session=<%s> | state changed elsewhere; reloading", self.session)
            self._state = self._load_state()
            return None
        self._state = replace(new, version=current.version + 1)
        return self._state

    # input -------------------------------------------------------------------------------------------------------
    def _convert(self, items: Sequence[object], *, verify: bool = False) -> list[Message]:
        """The canonical messages of `items`, converting (and counting) only what is new since the last call.

        The new input extends the previous one when it is at least as long and holds the same objects at both ends
        of the previous part (first and last, by identity): an O(1) test, so the fast path stays flat as the
        history grows. A caller that replaces a message in the middle of its list in place is not seen by it;
        `verify` (used before any summarization, so that what is summarized and archived is exactly what the
        caller sent) compares every object."""
        n_old = len(self._items)
        dicts = bool(items) and not isinstance(items[0], Message)
        same = dicts == self._dicts and 0 < n_old <= len(items)
        if same:
            if verify:
                same = all(map(operator.is_, self._items, items))
            else:
                same = items[0] is self._items[0] and items[n_old - 1] is self._items[n_old - 1]
        if not same:
            self._items, self._messages, self._dicts, self._sum = [], [], dicts, 0
            n_old = 0
        if len(items) > n_old:
            tail = items[n_old:]
            self._items.extend(tail)
            new: Sequence[Message] = openai_chat.load(list(tail)).messages if dicts else cast("Sequence[Message]", tail)
            self._messages.extend(new)
            if self._additive:
                count = self.counter.count_message
                self._sum += sum(count(m) for m in new)
        return self._messages

    def _tokens(self) -> int:
        """Tokens of the current converted history: the running sum for additive counters (heuristic, tiktoken:
        a history costs the sum of its messages plus the reply priming), else the counter's own total."""
        if not self._additive:
            return self.counter.count_messages(self._messages)
        if not self._messages:
            return 0
        if self._priming is None:
            first = self._messages[0]
            self._priming = self.counter.count_messages([first]) - self.counter.count_message(first)
        return self._sum + self._priming

    def _output(self, messages: Sequence[Message], source: Sequence[Message], items: Sequence[object]) -> list[Any]:
        """`messages` in the caller's kind: for dicts, the caller's dict for each kept message, new ones dumped."""
        if not self._dicts:
            return list(messages)
        original = {id(m): item for m, item in zip(source, items, strict=True)}
        out: list[Any] = []
        for m in messages:
            item = original.get(id(m))
            if item is not None:
                out.append(item)
            else:
                out.extend(cast("list[Any]", openai_chat.dump([m])))
        return out

    def _remember(self, output: list[Any], messages: Sequence[Message]) -> None:
        """Make the returned history the base of the next call's fast path."""
        self._items = list(output)
        if self._dicts:
            self._messages = list(openai_chat.load(output).messages) if output else []
        else:
            self._messages = list(messages)
        if self._additive:
            self._sum = sum(self.counter.count_message(m) for m in self._messages)

    # the public calls --------------------------------------------------------------------------------------------
    @overload
    async def prepare(self, messages: Sequence[Message]) -> Prepared[Message]: ...
    @overload
    async def prepare(self, messages: Sequence[Mapping[str, Any]]) -> Prepared[dict[str, Any]]: ...
    async def prepare(self, messages: Sequence[Any]) -> Prepared[Any]:
        """The history to send now: `messages` itself, or a summarized one. Never raises for a summarizer failure
        unless ``abort_on_failure`` (then `SummarizerError` is raised after the failure event)."""
        reason = self._check(messages)
        if reason is None:
            return Prepared(messages)
        return await self._summarize(messages, reason)

    @overload
    def prepare_sync(self, messages: Sequence[Message]) -> Prepared[Message]: ...
    @overload
    def prepare_sync(self, messages: Sequence[Mapping[str, Any]]) -> Prepared[dict[str, Any]]: ...
    def prepare_sync(self, messages: Sequence[Any]) -> Prepared[Any]:
        """`prepare` for code without an event loop (RuntimeError inside one: await `prepare`). The common case,
        nothing to do, runs without starting a loop."""
        reason = self._check(messages)
        if reason is None:
            return Prepared(messages)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise RuntimeError("prepare_sync() called from a running event loop; await prepare() instead")
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(self._summarize(messages, reason))
        finally:
            loop.close()

    def _check(self, messages: Sequence[Any]) -> SummarizationReason | None:
        """Convert, count and decide; persist a hysteresis re-arm (rare) on the way."""
        converted = self._convert(messages)
        tokens = self._tokens()
        ratio = tokens / self.window
        self.last_ratio = ratio
        state = self.state
        n = len(converted)
        if not state.armed and is_armed(state, ratio, n, self.config):
            self._write_state(replace(state, armed=True))
            state = self.state
        return decide(state, ratio, n, self.config)

    # summarizing -------------------------------------------------------------------------------------------------
    async def _summarize(self, items: Sequence[Any], reason: SummarizationReason) -> Prepared[Any]:
        started = time.perf_counter()
        source = list(self._convert(items, verify=True))
        tokens_before = self.counter.count_messages(source)
        ratio = tokens_before / self.window
        if decide(self.state, ratio, len(source), self.config) is None:  # the full check saw an in-place edit
            return Prepared(items)
        with self.archive.try_lock(self.session) as held:
            if not held:
                logger.info("session=<%s> | another process is summarizing; history kept", self.session)
                return Prepared(items)
            fresh = self._load_state()
            if fresh.version != self.state.version:
                # Another process wrote this session's state since we last looked (it summarized, most likely, a
                # history we hold unsummarized): its result stands, and only an emergency acts again now.
                self._state = fresh
                reason_now = decide(fresh, ratio, len(source), self.config)
                if reason_now != "emergency":
                    logger.info("session=<%s> | summarized elsewhere since the last call; history kept", self.session)
                    return Prepared(items)
                reason = reason_now
            try:
                passes = await self._passes(source)
            except _Abort as abort:
                return await self._failed(items, source, reason, abort, tokens_before, ratio, started)
        if not passes:
            return Prepared(items)
        final = passes[-1].result.messages
        output = self._output(final, source, items)
        self._remember(output, final)
        records = tuple(p.record for p in passes)
        event = SummarizationEvent(
            reason=reason,
            depth=self.state.depth,
            tokens_before=tokens_before,
            tokens_after=passes[-1].result.tokens_after,
            ratio=ratio,
            messages_before=len(source),
            messages_after=len(final),
            messages_compressed=sum(p.removed for p in passes),
            duration_s=time.perf_counter() - started,
            session_id=self.session,
            summary_text=records[-1].summary,
            timestamp=datetime.now(UTC).isoformat(),
        )
        await self.events.emit(event)
        return Prepared(output, event, records[-1], records)

    async def _failed(
        self,
        items: Sequence[Any],
        source: Sequence[Message],
        reason: SummarizationReason,
        abort: _Abort,
        tokens_before: int,
        ratio: float,
        started: float,
    ) -> Prepared[Any]:
        """Fail open (or raise with ``abort_on_failure``): the input comes back, the cooldown starts, an event says
        why. "Nothing to summarize" is not a failure: no event, only the cooldown."""
        state = self.state
        self._write_state(
            replace(state, count_after=len(source), last_ratio=ratio, failures=state.failures + 1)
            if abort.kind != "nothing"
            else replace(state, count_after=len(source))
        )
        if abort.kind == "nothing":
            logger.debug("session=<%s>, detail=<%s> | nothing to summarize", self.session, abort.detail)
            return Prepared(items)
        aborting = self.config.abort_on_failure and abort.error is not None
        event = SummarizationFailedEvent(
            reason=reason,
            depth=state.depth + 1,
            tokens_before=tokens_before,
            error=abort.detail,
            error_kind=abort.error.kind if abort.error is not None else abort.kind,
            retryable=abort.error.retryable if abort.error is not None else False,
            aborted=aborting,
            ratio=ratio,
            duration_s=time.perf_counter() - started,
            session_id=self.session,
            timestamp=datetime.now(UTC).isoformat(),
        )
        await self.events.emit(event)
        if aborting and abort.error is not None:
            raise abort.error
        return Prepared(items, event)

    async def _passes(self, source: list[Message]) -> list[_Pass]:
        """The depth strategy: one pass, a second when still over the trigger and the depth guard allows it, and
        when it does not, one retry of the last pass with a smaller verbatim tail; the smaller tail also when a
        first pass finds nothing outside the tail while the history is over the window."""
        cfg = self.config
        budget = int(cfg.reset_token_ratio * self.window)
        passes: list[_Pass] = []
        current = source
        reduced = False
        while True:
            state = self.state
            try:
                result, chain = await self._run(current, cfg.preserve_recent, budget, state.depth)
            except _Abort as abort:
                if passes:
                    break
                # Nothing outside the verbatim tail to work on, yet over the window: the tail itself must give.
                smaller = _adaptive_tail(current, cfg.preserve_recent, budget, self.counter)
                over_window = self.counter.count_messages(current) > self.window
                if abort.kind != "nothing" or not over_window or smaller >= cfg.preserve_recent:
                    raise
                reduced = True
                result, chain = await self._run(current, smaller, budget, state.depth)
            over = result.tokens_after / self.window >= cfg.trigger_token_ratio
            can_follow = not passes and state.depth + 1 < cfg.max_summary_chain_depth
            if over and not can_follow and not reduced:
                reduced = True
                smaller = _adaptive_tail(current, cfg.preserve_recent, budget, self.counter)
                if smaller < cfg.preserve_recent:
                    try:
                        retry, retry_chain = await self._run(current, smaller, budget, state.depth)
                        if retry.tokens_after < result.tokens_after:
                            result, chain = retry, retry_chain
                    except _Abort:
                        pass
            written = self._archive_pass(current, result, chain, state)
            if written is None:
                if passes:
                    break
                raise _Abort("archive", "archiving the originals failed; history kept")
            passes.append(written)
            current = list(result.messages)
            if not (result.tokens_after / self.window >= cfg.trigger_token_ratio and can_follow):
                break
        return passes

    async def _run(
        self, messages: Sequence[Message], preserve: int, budget: int, depth: int
    ) -> tuple[CompactResult, SummarizerChain]:
        cfg = self.config
        chain = SummarizerChain(
            self.summarizers,
            self.counter,
            cfg.summarizer_input_cap_tokens,
            self._sleep,
            header=meta_header(len(messages), self.counter.count_messages(messages), depth),
        )
        try:
            result = await compact(
                messages,
                strategy_for(self.strategy, cfg, preserve, model_free=depth >= cfg.max_summary_chain_depth),
                summarizer=chain,
                counter=self.counter,
                budget=budget,
                hard_limit=self.window,
                provider=self.provider,
                max_summarizer_input_tokens=max(cfg.summarizer_input_cap_tokens - META_ALLOWANCE_TOKENS, 50),
            )
        except Exception as exc:  # a planner bug or an unusable history: fail open, say why
            logger.exception("session=<%s> | compaction raised; history kept", self.session)
            raise _Abort("error", f"{type(exc).__name__}: {exc}") from exc
        if not result.changed:
            if result.errors:
                error = result.errors[-1].error
                raise _Abort(error.kind, str(error), error)
            raise _Abort("nothing", "the strategy found nothing to summarize")
        if not result.valid:
            raise _Abort("invalid_history", f"result invalid for {self.provider}: {result.problems[0]}")
        if result.tokens_after >= result.tokens_before:
            raise _Abort("nothing", "the result is not smaller")
        return result, chain

    def _archive_pass(
        self, before: Sequence[Message], result: CompactResult, chain: SummarizerChain, state: SessionState
    ) -> _Pass | None:
        """Archive the originals with their record and the new state, in one transaction; None if it failed.

        A pass that called no summarizer (it only masked or clipped tool output) still gets a record, chained like
        any other, but does not advance the depth: the depth guard bounds summaries of summaries, and masking, which
        touches each tool output once, cannot run away."""
        removal = removed_messages(before, result.messages, state.archived)
        record = build_record(
            removal=removal,
            summary=summary_text(before, result.messages),
            structured=chain.structured[-1] if chain.structured else None,
            depth=state.depth,
            parent_id=state.last_record_id,
            token_estimate=sum(self.counter.count_message(m) for _, m in removal[0]),
        )
        ratio_after = result.tokens_after / self.window
        new = replace(
            state,
            depth=state.depth + (1 if chain.calls > len(chain.failures) else 0),
            last_record_id=record.id,
            armed=ratio_after < self.config.reset_token_ratio,
            count_after=len(result.messages),
            last_ratio=ratio_after,
            archived=state.archived + len(removal[0]),
            summarizations=state.summarizations + 1,
        )
        try:
            ok = self.archive.archive_and_record(
                self.session, removal[0], record, expected_version=state.version, new_state=new.to_data()
            )
        except Exception:
            logger.exception("session=<%s> | archive write failed; history kept", self.session)
            return None
        if not ok:
            logger.info("session=<%s> | state changed elsewhere during summarization; history kept", self.session)
            self._state = self._load_state()
            return None
        self._state = replace(new, version=state.version + 1)
        return _Pass(result, record, self._state, len(removal[0]))


def _adaptive_tail(messages: Sequence[Message], preserve: int, budget: int, counter: TokenCounter) -> int:
    """The largest tail below `preserve` (at least 2) whose messages take at most half the budget: room is left
    for the summary and the turns to come."""
    total = 0
    best = 2
    for k in range(1, min(preserve, len(messages)) + 1):
        total += counter.count_message(messages[-k])
        if total > budget // 2:
            break
        if k < preserve:
            best = max(best, k)
    return best
