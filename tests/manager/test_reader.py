"""`ObjectReader` and `ToolTokens`: each object converted once while it stays, what changed read again, nothing kept
for objects the framework let go, the tool count made again only when the tools change."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.manager import GroupReader, ObjectReader, ToolTokens
from chainsum.messages import Message
from chainsum.tokens import HeuristicCounter, TokenCounter


@dataclass(eq=False)
class Item:
    """A framework's mutable message object (compared by identity, as LangChain's or Strands' are not)."""

    text: str
    id: str | None = None
    parts: list[str] = field(default_factory=list[str])


@dataclass
class Converter:
    calls: list[str] = field(default_factory=list[str])

    def __call__(self, items: Sequence[Item], i: int) -> tuple[Message, ...]:
        self.calls.append(items[i].text)
        return (Message.of("user", items[i].text),)


def _texts(messages: Sequence[Message]) -> list[str]:
    return [m.text for m in messages]


def test_a_grown_list_converts_only_the_new_objects_and_keeps_the_message_objects() -> None:
    convert = Converter()
    reader = ObjectReader(convert)
    items = [Item(f"m{k}") for k in range(5)]
    first = reader.read(items)
    assert convert.calls == ["m0", "m1", "m2", "m3", "m4"] and reader.converted == 5
    items = [*items, Item("m5"), Item("m6")]  # a new list, the same objects plus new ones
    second = reader.read(items)
    assert convert.calls[5:] == ["m5", "m6"] and reader.converted == 2
    assert all(a is b for a, b in zip(first, second[:5], strict=True))
    assert _texts(second) == [f"m{k}" for k in range(7)]
    assert second is not reader.read(items)  # the caller's own list each time


def test_the_last_object_is_read_again_when_asked_and_an_equal_result_keeps_its_objects() -> None:
    convert = Converter()
    reader = ObjectReader(convert, reread_last=True)
    items = [Item("a"), Item("b")]
    first = reader.read(items)
    again = reader.read(items)
    assert convert.calls == ["a", "b", "b"]
    assert again[1] is first[1]  # converted again, equal: the old message object
    items[1].text = "b, edited in place"
    edited = reader.read(items)
    assert edited[0] is first[0] and edited[1].text == "b, edited in place"


def test_a_replaced_or_edited_object_is_read_again() -> None:
    convert = Converter()
    reader = ObjectReader(convert, snapshot=lambda item: list(item.parts), recheck=2)
    items = [Item(f"m{k}") for k in range(6)]
    reader.read(items)
    items[2] = Item("new m2")  # replaced: a new object at an old place
    out = reader.read(items)
    assert convert.calls[6:] == ["new m2"] and _texts(out)[2] == "new m2"
    items[5].parts.append("a part pydantic-ai added after sending")  # within `recheck` of the end: seen
    items[5].text = "m5 with a part"
    out = reader.read(items)
    assert convert.calls[7:] == ["m5 with a part"] and _texts(out)[5] == "m5 with a part"


def test_an_order_change_reads_by_identity_without_converting() -> None:
    convert = Converter()
    reader = ObjectReader(convert)
    items = [Item(f"m{k}") for k in range(5)]
    before = reader.read(items)
    moved = [items[3], items[0], items[4], items[1], items[2]]
    after = reader.read(moved)
    assert reader.converted == 0 and len(convert.calls) == 5
    assert [id(m) for m in after] == [id(before[k]) for k in (3, 0, 4, 1, 2)]


def test_copies_are_found_by_their_content_key_in_a_rewritten_list() -> None:
    convert = Converter()
    reader = ObjectReader(convert, key=lambda item: item.id, same=lambda a, b: a.text == b.text)
    items = [Item(f"m{k}", id=f"id{k}") for k in range(4)]
    before = reader.read(items)
    copies = [Item(i.text, id=i.id) for i in items]  # a checkpoint loaded: new objects, same ids and content
    copies[1].text = "changed"
    after = reader.read(copies)
    assert convert.calls[4:] == ["changed"]  # the copy whose content differs is converted, the others are not
    assert [after[k] is before[k] for k in range(4)] == [True, False, True, True]


