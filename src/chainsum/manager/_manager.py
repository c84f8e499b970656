"""`ContextManager`: call `prepare` before every model request; it returns the history to send.

Order of work in `prepare`, each step in its own module:

1. **Read** the caller's history into the session view (`_session_view.SessionView`): its items in their own format
   (OpenAI chat, OpenAI Responses, Anthropic, Gemini, Bedrock, chainsum JSON) or `Message` objects, converted,
   counted and fingerprinted once. A list that extends the previous one by value, even made of new objects, costs
   only the conversion of what is new. After a compaction the view maps the caller's older messages onto the summary
   record, masked results and kept messages sent last time (`_view.View`): a caller that keeps its full history gets
   "what was sent last time plus the new messages", one that sends the shorter history back gets it as it is, and an
   edited, retried or branched history keeps only the part of the mapping its content still matches.
2. **Decide** (`_policy.decide`): nothing to do is the common case, and then the caller's own list object comes
   back (or the mapped one), without a chain build, validation or copy.
3. **Compact** under the session lock (`_step.CompactionStep`): re-read the stored state (`_state_cell.StateCell`;
   another process may have compacted, and then its mapping is taken), run the configured strategy with a budget
   of ``reset_token_ratio`` of the window and the window as its hard limit, then the model-free last resorts where
   the summarizers failed or the result is still over the window; every removed original is archived with its
   record and the new state (mapping included) in one transaction, before the shorter history is returned.
4. **Write** the request (`_request.RequestWriter`): the recall block of archived originals relevant to the newest
   user message (`_recall`), held where it was sent until the next compaction (`_pins`), Anthropic's cache
   breakpoints, and **emit** the events: `SummarizationEvent` / `SummarizationFailedEvent`, and
   `WindowExceededEvent` when a request must go over the window anyway.

One manager serves one session; calls for it are expected one at a time (as a conversation's turns are). Several
managers (processes, machines) may serve the same session through one store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from .._sync import run_sync
from ..errors import ChainsumError, SummarizerError
from ..executor import check_budget
from ..formats import output_target
from ..messages import Message
from ..store import Archive, MemoryArchive, SummaryRecord
from ..strategies import Strategy
from ..tokens import HeuristicCounter, TokenCounter
from ._breakpoints import count_marks
from ._compaction import CompactionSettings
from ._config import ManagerConfig
from ._depth import CompactionChoice, choose_depth
from ._events import (
    EventBus,
    EventCallback,
    ManagerEvent,
    SummarizationEvent,
    SummarizationFailedEvent,
    SummarizationReason,
)
from ._policy import SessionState, decide, is_armed
from ._profile import PhaseTimes
from ._recall import stale_originals
from ._request import Prepared, RequestWriter
from ._session_view import Frame, SessionView
from ._state_cell import StateCell
from ._step import Compacted, CompactionStep, Failed, Lost, Unchanged
from ._summarizers import AnySummarizer, SleepFn
from ._summarizers_config import summarizers_from_config
from ._telemetry import compaction_span, mark_request
from ._view import Entry
from ._windows import context_window as window_of

__all__ = ["ContextManager", "Prepared"]

logger = logging.getLogger(__name__)

_LOCK_POLL_S = 0.02
"""How often a manager waiting for its session's summarization lock asks for it again (`_session_lock`)."""

QUIET_ITEMS = 16
"""`ContextManager.prepare_quiet`: at most this many items read anew (an agent step adds two or three)."""
QUIET_CHARS = 262_144
"""`ContextManager.prepare_quiet`: at most this many characters read anew (a tool step of up to about 250 KB):
about a millisecond of reading and counting at most."""


