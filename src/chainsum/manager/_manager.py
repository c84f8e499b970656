"""`ContextManager`: call `prepare` before every model request; it returns the history to send.

Order of work in `prepare`:

1. **Read** the caller's history (`_codec.Codec`): its items in their own format (OpenAI chat, OpenAI Responses,
   Anthropic, Gemini, Bedrock, chainsum JSON) or `Message` objects. A list that extends the previous one by value,
   even made of new objects, costs only the conversion of what is new.
2. **Map** it onto what the model sees (`_view.View`): after a compaction, the caller's older messages stand for
   the summary record, masked results and kept messages sent last time. A caller that keeps its full history gets
   "what was sent last time plus the new messages"; one that sends the shorter history back gets it as it is; an
   edited, retried or branched history keeps only the part of the mapping its content still matches.
3. **Decide** (`_policy.decide`): nothing to do is the common case, and then the caller's own list object comes
   back (or the mapped one), without a chain build, validation or copy.
4. **Compact** under the session lock: re-read the stored state (another process may have compacted, and then its
   mapping is taken), run the configured strategy through `chainsum.executor.compact` with a budget of
   ``reset_token_ratio`` of the window and the window as its hard limit; when the summarizers failed, or the result
   is still over the window, the model-free last resorts follow (mask, drop old summaries, move the oldest messages
   to the archive, clip the current turn's tool output). Every removed original is archived with its record and the
   new state (mapping included) in one transaction, before the shorter history is returned.
5. **Recall** archived originals relevant to the newest user message into a block (`_recall`), held where it was
   sent until the next compaction (`_pins`), and **emit** the events: `SummarizationEvent` /
   `SummarizationFailedEvent`, and `WindowExceededEvent` when a request must go over the window anyway.

One manager serves one session; calls for it are expected one at a time (as a conversation's turns are). Several
managers (processes, machines) may serve the same session through one store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from .._sync import run_sync
from ..chain import message_depth
from ..errors import ChainsumError, SummarizerError
from ..executor import CompactResult, check_budget
from ..formats import output_target
from ..messages import Message
from ..store import Archive, MemoryArchive, SummaryRecord
from ..strategies import Strategy, tail_need
from ..summarize import SummarizerUsage
from ..tokens import HeuristicCounter, TiktokenCounter, TokenCounter
from ._breakpoints import Breakpoints, count_marks
from ._build import build_record, removed_messages
from ._codec import Codec, alternating
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
    WindowExceededEvent,
)
from ._pins import RecallPins, with_blocks
from ._policy import SessionState, decide, is_armed
from ._profile import PhaseTimes
from ._recall import PinnedRecall, stale_originals
from ._summarizers import META_ALLOWANCE_TOKENS, AnySummarizer, SleepFn, SummarizerChain, meta_header
from ._summarizers_config import summarizers_from_config
from ._view import Cover, Entry, Fingerprints, View
from ._windows import context_window as window_of

__all__ = ["ContextManager", "Prepared"]

logger = logging.getLogger(__name__)

M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class Prepared(Generic[M]):
    """What `ContextManager.prepare` returns: the history to send, and what happened to it."""

    messages: Sequence[M]
    """The history to send, in the caller's kind: the caller's own list when the model sees it unchanged."""
    event: ManagerEvent | None = None
    """The compaction (or its failure) of this call, if any."""
    records: tuple[SummaryRecord, ...] = ()
    """The summary records this call wrote."""
    recalled: tuple[str, ...] = ()
    """Archive ids of the originals recalled into this request (in every recall block it carries)."""
    tokens_before: int = 0
    """Tokens of the request as the model would get it without this call's compaction (system, reserve and the
    recall blocks it would carry included): `tokens_after` when nothing was compacted, so that the two are counted
    alike and differ only by what the compaction did."""
    tokens_after: int = 0
    """Tokens of the history sent (system, recall blocks included)."""
    over_window: bool = False
    """The history sent is still over the context window (a `WindowExceededEvent` said why)."""
    recall_tokens: int = 0
    """Tokens of the recall blocks in the history sent (part of `tokens_after`; 0 without one). A block stays in
    every request until the next compaction (`chainsum.manager._pins`), so this counts the blocks made earlier
    too."""
    recall_folded: int = 0
    """Recall blocks of earlier requests that this call's compaction folded in: left out of this request (their
    originals stay in the archive). A compaction folds them all; one that could write no summary folds them only
    where they held the request over the window (a request the provider refuses helps nobody)."""

    @property
    def changed(self) -> bool:
        """This call compacted (wrote at least one record)."""
        return bool(self.records)

    @property
    def rewritten(self) -> bool:
        """This request need not be the previous one plus the new messages (DESIGN invariant 10): this call compacted,
        or folded in recall blocks sent before. Every other request extends the previous one, byte for byte."""
        return self.changed or self.recall_folded > 0

    @property
    def record(self) -> SummaryRecord | None:
        """The last record this call wrote."""
        return self.records[-1] if self.records else None


@dataclass(slots=True)
class _Frame:
    """One call's input, mapped: what the model would see, and its size."""

    items: Sequence[Any]
    system_tokens: int
    reserved: int
    tokens: int
    """Messages the model sees (recall blocks left out), plus the system prompt and the reserve."""
    recall_tokens: int = 0
    """The pinned recall blocks that still stand (`_standing`): part of the request, not of the history."""
    outside_marks: int = 0
    """Anthropic ``cache_control`` blocks of the request outside its messages (system prompt, tools)."""

    @property
    def request_tokens(self) -> int:
        """The request as it would go: `tokens` and the recall blocks."""
        return self.tokens + self.recall_tokens