def test_what_the_framework_lets_go_is_not_kept() -> None:
    reader = ObjectReader(Converter())
    old = [Item(f"old{k}") for k in range(50)]
    watch = weakref.ref(old[0])
    reader.read(old)
    new = [Item(f"new{k}") for k in range(10)]
    reader.read(new)
    assert len(reader) == 10
    del old
    gc.collect()
    assert watch() is None
    for step in range(30):  # a list that keeps growing while its last object is replaced each time
        new = [*new[:-1], Item(f"last{step}"), Item(f"grown{step}")]
        reader.read(new)
        assert len(reader) == len(new)


def test_remembered_objects_read_as_their_messages_and_give_their_origin() -> None:
    convert = Converter()
    reader = ObjectReader(convert)
    items = [Item("a"), Item("b")]
    messages = reader.read(items)
    assert reader.origin(messages[1]) == (items[1], (messages[1],))
    record = Message.of("user", "a summary")
    assert reader.origin(record) is None
    written = Item("the summary, as the framework's object")
    reader.remember(written, (record,))
    out = reader.read([written, items[1]])
    assert out[0] is record and out[1] is messages[1] and reader.converted == 0
    assert reader.origin(record) == (written, (record,))


def test_tool_tokens_count_again_only_for_other_tools_or_another_counter() -> None:
    measured: list[int] = []

    def measure(tools: Sequence[object], counter: TokenCounter) -> int:
        measured.append(len(tools))
        return sum(counter.count_text(str(t)) for t in tools)

    tools = ToolTokens(measure)
    a, b = {"name": "read", "description": "Read a file."}, {"name": "bash", "description": "Run a command."}
    counter = HeuristicCounter()
    first = tools.count([a, b], counter)
    assert first > 0 and tools.count([a, b], counter) == first and measured == [2]
    assert tools.count([a], counter) < first and measured == [2, 1]
    assert tools.count([a], HeuristicCounter()) and measured == [2, 1, 1]


@dataclass
class ValueItem:
    """A framework's message object compared by value (pydantic-ai's dataclasses, Strands' dicts)."""

    text: str


def _value_convert(items: Sequence[ValueItem], i: int) -> tuple[Message, ...]:
    return (Message.of("user", items[i].text),)


def test_equal_copies_in_a_grown_list_read_as_the_objects_read_before() -> None:
    calls: list[str] = []

    def convert(items: Sequence[ValueItem], i: int) -> tuple[Message, ...]:
        calls.append(items[i].text)
        return _value_convert(items, i)

    reader = ObjectReader(convert)
    originals = [ValueItem(f"m{i}") for i in range(4)]
    first = reader.read(originals)
    copies = [ValueItem(o.text) for o in originals]
    second = reader.read([*copies, ValueItem("m4")])
    assert _texts(second) == ["m0", "m1", "m2", "m3", "m4"]
    assert all(a is b for a, b in zip(first[:3], second[:3], strict=True))  # converted once, the very messages
    assert calls[4:] == ["m3", "m4"]  # the last one read before is looked at again, then the new one
    assert reader.latest[0] is originals[0] and reader.latest[3] is copies[3]


def test_repeated_says_a_read_gave_the_very_messages_of_the_one_before() -> None:
    reader = ObjectReader(Converter(), snapshot=lambda o: o.text)
    items = [Item(f"m{i}") for i in range(3)]
    reader.read(items)
    reader.read(list(items))
    assert reader.repeated
    reader.read([*items, Item("m3")])
    assert not reader.repeated  # grown
    items.append(reader.latest[-1])
    reader.read(items)
    assert reader.repeated
    items[-1].text = "edited in place"
    reader.read(items)
    assert not reader.repeated  # the last one read again, and it reads differently
    reader.read(items[:2])
    assert not reader.repeated  # shorter


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["append", "copy", "edit", "replace", "drop"]), st.integers(0, 30))))
def test_reading_step_by_step_equals_a_fresh_read(steps: list[tuple[str, int]]) -> None:
    """Whatever a framework does between requests (appends, copies of its whole history, an edit of its newest
    object in place, a replaced object, dropped ones), the reader gives the messages a fresh reader gives."""
    reader = ObjectReader(_value_convert, snapshot=lambda o: o.text, recheck=1)
    items: list[ValueItem] = [ValueItem("start")]
    made = 0
    for op, k in steps:
        made += 1
        if op == "append":
            items = [*items, ValueItem(f"new{made}")]
        elif op == "copy":
            items = [ValueItem(o.text) for o in items]
        elif op == "edit" and items:
            items[-1].text = f"edited{made}"
        elif op == "replace" and items:
            items = list(items)
            items[k % len(items)] = ValueItem(f"replaced{made}")
        elif op == "drop":
            items = items[: k % (len(items) + 1)]
        fresh = ObjectReader(_value_convert, snapshot=lambda o: o.text, recheck=1)
        assert _texts(reader.read(items)) == _texts(fresh.read(items)) == [o.text for o in items]


