"""`RequestWriter`: the request a call hands back (`Prepared`), with its recall blocks and cache breakpoints.

What the model sees comes from the session view (`_session_view.SessionView`); this module adds what belongs to the
request rather than to the history: the recall blocks (the pinned ones that still stand, and a new one where one may
go, `_pins`), the roles kept alternating where the provider needs it, Anthropic's prompt-cache breakpoints
(`_breakpoints`), and the sizes and flags `Prepared` reports. It also builds the `WindowExceededEvent` of a request
that must go over the window anyway.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from ..chain import is_record_message
from ..messages import Message
from ..store import SummaryRecord
from ..tokens import TokenCounter
from ._breakpoints import Breakpoints
from ._codec import alternating
from ._config import ManagerConfig
from ._events import ManagerEvent, WindowExceededEvent
from ._pins import RecallPins, with_blocks
from ._profile import PhaseTimes
from ._recall import SMALLEST_ROOM, PinnedRecall
from ._session_view import Frame, SessionView
from ._state_cell import StateCell
from ._telemetry import mark_request

__all__ = ["Prepared", "RequestWriter"]

logger = logging.getLogger(__name__)

M = TypeVar("M")

_HEAD = 4
"""How far into the history a summary record is looked for (`Prepared.compacted`): records stand at its head."""


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
    originals stay in the archive). A compaction folds them all; one that could write no summary folds them where
    they held the request over the window (a request the provider refuses helps nobody), or, when the history had
    nothing to summarize, where they brought it to the trigger (so that the newest question gets room)."""
    compacted: bool = False
    """The history sent is a compacted one: chainsum's record stands where originals were, whether the manager
    replaced them in this call's view of the caller's history, or the caller keeps the history an earlier call
    returned (what OpenTelemetry's ``gen_ai.conversation.compacted`` says, `chainsum.manager._telemetry`). The
    second is seen where recall may act (the default: ``recall_token_ratio`` > 0 once something is archived)."""

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