def _ms_since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


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
        format: str | None = None,
        sleep: SleepFn = asyncio.sleep,
        profile: PhaseTimes | None = None,
    ) -> None:
        config = config or ManagerConfig()
        window = context_window if context_window is not None else config.context_window
        if window is None:
            if model is None:
                raise ChainsumError(
                    "the context window is unknown: pass model= (a known model name) or context_window= (tokens), "
                    "or set SUMMARIZATION_CONTEXT_WINDOW"
                )
            window = window_of(model)
        if type(window) is not int or window > 0:  # a negative int gets the error below, not check_budget's ">= 0"
            window = check_budget(window, "context_window")
        if not window or window < 1:
            raise ChainsumError(f"context_window must be a positive number of tokens, got {window}")
        self._window = window
        self.counter: TokenCounter = counter or HeuristicCounter()
        self.summarizers: tuple[AnySummarizer, ...] = (
            tuple(summarizers) if summarizers else summarizers_from_config(config)
        )
        self.choice: CompactionChoice = choose_depth(config, self.summarizers, window)
        """The trigger and reset ratios this manager uses and why (`chainsum.manager._depth`: with ``cache_aware``,
        the reset chosen for the cost with prompt caching); `config` is the configuration with them."""
        self._config = self.choice.config
        logger.debug("session=<%s> | %s", session, self.choice.why)
        self.strategy: str | Strategy = strategy or self.config.strategy
        self.compaction = CompactionSettings.from_config(
            self.config, strategy=self.strategy, summarizers=self.summarizers
        )
        """How this manager compacts (strategy behind the tail guard, depth cap, role, input cap), built once: the
        settings `compact_document` (``chainsum compact``, ``POST /api/compact``) uses for the same config."""
        self.provider = provider
        self.archive: Archive = archive if archive is not None else MemoryArchive()
        self.session = session
        self.events = EventBus()
        if on_event is not None:
            self.events.subscribe(on_event)
        self._seen = SessionView(self.counter, format, output_target("openai", provider)[1])
        self._state_cell = StateCell(self.archive, session, self._seen_taken)
        self._writer = RequestWriter(self._seen, self._state_cell, self.config, window, self.counter, provider)
        self._step = CompactionStep(
            self.config, self.choice, self.compaction, window, self.counter, provider, self.archive, session, sleep
        )
        self.last_ratio = 0.0
        """The token ratio the last `prepare` saw."""
        self.profile: PhaseTimes | None = profile
        """Where the time of each `prepare` goes, phase by phase (`PhaseTimes`), when one is given (or set here
        later); None, the default, measures nothing."""

    @property
    def window(self) -> int:
        """The context window in tokens. An integration may lower it when the provider refuses a request counted as
        fitting (its real window is smaller); the request writer and the compaction step follow."""
        return self._window

    @window.setter
    def window(self, tokens: int) -> None:
        self._window = tokens
        self._share()

    @property
    def config(self) -> ManagerConfig:
        """The configuration in use (the trigger and reset of `choice` in it). A caller may replace it between
        calls (a test tightening the cooldown); the request writer and the compaction step follow."""
        return self._config

    @config.setter
    def config(self, config: ManagerConfig) -> None:
        self._config = config
        self._share()

    def _share(self) -> None:
        """The request writer and the compaction step take the manager's window and configuration as they stand."""
        self._writer.window, self._writer.config = self._window, self._config
        self._step = replace(self._step, window=self._window, config=self._config)

    def _seen_taken(self, version: int) -> None:
        """The session view's mapping is the state of `version` (written here): `StateCell`'s hook."""
        self._seen.version = version

    @property
    def state(self) -> SessionState:
        """The session's stored state, as last read or written."""
        return self._state_cell.state

    def context(self) -> list[Message]:
        """The history as the model sees it now (after the last `prepare`, without its recall blocks)."""
        return self._seen.messages()

    def unmarked(self, items: Sequence[Any]) -> Sequence[Any]:
        """`items` (a request this manager wrote) without the cache breakpoints it placed: what to compare requests
        by, since the breakpoint it moves to the newest block each request is not part of what a provider caches."""
        return self._writer.unmark(items)

    # reading -----------------------------------------------------------------------------------------------------
    def _read(self, items: Sequence[Any]) -> None:
        """Read `items` into the session view; summaries whose range the caller changed have their originals
        retracted from recall."""
        dropped = self._seen.read(items, self.state)
        if dropped:
            self._retract(dropped)

    def _retract(self, dropped: Sequence[Entry]) -> None:
        """Summaries of `dropped` no longer stand for the caller's history (it changed inside their range): their
        originals are retracted from recall, in the stored state with the view that leaves them out."""
        summaries = [m for e in dropped for m in e.messages or ()]
        if not summaries:
            return
        try:
            stale = stale_originals(self.archive, self.session, summaries, self._seen.codec.messages)
        except Exception:  # recall is a help: an archive that cannot say leaves the state as it is
            logger.warning("session=<%s> | could not retract stale originals", self.session, exc_info=True)
            return
        state = self.state
        known = set(state.retracted)
        new = [i for i in stale if i not in known]
        if new:
            self._state_cell.write(replace(state, retracted=(*state.retracted, *new), view=self._seen.view.to_data()))

    def _frame(self, items: Sequence[Any], system: object, reserved: int) -> Frame:
        self._read(items)
        system_tokens = self._seen.system_tokens(system)
        tokens = self._seen.tokens() + system_tokens + reserved
        pinned = sum(p.recall.tokens for p in self._writer.standing())
        need = self._writer.recall_need() if pinned else 0
        return Frame(items, system_tokens, reserved, tokens, pinned, recall_need=need)

    # the public calls --------------------------------------------------------------------------------------------
    async def prepare(
        self,
        messages: Sequence[Any],
        *,
        system: object = None,
        reserved_tokens: int = 0,
        force: bool = False,
        outside_cache_marks: int = 0,
    ) -> Prepared[Any]:
        """The history to send now, in the caller's kind.

        `system` is a system prompt kept outside the list (Anthropic's ``system``, a framework's own field): counted
        against the window, never changed. `reserved_tokens` is more room taken elsewhere (tool definitions). With
        `force`, compact now whatever the ratio (a manual trigger). For Anthropic, the manager adds prompt-cache
        breakpoints (`chainsum.manager._breakpoints`, ``cache_breakpoints``) within the 4 a request may have:
        `outside_cache_marks` counts the marked blocks outside `messages` and `system` (tool definitions). Never
        raises for a summarizer failure unless ``abort_on_failure`` (then `SummarizerError` is raised after the
        failure event)."""
        if (profile := self.profile) is not None:
            profile.start()
        try:
            frame, reason = self._start(messages, system, reserved_tokens, force, outside_cache_marks)
            if reason is None:
                return await self._finish(frame, None, ())
            return await self._compact(frame, reason)
        finally:
            if profile is not None:
                profile.stop()

    def _start(
        self, messages: Sequence[Any], system: object, reserved_tokens: int, force: bool, outside_marks: int = 0
    ) -> tuple[Frame, SummarizationReason | None]:
        """Read the request and decide whether to compact (no waiting: the same for `prepare` and `prepare_sync`)."""
        reserved = check_budget(reserved_tokens, "reserved_tokens") or 0
        frame = self._frame(self._writer.unmark(messages), system, reserved)
        if (profile := self.profile) is not None:
            profile.lap("read")
        if self._writer.marking:
            frame.outside_marks = count_marks(system) + max(0, outside_marks)
        ratio = frame.tokens / self.window
        self.last_ratio = ratio
        n = self._seen.n_out()
        state = self.state
        if not state.armed and is_armed(state, ratio, n, self.config):
            self._state_cell.write(replace(state, armed=True))
            state = self.state
        reason = "manual" if force else self._decide(state, frame.tokens, frame.request_tokens, frame.recall_need)
        if (profile := self.profile) is not None:
            profile.lap("decide")
        return frame, reason

    def _decide(self, state: SessionState, tokens: int, request_tokens: int, need: int) -> SummarizationReason | None:
        """`decide` for a request whose history the model sees is `tokens` (pinned recall blocks left out) and
        `request_tokens` with them, `need` being the room the newest question's own block would take (0: none):
        the one place the trigger's ratios are made from a request's counts."""
        window = self.window
        asking = (request_tokens + need) / window if need else None
        return decide(
            state, tokens / window, self._seen.n_out(), self.config, request_ratio=request_tokens / window,
            asking_ratio=asking,
        )  # fmt: skip

    def prepare_sync(
        self,
        messages: Sequence[Any],
        *,
        system: object = None,
        reserved_tokens: int = 0,
        force: bool = False,
        outside_cache_marks: int = 0,
    ) -> Prepared[Any]:
        """`prepare` for synchronous code, inside a running event loop too (it then runs on a worker thread).

        Most calls have nothing to do: those never start an event loop (microseconds, not the loop's tens)."""
        if (profile := self.profile) is not None:
            profile.start()
        try:
            frame, reason = self._start(messages, system, reserved_tokens, force, outside_cache_marks)
            if reason is not None:
                if profile is None:
                    return run_sync(lambda: self._compact(frame, reason))

                async def compact() -> Prepared[Any]:
                    profile.lap("loop")  # the event loop run_sync started for the compaction
                    return await self._compact(frame, reason)

                compacted = run_sync(compact)
                profile.lap("loop")
                return compacted
            prepared = self._writer.prepared(frame, None, (), profile=profile)
            if prepared.over_window:  # the event needs a loop: only then is one started
                run_sync(lambda: self._checked(prepared, frame))
            return prepared
        finally:
            if profile is not None:
                profile.stop()

    def prepare_quiet(
        self,
        messages: Sequence[Any],
        *,
        system: object = None,
        reserved_tokens: int = 0,
        outside_cache_marks: int = 0,
        max_items: int = QUIET_ITEMS,
        max_chars: int = QUIET_CHARS,
    ) -> Prepared[Any] | None:
        """`prepare`'s answer when it is provably quick and made in memory alone, else None: then call `prepare`.

        For a caller that runs `prepare` off its event loop (``chainsum serve``: a worker thread) and would rather
        answer the common request where it arrives, the hop costing about as much as the work. Quick and in memory
        means: the session's state was read already, nothing of it is archived or pinned and its trigger is armed
        (so no store read or write); the counter adds message counts up; `messages` extend the previous call's, and
        what is read anew is at most `max_items` items of `max_chars` characters (`Codec.rereads_little`: the rest
        is compared in C, so the reading does not grow with the history beyond that); no compaction is due and the
        request fits the window (those need a summarizer, the archive, an event). A None leaves nothing that
        `prepare` would not do again alike: the items read are read again as unchanged."""
        state = self._state_cell.loaded
        seen = self._seen
        if (
            state is None
            or not seen.additive
            or not state.armed
            or state.archived
            or state.recall
            or state.view is not None
            or not seen.view.empty
            or not seen.codec.rereads_little(messages, max_items=max_items, max_chars=max_chars)
        ):
            return None
        if (profile := self.profile) is not None:
            profile.start()
        try:
            frame, reason = self._start(messages, system, reserved_tokens, False, outside_cache_marks)
            if reason is not None or frame.request_tokens > self.window:
                return None
            return self._writer.prepared(frame, None, (), profile=profile)
        finally:
            seen.codec.forget_vouched()
            if profile is not None:
                profile.stop()

    # finishing ---------------------------------------------------------------------------------------------------
    async def _finish(
        self,
        frame: Frame,
        event: ManagerEvent | None,
        records: tuple[SummaryRecord, ...] = (),
        tokens_before: int | None = None,
        folded: int = 0,
        *,
        fold: bool = False,
    ) -> Prepared[Any]:
        """The request to send (`RequestWriter.prepared`), after its over-window event when it is over the
        window. `fold`: the pinned recall blocks are folded in (`RequestWriter.prepared`)."""
        return await self._checked(
            self._writer.prepared(frame, event, records, tokens_before, folded, self.profile, fold=fold), frame
        )

    async def _checked(self, prepared: Prepared[Any], frame: Frame) -> Prepared[Any]:
        """`prepared`, after its `WindowExceededEvent` when it is over the window."""
        if prepared.over_window:
            await self.events.emit(self._writer.window_exceeded(prepared.tokens_after, frame))
            if (profile := self.profile) is not None:
                profile.lap("events")
        return prepared

    # compacting --------------------------------------------------------------------------------------------------
    async def _compact(self, frame: Frame, reason: SummarizationReason) -> Prepared[Any]:
        """`_compacting` inside the compaction's OpenTelemetry span (`_telemetry`), its figures written on it."""
        started = time.perf_counter()
        with compaction_span(self.session, reason) as span:
            try:
                prepared = await self._compacting(frame, reason)
            except SummarizerError as exc:  # abort_on_failure: raised after the failure event
                span.failed(kind=exc.kind, message=str(exc), aborted=True, duration_ms=_ms_since(started))
                raise
            event = prepared.event
            if isinstance(event, SummarizationEvent):
                span.summarized(
                    tokens_before=prepared.tokens_before, tokens_after=prepared.tokens_after,
                    messages=event.messages_compressed, coverage=event.model_coverage,
                    duration_ms=_ms_since(started), errors=len(event.errors),
                )  # fmt: skip
            elif isinstance(event, SummarizationFailedEvent):
                span.failed(kind=event.error_kind, message=event.error, aborted=False, duration_ms=_ms_since(started))
        mark_request(prepared.compacted)  # on the caller's span: the request was written inside the compaction's
        return prepared

    async def _compacting(self, frame: Frame, reason: SummarizationReason) -> Prepared[Any]:
        """Compact under the session lock, deciding again on the stored state when another process wrote it."""
        started = time.perf_counter()
        if self._seen.changed_in_place(frame.items):
            logger.info("session=<%s> | items changed in place since the last call; reading them again", self.session)
            self._read(frame.items)
        tokens_before = self._seen.tokens() + frame.outside
        if (profile := self.profile) is not None:
            profile.lap("read")
        over_window = frame.request_tokens > self.window
        wait = self.config.lock_wait_seconds if over_window else 0.0
        async with self._session_lock(wait) as held:
            if not held and not over_window:
                if (profile := self.profile) is not None:
                    profile.lap("lock")
                logger.info("session=<%s> | another process is compacting this session; history kept", self.session)
                return await self._finish(frame, None)
            if not held:
                logger.warning(
                    "session=<%s>, waited_s=<%.1f> | over the window and the session is locked elsewhere; compacting "
                    "anyway (the write is a compare-and-set)",
                    self.session,
                    wait,
                )
            fresh = self._state_cell.load()
            if (profile := self.profile) is not None:
                profile.lap("lock")
            if fresh.version != self.state.version:
                # Another process compacted this session since we last looked: take its mapping, then decide again.
                self._state_cell.adopt(fresh)
                self._read(frame.items)
                tokens_before = self._seen.tokens() + frame.outside
                if (profile := self.profile) is not None:
                    profile.lap("read")
                pinned = sum(p.recall.tokens for p in self._writer.standing())
                need = self._writer.recall_need() if pinned else 0
                again = self._decide(fresh, tokens_before, tokens_before + pinned, need)
                if (profile := self.profile) is not None:
                    profile.lap("decide")
                if again is None and reason != "manual":
                    logger.info("session=<%s> | compacted elsewhere since the last call; using that", self.session)
                    return await self._finish(frame, None)
            return await self._run(frame, reason, tokens_before, started)

    @contextlib.asynccontextmanager
    async def _session_lock(self, wait_s: float) -> AsyncGenerator[bool]:
        """The session's summarization lock (`Archive.try_lock`), waited for up to `wait_s` seconds with awaits:
        asked again every `_LOCK_POLL_S` seconds and `asyncio.sleep` between, never the store's own sleeping wait,
        so that waiting for another process to finish compacting this session holds up nothing else on the
        caller's event loop (issue 20: a proxy's every session and ``/healthz`` stalled for the whole wait)."""
        deadline = time.monotonic() + wait_s
        while True:
            with self.archive.try_lock(self.session) as held:
                if held or time.monotonic() >= deadline:
                    yield held
                    return
            await asyncio.sleep(min(_LOCK_POLL_S, max(0.0, deadline - time.monotonic())))

    async def _run(
        self, frame: Frame, reason: SummarizationReason, tokens_before: int, started: float
    ) -> Prepared[Any]:
        """One compaction step, then what its outcome asks for: the new mapping and the request with its event, the
        failure event, or what another process wrote meanwhile."""
        seen, profile = self._seen, self.profile
        state = self.state
        source = seen.messages()
        # The request as it would go without this compaction, its pinned recall blocks included: the "before" that
        # the "after" of the written request is counted like. The compaction folds the blocks in: it plans the
        # history without them (their originals are in the archive), and the state it writes starts the pins over.
        standing = self._writer.standing()
        request_before = tokens_before + sum(p.recall.tokens for p in standing)
        outcome = await self._step.run(
            source, seen.covers(), seen.prints, frame, reason, tokens_before, state, seen.codec.format, profile
        )
        if isinstance(outcome, Failed):
            return await self._failed(frame, reason, outcome, tokens_before, started)
        if isinstance(outcome, Unchanged):
            self._state_cell.write(replace(state, count_after=seen.n_out()))
            if profile is not None:
                profile.lap("record")
            logger.debug("session=<%s> | nothing to compact", self.session)
            # The history is under the compaction's budget: the recall blocks left the newest question too little room
            # below the trigger. They are folded in, as a compaction would, so that it gets room for its own block.
            trigger = self.config.trigger_token_ratio * self.window
            fold = bool(standing) and frame.recall_need > 0 and request_before + frame.recall_need >= trigger
            return await self._finish(frame, None, fold=fold)
        if isinstance(outcome, Lost):
            logger.info("session=<%s> | compacted elsewhere meanwhile; using that", self.session)
            self._state_cell.reload()
            self._read(frame.items)
            if profile is not None:
                profile.lap("read")
            return await self._finish(frame, None)
        self._state_cell.written(outcome.state)
        seen.set_view(outcome.view)
        self._read(frame.items)
        if profile is not None:
            profile.lap("read")
        # The request is written before the event goes out, so that the event carries what the model gets: the one
        # before/after pair that every observer (the proxy's headers, the session API, the page) shows.
        prepared = self._writer.prepared(frame, None, (outcome.record,), request_before, len(standing), profile)
        event = self._summarized(outcome, reason, tokens_before, len(source), prepared, started)
        await self.events.emit(event)
        if profile is not None:
            profile.lap("events")
        return await self._checked(replace(prepared, event=event), frame)

    def _summarized(
        self,
        done: Compacted,
        reason: SummarizationReason,
        tokens_before: int,
        messages_before: int,
        prepared: Prepared[Any],
        started: float,
    ) -> SummarizationEvent:
        record, chain = done.record, done.chain
        return SummarizationEvent(
            reason=reason,
            depth=record.depth,
            tokens_before=tokens_before,
            tokens_after=done.tokens_after,
            ratio=tokens_before / self.window,
            messages_before=messages_before,
            messages_after=len(done.messages),
            messages_compressed=done.removed,
            duration_s=time.perf_counter() - started,
            session_id=self.session,
            summary_text=record.summary,
            timestamp=datetime.now(UTC).isoformat(),
            record_ids=(record.id,),
            summarizer_calls=chain.calls,
            summarizer_usage=chain.usage.total,
            errors=tuple(str(e) for e in done.errors),
            over_window=done.tokens_after > self.window,
            request_tokens_before=prepared.tokens_before,
            request_tokens_after=prepared.tokens_after,
            recall_tokens=prepared.recall_tokens,
            window=self.window,
            model_coverage=record.model_coverage,
            model_free=record.model_free,
            summarized_chars=chain.summarized_chars,
            model_chars=chain.model_chars if chain.summarized_chars else 0,
        )

    async def _failed(
        self,
        frame: Frame,
        reason: SummarizationReason,
        failed: Failed,
        tokens_before: int,
        started: float,
    ) -> Prepared[Any]:
        """Fail open (or raise with ``abort_on_failure``): the mapped input comes back, the cooldown starts, an event
        says why."""
        state = self.state
        self._state_cell.write(
            replace(
                state,
                count_after=self._seen.n_out(),
                last_ratio=tokens_before / self.window,
                failures=state.failures + 1,
            )
        )
        error = failed.error
        aborting = self.config.abort_on_failure and error is not None
        event = SummarizationFailedEvent(
            reason=reason,
            depth=state.depth + 1,
            tokens_before=tokens_before,
            error=failed.detail,
            error_kind=failed.kind,
            retryable=error.retryable if error is not None else False,
            aborted=aborting,
            ratio=tokens_before / self.window,
            duration_s=time.perf_counter() - started,
            session_id=self.session,
            timestamp=datetime.now(UTC).isoformat(),
            summarizer_usage=failed.usage,
        )
        await self.events.emit(event)
        if (profile := self.profile) is not None:
            profile.lap("events")
        if aborting and error is not None:
            raise error
        return await self._finish(frame, event)
