"""The check of a model's summary against its span (`check_summary`): what a lazy model dropped comes back from the
extractive digest, within the room; what a good model said is not repeated."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.chain import is_record_message
from chainsum.executor import compact_sync
from chainsum.messages import Message, Text, ToolCall, ToolResult
from chainsum.strategies import AutoStrategy
from chainsum.summarize import CHECKED_TITLE, ExtractiveSummarizer, check_summary, is_extractive, is_local
from chainsum.testing import ScriptedSummarizer
from chainsum.testing.coding import DIALECTS, coding_span
from chainsum.tokens import HeuristicCounter

LAZY = "The user and assistant talked."
REQUEST = "Add a source attribute to the annotation resource in lib/spotter/transcripts/annotation.ex, tests passing"
ERROR = "** (CompileError) lib/spotter/transcripts/annotation.ex:12: undefined function attribute/2"
COUNTER = HeuristicCounter()


def _step(n: int, name: str, args: dict[str, object], output: str, *, error: bool = False) -> list[Message]:
    """One Claude Code step: a ``tool_use`` and its ``tool_result`` (``is_error`` when it failed)."""
    call_id = f"toolu_01Ab{n}Cd3fGh5jKl7mNp9qRs"
    call = ToolCall(id=call_id, name=name, arguments=json.dumps(args))
    return [
        Message(role="assistant", parts=(Text(text=f"Step {n}: on to the next check."), call)),
        Message(role="tool", parts=(ToolResult(call_id=call_id, content=output, is_error=error),)),
    ]


def agent_span() -> list[Message]:
    """A Claude Code span: a request, a Read, an Edit, a Write, a passing and a failing ``Bash``."""
    path = "/home/user/spotter/lib/spotter/transcripts/annotation.ex"
    test = "/home/user/spotter/test/annotation_test.exs"
    failing = f"Exit code 1\n{ERROR}\n" + "x\n" * 40
    return [
        Message.of("user", REQUEST),
        *_step(1, "Read", {"file_path": path}, "defmodule Spotter.Annotation do\n" * 60),
        *_step(2, "Edit", {"file_path": path, "old_string": "a", "new_string": "b"}, "The file has been updated."),
        *_step(3, "Write", {"file_path": test, "content": "x"}, "File created"),
        *_step(4, "Bash", {"command": "mix compile --warnings-as-errors 2>&1"}, "Compiling 3 files (.ex)\n" * 40),
        *_step(5, "Bash", {"command": "mix test test/annotation_test.exs"}, failing, error=True),
    ]


def test_a_lazy_summary_gets_the_request_files_commands_outcome_and_error_line_back() -> None:
    span = agent_span()
    result = check_summary(LAZY, span, room_tokens=2000)
    text = result.text
    assert text.startswith(LAZY)
    assert CHECKED_TITLE in text
    assert REQUEST in text
    assert "lib/spotter/transcripts/annotation.ex (read, edited)" in text
    assert "test/annotation_test.exs (written)" in text
    assert "$ mix test test/annotation_test.exs (exit 1)" in text
    assert "$ mix compile --warnings-as-errors 2>&1 (done)" in text
    assert ERROR in text
    assert set(result.added) == set(result.missing)


def test_a_good_summary_gets_nothing_appended() -> None:
    """Matched leniently: a path by its file name, a command by its words, an error by its name, a request by most
    of its words."""
    good = (
        "The user asked to add a source attribute to the annotation resource (annotation.ex) and make the tests "
        "pass. The assistant read and edited annotation.ex, wrote annotation_test.exs, ran mix compile "
        "--warnings-as-errors (clean) and mix test test/annotation_test.exs, which failed with a CompileError."
    )
    result = check_summary(good, agent_span(), room_tokens=2000)
    assert result.text == good
    assert result.missing == ()


def test_what_is_appended_stays_in_the_room_and_under_the_span() -> None:
    span = agent_span()
    for room in (20, 60, 120, 250, 10_000):
        result = check_summary(LAZY, span, room_tokens=room)
        assert COUNTER.count_text(result.text) <= max(room, COUNTER.count_text(LAZY))
        assert COUNTER.count_text(result.text) < COUNTER.count_messages(span)
    small = check_summary(LAZY, span, room_tokens=60).added
    large = check_summary(LAZY, span, room_tokens=250).added
    assert len(small) < len(large)


def test_a_summary_already_over_its_room_is_left_as_it_is() -> None:
    long = "The user and assistant talked at length. " * 40
    result = check_summary(long, agent_span(), room_tokens=50)
    assert result.text == long
    assert result.added == ()
    assert result.missing


def test_the_identifiers_the_newest_turn_names_come_back() -> None:
    span = [
        Message.of("user", "Look up the refund for my order, please."),
        Message.of("assistant", "I found order ORD-77310 and refund RF-20931; the refund is pending."),
    ]
    newest = [Message.of("user", "Why is RF-20931 still pending?")]
    result = check_summary("The user asked about a refund.", span, room_tokens=500, newest=newest)
    assert "RF-20931" in result.text
    assert "ORD-77310" not in result.added  # not named by the newest turn


def test_checking_a_checked_summary_adds_nothing() -> None:
    span = agent_span()
    once = check_summary(LAZY, span, room_tokens=2000).text
    assert check_summary(once, span, room_tokens=2000).text == once


def test_extractive_output_and_local_summarizers_are_recognised() -> None:
    summarizer = ExtractiveSummarizer()
    assert is_local(summarizer)
    assert not is_local(ScriptedSummarizer())
    assert is_extractive(summarizer.summarize_messages(agent_span(), "ai"))
    assert not is_extractive(LAZY)


def test_is_local_ends_on_an_object_that_makes_its_attributes_up() -> None:
    """`unittest.mock.Mock` answers every ``inner`` with a new object: the walk is bounded (it hung an adapter's
    constructor given a Mock), and a Mock is no model-free summarizer."""
    from unittest.mock import Mock

    assert not is_local(Mock())

    class Wrapper:
        def __init__(self, inner: object) -> None:
            self.inner = inner

    assert is_local(Wrapper(Wrapper(ExtractiveSummarizer())))


def _records(messages: tuple[Message, ...]) -> list[str]:
    return [m.text for m in messages if is_record_message(m)]


def _session() -> list[Message]:
    return [*agent_span(), Message.of("user", "Now fix it."), Message.of("assistant", "On it.")]


def test_compact_checks_a_model_summary_where_it_becomes_the_record() -> None:
    session = _session()
    result = compact_sync(
        session, AutoStrategy(), summarizer=ScriptedSummarizer([LAZY], repeat=True), counter=COUNTER, budget=400
    )
    (record,) = _records(result.messages)
    assert LAZY in record and CHECKED_TITLE in record
    assert "Add a source attribute" in record
    assert "$ mix test test/annotation_test.exs (exit 1)" in record or "mix test test/annotation_test.exs" in (
        m.text for m in result.messages if not is_record_message(m)
    )
    assert result.tokens_after <= 400


def test_compact_does_not_check_the_extractive_summary_nor_when_asked_not_to() -> None:
    session = _session()
    extractive = compact_sync(session, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=COUNTER, budget=400)
    assert all(CHECKED_TITLE not in r for r in _records(extractive.messages))
    unchecked = compact_sync(
        session,
        AutoStrategy(),
        summarizer=ScriptedSummarizer([LAZY], repeat=True),
        counter=COUNTER,
        budget=400,
        check_summaries=False,
    )
    assert all(CHECKED_TITLE not in r for r in _records(unchecked.messages))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), dialect=st.sampled_from(DIALECTS), room=st.integers(40, 3000))
def test_over_generated_spans_the_check_keeps_to_its_room_and_a_roomy_one_names_the_work(
    seed: int, dialect: str, room: int
) -> None:
    span = coding_span(seed, dialect=dialect)  # type: ignore[arg-type]
    messages = list(span.messages)
    result = check_summary(LAZY, messages, room_tokens=room)
    assert COUNTER.count_text(result.text) <= max(room, COUNTER.count_text(LAZY))
    roomy = check_summary(LAZY, messages, room_tokens=100_000).text
    for command in span.commands:
        assert command in roomy, command
    for path in span.paths:
        assert path in roomy, path
    for error in span.errors:
        assert error in roomy, error
    assert span.requests[0][:40] in roomy
