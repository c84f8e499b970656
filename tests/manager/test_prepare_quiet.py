"""`ContextManager.prepare_quiet`: the answer of `prepare` made in memory alone, for a request that provably needs
nothing else, and None for every other (``chainsum serve`` prepares the first kind on its event loop, the rest on a
worker thread). The same output, tokens, events and stored state as `prepare` alone, on generated sessions in every
wire format; None, with nothing read from or written to the archive, where the work could grow (a large step, many
new items, an edited history), where a compaction is due and once anything is archived."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from chainsum.manager import ContextManager, ManagerConfig, ManagerEvent, Prepared
from chainsum.manager._codec import Codec
from chainsum.manager._manager import QUIET_CHARS, QUIET_ITEMS
from chainsum.store import MemoryArchive
from chainsum.testing.sessions import agent_session, chat
from chainsum.tokens import HeuristicCounter
from manager.manager_support import Dict, tool_turn
from manager.wire_support import PROVIDER, WIRE_FORMATS, to_wire

COUNTER = HeuristicCounter()


class CountingArchive(MemoryArchive):
    """A memory archive that counts every call made to it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        if callable(value) and not name.startswith("_"):
            object.__setattr__(self, "calls", object.__getattribute__(self, "calls") + 1)
        return value


def _manager(fmt: str, window: int, archive: MemoryArchive, events: list[ManagerEvent]) -> ContextManager:
    return ContextManager(
        ManagerConfig(),
        context_window=window,
        counter=COUNTER,
        provider=PROVIDER[fmt],
        archive=archive,
        session="s",
        format=fmt,
        on_event=events.append,
    )


def _fresh(value: object) -> Any:
    """`value` as a new parse of its JSON: what a proxy gets from each request body."""
    return json.loads(json.dumps(value))


def _requests(openai_history: Sequence[Dict], fmt: str) -> list[tuple[list[Any], object]]:
    """The requests of a growing session in `fmt`: its history up to each user or tool message, and the system
    prompt the format keeps outside its list."""
    items, system = to_wire(openai_history, fmt)
    out: list[tuple[list[Any], object]] = []
    for end in range(2, len(openai_history) + 1):
        if openai_history[end - 1]["role"] in ("user", "tool"):
            part, _ = to_wire(openai_history[:end], fmt)
            out.append((part, system))
    assert out and items
    return out


def _wire(prepared: Prepared[Any]) -> str:
    return json.dumps(list(prepared.messages), sort_keys=True)


def _answers(prepared: Prepared[Any]) -> tuple[object, ...]:
    return (_wire(prepared), prepared.tokens_before, prepared.tokens_after, prepared.changed, prepared.recalled)


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
@pytest.mark.parametrize("session", ["agent", "chat"])
def test_quiet_answers_are_the_answers_of_prepare(fmt: str, session: str) -> None:
    history = agent_session(70) if session == "agent" else chat(60).messages
    window = 80_000 if session == "agent" else 1500  # each compacts about half way
    plain_events: list[ManagerEvent] = []
    quiet_events: list[ManagerEvent] = []
    plain_archive, quiet_archive = MemoryArchive(), MemoryArchive()
    plain = _manager(fmt, window, plain_archive, plain_events)
    quiet = _manager(fmt, window, quiet_archive, quiet_events)
    answered = compacted = 0
    for items, system in _requests(history, fmt):
        expected = asyncio.run(plain.prepare(_fresh(items), system=_fresh(system), reserved_tokens=300))
        given = _fresh(items)
        got = quiet.prepare_quiet(given, system=_fresh(system), reserved_tokens=300)
        if got is None:
            got = asyncio.run(quiet.prepare(given, system=_fresh(system), reserved_tokens=300))
        else:
            answered += 1
            assert not got.changed and got.event is None
        compacted += expected.changed
        assert _answers(got) == _answers(expected)
        assert [type(e) for e in quiet_events] == [type(e) for e in plain_events]
        assert quiet.state.to_data() == plain.state.to_data()
    assert compacted >= 1, "the session must compact for the test to see both paths"
    assert answered >= 5, f"quiet answered {answered} requests"

    def summaries(archive: MemoryArchive) -> list[tuple[int, str, tuple[str, ...]]]:
        return [(r.depth, r.summary, r.original_sha256) for r in archive.records("s")]

    assert summaries(quiet_archive) == summaries(plain_archive)


