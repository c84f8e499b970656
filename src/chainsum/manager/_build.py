"""What one compaction removed, and the `SummaryRecord` that stands for it.

A compaction result is compared with its input: every input message that is not in the output (compared by
identity, then by value: a message masked or clipped in place counts as removed, its original content left the
context) is an original to archive. Originals get ids ``msg_<sha256[:16]>_<position>``, where the position
continues the session's archive count, so ids are unique within the session (the store's key) and the same replay
produces the same ids. A message's own ``id`` is not used as the archive key (a message masked in place keeps its
id, and would collide); it stays inside the archived message.

A record's id is derived from the session, its parent and what it removed, so the same replay gives the same ids
and no two records collide; `SummaryRecord.blocks` lists the ids of the record blocks the pass wrote
(`chain.RecordBlock.id`), which is how a block in the history finds the record, and so the originals, it stands
for.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..chain import RecordBlock, is_summary_message, message_depth, record_blocks, summary_text
from ..messages import Message
from ..store import SummaryContext, SummaryRecord, canonical_json, message_sha256

__all__ = ["Removal", "build_record", "has_summary_text", "new_blocks", "no_summary_text", "removed_messages"]

_NO_SUMMARY = " message(s) compacted without a summary (tool output masked or clipped, or moved)"


def no_summary_text(originals: int) -> str:
    """The `SummaryRecord.summary` of a pass that wrote no summary (the field is required, and a reader of the
    store alone should learn what happened)."""
    return f"{originals}{_NO_SUMMARY}"


def has_summary_text(summary: str) -> bool:
    """Whether a record's `summary` is a summary someone wrote: not blank, not the `no_summary_text` stand-in. A
    reader that labels records (the session API, the page) must not call a masking pass or an empty record a
    summary."""
    text = summary.strip()
    if not text:
        return False
    count, _, rest = text.partition(" ")
    return not (count.isdigit() and f" {rest}" == _NO_SUMMARY)


@dataclass(frozen=True, slots=True)
class Removal:
    """The originals a pass took out of the context, in history order, with their archive ids and SHA-256."""

    pairs: list[tuple[str, Message]]
    shas: tuple[str, ...]


def _key(message: Message) -> object:
    try:
        hash(message)
    except TypeError:
        return canonical_json(message)
    return message


def removed_messages(before: Sequence[Message], after: Sequence[Message], archived_so_far: int) -> Removal:
    """The messages of `before` that `after` no longer holds (by value, duplicates counted), with their ids.

    A message `after` holds as the very same object is kept; one it holds only as an equal copy (a converted dict,
    a repaired message) is kept once per copy. The copies counted are only those that are not themselves objects
    of `before`: a conversation may repeat a message word for word ("ok", a retried tool call), and an earlier
    one summarized away must not be taken for kept because a later equal one is."""
    kept_ids = {id(m) for m in after}
    before_ids = {id(m) for m in before}
    remaining = Counter(_key(m) for m in after if id(m) not in before_ids)
    out: list[tuple[str, Message]] = []
    shas: list[str] = []
    for m in before:
        if id(m) in kept_ids:
            continue
        k = _key(m)
        if remaining[k] > 0:
            remaining[k] -= 1
            continue
        sha = message_sha256(m)
        out.append((f"msg_{sha[:16]}_{archived_so_far + len(out)}", m))
        shas.append(sha)
    return Removal(out, tuple(shas))


def new_blocks(before: Sequence[Message], after: Sequence[Message]) -> list[RecordBlock]:
    """The record blocks `after` holds that `before` did not (by id), oldest first."""
    old = {b.id for m in before for b in record_blocks(m) or ()}
    return [b for m in after for b in record_blocks(m) or () if b.id not in old]


def _other_summaries(before: Sequence[Message], after: Sequence[Message]) -> list[str]:
    """The texts of summaries in other forms (pair, completion, snapshot) that `after` has and `before` had not."""
    old = {id(m) for m in before}
    out: list[str] = []
    for m in after:
        if id(m) in old or record_blocks(m) is not None or not is_summary_message(m):
            continue
        if m.role == "assistant" and not m.text:
            continue  # the call half of a summary pair; its result carries the text
        out.append(summary_text(m))
    return out


def build_record(
    *,
    before: Sequence[Message],
    after: Sequence[Message],
    removal: Removal,
    structured: object | None,
    session: str,
    parent_id: str | None,
    token_estimate: int,
) -> SummaryRecord:
    """The record of one pass. Facets come from the summarizer's structured output when it gave one, else from the
    summary text itself (read by the extractive structured summarizer: cheap, the summary is short); a pass without
    a summary has none."""
    from ..summarize import ExtractiveStructuredSummarizer, StructuredSummary

    blocks = new_blocks(before, after)
    texts = [b.text for b in blocks if b.depth > 0] + _other_summaries(before, after)
    summary = "\n\n".join(t for t in texts if t.strip())
    old = {id(x) for x in before}
    depth = max([b.depth for b in blocks] + [message_depth(m) for m in after if id(m) not in old], default=0)
    if isinstance(structured, StructuredSummary):
        facets: StructuredSummary | None = structured
    elif summary:
        facets = ExtractiveStructuredSummarizer().summarize_text(summary)
    else:
        facets = None
    originals = [m for _, m in removal.pairs]
    if not summary:
        summary = no_summary_text(len(originals))
    digest = hashlib.sha256(f"{session}\x00{parent_id}\x00{'/'.join(removal.shas)}\x00{summary}".encode())
    record_id = "rec_" + digest.hexdigest()[:24]
    participants = tuple(dict.fromkeys(m.name or m.role for m in originals))
    return SummaryRecord(
        id=record_id,
        timestamp_ms=int(time.time() * 1000),
        depth=depth,
        parent_id=parent_id,
        summary=summary,
        key_points=tuple(facets.key_points) if facets else (),
        context=SummaryContext(
            participants=participants,
            decisions=tuple(facets.decisions) if facets else (),
            action_items=tuple(facets.action_items) if facets else (),
            unresolved=tuple(facets.unresolved_questions) if facets else (),
            domain_entities=tuple(facets.entities) if facets else (),
        ),
        original_message_ids=tuple(mid for mid, _ in removal.pairs),
        original_sha256=removal.shas,
        token_estimate=token_estimate,
        blocks=tuple(b.id for b in blocks),
    )
