"""`SummaryRecord`: what one summarization produced and replaced, chained to the previous one by `parent_id`.

Records are the audit trail of compaction (``specs/ratio-trigger-summary-chain.md``): they hold the narrative,
key points and structured facets, the ids and SHA-256 of every original message they replaced (so the archive can
give the originals back, verified), never the raw text itself.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..messages import Message, message_to_dict

__all__ = [
    "MAX_FACET_ITEMS",
    "MAX_KEY_POINTS",
    "SummaryContext",
    "SummaryRecord",
    "canonical_json",
    "message_sha256",
    "sha256_all",
]

MAX_KEY_POINTS = 30
MAX_FACET_ITEMS = 50


def _strs() -> tuple[str, ...]:
    return ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryContext:
    """Structured facets of a summary; every list is capped at `MAX_FACET_ITEMS`."""

    participants: tuple[str, ...] = field(default_factory=_strs)
    decisions: tuple[str, ...] = field(default_factory=_strs)
    action_items: tuple[str, ...] = field(default_factory=_strs)
    unresolved: tuple[str, ...] = field(default_factory=_strs)
    domain_entities: tuple[str, ...] = field(default_factory=_strs)
    """File names, classes, APIs, ids: what a later request is most likely to need again."""

    def __post_init__(self) -> None:
        for name in ("participants", "decisions", "action_items", "unresolved", "domain_entities"):
            value = getattr(self, name)
            if len(value) > MAX_FACET_ITEMS:
                object.__setattr__(self, name, tuple(value[:MAX_FACET_ITEMS]))

    def to_dict(self) -> dict[str, list[str]]:
        return {
            "participants": list(self.participants),
            "decisions": list(self.decisions),
            "action_items": list(self.action_items),
            "unresolved": list(self.unresolved),
            "domain_entities": list(self.domain_entities),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SummaryContext:
        return cls(**{k: tuple(str(x) for x in data.get(k, ())) for k in cls.__dataclass_fields__})


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryRecord:
    """One compaction pass. `depth` is the depth of the summary it wrote (1: a summary of original messages, n + 1:
    one that folded in summaries of depth n; 0: a pass that wrote no summary, only masked, clipped or moved
    messages to the archive); `parent_id` names the record this one builds on."""

    id: str
    timestamp_ms: int
    depth: int
    parent_id: str | None
    summary: str
    key_points: tuple[str, ...] = field(default_factory=_strs)
    context: SummaryContext = field(default_factory=SummaryContext)
    original_message_ids: tuple[str, ...] = field(default_factory=_strs)
    original_sha256: tuple[str, ...] = field(default_factory=_strs)
    """SHA-256 of each original message's canonical JSON, in the order of `original_message_ids`."""
    token_estimate: int | None = None
    blocks: tuple[str, ...] = field(default_factory=_strs)
    """Ids of the record blocks this summarization wrote into the history (`chainsum.chain.RecordBlock.id`)."""
    model_coverage: float | None = None
    """Share of what this pass summarized that the configured summarizer model read (None: no model configured,
    or nothing summarized)."""
    model_free: str = ""
    """What of it a model-free summarizer wrote instead, and why; empty when the model read it all."""

    def __post_init__(self) -> None:
        if self.depth < 0:
            raise ValueError(f"depth must be >= 0, got {self.depth}")
        if len(self.original_sha256) != len(self.original_message_ids):
            raise ValueError("original_sha256 and original_message_ids must have the same length")
        if len(self.key_points) > MAX_KEY_POINTS:
            object.__setattr__(self, "key_points", tuple(self.key_points[:MAX_KEY_POINTS]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "timestamp_ms": self.timestamp_ms,
            "depth": self.depth,
            "parent_id": self.parent_id,
            "summary": self.summary,
            "key_points": list(self.key_points),
            "context": self.context.to_dict(),
            "original_message_ids": list(self.original_message_ids),
            "original_sha256": list(self.original_sha256),
            "token_estimate": self.token_estimate,
            "blocks": list(self.blocks),
            "model_coverage": self.model_coverage,
            "model_free": self.model_free,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SummaryRecord:
        return cls(
            id=str(data["id"]),
            timestamp_ms=int(data["timestamp_ms"]),
            depth=int(data["depth"]),
            parent_id=data.get("parent_id"),
            summary=str(data["summary"]),
            key_points=tuple(str(x) for x in data.get("key_points", ())),
            context=SummaryContext.from_dict(dict(data.get("context") or {})),
            original_message_ids=tuple(str(x) for x in data.get("original_message_ids", ())),
            original_sha256=tuple(str(x) for x in data.get("original_sha256", ())),
            token_estimate=data.get("token_estimate"),
            blocks=tuple(str(x) for x in data.get("blocks", ())),
            model_coverage=None if data.get("model_coverage") is None else float(data["model_coverage"]),
            model_free=str(data.get("model_free") or ""),
        )


def canonical_json(message: Message) -> str:
    """The message in chainsum's JSON form, with sorted keys and no spaces: the bytes that are hashed and
    archived, so the same message always hashes the same."""
    return json.dumps(message_to_dict(message), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_MEMO_SIZE = 1 << 15
_memo: dict[int, tuple[Message, str]] = {}
_memo_lock = threading.Lock()


def message_sha256(message: Message, *, verify: bool = False) -> str:
    """The SHA-256 of `message`'s canonical JSON (hex).

    One compaction hashes each removed message several times (to tell removed from kept, to archive it, to
    fingerprint the history), so digests are remembered per message object (the most recent `_MEMO_SIZE`; a
    `Message` is an immutable value). `verify=True` always hashes anew: what checks the archive's integrity must
    not trust a remembered digest."""
    if verify:
        return hashlib.sha256(canonical_json(message).encode("utf-8")).hexdigest()
    key = id(message)
    hit = _memo.get(key)
    if hit is not None and hit[0] is message:
        return hit[1]
    digest = hashlib.sha256(canonical_json(message).encode("utf-8")).hexdigest()
    with _memo_lock:
        if len(_memo) >= _MEMO_SIZE:
            for old in list(_memo)[: _MEMO_SIZE // 4]:  # the oldest quarter
                del _memo[old]
        _memo[key] = (message, digest)
    return digest


def sha256_all(messages: Sequence[Message]) -> tuple[str, ...]:
    return tuple(message_sha256(m) for m in messages)