_LOCK_POLL_S = 0.02
"""How often a manager waiting for its session's summarization lock asks for it again (`_session_lock`)."""

_SEPARATE_SYSTEM = frozenset({"anthropic", "gemini", "bedrock"})
"""Live formats whose system prompt is a separate request field, not a message of the list."""


QUIET_ITEMS = 16
"""`ContextManager.prepare_quiet`: at most this many items read anew (an agent step adds two or three)."""
QUIET_CHARS = 262_144
"""`ContextManager.prepare_quiet`: at most this many characters read anew (a tool step of up to about 250 KB):
about a millisecond of reading and counting at most."""


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
        self.config = config or ManagerConfig()
        window = context_window if context_window is not None else self.config.context_window
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
        self.window: int = window
        self.counter: TokenCounter = counter or HeuristicCounter()
        self.summarizers: tuple[AnySummarizer, ...] = (
            tuple(summarizers) if summarizers else summarizers_from_config(self.config)
        )
        self.choice: CompactionChoice = choose_depth(self.config, self.summarizers, self.window)
        """The trigger and reset ratios this manager uses and why (`chainsum.manager._depth`: with ``cache_aware``,
        the reset chosen for the cost with prompt caching); `config` is the configuration with them."""
        self.config = self.choice.config
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
        self._sleep = sleep
        self._state: SessionState | None = None
        self._codec = Codec(format, prefer=output_target("openai", provider)[1])
        self._prints = Fingerprints()
        self._view = View()
        self._view_version = -1
        self._base: list[Message] = []
        self._covers: list[Cover] = []
        self._base_items: list[Any] | None = None
        self._written: list[list[Any] | None] | None = None
        self._base_tokens = 0
        self._tail_tokens = 0
        self._tail_counted = 0
        self._tail_sizes: list[int] = []
        """Token count of each input message after the mapped part (`_tail_counted` of them so far)."""
        self._additive = isinstance(self.counter, HeuristicCounter | TiktokenCounter)
        self._priming: int | None = None
        self._pins = RecallPins()
        self._reads = 0
        """Bumped whenever what the model sees may have changed (`_read`, `_set_view`): the key of `_standing`'s
        memo."""
        self._standing_memo: tuple[tuple[PinnedRecall, ...], int, list[PinnedRecall]] | None = None
        """(the state's pins, `_reads`, the ones that stand) of the last `_standing` check."""
        self._breakpoints = Breakpoints()
        self._system: tuple[object, int] | None = None
        self.last_ratio = 0.0
        """The token ratio the last `prepare` saw."""
        self.profile: PhaseTimes | None = profile
        """Where the time of each `prepare` goes, phase by phase (`PhaseTimes`), when one is given (or set here
        later); None, the default, measures nothing."""

    # state -------------------------------------------------------------------------------------------------------
    def _load_state(self) -> SessionState:
        stored = self.archive.get_state(self.session)
        return SessionState.from_data(stored.version, stored.data)

    @property
    def state(self) -> SessionState:
        if self._state is None:
            self._state = self._load_state()
        return self._state

    def _write_state(self, new: SessionState) -> bool:
        current = self.state
        if not self.archive.compare_and_set_state(self.session, current.version, new.to_data()):
            logger.info("session=<%s> | state changed elsewhere; reloading", self.session)
            self._state = self._load_state()
            return False
        self._state = replace(new, version=current.version + 1)
        self._view_version = self._state.version
        return True

    # mapping -----------------------------------------------------------------------------------------------------
    def _set_view(self, view: View) -> None:
        self._reads += 1
        messages = self._codec.messages
        self._view = view
        self._base = view.base(messages)
        self._covers = view.covers()
        self._base_items = None
        self._written = None
        self._base_tokens = sum(self.counter.count_message(m) for m in self._base) if self._additive else 0
        self._tail_tokens = 0
        self._tail_counted = view.n_in
        self._tail_sizes = []

    def _read(self, items: Sequence[Any]) -> None:
        """Read `items` and bring the mapping up to date (steps 1 and 2 of the module docstring)."""
        self._reads += 1
        state = self.state
        unchanged = self._codec.read(items)
        messages = self._codec.messages
        self._prints.sync(messages, unchanged)
        stored = self._view_version != state.version
        if stored or unchanged == 0 or self._view.n_in > min(unchanged, len(messages)):
            source = View.from_data(state.view) if stored else self._view
            self._view_version = state.version
            kept = source.matching(self._prints, len(messages)) if source.entries else View()
            if len(kept.entries) < len(source.entries):
                self._retract(source.entries[len(kept.entries) :], kept, messages)
            self._set_view(kept)
        if self._additive and self._tail_counted > unchanged >= self._view.n_in:
            # messages converted again (a restarting format's last turn): their old counts go
            gone = self._tail_sizes[unchanged - self._view.n_in :]
            self._tail_tokens -= sum(gone)
            del self._tail_sizes[unchanged - self._view.n_in :]
            self._tail_counted = unchanged
        if self._additive and self._tail_counted < len(messages):
            count = self.counter.count_message
            sizes = [count(m) for m in messages[self._tail_counted :]]
            self._tail_sizes.extend(sizes)
            self._tail_tokens += sum(sizes)
            self._tail_counted = len(messages)

    def _retract(self, dropped: Sequence[Entry], kept: View, messages: Sequence[Message]) -> None:
        """Summaries of `dropped` no longer stand for the caller's history (it changed inside their range): their
        originals are retracted from recall, in the stored state with the view that leaves them out."""
        summaries = [m for e in dropped for m in e.messages or ()]
        if not summaries:
            return
        try:
            stale = stale_originals(self.archive, self.session, summaries, messages)
        except Exception:  # recall is a help: an archive that cannot say leaves the state as it is
            logger.warning("session=<%s> | could not retract stale originals", self.session, exc_info=True)
            return
        state = self.state
        known = set(state.retracted)
        new = [i for i in stale if i not in known]
        if new:
            self._write_state(replace(state, retracted=(*state.retracted, *new), view=kept.to_data()))

    def _output_messages(self) -> list[Message]:
        """What the model sees now (without the recall blocks)."""
        return self._base + self._codec.messages[self._view.n_in :]

    def _output_items(self, items: Sequence[Any]) -> tuple[Sequence[Any], dict[int, int]]:
        """The history to send in the caller's kind, and where each output message starts its own item (output
        message index -> item index; only messages that begin an item are listed)."""
        codec = self._codec
        if self._view.empty:
            out: Sequence[Any] = codec.without_recall(items)
            if codec.format in (None, "messages") or len(out) == len(codec.messages):
                return out, {}  # one item per message: the indexes are the same
            return out, {k: codec.src[k] for k in range(len(codec.messages)) if codec.aligned(k) is not None}
        n_in = self._view.n_in
        at = codec.aligned(n_in)
        if at is None or codec.recall_items:
            messages = self._output_messages()
            return self._written_with_starts(messages)
        built: list[Any] = []
        starts: dict[int, int] = {}
        if self._written is None:
            self._written = [None if e.messages is None else codec.write(e.messages) for e in self._view.entries]
        pending: list[Message] = []
        index = 0  # output message index

        def flush() -> None:
            nonlocal pending
            if pending:
                written, where = self._written_with_starts(pending)
                starts.update({index - len(pending) + k: len(built) + v for k, v in where.items()})
                built.extend(written)
                pending = []

        for entry, written in zip(self._view.entries, self._written, strict=True):
            if written is not None:
                flush()
                assert entry.messages is not None
                if len(written) == len(entry.messages):
                    starts.update({index + k: len(built) + k for k in range(len(written))})
                elif written:
                    starts[index] = len(built)
                built.extend(written)
                index += len(entry.messages)
            elif codec.alone(entry.start):
                flush()
                starts[index] = len(built)
                built.append(items[codec.src[entry.start]])
                index += 1
            else:
                pending.append(codec.messages[entry.start])
                index += 1
        flush()
        base_items = len(built)
        for k in range(n_in, len(codec.messages)):
            item = codec.aligned(k)
            if item is not None:
                starts[index + k - n_in] = base_items + item - at
        built.extend(items[at:])
        self._base_items = built[:base_items]
        return built, starts

    def _written_with_starts(self, messages: Sequence[Message]) -> tuple[list[Any], dict[int, int]]:
        written = self._codec.write(messages)
        if self._codec.format in (None, "messages") or len(written) == len(messages):
            return written, {k: k for k in range(len(messages))}
        return written, {0: 0} if written else {}

    def _count_system(self, system: object) -> int:
        if system is None:
            return 0
        if self._system is not None and (self._system[0] is system or self._system[0] == system):
            return self._system[1]
        tokens = self._count_system_now(system)
        self._system = (system, tokens)
        return tokens

    def _count_system_now(self, system: object) -> int:
        if isinstance(system, str):
            return self.counter.count_text(system) if system else 0
        if isinstance(system, Message):
            return self.counter.count_message(system)
        if isinstance(system, Sequence) and all(isinstance(m, Message) for m in system):  # pyright: ignore
            return sum(self.counter.count_message(m) for m in system)  # pyright: ignore
        import json

        return self.counter.count_text(json.dumps(system, ensure_ascii=False, default=str))

    def _tokens(self) -> int:
        messages = self._output_messages() if not self._additive else None
        if messages is not None:
            return self.counter.count_messages(messages)
        if not self._base and not self._codec.messages:
            return 0
        if self._priming is None:
            first = (self._base or self._codec.messages)[0]
            self._priming = self.counter.count_messages([first]) - self.counter.count_message(first)
        return self._base_tokens + self._tail_tokens + self._priming

    def _frame(self, items: Sequence[Any], system: object, reserved: int) -> _Frame:
        self._read(items)
        system_tokens = self._count_system(system)
        tokens = self._tokens() + system_tokens + reserved
        return _Frame(items, system_tokens, reserved, tokens, sum(p.recall.tokens for p in self._standing()))

    def _marking(self) -> bool:
        """The manager adds Anthropic prompt-cache breakpoints to its requests (`chainsum.manager._breakpoints`):
        Anthropic's wire messages, or `Message` objects bound for Anthropic, with ``cache_breakpoints`` on."""
        fmt = self._codec.format
        return self.config.cache_breakpoints and (
            fmt == "anthropic" or (fmt == "messages" and self.provider == "anthropic")
        )

    def _standing(self) -> list[PinnedRecall]:
        """The pinned recall blocks that still stand for what the model sees now (`RecallPins.standing`).

        A request asks twice (its size in `_frame`, its blocks in `_recall_blocks`), and the check hashes or
        compares by identity the whole history up to each block: the answer of the first is kept and given again
        while the pins are the very tuple of the state (a new state that changes them makes a new one) and nothing
        was read since (`_reads`: only `_read` and `_set_view` change what the model sees), since the same pins
        over the same messages stand alike."""
        pins = self.state.recall
        if not pins:
            return []
        memo = self._standing_memo
        if memo is not None and memo[0] is pins and memo[1] == self._reads:
            return list(memo[2])
        standing = self._pins.standing(pins, self._output_messages())
        self._standing_memo = (pins, self._reads, standing)
        return list(standing)

    def _n_out(self) -> int:
        """Messages the model sees now: the counts of the trigger's rules (cooldown, minimum, refresh) are of these,
        so a caller that sends back what it got and one that keeps its full history are counted alike."""
        return len(self._base) + len(self._codec.messages) - self._view.n_in

    def context(self) -> list[Message]:
        """The history as the model sees it now (after the last `prepare`, without its recall blocks)."""
        return self._output_messages()

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
    ) -> tuple[_Frame, SummarizationReason | None]:
        """Read the request and decide whether to compact (no waiting: the same for `prepare` and `prepare_sync`)."""
        reserved = check_budget(reserved_tokens, "reserved_tokens") or 0
        frame = self._frame(self._breakpoints.unmark(messages), system, reserved)
        if (profile := self.profile) is not None:
            profile.lap("read")
        if self._marking():
            frame.outside_marks = count_marks(system) + max(0, outside_marks)
        ratio = frame.tokens / self.window
        self.last_ratio = ratio
        n = self._n_out()
        state = self.state
        if not state.armed and is_armed(state, ratio, n, self.config):
            self._write_state(replace(state, armed=True))
            state = self.state
        request = frame.request_tokens / self.window
        reason = "manual" if force else decide(state, ratio, n, self.config, request_ratio=request)
        if (profile := self.profile) is not None:
            profile.lap("decide")
        return frame, reason

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
            prepared = self._prepared(frame, None, ())
            if prepared.over_window:
                run_sync(lambda: self._window_exceeded(prepared.tokens_after, frame))
                if profile is not None:
                    profile.lap("events")
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
        state = self._state
        if (
            state is None
            or not self._additive
            or not state.armed
            or state.archived
            or state.recall
            or state.view is not None
            or not self._view.empty
            or not self._codec.rereads_little(messages, max_items=max_items, max_chars=max_chars)
        ):
            return None
        if (profile := self.profile) is not None:
            profile.start()
        try:
            frame, reason = self._start(messages, system, reserved_tokens, False, outside_cache_marks)
            if reason is not None or frame.request_tokens > self.window:
                return None
            return self._prepared(frame, None, ())
        finally:
            self._codec.forget_vouched()
            if profile is not None:
                profile.stop()

    # finishing ---------------------------------------------------------------------------------------------------
    async def _finish(
        self,
        frame: _Frame,
        event: ManagerEvent | None,
        records: tuple[SummaryRecord, ...],
        tokens_before: int | None = None,
    ) -> Prepared[Any]:
        """The mapped output, with its recall block, and the over-window check."""
        return await self._checked(self._prepared(frame, event, records, tokens_before), frame)

    async def _checked(self, prepared: Prepared[Any], frame: _Frame) -> Prepared[Any]:
        """`prepared`, after its over-window event when it is over the window."""
        if prepared.over_window:
            await self._window_exceeded(prepared.tokens_after, frame)
            if (profile := self.profile) is not None:
                profile.lap("events")
        return prepared

    def _prepared(
        self,
        frame: _Frame,
        event: ManagerEvent | None,
        records: tuple[SummaryRecord, ...],
        tokens_before: int | None = None,
        folded: int = 0,
    ) -> Prepared[Any]:
        """`_finish` without its one wait (the over-window event): what `prepare_sync` returns with no loop.
        `folded` counts the recall blocks this call's compaction folded in already."""
        out_items, starts = self._output_items(frame.items)
        tokens = self._tokens() + frame.system_tokens + frame.reserved
        # what the model sees, for the recall blocks: without a pinned block, and with no new one possible, there is
        # none to place, and the list (a copy of the whole history) is not made
        recalling = bool(self.state.recall) or self._may_recall()
        output = self._output_messages() if recalling else []
        if (profile := self.profile) is not None:
            profile.lap("output")
        blocks, dropped = self._recall_blocks(output, tokens, compacted=bool(records), before=tokens_before)
        if (profile := self.profile) is not None:
            profile.lap("recall")
        recalled = sum(p.recall.tokens for p in blocks)
        if blocks:
            per_message = self._codec.format in (None, "messages")
            out_items = with_blocks(out_items, starts, blocks, output, self._codec.write, per_message=per_message)
            tokens += recalled
        if out_items is not frame.items:  # written here: keep the roles alternating where the provider needs it
            out_items = alternating(out_items, self._codec.format)
        if self._marking():
            out_items = self._breakpoints.place(out_items, outside=frame.outside_marks, rewritten=not self._view.empty)
        prepared = Prepared(
            out_items,
            event,
            records,
            tuple(i for p in blocks for i in p.recall.ids),
            tokens if tokens_before is None else tokens_before,
            tokens,
            tokens > self.window,
            recalled,
            folded + dropped,
        )
        if (profile := self.profile) is not None:
            profile.lap("output")
        return prepared

    def _recall_blocks(
        self, output: list[Message], tokens: int, *, compacted: bool, before: int | None
    ) -> tuple[list[PinnedRecall], int]:
        """The recall blocks of this request, in order: the pinned ones that still stand, and a new one where one
        may go (`chainsum.manager._pins`), within the room left beside `tokens` (the request without blocks); and
        how many pinned blocks were folded in here. The session state keeps the blocks, so that every later request,
        in any process, carries them the same way."""
        state = self.state
        pins = self._standing()  # `output` is what the model sees now: the check of `_frame`, unless read since
        pinned = sum(p.recall.tokens for p in pins)
        dropped = 0
        if pins and tokens + pinned > self.window:
            # The blocks count towards the emergency rule, so this call tried a compaction, which could not make
            # room beside them: it folds them in (a request the provider refuses helps nobody, and recall is a help).
            logger.info(
                "session=<%s>, blocks=<%d>, tokens=<%d> | recall blocks folded in: they held the request over the "
                "window",
                self.session,
                len(pins),
                pinned,
            )
            pins, pinned, dropped = [], 0, len(pins)
        new = self._new_recall(output, pins, tokens + pinned, compacted=compacted, before=before)
        blocks = sorted([*pins, new], key=lambda p: p.at) if new is not None else pins
        if tuple(blocks) != state.recall and not self._write_state(replace(state, recall=tuple(blocks))):
            # another process wrote the session meanwhile: a block it does not know of would not be sent again
            return [p for p in blocks if p is not new], dropped
        return blocks, dropped

    def _may_recall(self) -> bool:
        """A new recall block may be made: recall is on and the session has archived something to recall."""
        return self.config.recall_token_ratio > 0 and self.state.archived > 0

    def _new_recall(
        self, output: list[Message], pins: Sequence[PinnedRecall], total: int, *, compacted: bool, before: int | None
    ) -> PinnedRecall | None:
        """A new block for the newest user message, or None (`RecallPins.place` says where one may go). Its room:
        what is left of ``recall_token_ratio`` of the window beside the blocks pinned since the last compaction (the
        room a compaction keeps free for recall, see `_budgets`), never past the trigger nor the window beside the
        `total` tokens of the request, and at a compaction never more than it freed (`before`, the request as it
        would have gone). Sharing that room is what gives an emergency the blocks bring about something to do:
        the history is then at least the window less that room, over the compaction's budget."""
        if not self._may_recall():
            return None
        cfg = self.config
        at = self._pins.place(output, pins, compacted=compacted)
        if at is None:
            return None
        room = min(
            int(cfg.recall_token_ratio * self.window) - sum(p.recall.tokens for p in pins),
            int(cfg.trigger_token_ratio * self.window) - total,
            self.window - total - 16,
        )
        if compacted and before is not None:
            room = min(room, before - total)
        recall = self._pins.search(
            self.archive,
            self.session,
            output,
            at,
            budget=room,
            counter=self.counter,
            version=self.state.version,
            retracted=frozenset(self.state.retracted),
            recalled=frozenset(i for p in pins for i in p.recall.ids),
        )
        return self._pins.pin(output, at, recall) if recall is not None else None

    async def _window_exceeded(self, tokens: int, frame: _Frame) -> None:
        output = self._output_messages()
        cut = next((i for i in range(len(output) - 1, -1, -1) if output[i].role == "user"), len(output))
        floor = (
            frame.system_tokens
            + frame.reserved
            + sum(self.counter.count_message(m) for m in output if m.role == "system")
        )
        floor += sum(self.counter.count_message(m) for m in output[cut:])
        await self.events.emit(
            WindowExceededEvent(
                tokens=tokens,
                window=self.window,
                floor_tokens=floor,
                detail=(
                    "the system prompt and the current turn alone exceed the window"
                    if floor > self.window
                    else "the history could not be brought under the window now"
                ),
                session_id=self.session,
                timestamp=datetime.now(UTC).isoformat(),
            )
        )

    # compacting --------------------------------------------------------------------------------------------------
    def _verify(self, frame: _Frame) -> None:
        """Read the caller's items after the mapped part again before anything is archived: a caller that changed an
        item in place (same object, new content) is not seen by the fast path, and what is summarized must be what
        was sent. (The mapped part itself is not summarized again, and is checked by value on every call.)"""
        items = frame.items
        start = self._codec.aligned(self._view.n_in)
        end = min(self._codec.fresh_from, len(items))  # what this call converted is what was sent
        if start is None or start >= end:
            return
        fresh = Codec(self._codec.format, self._codec.prefer)
        fresh.read(items[start:end])
        src = self._codec.src
        first = src.index(start) if start in src else len(self._codec.messages)
        last = next((k for k in range(first, len(src)) if src[k] >= end), len(src))
        if fresh.messages != self._codec.messages[first:last]:
            logger.info("session=<%s> | items changed in place since the last call; reading them again", self.session)
            self._codec = Codec(self._codec.format, self._codec.prefer)
            self._prints = Fingerprints()
            self._view_version = -1
            self._read(items)

    async def _compact(self, frame: _Frame, reason: SummarizationReason) -> Prepared[Any]:
        started = time.perf_counter()
        self._verify(frame)
        tokens_before = self._tokens() + frame.system_tokens + frame.reserved
        if (profile := self.profile) is not None:
            profile.lap("read")
        over_window = frame.request_tokens > self.window
        wait = self.config.lock_wait_seconds if over_window else 0.0
        async with self._session_lock(wait) as held:
            if not held and not over_window:
                if (profile := self.profile) is not None:
                    profile.lap("lock")
                logger.info("session=<%s> | another process is compacting this session; history kept", self.session)
                return await self._finish(frame, None, ())
            if not held:
                logger.warning(
                    "session=<%s>, waited_s=<%.1f> | over the window and the session is locked elsewhere; compacting "
                    "anyway (the write is a compare-and-set)",
                    self.session,
                    wait,
                )
            fresh = self._load_state()
            if (profile := self.profile) is not None:
                profile.lap("lock")
            if fresh.version != self.state.version:
                # Another process compacted this session since we last looked: take its mapping, then decide again.
                self._state = fresh
                self._read(frame.items)
                tokens_before = self._tokens() + frame.system_tokens + frame.reserved
                if (profile := self.profile) is not None:
                    profile.lap("read")
                ratio = tokens_before / self.window
                request = (tokens_before + sum(p.recall.tokens for p in self._standing())) / self.window
                again = decide(fresh, ratio, self._n_out(), self.config, request_ratio=request)
                if (profile := self.profile) is not None:
                    profile.lap("decide")
                if again is None and reason != "manual":
                    logger.info("session=<%s> | compacted elsewhere since the last call; using that", self.session)
                    return await self._finish(frame, None, ())
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

    def _budgets(
        self, frame: _Frame, reason: SummarizationReason, tokens: int, messages: Sequence[Message]
    ) -> tuple[int, int]:
        """(budget, hard limit) for the messages the model sees, with the system prompt and reserve taken off. A
        cache-aware reset below the configured one gives way to the newest ``preserve_recent`` of `messages`: the
        budget is at least what they need to stay verbatim (`tail_need`), up to the configured reset's budget."""
        outside = frame.system_tokens + frame.reserved
        recall = int(self.config.recall_token_ratio * self.window)
        hard = max(1, self.window - outside)
        budget = int(self.config.reset_token_ratio * self.window) - outside - recall
        configured = int(self.choice.configured_reset * self.window) - outside - recall
        if budget < configured:
            need = tail_need(messages, self.config.preserve_recent, self.counter)
            budget = max(budget, min(configured, need))
        if reason in ("refresh", "manual"):
            budget = min(budget, int((tokens - outside) * (1 - self.config.summary_ratio)))
        return max(0, min(budget, hard)), hard

    async def _pipeline(
        self, messages: list[Message], budget: int, hard: int, depth: int
    ) -> tuple[tuple[Message, ...], SummarizerChain, list[CompactResult]]:
        """The configured strategy, then, when it could not do its work or left the history over the window, the
        model-free last resorts (`AutoStrategy(summarize=False)`)."""
        cfg = self.config
        settings = self.compaction
        chain = SummarizerChain(
            settings.summarizers,
            self.counter,
            settings.summarizer_input_cap_tokens,
            self._sleep,
            header=meta_header(len(messages), self.counter.count_messages(messages), depth),
            timeout_s=settings.summarizer_timeout_seconds,
            model_tokens=settings.model_tokens_per_compaction,
        )
        role = settings.summary_role
        if role == "system" and self._codec.format in _SEPARATE_SYSTEM:
            # These formats carry system text outside the message list, in the caller's own system field, which
            # the manager hands back untouched: a system-role record would never reach the model. It goes into
            # the list as the (default) user-role record instead.
            role = "user"

        async def run(history: Sequence[Message], *, fallback: bool) -> CompactResult:
            return await settings.compact(
                history,
                summarizer=None if fallback else chain,
                counter=self.counter,
                budget=budget,
                hard_limit=hard,
                provider=self.provider,
                fallback=fallback,
                summary_role=role,
                header_tokens=META_ALLOWANCE_TOKENS,
            )

        first = await run(messages, fallback=False)
        results = [first]
        current = first.messages if first.changed else tuple(messages)
        size = first.tokens_after
        trigger = int(cfg.trigger_token_ratio * self.window)
        if size > hard or (first.errors and size > trigger):
            second = await run(current, fallback=True)
            results.append(second)
            if second.changed:
                current = second.messages
        return current, chain, results

    async def _run(
        self, frame: _Frame, reason: SummarizationReason, tokens_before: int, started: float
    ) -> Prepared[Any]:
        cfg = self.config
        state = self.state
        source = self._output_messages()
        # The request as it would go without this compaction, its pinned recall blocks included: the "before" that
        # the "after" of `_prepared` is counted like. The compaction folds the blocks in: it plans the history
        # without them (their originals are in the archive), and the state it writes starts the pins over.
        standing = self._standing()
        request_before = tokens_before + sum(p.recall.tokens for p in standing)
        covers = self._covers + [(i, i + 1, True) for i in range(self._view.n_in, len(self._codec.messages))]
        budget, hard = self._budgets(frame, reason, tokens_before, source)
        depth = max((message_depth(m) for m in source), default=0)
        try:
            final, chain, results = await self._pipeline(source, budget, hard, depth)
        except Exception as exc:  # a planner bug or an unusable history: fail open, say why
            if (profile := self.profile) is not None:
                profile.lap("pipeline")
            # the failed event's one WARNING line carries the cause; the traceback is for debugging
            logger.debug("session=<%s> | compaction raised; history kept", self.session, exc_info=True)
            return await self._failed(
                frame, reason, f"{type(exc).__name__}: {exc}", "error", None, tokens_before, started
            )
        if (profile := self.profile) is not None:
            profile.lap("pipeline")
        errors = [e.error for r in results for e in r.errors]
        last_error = errors[-1] if errors else None
        if len(final) == len(source) and all(a is b for a, b in zip(final, source, strict=True)):
            if last_error is not None:
                return await self._failed(
                    frame,
                    reason,
                    str(last_error),
                    last_error.kind,
                    last_error,
                    tokens_before,
                    started,
                    usage=chain.usage.total,
                )
            self._write_state(replace(state, count_after=self._n_out()))
            if (profile := self.profile) is not None:
                profile.lap("record")
            logger.debug("session=<%s> | nothing to compact", self.session)
            return await self._finish(frame, None, ())
        removal = removed_messages(source, final, state.archived)
        record = build_record(
            before=source,
            after=final,
            removal=removal,
            structured=chain.structured[-1] if chain.structured else None,
            session=self.session,
            parent_id=state.last_record_id,
            token_estimate=sum(self.counter.count_message(m) for _, m in removal.pairs),
        )
        view = View.aligned(source, covers, final, self._prints)
        tokens_after = self.counter.count_messages(final) + frame.system_tokens + frame.reserved
        ratio_after = tokens_after / self.window
        n = len(final)
        new = replace(
            state,
            depth=max((message_depth(m) for m in final), default=0),
            last_record_id=record.id,
            armed=ratio_after < cfg.reset_token_ratio,
            count_after=n,
            summarized_at=n,
            last_ratio=ratio_after,
            archived=state.archived + len(removal.pairs),
            summarizations=state.summarizations + 1,
            view=view.to_data(),
            recall=(),
        )
        if (profile := self.profile) is not None:
            profile.lap("record")
        try:
            ok = self.archive.archive_and_record(
                self.session, removal.pairs, record, expected_version=state.version, new_state=new.to_data()
            )
        except Exception as exc:
            if (profile := self.profile) is not None:
                profile.lap("archive")
            logger.exception("session=<%s> | archive write failed; history kept", self.session)
            return await self._failed(
                frame, reason, f"archiving failed: {exc}", "archive", None, tokens_before, started
            )
        if (profile := self.profile) is not None:
            profile.lap("archive")
        if not ok:
            logger.info("session=<%s> | compacted elsewhere meanwhile; using that", self.session)
            self._state = self._load_state()
            self._read(frame.items)
            if (profile := self.profile) is not None:
                profile.lap("read")
            return await self._finish(frame, None, ())
        self._state = replace(new, version=state.version + 1)
        self._view_version = self._state.version
        self._set_view(view)
        self._read(frame.items)
        if (profile := self.profile) is not None:
            profile.lap("read")
        # The request is written before the event goes out, so that the event carries what the model gets: the one
        # before/after pair that every observer (the proxy's headers, the session API, the page) shows.
        prepared = self._prepared(frame, None, (record,), request_before, len(standing))
        event = SummarizationEvent(
            reason=reason,
            depth=record.depth,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            ratio=tokens_before / self.window,
            messages_before=len(source),
            messages_after=len(final),
            messages_compressed=len(removal.pairs),
            duration_s=time.perf_counter() - started,
            session_id=self.session,
            summary_text=record.summary,
            timestamp=datetime.now(UTC).isoformat(),
            record_ids=(record.id,),
            summarizer_calls=chain.calls,
            summarizer_usage=chain.usage.total,
            errors=tuple(str(e) for e in errors),
            over_window=tokens_after > self.window,
            request_tokens_before=prepared.tokens_before,
            request_tokens_after=prepared.tokens_after,
            recall_tokens=prepared.recall_tokens,
            window=self.window,
        )
        await self.events.emit(event)
        if (profile := self.profile) is not None:
            profile.lap("events")
        return await self._checked(replace(prepared, event=event), frame)

    async def _failed(
        self,
        frame: _Frame,
        reason: SummarizationReason,
        detail: str,
        kind: str,
        error: SummarizerError | None,
        tokens_before: int,
        started: float,
        *,
        usage: SummarizerUsage | None = None,
    ) -> Prepared[Any]:
        """Fail open (or raise with ``abort_on_failure``): the mapped input comes back, the cooldown starts, an event
        says why."""
        state = self.state
        n = self._n_out()
        self._write_state(
            replace(state, count_after=n, last_ratio=tokens_before / self.window, failures=state.failures + 1)
        )
        aborting = self.config.abort_on_failure and error is not None
        event = SummarizationFailedEvent(
            reason=reason,
            depth=state.depth + 1,
            tokens_before=tokens_before,
            error=detail,
            error_kind=kind,
            retryable=error.retryable if error is not None else False,
            aborted=aborting,
            ratio=tokens_before / self.window,
            duration_s=time.perf_counter() - started,
            session_id=self.session,
            timestamp=datetime.now(UTC).isoformat(),
            summarizer_usage=usage,
        )
        await self.events.emit(event)
        if (profile := self.profile) is not None:
            profile.lap("events")
        if aborting and error is not None:
            raise error
        return await self._finish(frame, event, ())