def _agent(fmt: str, window: int = 200_000) -> tuple[ContextManager, CountingArchive, list[Dict]]:
    """A manager that has prepared the first request of an agent session (its state read), and the session."""
    archive = CountingArchive()
    manager = _manager(fmt, window, archive, [])
    history = agent_session(40)
    items, system = to_wire(history[:12], fmt)
    asyncio.run(manager.prepare(items, system=system))
    return manager, archive, history


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
def test_a_step_far_from_the_trigger_is_quiet_and_touches_no_archive(fmt: str) -> None:
    manager, archive, history = _agent(fmt)
    before = archive.calls
    for end in (14, 16, 18):
        items, system = to_wire(history[:end], fmt)
        assert manager.prepare_quiet(_fresh(items), system=system) is not None
    assert archive.calls == before


def test_the_first_request_is_not_quiet() -> None:
    manager = _manager("openai", 200_000, MemoryArchive(), [])
    assert manager.prepare_quiet(agent_session(20)) is None  # its state is not read yet


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
def test_a_large_step_is_not_quiet(fmt: str) -> None:
    manager, archive, history = _agent(fmt)
    big = {"role": "user", "content": "x " * (QUIET_CHARS // 2 + 10)}
    items, system = to_wire([*history[:12], big], fmt)
    calls = archive.calls
    assert manager.prepare_quiet(_fresh(items), system=system) is None
    assert archive.calls == calls
    prepared = asyncio.run(manager.prepare(_fresh(items), system=system))  # the caller then prepares as usual
    assert prepared.tokens_after > QUIET_CHARS // 4


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
def test_many_new_items_are_not_quiet(fmt: str) -> None:
    manager, _, history = _agent(fmt)
    steps = [m for i in range(QUIET_ITEMS) for m in tool_turn(i, words=2)]
    items, system = to_wire([*history[:12], *steps], fmt)
    assert manager.prepare_quiet(_fresh(items), system=system) is None


@pytest.mark.parametrize("fmt", WIRE_FORMATS)
def test_an_edited_history_is_not_quiet(fmt: str) -> None:
    manager, _, history = _agent(fmt)
    edited = [dict(m) for m in history[:14]]
    edited[3] = {**edited[3], "content": "an edit inside the history"}
    items, system = to_wire(edited, fmt)
    assert manager.prepare_quiet(_fresh(items), system=system) is None


def test_a_request_over_the_trigger_is_not_quiet_and_prepare_compacts_it() -> None:
    history = agent_session(40)
    probe = _manager("openai", 200_000, MemoryArchive(), [])
    tokens = asyncio.run(probe.prepare(_fresh(history[:14]))).tokens_after
    manager = _manager("openai", int(tokens / 0.79), MemoryArchive(), [])  # the next step crosses the 0.8 trigger
    assert not asyncio.run(manager.prepare(_fresh(history[:14]))).changed
    assert manager.prepare_quiet(_fresh(history[:16])) is None
    assert asyncio.run(manager.prepare(_fresh(history[:16]))).changed


def test_nothing_is_quiet_once_something_is_archived() -> None:
    events: list[ManagerEvent] = []
    manager = _manager("openai", 3000, MemoryArchive(), events)
    history = agent_session(120)
    end = 4
    while not manager.state.archived:
        end += 2
        asyncio.run(manager.prepare(_fresh(history[:end])))
    assert manager.prepare_quiet(_fresh(history[: end + 2])) is None


def test_rereads_little_bounds_the_walk_of_a_huge_item() -> None:
    codec = Codec("openai")
    codec.read([{"role": "user", "content": "hi"}])
    huge = {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "y"}] * 1_000_000}
    assert not codec.rereads_little([{"role": "user", "content": "hi"}, huge], max_items=4, max_chars=1000)
    assert codec.rereads_little(
        [{"role": "user", "content": "hi"}, {"role": "user", "content": "ok"}], max_items=4, max_chars=1000
    )
