"""What the session API says about a summary record and a message of the context, for the page to show as is.

The page labels what it is given and never works out figures or kinds of its own: a record that only masked tool
output, or one with no summary text, must not be shown as a summary because the page guessed. So each record
carries its `RecordKind` and the counts its label needs, and each block of a context message its kind too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from ..chain import RecordBlock, message_depth, record_blocks
from ..manager import ContextSummarizedEvent, has_summary_text, is_recall_message
from ..messages import Message, ToolResult
from ..store import SummaryRecord
from ..strategies import MASK_PREFIX
from ..tokens import TokenCounter

__all__ = ["RecordKind", "context_entry", "masked_ids", "record_kind", "record_row"]

RecordKind: TypeAlias = Literal["summary", "masked", "moved", "empty"]
"""What a compaction pass did, as its record shows:

- ``summary``: it wrote summary text.
- ``moved``: no summary; its originals left the context for a block that only points at the archive (depth 0).
- ``masked``: no summary and no block; its originals were edited in place (tool output masked or clipped).
- ``empty``: it stands for nothing said: a summary block without text, or no originals at all.
"""


def record_kind(record: SummaryRecord) -> RecordKind:
    if has_summary_text(record.summary):
        return "summary"
    if not record.original_message_ids or record.depth > 0:
        return "empty"
    return "moved" if record.blocks else "masked"


def masked_ids(records: Sequence[SummaryRecord]) -> list[str]:
    """The originals of the masking records: the messages whose tool results `record_row` counts."""
    return [mid for r in records if record_kind(r) == "masked" for mid in r.original_message_ids]


def _tool_results(message: Message) -> int:
    """Tool results of an original that were not masked already (what masking it took out of the context)."""
    return sum(
        1
        for p in message.parts
        if isinstance(p, ToolResult) and not (isinstance(p.content, str) and p.content.startswith(MASK_PREFIX))
    )


def record_row(
    record: SummaryRecord,
    tokens: Sequence[int | None],
    counter: TokenCounter,
    originals: Mapping[str, Message],
) -> dict[str, Any]:
    """One record for the page. `tokens` is the before/after pair of the compaction that wrote it, as its
    ``context_summarized`` event said (None each when not known); `originals` holds at least the originals of a
    masking record (`masked_ids`), whose tool results its label counts."""
    kind = record_kind(record)
    before, after = tokens[0], tokens[1]
    row: dict[str, Any] = {
        "id": record.id,
        "kind": kind,
        "depth": record.depth,
        "parent_id": record.parent_id,
        "timestamp_ms": record.timestamp_ms,
        "tokens_before": before,
        "tokens_after": after,
        # The figures of the compaction that wrote it, computed as its event computed them (the page shows them as
        # they are, so a record and its event cannot read differently).
        "figures": None
        if before is None or after is None
        else ContextSummarizedEvent.create(
            session_id="",
            tokens_before=before,
            tokens_after=after,
            messages_summarized=len(record.original_message_ids),
        ).to_json_dict(),
        "messages": len(record.original_message_ids),
        "original_tokens": record.token_estimate,
        "summary_tokens": counter.count_text(record.summary) if kind == "summary" else None,
        "summary": record.summary,
        "blocks": list(record.blocks),
        # what the configured summarizer model read of what this record summarizes (None: no model configured)
        "model_coverage": record.model_coverage,
        "model_free": record.model_free,
    }
    if kind == "masked":
        found = [originals[i] for i in record.original_message_ids if i in originals]
        row["tool_results"] = sum(_tool_results(m) for m in found) if found else None
    return row


BlockKind: TypeAlias = Literal["summary", "moved", "empty"]


def block_kind(block: RecordBlock) -> BlockKind:
    """A summary block says something; a depth-0 block only points at the archive; one of depth 1 or more
    without text is an empty summary, not shown as one."""
    if block.depth == 0:
        return "moved"
    return "summary" if block.text.strip() else "empty"


def _masked_results(message: Message) -> int:
    return sum(
        1
        for p in message.parts
        if isinstance(p, ToolResult) and isinstance(p.content, str) and p.content.startswith(MASK_PREFIX)
    )


def context_entry(counter: TokenCounter, index: int, message: Message, records: Mapping[str, str]) -> dict[str, Any]:
    """One message of the context. ``kind``: ``summary`` for a record message with at least one summary block,
    ``archived`` for one whose blocks only point at the archive or say nothing, ``recall``, ``masked`` for a
    message whose tool output was masked (``masked`` counts its results), else ``message``."""
    entry: dict[str, Any] = {
        "index": index,
        "role": message.role,
        "tokens": counter.count_message(message),
        "kind": "message",
        "text": _preview(message, 2000),
    }
    blocks = record_blocks(message)
    if blocks:
        kinds = [block_kind(b) for b in blocks]
        entry["kind"] = "summary" if "summary" in kinds else "archived"
        entry["depth"] = message_depth(message)
        entry["blocks"] = [
            {
                "id": b.id,
                "kind": k,
                "record_id": records.get(b.id),
                "depth": b.depth,
                "messages": b.messages,
                "text": b.text,
            }
            for b, k in zip(blocks, kinds, strict=True)
        ]
    elif is_recall_message(message):
        entry["kind"] = "recall"
    elif masked := _masked_results(message):
        entry["kind"] = "masked"
        entry["masked"] = masked
    return entry


def _preview(message: Message, limit: int = 400) -> str:
    text = message.text
    return text if len(text) <= limit else text[:limit] + "…"
