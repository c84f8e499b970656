"""`StateCell`: the session state is read once, written by compare-and-set, and a write that lost to another
process reloads what that process wrote; the session view is told the version of every state written here."""

from __future__ import annotations

from dataclasses import replace

from chainsum.manager import SessionState
from chainsum.manager._state_cell import StateCell
from chainsum.store import MemoryArchive


def test_a_write_that_wins_is_taken_and_announced() -> None:
    archive = MemoryArchive()
    taken: list[int] = []
    cell = StateCell(archive, "s", taken.append)
    assert cell.loaded is None  # nothing read yet: a quick path must not reach the store
    assert cell.state.version == 0
    assert cell.write(replace(cell.state, armed=True))
    assert cell.state.version == 1 and cell.state.armed
    assert taken == [1]
    assert archive.get_state("s").version == 1


def test_a_write_that_loses_reloads_the_other_process_state() -> None:
    archive = MemoryArchive()
    taken: list[int] = []
    cell = StateCell(archive, "s", taken.append)
    other = StateCell(archive, "s", lambda _: None)
    assert other.write(replace(other.state, summarizations=4))
    assert cell.state.version == 1  # read after the other write: up to date
    stale = StateCell(archive, "s", taken.append)
    stale.adopt(SessionState(version=0))  # what this process read before the other one wrote
    assert not stale.write(replace(stale.state, failures=9))
    assert stale.state.version == 1 and stale.state.summarizations == 4 and stale.state.failures == 0
    assert taken == []  # nothing was written here