# --- GroupReader ---------------------------------------------------------------------------------------------------


@dataclass
class TurnItem:
    """An OpenAI Responses-like item: ``turn`` items (reasoning, calls, an assistant message item) that follow one
    another read as one assistant message; the others (a user message, a tool output) are messages of their own."""

    text: str
    turn: bool


def _joins(before: TurnItem, item: TurnItem) -> bool:
    return before.turn and item.turn


def _run_convert(run: Sequence[TurnItem]) -> tuple[Message, ...]:
    if run[0].turn:
        return (Message.of("assistant", "+".join(i.text for i in run)),)
    assert len(run) == 1
    return (Message.of("user", run[0].text),)


def _counting_reader() -> tuple[GroupReader[TurnItem], list[list[str]]]:
    """A group reader of `TurnItem`s, and the runs it converts, as they are converted."""
    runs: list[list[str]] = []

    def convert(run: Sequence[TurnItem]) -> tuple[Message, ...]:
        runs.append([i.text for i in run])
        return _run_convert(run)

    return GroupReader(convert, _joins), runs


def _expected(items: Sequence[TurnItem]) -> list[str]:
    out: list[str] = []
    for k, item in enumerate(items):
        if item.turn and k and items[k - 1].turn:
            out[-1] += f"+{item.text}"
        else:
            out.append(item.text)
    return out


def test_a_group_reader_converts_a_run_once_and_again_only_when_it_grows() -> None:
    reader, runs = _counting_reader()
    items = [TurnItem("u0", False), TurnItem("r1", True), TurnItem("c1", True), TurnItem("o1", False)]
    first = reader.read(items)
    assert _texts(first) == ["u0", "r1+c1", "o1"] and runs == [["u0"], ["r1", "c1"], ["o1"]]
    items = [*items, TurnItem("r2", True)]
    second = reader.read(items)
    assert runs[3:] == [["r2"]] and all(a is b for a, b in zip(first, second[:3], strict=True))
    items = [*items, TurnItem("m2", True)]  # joins the run the last read ended with: that run is cut and read again
    third = reader.read(items)
    assert runs[4:] == [["r2", "m2"]] and _texts(third) == ["u0", "r1+c1", "o1", "r2+m2"]
    assert reader.same == 5 and third[1] is first[1]
    origin = reader.origin(third[1])
    assert origin is not None and origin[0] == (items[1], items[2]) and origin[1] == (third[1],)


