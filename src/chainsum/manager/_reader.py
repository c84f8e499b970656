"""The integrations' incremental reader: a framework's message objects to canonical messages, each converted once.

An agent framework hands its whole history to its hook before every model call, as the very objects of the call
before plus one or two new ones (LangGraph's state, pydantic-ai's history, Strands' ``agent.messages``). Converting
all of them again on every call costs more than the rest of a request with nothing to compact, so each integration
keeps only its framework's conversion function and reads through `ObjectReader`:

- a list that starts with the very objects of the previous read (one list compare in C, which takes the very object
  as equal without calling its ``__eq__``; an equal copy passes too and stands for the object read) reuses that
  read's messages outright, less its last `recheck` objects, which the framework may have edited in place since
  (pydantic-ai records what it sent on its last request, Strands redacts or cancels its newest message): those are
  looked at again, and `repeated` says whether the read gave the very messages of the one before;
- any other object is looked up by identity (its `snapshot`, when the integration gives one, must also be what it
  was), then, in a list that is not the previous one grown, when the framework copies objects (LangGraph loads a
  checkpoint as new objects on every ``invoke``), by a cheap content `key` confirmed by `same`; only what none of
  these finds is converted;
- the last object is converted again on every read when `reread_last` (a retried question is often edited in place,
  as the manager reads a wire history's last item again); a message read again and equal keeps its old objects, so
  the manager's identity-keyed caches (token counts, fingerprints) hold;
- what the reader holds is what the latest list holds (plus what the integration wrote with `remember` since), so a
  long session whose framework drops or replaces objects does not grow it.

An object edited in place deep inside the list (not among the last `recheck`) is not seen, as with the manager's own
reading of a list: frameworks replace what they change (LangGraph's ``add_messages`` swaps the object by its id).

Some frameworks' objects do not map to messages one by one: an OpenAI Responses model turn is a run of items (a
reasoning item, function calls, a message item) that reads as one assistant message. `GroupReader` cuts the list
into such runs (`joins` says whether an object continues the run of the one before it) and reads the runs, as tuples
of objects, through an `ObjectReader`: a run read before is the very tuple again, so the reader's compare in C and
its identity lookups hold; only the runs from the first change (or from the last run, which a new object may join)
are cut again.

`ToolTokens` is the other thing every integration needs per request: the tokens of the tool definitions sent with it,
counted again only when the tool objects (or the counter) change.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..messages import Message
from ..tokens import TokenCounter

__all__ = ["GroupReader", "ObjectReader", "ToolTokens", "starts_with"]

T = TypeVar("T")


@dataclass(slots=True)
class _Entry(Generic[T]):
    """An object read: the object itself (kept alive, so that its id stays its own), what `snapshot` gave when it
    was read, and its canonical messages."""

    obj: T
    snapshot: object
    messages: tuple[Message, ...]


def starts_with(items: Sequence[T], head: Sequence[T]) -> bool:
    """`items` starts with the objects of `head`, compared in C: a list compare takes an object that is the very one
    as equal without calling its ``__eq__`` (a fraction of a microsecond an object), and an equal one passes too.
    False for a shorter `items` and where an ``__eq__`` raises (a field holding an array)."""
    n = len(head)
    if len(items) < n:
        return False
    part = items[:n] if isinstance(items, list) else list(items[:n])
    try:
        return bool(part == (head if isinstance(head, list) else list(head)))
    except Exception:
        return False


class ObjectReader(Generic[T]):
    """Framework message objects to canonical messages by object identity (see the module docstring).

    `convert(items, i)` gives the messages of ``items[i]`` (the list is there for conversions that need the item
    before: a Bedrock tool result is named after the call it answers). `snapshot(obj)`, when given, is a cheap value
    compared with ``==`` to tell an object edited in place from the one read (LangChain's field values, pydantic-ai's
    parts list). `key(obj)` / `same(a, b)`, when given, find an equal copy of an object read before (None: no key)."""

    def __init__(
        self,
        convert: Callable[[Sequence[T], int], Sequence[Message]],
        *,
        snapshot: Callable[[T], object] | None = None,
        key: Callable[[T], Hashable | None] | None = None,
        same: Callable[[T, T], bool] = operator.eq,
        recheck: int = 1,
        reread_last: bool = False,
    ) -> None:
        self._convert = convert
        self._snapshot = snapshot
        self._key = key
        self._same = same
        self._recheck = max(0, recheck)
        self._reread_last = reread_last
        self._entries: dict[int, _Entry[T]] = {}
        """By id of the object: the objects of the latest list, and those `remember`ed since."""
        self._items: list[T] = []
        self._messages: list[Message] = []
        self._ends: list[int] = []
        """The latest list, its messages, and per object the number of messages up to and including its own."""
        self._origins: dict[int, _Entry[T]] | None = None
        """By id of a message: the entry it belongs to (made on demand after a read: only writing needs it)."""
        self.converted = 0
        """How many objects the latest `read` converted (the others were known)."""
        self.repeated = False
        """The latest `read` gave the very messages of the read before it, in order: its list held the same objects
        (or equal ones, see `_grown`) and none of those looked at again read differently. An integration that reads
        one history twice per model call (a state hook, then the model call) tells from this, without comparing the
        two lists object by object, that the second read is the first one's history."""

    def __len__(self) -> int:
        """The objects held (those of the latest list and any `remember`ed since)."""
        return len(self._entries)

    @property
    def latest(self) -> Sequence[T]:
        """The objects of the latest read, in order."""
        return self._items

    def read(self, items: Sequence[T]) -> list[Message]:
        """The canonical messages of `items`, in order (a new list, the caller's to keep)."""
        prev = self._items
        if self._grown(items):
            same = len(prev)
        elif all(map(operator.is_, items, prev)):  # stops at the shorter list, in C
            same = min(len(prev), len(items))
        else:
            same = 0
            while items[same] is prev[same]:
                same += 1
        reuse = min(same, len(prev) - self._recheck)
        entries = self._entries
        tail: dict[int, _Entry[T]] = {}
        n_prev = len(prev)
        before: list[tuple[Message, ...]] = []
        if reuse <= 0 or reuse < len(prev) - self._recheck:
            # a new or rewritten list: keep only what it holds, found by identity or content below
            reuse = max(0, reuse)
            fresh = {id(o): entries[id(o)] for o in prev[:reuse]}
            out: list[Message] = []
            ends: list[int] = []
            if reuse:
                out.extend(self._messages[: self._ends[reuse - 1]])
                ends.extend(self._ends[:reuse])
        else:
            # the previous list, grown: its objects past the reused part are looked at again (and dropped when this
            # list no longer holds them)
            fresh = entries
            for o in prev[reuse:]:
                hit = fresh.pop(id(o), None)
                if hit is not None:
                    tail[id(o)] = hit
                    before.append(hit.messages)
            out, ends = self._messages, self._ends
            del out[ends[reuse - 1] :]
            del ends[reuse:]
        by_key: dict[Hashable, _Entry[T]] | None = None
        snapshot, last, converted = self._snapshot, len(items) - 1, 0
        key = self._key if fresh is not entries else None  # a grown list's new objects are new, not copies
        repeated = fresh is entries and same == n_prev == len(items) and len(before) == n_prev - reuse
        for i in range(reuse, len(items)):
            obj = items[i]
            entry = tail.get(id(obj)) or entries.get(id(obj))
            if entry is not None and entry.obj is not obj:
                entry = None
            shot = snapshot(obj) if snapshot is not None else None
            if entry is not None and snapshot is not None and entry.snapshot != shot:
                entry = None
            if entry is None and key is not None:
                k = key(obj)
                if k is not None:
                    if by_key is None:
                        by_key = self._by_key([*entries.values(), *tail.values()])
                    found = by_key.get(k)
                    if found is not None and self._same(found.obj, obj):
                        entry = _Entry(obj, shot, found.messages)
            if entry is None or (i == last and self._reread_last):
                messages = tuple(self._convert(items, i))
                converted += 1
                if entry is not None and messages == entry.messages:
                    messages = entry.messages  # read again and unchanged: the same objects, so identity checks hold
                entry = _Entry(obj, shot, messages)
            fresh[id(obj)] = entry
            if repeated and entry.messages is not before[i - reuse]:
                repeated = False
            out.extend(entry.messages)
            ends.append(len(out))
        if fresh is entries:  # the objects read before stay (a copy equal to one stands for it: see `_grown`)
            prev[reuse:] = items[reuse:]  # the slice taken first: right even when `items` is `latest` itself
        else:
            self._items = list(items)
        self._entries = fresh
        self._messages, self._ends, self._origins = out, ends, None
        self.converted, self.repeated = converted, repeated
        return list(out)

    def _grown(self, items: Sequence[T]) -> bool:
        """Whether `items` start with the objects of the latest list, compared in C: a list compare takes an object
        that is the very one as equal without calling its ``__eq__``, so the common case (the framework's same
        objects plus new ones) costs a fraction of a microsecond per object, a tenth of `operator.is_` mapped over
        the lists. An object equal to the one read at its place (a framework that copies its history) passes too:
        it reads the same, and the reader keeps the object it read (the one `latest` and `origin` give) rather than
        the copy, as `key` / `same` find copies in a rewritten list. An ``__eq__`` that raises (a field holding an
        array) reads as not grown: then the lists are compared by identity."""
        return bool(self._items) and starts_with(items, self._items)

    def _by_key(self, entries: Sequence[_Entry[T]]) -> dict[Hashable, _Entry[T]]:
        """The entries by content key (made once per read, at its first object not known by identity)."""
        key = self._key
        assert key is not None
        out: dict[Hashable, _Entry[T]] = {}
        for entry in entries:
            k = key(entry.obj)
            if k is not None:
                out[k] = entry
        return out

    def remember(self, obj: T, messages: Sequence[Message]) -> None:
        """An object the integration wrote (a compacted history handed back to the framework) and the messages it
        stands for, so that reading it next costs nothing."""
        shot = self._snapshot(obj) if self._snapshot is not None else None
        self._entries[id(obj)] = _Entry(obj, shot, tuple(messages))
        self._origins = None

    def origin(self, message: Message) -> tuple[T, tuple[Message, ...]] | None:
        """The object of the latest read (or `remember`ed) that `message` came from, with all of its messages; None
        for a message no object gave (a summary record, a masked result)."""
        origins = self._origins
        if origins is None:
            origins = self._origins = {id(m): e for e in self._entries.values() for m in e.messages}
        entry = origins.get(id(message))  # an entry keeps its messages alive: an id found is that message's
        return None if entry is None else (entry.obj, entry.messages)