class RequestWriter:
    """Writes each request of one session from its session view and stored state."""

    def __init__(
        self,
        seen: SessionView,
        stored: StateCell,
        config: ManagerConfig,
        window: int,
        counter: TokenCounter,
        provider: str,
    ) -> None:
        self.seen = seen
        self.stored = stored
        self.config = config
        self.window = window
        self.counter = counter
        self.provider = provider
        self._pins = RecallPins()
        self._breakpoints = Breakpoints()
        self._standing_memo: tuple[tuple[PinnedRecall, ...], int, list[PinnedRecall]] | None = None
        """(the state's pins, `SessionView.reads`, the ones that stand) of the last `standing` check."""

    def unmark(self, items: Sequence[Any]) -> Sequence[Any]:
        """`items` without the cache breakpoints this writer placed last time (`Breakpoints.unmark`)."""
        return self._breakpoints.unmark(items)

    @property
    def marking(self) -> bool:
        """The requests get Anthropic prompt-cache breakpoints (`chainsum.manager._breakpoints`): Anthropic's wire
        messages, or `Message` objects bound for Anthropic, with ``cache_breakpoints`` on."""
        fmt = self.seen.codec.format
        return self.config.cache_breakpoints and (
            fmt == "anthropic" or (fmt == "messages" and self.provider == "anthropic")
        )

    def standing(self) -> list[PinnedRecall]:
        """The pinned recall blocks that still stand for what the model sees now (`RecallPins.standing`).

        A request asks twice (its size in its frame, its blocks in `prepared`), and the check hashes or compares by
        identity the whole history up to each block: the answer of the first is kept and given again while the pins
        are the very tuple of the state (a new state that changes them makes a new one) and nothing was read since
        (`SessionView.reads`), since the same pins over the same messages stand alike."""
        pins = self.stored.state.recall
        if not pins:
            return []
        memo = self._standing_memo
        reads = self.seen.reads
        if memo is not None and memo[0] is pins and memo[1] == reads:
            return list(memo[2])
        standing = self._pins.standing(pins, self.seen.messages())
        self._standing_memo = (pins, reads, standing)
        return list(standing)

    def recall_need(self) -> int:
        """The room the request's newest message would take for a block of its own (``recall_token_ratio`` of the
        window) where blocks pinned earlier stand and it may get one (`RecallPins.place`); else 0. The trigger counts
        it (`_policy.decide`): a question the pinned blocks left too little room below the trigger brings the
        compaction that folds them in, rather than going without a block."""
        pins = self.stored.state.recall
        if not pins or not self.may_recall():
            return 0
        standing = self.standing()
        if not standing or RecallPins.place(self.seen.messages(), standing, compacted=False) is None:
            return 0
        return self._room()

    def _room(self) -> int:
        """A new block's own room: ``recall_token_ratio`` of the window, at least `SMALLEST_ROOM` (the trigger and
        the window bound it further, `_new_recall`)."""
        return max(int(self.config.recall_token_ratio * self.window), SMALLEST_ROOM)

    def may_recall(self) -> bool:
        """A new recall block may be made: recall is on and the session has archived something to recall."""
        return self.config.recall_token_ratio > 0 and self.stored.state.archived > 0

    def prepared(
        self,
        frame: Frame,
        event: ManagerEvent | None,
        records: tuple[SummaryRecord, ...],
        tokens_before: int | None = None,
        folded: int = 0,
        profile: PhaseTimes | None = None,
        *,
        fold: bool = False,
    ) -> Prepared[Any]:
        """The request to send for `frame`: what the model sees in the caller's kind, with its recall blocks and
        breakpoints. `tokens_before` is the request as it would have gone without this call's compaction (None: no
        compaction); `folded` counts the recall blocks the compaction folded in already. `fold`: the pinned blocks
        are folded in here (a compaction due at the trigger that had nothing to summarize: the blocks brought the
        request there), and a new block may go where a compaction's could."""
        seen = self.seen
        out_items, starts = seen.items(frame.items)
        tokens = seen.tokens() + frame.outside
        # what the model sees, for the recall blocks: without a pinned block, and with no new one possible, there is
        # none to place, and the list (a copy of the whole history) is not made
        recalling = bool(self.stored.state.recall) or self.may_recall()
        output = seen.messages() if recalling else []
        if profile is not None:
            profile.lap("output")
        blocks, dropped = self._recall_blocks(output, tokens, compacted=bool(records), before=tokens_before, fold=fold)
        if profile is not None:
            profile.lap("recall")
        recalled = sum(p.recall.tokens for p in blocks)
        fmt = seen.codec.format
        if blocks:
            per_message = fmt in (None, "messages")
            out_items = with_blocks(out_items, starts, blocks, output, seen.codec.write, per_message=per_message)
            tokens += recalled
        if out_items is not frame.items:  # written here: keep the roles alternating where the provider needs it
            out_items = alternating(out_items, fmt)
        if self.marking:
            out_items = self._breakpoints.place(out_items, outside=frame.outside_marks, rewritten=not seen.view.empty)
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
            # records stand at the history's head (after the system prompt); `output` is made wherever one may be
            not seen.view.empty or any(is_record_message(m) for m in output[:_HEAD]),
        )
        mark_request(prepared.compacted)  # OpenTelemetry: the request's span says whether its history is compacted
        if profile is not None:
            profile.lap("output")
        return prepared

    def _recall_blocks(
        self, output: list[Message], tokens: int, *, compacted: bool, before: int | None, fold: bool = False
    ) -> tuple[list[PinnedRecall], int]:
        """The recall blocks of this request, in order: the pinned ones that still stand, and a new one where one
        may go (`chainsum.manager._pins`), within the room left beside `tokens` (the request without blocks); and
        how many pinned blocks were folded in here (all of them with `fold`). The session state keeps the blocks,
        so that every later request, in any process, carries them the same way."""
        state = self.stored.state
        pins = self.standing()  # `output` is what the model sees now: the frame's check, unless read since
        pinned = sum(p.recall.tokens for p in pins)
        dropped = 0
        if pins and fold:
            logger.info(
                "session=<%s>, blocks=<%d>, tokens=<%d> | recall blocks folded in: they brought the request to the "
                "trigger",
                self.stored.session,
                len(pins),
                pinned,
            )
            pins, pinned, dropped = [], 0, len(pins)
        elif pins and tokens + pinned > self.window:
            # The blocks count towards the emergency rule, so this call tried a compaction, which could not make
            # room beside them: it folds them in (a request the provider refuses helps nobody, and recall is a help).
            logger.info(
                "session=<%s>, blocks=<%d>, tokens=<%d> | recall blocks folded in: they held the request over the "
                "window",
                self.stored.session,
                len(pins),
                pinned,
            )
            pins, pinned, dropped = [], 0, len(pins)
        new = self._new_recall(output, pins, tokens + pinned, compacted=compacted or dropped > 0, before=before)
        blocks = sorted([*pins, new], key=lambda p: p.at) if new is not None else pins
        if tuple(blocks) != state.recall and not self.stored.write(replace(state, recall=tuple(blocks))):
            # another process wrote the session meanwhile: a block it does not know of would not be sent again
            return [p for p in blocks if p is not new], dropped
        return blocks, dropped

    def _new_recall(
        self, output: list[Message], pins: Sequence[PinnedRecall], total: int, *, compacted: bool, before: int | None
    ) -> PinnedRecall | None:
        """A new block for the newest user message, or None (`RecallPins.place` says where one may go). Its room is
        its own: ``recall_token_ratio`` of the window (what a compaction keeps free for its block, see
        `_step.CompactionStep.budgets`), whatever the blocks pinned since the last compaction took, never past the
        trigger nor the window beside the `total` tokens of the request (those blocks included), and at a compaction
        never more than it freed (`before`, the request as it would have gone). Blocks that leave a question too
        little room bring the trigger (`recall_need`), whose compaction folds them in."""
        if not self.may_recall():
            return None
        cfg = self.config
        at = self._pins.place(output, pins, compacted=compacted)
        if at is None:
            return None
        room = min(
            self._room(),
            int(cfg.trigger_token_ratio * self.window) - total,
            self.window - total - 16,
        )
        if compacted and before is not None:
            room = min(room, before - total)
        state = self.stored.state
        recall = self._pins.search(
            self.stored.archive,
            self.stored.session,
            output,
            at,
            budget=room,
            counter=self.counter,
            version=state.version,
            retracted=frozenset(state.retracted),
            recalled=frozenset(i for p in pins for i in p.recall.ids),
        )
        return self._pins.pin(output, at, recall) if recall is not None else None

    def window_exceeded(self, tokens: int, frame: Frame) -> WindowExceededEvent:
        """The event of a request of `tokens` that goes over the window anyway, with the floor no compaction can go
        under (the system prompt, the reserve, the system messages and the current turn)."""
        output = self.seen.messages()
        count = self.counter.count_message
        cut = next((i for i in range(len(output) - 1, -1, -1) if output[i].role == "user"), len(output))
        floor = frame.outside + sum(count(m) for m in output if m.role == "system")
        floor += sum(count(m) for m in output[cut:])
        return WindowExceededEvent(
            tokens=tokens,
            window=self.window,
            floor_tokens=floor,
            detail=(
                "the system prompt and the current turn alone exceed the window"
                if floor > self.window
                else "the history could not be brought under the window now"
            ),
            session_id=self.stored.session,
            timestamp=datetime.now(UTC).isoformat(),
        )
