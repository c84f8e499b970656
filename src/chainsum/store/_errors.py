"""Errors the store raises. They live here, under `ChainsumError`, until `chainsum.errors` lists them.

ChainsumError
└── StoreError                 the archive, records or state cannot do what was asked
    ├── ArchiveIntegrityError  an archived message no longer matches its SHA-256 (tampered or lost)
    ├── ArchiveConflictError   the same id archived twice with different content, or a record that disagrees
    └── UnknownSummaryError    no summary record with that id
"""

from __future__ import annotations

from ..errors import ChainsumError

__all__ = ["ArchiveConflictError", "ArchiveIntegrityError", "StoreError", "UnknownSummaryError"]


class StoreError(ChainsumError):
    """Base of the store's errors."""


class ArchiveIntegrityError(StoreError):
    """An archived original does not hash to the SHA-256 recorded for it, or is missing.

    Raised by `expand` rather than returning a silently altered message: a summary's originals are evidence."""

    def __init__(self, message_id: str, detail: str) -> None:
        self.message_id = message_id
        self.detail = detail
        super().__init__(f"archived message {message_id!r}: {detail}")


class ArchiveConflictError(StoreError, ValueError):
    """Archiving `message_id` again with different content, or a record whose ids or hashes disagree with the
    archive. Same content is not an error: archiving is idempotent so a retried write is harmless."""

    def __init__(self, message_id: str, detail: str) -> None:
        self.message_id = message_id
        self.detail = detail
        super().__init__(f"{message_id!r}: {detail}")


class UnknownSummaryError(StoreError, LookupError):
    """`expand` was asked for a summary id the store has no record of."""

    def __init__(self, summary_id: str) -> None:
        self.summary_id = summary_id
        super().__init__(f"no summary record with id {summary_id!r}")
