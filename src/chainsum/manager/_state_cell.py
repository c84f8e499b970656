"""`StateCell`: a session's state as the archive stores it, read once and written by compare-and-set.

Several managers (processes, machines) may serve one session through one store, so every write says which version
it replaces (`Archive.compare_and_set_state`): a write that lost to another process's reloads the state and says so,
and the caller decides again on what the other process wrote. `taken` is told the version of every state this
process wrote, so that the session view knows its mapping is that state's (`SessionView.version`) and does not read
it back from the store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from ..store import Archive
from ._policy import SessionState

__all__ = ["StateCell"]

logger = logging.getLogger(__name__)


class StateCell:
    """One session's `SessionState`, cached after the first read."""

    def __init__(self, archive: Archive, session: str, taken: Callable[[int], None]) -> None:
        self.archive = archive
        self.session = session
        self._taken = taken
        self._state: SessionState | None = None

    @property
    def state(self) -> SessionState:
        """The state as last read or written (read from the store on first use)."""
        if self._state is None:
            self._state = self.load()
        return self._state

    @property
    def loaded(self) -> SessionState | None:
        """The state if it was read already, else None (a quick path that must not touch the store)."""
        return self._state

    def load(self) -> SessionState:
        """The state in the store now (not cached: see `reload`)."""
        stored = self.archive.get_state(self.session)
        return SessionState.from_data(stored.version, stored.data)

    def reload(self) -> SessionState:
        """Forget the cached state and read the store's."""
        self._state = self.load()
        return self._state

    def adopt(self, state: SessionState) -> None:
        """Take `state` as the current one without writing it (read fresh by the caller, or written together with
        the archive by `Archive.archive_and_record`, `state.version` being its new version)."""
        self._state = state

    def written(self, state: SessionState) -> None:
        """`adopt` a state this process has written, with the mapping the session view holds."""
        self._state = state
        self._taken(state.version)

    def write(self, new: SessionState) -> bool:
        """Write `new` over the current state; False (and the store's state reloaded) when another process wrote
        the session since it was read."""
        current = self.state
        if not self.archive.compare_and_set_state(self.session, current.version, new.to_data()):
            logger.info("session=<%s> | state changed elsewhere; reloading", self.session)
            self.reload()
            return False
        self.written(replace(new, version=current.version + 1))
        return True