def equal_head(items: Sequence[T], head: Sequence[T]) -> int:
    """How many leading objects of `items` are those of `head` or equal to them (an ``__eq__`` that raises: not):
    where two lists part, for a reader and for the replay's count of what a request shares with the one before."""
    n = 0
    for a, b in zip(items, head, strict=False):
        if a is not b:
            try:
                if not a == b:
                    break
            except Exception:
                break
        n += 1
    return n


class GroupReader(Generic[T]):
    """Framework objects to canonical messages where a run of objects converts together (see the module docstring).

    `convert(run)` gives the messages of one run of objects; `joins(before, obj)` says whether `obj` continues the
    run that `before` (the object just before it) is in. The runs are read by an `ObjectReader` of tuples (its
    `recheck` last runs looked at again), so a request that adds objects costs the cut and conversion of the new
    ones. An object edited in place is not seen (a framework whose history objects are rebuilt for every request,
    as the OpenAI Agents SDK's are, never does that); an equal copy stands for the object read, as in
    `ObjectReader`."""

    def __init__(
        self,
        convert: Callable[[Sequence[T]], Sequence[Message]],
        joins: Callable[[T, T], bool],
        *,
        recheck: int = 1,
    ) -> None:
        self._joins = joins
        self._runs: list[tuple[T, ...]] = []
        """The runs of the latest read, in order."""
        self._ends: list[int] = []
        """Per run, the index of the object after it (found by bisection: a read that walked the runs cost more than
        the rest of a request)."""
        self._items: list[T] = []
        """The objects of those runs, in order (the ones read: an equal copy in a later list stands for its object).
        Kept in place, as `ObjectReader` keeps its list."""
        self.reader: ObjectReader[tuple[T, ...]] = ObjectReader(lambda runs, i: convert(runs[i]), recheck=recheck)
        """The reader of the runs (its `converted`, `repeated` and `origin` are per run)."""
        self.same = 0
        """How many leading objects of the latest read were those of the read before (or equal to them)."""
        self.reads = 0
        """How many reads were made: what an integration that keeps something in step with the reads compares."""

    @property
    def latest(self) -> Sequence[T]:
        """The objects of the latest read, in order."""
        return self._items

    def read(self, items: Sequence[T]) -> list[Message]:
        """The canonical messages of `items`, in order (a new list, the caller's to keep)."""
        prev, runs, ends = self._items, self._runs, self._ends
        same = len(prev) if prev and starts_with(items, prev) else equal_head(items, prev)
        # keep the runs that end within the unchanged head, less the last one when the next object joins it
        kept = bisect.bisect_right(ends, same)
        if kept and ends[kept - 1] < len(items) and self._joins(items[ends[kept - 1] - 1], items[ends[kept - 1]]):
            kept -= 1
        end = ends[kept - 1] if kept else 0
        joins, old = self._joins, runs[kept:]
        del runs[kept:], ends[kept:]
        by_first: dict[int, tuple[T, ...]] | None = None
        start = end
        for i in range(end + 1, len(items) + 1):
            if i < len(items) and joins(items[i - 1], items[i]):
                continue
            run = tuple(items[start:i])
            k = len(runs) - kept
            was = old[k] if k < len(old) else None
            if was is None or was[0] is not run[0]:  # moved (a compacted history written back): by its first object
                if by_first is None:
                    by_first = {id(r[0]): r for r in old}
                was = by_first.get(id(run[0]))
            if was is not None and len(was) == len(run) and all(map(operator.is_, was, run)):
                run = was  # the very run read before: the reader finds it by identity
            runs.append(run)
            ends.append(i)
            start = i
        self.same = same
        self.reads += 1
        if end:
            prev[end:] = items[end:]  # the slice taken first: right even when `items` is `latest` itself
        else:
            self._items = list(items)
        return self.reader.read(runs)

    def origin(self, message: Message) -> tuple[tuple[T, ...], tuple[Message, ...]] | None:
        """The run of objects `message` came from, with all of its messages (`ObjectReader.origin`)."""
        return self.reader.origin(message)


class ToolTokens:
    """Tokens of the tool definitions a request carries, counted again only when the tool objects or the counter
    change (frameworks send the same tool objects with every request, and serializing their schemas costs more than
    the rest of a request with nothing to compact).

    `measure(tools, counter)` counts a list of tool objects (each integration its framework's definitions)."""

    def __init__(self, measure: Callable[[Sequence[Any], TokenCounter], int]) -> None:
        self._measure = measure
        self._tools: list[Any] = []
        self._counter: TokenCounter | None = None
        self._tokens = 0

    def count(self, tools: Sequence[Any], counter: TokenCounter) -> int:
        """The tokens of `tools` (the very objects as last time: the count of last time)."""
        if counter is self._counter and len(tools) == len(self._tools) and all(map(operator.is_, tools, self._tools)):
            return self._tokens
        tokens = self._measure(tools, counter)
        self._tools, self._counter, self._tokens = list(tools), counter, tokens
        return tokens
