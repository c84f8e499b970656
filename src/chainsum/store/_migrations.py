"""Schema versions: which layout a database holds, and the ordered steps that bring an older one up to date.

Both backends record the version the same way, in a one-row table ``chainsum_schema`` next to their tables, rather
than SQLite's ``PRAGMA user_version``: one mechanism and one runner for both (the SQL is the same), the version lives
*inside* the PostgreSQL schema it describes (several stores can share a database, each in its own schema, each at its
own version), and it is written in the same transaction as the migration itself, so a crash leaves either the old
layout with the old number or the new layout with the new one.

Versions: 0 is an empty database; 1 is the original layout (`chainsum.store._schema`'s DDL); 2 adds the session
directory and the event log of a service (`chainsum.store._directory`); 3 records the session ids stored before
session names were kept exactly, so that each is still found by the name it was made for
(`chainsum.store._directory.LEGACY_SESSIONS_DDL`). A database created
before versions were recorded has the tables but no ``chainsum_schema``: it is version 1. A migration never edits
an earlier one: a new layout is a new entry at the end of the backend's list, and `SCHEMA_VERSION` moves with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ._base import Tx
from ._directory import LEGACY_SESSIONS_DDL, POSTGRES_DIRECTORY_DDL, SQLITE_DIRECTORY_DDL
from ._errors import SchemaVersionError
from ._schema import POSTGRES_DDL, SQLITE_DDL

__all__ = ["POSTGRES_MIGRATIONS", "SCHEMA_VERSION", "SQLITE_MIGRATIONS", "VERSION_TABLE", "Migration", "migrate"]

logger = logging.getLogger("chainsum.store")

SCHEMA_VERSION = 3
"""The layout this chainsum writes: the last migration of each backend's list reaches it."""

VERSION_TABLE = "chainsum_schema"

_VERSION_DDL = (
    f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Migration:
    """One step forward in a backend's layout, run inside the opening transaction."""

    version: int
    """The schema version a database is at once this step has run (the steps of a list are 1, 2, 3...)."""
    name: str
    """What the step changes, for the log."""
    apply: Callable[[Tx], None]
    """Alters the tables (and moves data) from `version - 1` to `version`. It must not commit: the runner's
    transaction makes all pending steps and the new version number land together or not at all."""


def _script(ddl: str) -> Callable[[Tx], None]:
    """A migration running each statement of a DDL script in turn (one statement per call on both drivers)."""

    def apply(tx: Tx) -> None:
        for statement in ddl.split(";"):
            if statement.strip():
                tx.execute(statement)

    return apply


SQLITE_MIGRATIONS: tuple[Migration, ...] = (
    Migration(version=1, name="archive, summaries, state and lock tables", apply=_script(SQLITE_DDL)),
    Migration(version=2, name="session directory and event log", apply=_script(SQLITE_DIRECTORY_DDL)),
    Migration(version=3, name="session ids stored before exact names", apply=_script(LEGACY_SESSIONS_DDL)),
)
POSTGRES_MIGRATIONS: tuple[Migration, ...] = (
    Migration(version=1, name="archive, summaries and state tables", apply=_script(POSTGRES_DDL)),
    Migration(version=2, name="session directory and event log", apply=_script(POSTGRES_DIRECTORY_DDL)),
    Migration(version=3, name="session ids stored before exact names", apply=_script(LEGACY_SESSIONS_DDL)),
)


def _found_version(tx: Tx, table_exists: Callable[[Tx, str], bool]) -> tuple[int, bool]:
    """The database's version, and whether it is recorded (False for an empty or a pre-versioning database)."""
    if table_exists(tx, VERSION_TABLE):
        row = tx.one(f"SELECT version FROM {VERSION_TABLE} WHERE id = 1")
        if row is not None:
            return int(row[0]), True
    # Before versions were recorded, version 1's tables were created on open: their presence is the version.
    return (1 if table_exists(tx, "archive") else 0), False


def migrate(tx: Tx, migrations: Sequence[Migration], table_exists: Callable[[Tx, str], bool]) -> int:
    """Bring the database up to the last step of `migrations` inside `tx`; returns the version it is at.

    The caller holds the backend's exclusive open lock for the whole transaction (SQLite ``BEGIN IMMEDIATE``,
    PostgreSQL an advisory lock), so two processes opening at once run each step once: the second reads the version
    the first committed. A database newer than the list raises `SchemaVersionError` before anything is written."""
    expected = list(range(1, len(migrations) + 1))
    if [m.version for m in migrations] != expected:
        raise ValueError(f"migration versions must be {expected}, got {[m.version for m in migrations]}")
    supported = len(migrations)
    found, recorded = _found_version(tx, table_exists)
    if found > supported:
        raise SchemaVersionError(found, supported)
    if found == supported and recorded:
        return found
    for step in migrations[found:]:
        logger.info("version=<%d>, name=<%s> | migrating store schema", step.version, step.name)
        step.apply(tx)
    tx.execute(_VERSION_DDL)
    tx.execute(
        f"INSERT INTO {VERSION_TABLE} (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = ?",
        (supported, supported),
    )
    logger.info("from_version=<%d>, to_version=<%d> | store schema version recorded", found, supported)
    return supported
