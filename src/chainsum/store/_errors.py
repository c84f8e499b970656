"""Errors the store raises. They live here, under `ChainsumError`, until `chainsum.errors` lists them.

ChainsumError
└── StoreError                 the archive, records or state cannot do what was asked
    ├── ArchiveIntegrityError  an archived message no longer matches its SHA-256 (tampered or lost)
    ├── ArchiveConflictError   the same id archived twice with different content, or a record that disagrees
    ├── UnknownSummaryError    no summary record with that id
    ├── StoreConnectionError   the database connection was lost and could not be recovered (or a COMMIT's fate is
    │                          unknown: `outcome_unknown`)
    └── SchemaVersionError     the database was written by a newer chainsum (its schema version is unknown here)
"""

from __future__ import annotations

from ..errors import ChainsumError

__all__ = [
    "ArchiveConflictError",
    "ArchiveIntegrityError",
    "SchemaVersionError",
    "StoreConnectionError",
    "StoreError",
    "UnknownSummaryError",
]


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


class StoreConnectionError(StoreError):
    """The connection to the database was lost and the store could not finish the operation safely.

    The store reconnects and retries a transaction once by itself when that is safe (the server rolled back the
    half-done transaction), so this is raised only when it is not: reconnecting failed, the connection died again,
    or it died after COMMIT was sent. In that last case `outcome_unknown` is True: the write may or may not have
    landed and no one can tell from here. Archiving is idempotent and state writes are compare-and-set, so the safe
    reaction is to re-read the state (`get_state`) and decide again, never to assume either outcome."""

    def __init__(self, detail: str, *, outcome_unknown: bool = False) -> None:
        self.detail = detail
        self.outcome_unknown = outcome_unknown
        super().__init__(detail)


class SchemaVersionError(StoreError, RuntimeError):
    """The database's schema version is newer than this chainsum knows: it was migrated by a later release.

    Opening refuses rather than guessing, and changes nothing: an older release writing into a newer layout could
    corrupt what the newer one relies on."""

    def __init__(self, found: int, supported: int) -> None:
        self.found = found
        self.supported = supported
        super().__init__(
            f"store schema version {found} is newer than this chainsum supports ({supported}); upgrade chainsum"
        )
