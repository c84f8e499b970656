"""Recall blocks held in place between compactions (DESIGN invariant 10).

A provider's prompt cache serves the longest prefix a request shares with the one before; a request that is "the
previous one plus the new messages" is served almost whole. A recall block made afresh for every request broke that:
it went wherever the newest user message was and shrank or vanished as the turn grew, so the request after it
differed from its first message on (in one Claude Code session a block of 53,000 characters was added at one
request and gone three requests later, with every token after it sent again).

So a block, once sent, is pinned (`PinnedRecall`, kept in the session state): it stays right before the message it
was made for, byte for byte, until the next compaction, which starts the pins over (the originals it quoted are in
the archive, and the compaction may recall them again). A new block is made only where it keeps the request an
extension of the last one: before a user message that is the newest message of its request, or, at a compaction,
before the user message an agent is still working on. Each new block has a room of its own (issue 32): up to
``recall_token_ratio`` of the window, never past the trigger with the blocks before it (a block must not be the
reason for the next compaction), and at a compaction never more than the compaction freed. (The blocks of one
compaction cycle used to share that room, and the block made at the compaction mostly took it: the questions
after it got none.) Pinned blocks are part of the request: the trigger and the emergency rule measure the whole
request, and where blocks stand the trigger adds the room the newest question would take, so the blocks bring
the compaction that folds them in (`_policy.decide`), and the question after it has room again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, cast

from ..chain import is_record_message
from ..messages import Message, message_to_dict
from ..store import Archive
from ..tokens import TokenCounter
from ._recall import PinnedRecall, Recall, recall_block
from ._view import Fingerprints

__all__ = ["RecallPins", "newest_user", "visible_sha256", "with_blocks"]

logger = logging.getLogger(__name__)


def visible_sha256(message: Message) -> str:
    """The SHA-256 of what the model reads of `message`: its role and parts, without the provider data that rides
    along (``extras``, at every level). A pin holds while the history before it reads the same, whatever a client
    does with its own markers: Claude Code moves Anthropic's ``cache_control`` to its newest message on every
    request, so the message a block was made for loses its marker one request later."""
    return hashlib.sha256(
        json.dumps(_without_extras(message_to_dict(message)), sort_keys=True, ensure_ascii=False).encode("utf-8")
    ).hexdigest()


def _without_extras(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_extras(v) for k, v in cast(dict[str, Any], value).items() if k != "extras"}
    if isinstance(value, list):
        return [_without_extras(v) for v in cast(list[Any], value)]
    return value


def newest_user(output: Sequence[Message]) -> int | None:
    """Index of the newest user message of `output` that a block may be made for: one with text, not a summary
    record (a record is chainsum's own text, not a question)."""
    for i in range(len(output) - 1, -1, -1):
        m = output[i]
        if m.role == "user" and not is_record_message(m):
            return i if m.text.strip() else None
    return None


_DIGESTS = 4096
"""Most message digests a `RecallPins` remembers."""


class RecallPins:
    """One manager's bookkeeping for its session's pinned recall blocks: the chain hashes of the history the model
    sees (recall blocks left out), against which a pin is checked, and the last search (a retried request does not
    search the archive again)."""

    def __init__(self) -> None:
        self._prints = Fingerprints(self._digest)
        self._digests: dict[int, tuple[Message, str]] = {}
        """`visible_sha256` by message identity (the message kept, so a reused id never matches another): a
        compaction rewrites the history's start, and the chain hashes after it are computed again over messages
        (the kept tail, the turn being answered) whose own digests were computed for an earlier pin already."""
        self._rendered: dict[int, tuple[Message, str]] = {}
        """Rendered bodies of the context messages, by identity (recall leaves out what the model sees already)."""
        self._last: tuple[tuple[str, int, int], Recall | None] | None = None
        """(newest user text, state version, budget) of the last search, and what it found."""

    def _digest(self, message: Message) -> str:
        hit = self._digests.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        digest = visible_sha256(message)
        if len(self._digests) >= _DIGESTS:  # crude bound: a reset costs a few digests again, never a wrong one
            self._digests.clear()
        self._digests[id(message)] = (message, digest)
        return digest

    def standing(self, pins: Sequence[PinnedRecall], output: Sequence[Message]) -> list[PinnedRecall]:
        """The pins that still stand for `output` (the history the model sees now, recall blocks left out): those
        whose message, and everything before it, are what they were when the block was sent. A caller that edited,
        retried or branched its history at or before a block's place has another conversation there, and the block
        goes with what it was made for."""
        return [p for p in pins if p.at < len(output) and self._prints.upto(output, p.at + 1) == p.prefix]

    @staticmethod
    def place(output: Sequence[Message], pins: Sequence[PinnedRecall], *, compacted: bool) -> int | None:
        """Where a new block may go (see the module docstring): right before the newest user message, when that
        message is the request's newest, or when this request compacted and the message is still being answered (an
        agent's tool steps after it, no final answer); None when a block is there already. A message answered
        already gets none: it was sent without a block, and adding one before it now would change what was sent.

        Without a compaction only the request's newest message can take a block, so only it is looked at: the
        scan back to the newest user message (over every tool step of an agent's turn, on every request of it)
        would find the same place or none. A request whose newest message is not a new question (a tool step, an
        answer) searches nothing here."""
        if not compacted:
            last = len(output) - 1
            if last < 0 or newest_user(output[last:]) != 0:
                return None
            return None if any(p.at == last for p in pins) else last
        at = newest_user(output)
        if at is None or any(p.at == at for p in pins):
            return None
        if at == len(output) - 1:
            return at
        # an older user message: sent before without a block, which only a compaction (rewriting the prefix
        # anyway) may add now
        answered = any(m.role == "assistant" and not m.tool_calls for m in output[at + 1 :])
        return None if answered else at

    def pin(self, output: Sequence[Message], at: int, recall: Recall) -> PinnedRecall:
        return PinnedRecall(at, self._prints.upto(output, at + 1), recall)

    def search(
        self,
        archive: Archive,
        session: str,
        output: Sequence[Message],
        at: int,
        *,
        budget: int,
        counter: TokenCounter,
        version: int,
        retracted: frozenset[str],
        recalled: frozenset[str],
    ) -> Recall | None:
        """The block for ``output[at]`` within `budget` tokens (`recall_block`), leaving out what the model sees and
        what the pinned blocks hold; None when nothing fits or the archive failed (recall is a help, never a reason
        for a request to fail)."""
        key = (output[at].text, version, budget)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        try:
            recall = recall_block(
                archive,
                session,
                output[at].text,
                budget,
                counter,
                exclude=output,
                rendered=self._rendered,
                retracted=retracted,
                recalled=recalled,
            )
        except Exception:
            logger.warning("session=<%s> | recall failed; request sent without it", session, exc_info=True)
            recall = None
        self._last = (key, recall)
        return recall


def with_blocks(
    items: Sequence[Any],
    starts: dict[int, int],
    blocks: Sequence[PinnedRecall],
    output: Sequence[Message],
    write: Callable[[Sequence[Message]], list[Any]],
    *,
    per_message: bool,
) -> list[Any]:
    """`items` (the request in the caller's kind, one item per message of `output` when `per_message`, else items
    starting at the messages `starts` maps to them) with each of `blocks` right before its message
    (`PinnedRecall.at`), written by `write`. In a wire format where that message shares an item with the messages
    before it (an Anthropic user turn holding tool results and text), that item is written again with the block
    inside, after the results, never between a call and its result; every other item stays the caller's own."""
    if per_message:
        out = list(items)
        for p in reversed(blocks):
            out.insert(p.at, p.recall.message)
        return out
    if not starts and len(items) == len(output):
        starts = {k: k for k in range(len(output))}  # one item per message
    spans: dict[int, list[PinnedRecall]] = {}  # first message of an item -> the blocks inside that item
    for p in blocks:
        first = next((k for k in range(p.at, -1, -1) if k in starts), None)
        if first is None:  # no item boundary known before it: the whole request is written again
            messages = list(output)
            for q in reversed(blocks):
                messages.insert(q.at, q.recall.message)
            return write(messages)
        spans.setdefault(first, []).append(p)
    out = list(items)
    for first in sorted(spans, reverse=True):
        group = spans[first]
        begin = starts[first]
        if len(group) == 1 and group[0].at == first:  # the message begins its own item: the block goes before it
            out[begin:begin] = write([group[0].recall.message])
            continue
        after = next((k for k in range(first + 1, len(output)) if k in starts), len(output))
        end = starts[after] if after < len(output) else len(items)
        messages = list(output[first:after])
        for p in reversed(group):
            messages.insert(p.at - first, p.recall.message)
        out[begin:end] = write(messages)
    return out
