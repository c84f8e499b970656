"""`detect_summarization(before, after)`: the spec's "summarization detection logic" tests, and each summary form
chainsum writes."""

from __future__ import annotations

import pytest

from chainsum.chain import SUMMARIZED_CONTENT_PREFIX, BodyPair, SummaryForm, is_summary_message, summary_messages
from chainsum.manager import detect_summarization
from chainsum.messages import Message, Opaque
from chainsum.tokens import HeuristicCounter


def history(n_turns: int, *, system: bool = True) -> list[Message]:
    out: list[Message] = [Message.of("system", "You are helpful.")] if system else []
    for i in range(n_turns):
        out.append(Message.of("user", f"question {i}: " + "please look at the file parser.py " * 20))
        out.append(Message.of("assistant", f"answer {i}: " + "the parser handles the edge case " * 20))
    return out


def compacted(before: list[Message], form: SummaryForm, keep: int = 4) -> list[Message]:
    """What a strategy would produce: the system prompt, the summary of the middle, the last `keep` messages."""
    replaced = before[1:-keep]
    return [
        before[0],
        *summary_messages("The user asked about parser.py; it was fixed.", form, replaced),
        *before[-keep:],
    ]


# the spec's cases ----------------------------------------------------------------------------------------------------
def test_no_change_is_not_a_summarization() -> None:
    h = history(6)
    assert detect_summarization(h, list(h)) is None


def test_appended_messages_are_not_a_summarization() -> None:
    h = history(6)
    assert detect_summarization(h, [*h, Message.of("user", "more"), Message.of("assistant", "ok")]) is None


def test_empty_histories() -> None:
    assert detect_summarization([], []) is None
    assert detect_summarization([], history(1)) is None


@pytest.mark.parametrize("form", ["system", "pair", "completion", "snapshot", "user"])
def test_each_chainsum_summary_form_is_detected(form: SummaryForm) -> None:
    before = history(8)
    after = compacted(before, form)
    ev = detect_summarization(before, after, session_id="abc123", user_id="u1")
    assert ev is not None
    assert ev.reason == "detected"
    assert ev.session_id == "abc123"
    assert ev.user_id == "u1"
    assert ev.messages_before == len(before)
    assert ev.messages_after == len(after)
    assert ev.messages_compressed == len(before) - 1 - 4
    assert ev.tokens_before > ev.tokens_after > 0
    assert "parser.py" in ev.summary_text
    assert ev.timestamp.endswith("+00:00")
    assert ev.depth == 1


def test_counts_use_the_given_counter() -> None:
    before = history(8)
    after = compacted(before, "system")
    counter = HeuristicCounter()
    ev = detect_summarization(before, after, counter=counter)
    assert ev is not None
    assert ev.tokens_before == counter.count_messages(before)
    assert ev.tokens_after == counter.count_messages(after)


def test_the_new_turn_after_compaction_does_not_hide_the_reduction() -> None:
    """`after` is read after the agent's turn: it holds the compacted history plus the new messages."""
    before = history(8)
    compact = compacted(before, "system")
    new_turn = [Message.of("user", "and now? " * 400), Message.of("assistant", "done " * 400)]
    ev = detect_summarization(before, [*compact, *new_turn])
    assert ev is not None
    assert ev.tokens_after == HeuristicCounter().count_messages(compact)
    assert ev.messages_after == len(compact) + 2


def test_system_summary_depth_is_read_from_its_tag() -> None:
    before = history(8)
    after = [before[0], Message.of("system", "[chainsum summary depth=3]\nolder things"), *before[-4:]]
    ev = detect_summarization(before, after)
    assert ev is not None
    assert ev.depth == 3
    assert ev.summary_text == "older things"


def test_an_existing_summary_is_not_detected_again() -> None:
    before = compacted(history(8), "system")
    after = [*before, Message.of("user", "next"), Message.of("assistant", "sure")]
    assert detect_summarization(before, after) is None


def test_a_sliding_window_trim_is_not_a_summarization() -> None:
    before = history(8)
    assert detect_summarization(before, [before[0], *before[-6:]]) is None
    assert detect_summarization(before, before[5:]) is None


def test_a_foreign_summary_at_the_front_is_detected() -> None:
    """Strands' SummarizingConversationManager puts its summary first, as a plain user message."""
    before = history(8, system=False)
    summary = Message.of("user", "Conversation summary: the parser was fixed.")
    after = [summary, *before[-6:]]
    ev = detect_summarization(before, after)
    assert ev is not None
    assert ev.messages_compressed == len(before) - 6
    assert ev.summary_text == "Conversation summary: the parser was fixed."
    assert detect_summarization(before, after, require_marker=True) is None


def test_the_spec_shape_fewer_messages_after() -> None:
    """The spec's own test: a shorter history after the run, with the summary first."""
    before = history(10, system=False)
    after = [Message.of("assistant", SUMMARIZED_CONTENT_PREFIX + "summary"), *before[-4:]]
    ev = detect_summarization(before, after)
    assert ev is not None
    assert len(after) < len(before)
    assert ev.tokens_before - ev.tokens_after > 0
    assert ev.summary_text == "summary"


def test_messages_with_unhashable_opaque_parts_are_compared_by_value() -> None:
    opaque = Message(role="assistant", parts=(Opaque(format="anthropic", data={"type": "server_tool_use"}),))
    before = [*history(6), opaque, Message.of("user", "go on")]
    after = compacted(before, "system")
    ev = detect_summarization(before, after)
    assert ev is not None
    assert detect_summarization(before, [*before, Message.of("assistant", "ok")]) is None


# recognising summaries -----------------------------------------------------------------------------------------------
def test_is_summary_message_recognises_every_form_and_nothing_else() -> None:
    pair = BodyPair.from_summarization("s").messages()
    assert all(is_summary_message(m) for m in pair)
    for form in ("system", "completion", "snapshot", "user"):
        (m,) = summary_messages("s", form, [])
        assert is_summary_message(m), form
    for m in history(3):
        assert not is_summary_message(m)
    assert not is_summary_message(Message.of("system", "[chainsum notes] not a summary"))
    assert not is_summary_message(Message(role="assistant", parts=()))