def test_a_group_reader_takes_equal_copies_and_a_moved_run_without_converting() -> None:
    reader, runs = _counting_reader()
    items = [TurnItem("u0", False), TurnItem("r1", True), TurnItem("c1", True), TurnItem("o1", False)]
    first = reader.read(items)
    copies = [TurnItem(i.text, i.turn) for i in items]  # a store's items decoded again: new, equal objects
    again = reader.read([*copies, TurnItem("u2", False)])
    assert runs[3:] == [["u2"]] and all(a is b for a, b in zip(first, again[:3], strict=True))
    assert reader.latest[1] is items[1]  # the object read stands for its copy
    written = [TurnItem("summary", False), items[1], items[2], TurnItem("u2", False)]  # compacted, written back
    out = reader.read(written)
    assert _texts(out) == ["summary", "r1+c1", "u2"] and out[1] is first[1]
    assert runs[4:] == [["summary"], ["u2"]]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["turn", "other", "copy", "replace", "drop", "compact"]), st.integers(0, 30), st.booleans()
        )
    )
)
def test_group_reading_step_by_step_equals_a_fresh_read(steps: list[tuple[str, int, bool]]) -> None:
    """Whatever the history does between requests (items of a model turn or others appended, the whole history
    decoded again as equal copies, an item replaced, items dropped, a compacted history written back with some of
    the very items read), the incremental read gives the runs and messages a fresh reader gives."""
    reader = GroupReader(_run_convert, _joins)
    items: list[TurnItem] = [TurnItem("start", False)]
    for made, (op, k, turn) in enumerate(steps):
        if op in ("turn", "other"):
            items = [*items, TurnItem(f"new{made}", op == "turn")]
        elif op == "copy":
            items = [TurnItem(o.text, o.turn) for o in items]
        elif op == "replace" and items:
            items = list(items)
            items[k % len(items)] = TurnItem(f"replaced{made}", turn)
        elif op == "drop":
            items = items[: k % (len(items) + 1)]
        elif op == "compact":
            items = [TurnItem(f"summary{made}", False), *items[k % (len(items) + 1) :]]
        fresh = GroupReader(_run_convert, _joins)
        assert _texts(reader.read(items)) == _texts(fresh.read(items)) == _expected(items)


class Unreadable(Exception):
    """What a framework's format raises for an object it cannot read."""


def _failing_value_convert(items: Sequence[ValueItem], i: int) -> tuple[Message, ...]:
    if items[i].text.startswith("bad"):
        raise Unreadable(items[i].text)
    return _value_convert(items, i)


def _failing_run_convert(run: Sequence[TurnItem]) -> tuple[Message, ...]:
    if any(i.text.startswith("bad") for i in run):
        raise Unreadable(run[0].text)
    return _run_convert(run)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["append", "turn", "bad", "copy", "drop"]), st.integers(0, 30))))
def test_after_an_object_that_cannot_be_read_the_next_read_is_a_fresh_one(steps: list[tuple[str, int]]) -> None:
    """A conversion that raises (an object the format cannot read, offered once and then dropped or fixed by the
    caller) leaves neither reader holding a half-made read, although both edit their lists in place as they go: the
    next read gives what a fresh reader gives."""
    reader = ObjectReader(_failing_value_convert, snapshot=lambda o: o.text, recheck=1)
    runs = GroupReader(_failing_run_convert, _joins)
    values: list[ValueItem] = [ValueItem("start")]
    turns: list[TurnItem] = [TurnItem("start", False)]
    for made, (op, k) in enumerate(steps):
        if op in ("append", "turn"):
            values = [*values, ValueItem(f"new{made}")]
            turns = [*turns, TurnItem(f"new{made}", op == "turn")]
        elif op == "bad":
            with pytest.raises(Unreadable):
                reader.read([*values, ValueItem(f"bad{made}")])
            with pytest.raises(Unreadable):
                runs.read([*turns, TurnItem(f"bad{made}", k % 2 == 0)])
        elif op == "copy":
            values = [ValueItem(o.text) for o in values]
            turns = [TurnItem(o.text, o.turn) for o in turns]
        elif op == "drop":
            values, turns = values[: k % (len(values) + 1)], turns[: k % (len(turns) + 1)]
        assert _texts(reader.read(values)) == [o.text for o in values]
        assert _texts(runs.read(turns)) == _expected(turns)


def test_reading_the_readers_own_latest_list_keeps_it_whole() -> None:
    """`latest` is the reader's own list, kept in place: reading it back (an integration that hands the reader what
    it read last) must not cut it while it is extended."""
    reader = ObjectReader(_value_convert, recheck=1)
    items = [ValueItem(f"m{i}") for i in range(5)]
    reader.read(items)
    assert _texts(reader.read(reader.latest)) == [o.text for o in items] and len(reader.latest) == 5
    runs = GroupReader(_run_convert, _joins)
    turns = [TurnItem("u", False), TurnItem("a", True), TurnItem("b", True), TurnItem("o", False)]
    runs.read(turns)
    runs.read([*turns, TurnItem("x", True)])
    assert _texts(runs.read(runs.latest)) == ["u", "a+b", "o", "x"] and len(runs.latest) == 5
