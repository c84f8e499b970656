"""Where a conversation's originals, summary chain and manager state outlive the process.

It owns the `Archive` protocol the context manager writes through and the `SummaryRecord` it writes, so nothing here
imports a layer above `chainsum.messages`; `MemoryArchive` is the in-process archive (the manager's default).

`Store` is the protocol the manager talks to; `SQLiteStore` (standard library, a file or memory) is the default
and `PostgresStore` (``pip install "chainsum[postgres]"``, imported lazily) serves several processes or machines.
Both run the same test suite. Archived messages are kept as canonical JSON with their SHA-256 and verified on the
way out; summarization is serialized per session by `Store.try_lock` plus a compare-and-set on the session state.
Each database records its schema version and is migrated forward on open; a newer one is refused
(`SchemaVersionError`). `PostgresStore` reconnects after a lost connection and retries the cut transaction once
when that is safe (`StoreConnectionError` when it is not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._archive import Archive, ArchiveState, MemoryArchive, SearchHit, StateSnapshot
from ._base import SqlStore
from ._directory import SessionDirectory, SessionInfo, StoredEvent
from ._errors import (
    ArchiveConflictError,
    ArchiveIntegrityError,
    SchemaVersionError,
    StoreConnectionError,
    StoreError,
    UnknownSummaryError,
)
from ._protocol import ArchivedMessage, Store, StoredState
from ._records import (
    MAX_FACET_ITEMS,
    MAX_KEY_POINTS,
    SummaryContext,
    SummaryRecord,
    canonical_json,
    message_sha256,
    sha256_all,
)
from ._sqlite import SQLiteStore

if TYPE_CHECKING:
    from ._postgres import PostgresStore

__all__ = [
    "MAX_FACET_ITEMS",
    "MAX_KEY_POINTS",
    "Archive",
    "ArchiveConflictError",
    "ArchiveIntegrityError",
    "ArchiveState",
    "ArchivedMessage",
    "MemoryArchive",
    "PostgresStore",
    "SQLiteStore",
    "SchemaVersionError",
    "SearchHit",
    "SessionDirectory",
    "SessionInfo",
    "SqlStore",
    "StateSnapshot",
    "Store",
    "StoreConnectionError",
    "StoreError",
    "StoredEvent",
    "StoredState",
    "SummaryContext",
    "SummaryRecord",
    "UnknownSummaryError",
    "canonical_json",
    "message_sha256",
    "sha256_all",
]


def __getattr__(name: str) -> Any:
    # `_postgres` itself imports psycopg only when a store is opened; deferring the module too keeps
    # `import chainsum.store` free of its import cost.
    if name == "PostgresStore":
        from ._postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
