"""What one compaction removed, and the `SummaryRecord` that stands for it.

A compaction result is compared with its input: every input message that is not in the output, compared by value
(a message masked or clipped in place counts as removed: its original content left the context), is an original
to archive. Originals get ids ``msg_<sha256[:16]>_<position>``, where the position continues the session's archive
count, so ids are unique within the session (the store's key) and the same replay produces the same ids. A
message's own ``id`` is not used as the archive key (a message masked in place keeps its id, and would collide);
it stays inside the archived message.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Sequence

from ..chain import SUMMARIZATION_TOOL_NAME, SUMMARIZED_CONTENT_PREFIX
from ..messages import Message, Text
from ..summarize import render_transcript
from ._records import SummaryContext, SummaryRecord, canonical_json, message_sha256

__all__ = ["Removal", "build_record", "removed_messages", "summary_text"]

_SYSTEM_TAG = "[chainsum summary depth="
_USER_PREFIX = "Summary of the conversation so far:\n"

Removal = tuple[list[tuple[str, Message]], tuple[str, ...]]
"""(id, original) pairs in history order, and their SHA-256 in the same order."""


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
    return out, tuple(shas)


def _first_text(message: Message) -> str:
    for p in message.parts:
        if isinstance(p, Text):
            return p.text
    return ""


def summary_text(before: Sequence[Message], after: Sequence[Message]) -> str:
    """The text of the summaries `after` has and `before` had not, in order, without their tags."""
    old = {id(m) for m in before}
    texts: list[str] = []
    for m in after:
        if id(m) in old:
            continue
        if m.role == "tool":
            texts.extend(r.text for r in m.tool_results if r.name == SUMMARIZATION_TOOL_NAME)
            continue
        if m.role == "assistant" and any(c.name == SUMMARIZATION_TOOL_NAME for c in m.tool_calls):
            continue
        text = _first_text(m)
        if m.role == "system" and text.startswith(_SYSTEM_TAG):
            texts.append(text.partition("\n")[2])
        elif text.startswith(SUMMARIZED_CONTENT_PREFIX):
            texts.append(text[len(SUMMARIZED_CONTENT_PREFIX) :])
        elif text.startswith(_USER_PREFIX):
            texts.append(text[len(_USER_PREFIX) :])
        elif m.role == "user" and "<state_snapshot>" in text:
            texts.append(text)
    return "\n\n".join(t for t in texts if t.strip())


def build_record(
    *,
    removal: Removal,
    summary: str,
    structured: object | None,
    depth: int,
    parent_id: str | None,
    token_estimate: int,
) -> SummaryRecord:
    """The record of one summarization. Facets come from the summarizer's structured output when it gave one,
    else from `ExtractiveStructuredSummarizer` over the removed originals (no model, deterministic)."""
    from ..summarize import ExtractiveStructuredSummarizer, StructuredSummary

    pairs, shas = removal
    originals = [m for _, m in pairs]
    if isinstance(structured, StructuredSummary):
        facets = structured
    else:
        facets = ExtractiveStructuredSummarizer().summarize_text(render_transcript(originals, "context"))
    participants = tuple(dict.fromkeys(m.name or m.role for m in originals))
    if not summary:
        summary = f"{len(originals)} message(s) compacted without a model summary (tool output masked or clipped)"
    return SummaryRecord(
        id=str(uuid.uuid4()),
        timestamp_ms=int(time.time() * 1000),
        depth=depth,
        parent_id=parent_id,
        summary=summary,
        key_points=tuple(facets.key_points),
        context=SummaryContext(
            participants=participants,
            decisions=tuple(facets.decisions),
            action_items=tuple(facets.action_items),
            unresolved=tuple(facets.unresolved_questions),
            domain_entities=tuple(facets.entities),
        ),
        original_message_ids=tuple(mid for mid, _ in pairs),
        original_sha256=shas,
        token_estimate=token_estimate,
    )
