"""The `Store` protocol and the values it returns.

The manager depends on this protocol only (it never imports a backend), so any object with these methods can keep a
session's archive, summary chain and state: SQLite and PostgreSQL ship here; tests may use either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..messages import Message
from ._archive import Archive, SearchHit
from ._records import SummaryRecord

__all__ = ["ArchivedMessage", "SearchHit", "Store", "StoredState"]


def _no_data() -> dict[str, Any]:
    return {}


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredState:
    """A session's manager state as last written, with the version that `compare_and_set_state` checks.

    `version` 0 means nothing was ever written (and `data` is empty); each successful write adds one."""

    version: int = 0
    data: Mapping[str, Any] = field(default_factory=_no_data)
    """A small JSON document owned by the manager (last ratio, messages since the last summarization, depth...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchivedMessage:
    """One original message as archived, already verified against its SHA-256."""

    session: str
    message_id: str
    position: int
    """Order of archiving within the session, from 0: the order the messages left the context."""
    role: str
    sha256: str
    created_ms: int
    message: Message


@runtime_checkable
class Store(Archive, Protocol):
    """Where a session's originals, summary chain and manager state outlive the process.

    Concurrency contract (why it has both a lock and a version): `try_lock` keeps two processes from *preparing* the
    same summarization (one LLM call, not two); `expected_version` makes the write itself safe even without the lock,
    so a process that lost its lock (lease expired, connection dropped) cannot overwrite a newer state::

        with store.try_lock(session) as held:
            if held:
                state = store.get_state(session)
                ...  # decide from state.data, summarize the messages leaving the context
                store.archive_and_record(session, leaving, record, expected_version=state.version, new_state=new)
    """

    # archive_and_record, compare_and_set_state and try_lock come from `Archive`, the part the manager uses;
    # `get_state` is narrowed to the concrete state type.
    def get_state(self, session: str) -> StoredState: ...

    def records(self, session: str) -> list[SummaryRecord]:
        """The session's summary chain in the order it was written."""
        ...

    def expand(self, summary_id: str) -> list[Message]:
        """The originals a summary replaced, in its order, each verified against its SHA-256."""
        ...

    def originals(self, session: str, message_ids: Sequence[str]) -> dict[str, Message]:
        """The archived messages of `session` with these ids (those that exist), by id, each verified."""
        ...

    def archived(self, session: str) -> list[ArchivedMessage]:
        """Every archived message of the session in position order, verified."""
        ...

    def search(
        self, session: str | None, query: str, limit: int = 20, *, any_word: bool = False, snippets: bool = True
    ) -> list[SearchHit]:
        """Full-text search over archived messages (all sessions when `session` is None), best first. The query is
        plain words (all must match, or at least one with `any_word`, ranked by relevance); any punctuation or
        search syntax in it is treated as text, never as syntax."""
        ...

    def close(self) -> None: ...
