"""What "a record that carries nothing" means, on the records issue 21 saw and on ones that say something."""

from __future__ import annotations

from chainsum.messages import Message, ToolCall
from chainsum.testing.record_content import carries_nothing, content_words, message_words

_SPAN = [
    Message.of("user", "Implement spotter-gqc"),
    Message.of(
        "assistant", "Checking.", ToolCall(id="c", name="Bash", arguments='{"command": "bd show spotter-gqc.1"}')
    ),
]


def test_the_records_issue_21_saw_carry_nothing() -> None:
    words = message_words(_SPAN)
    assert carries_nothing("4 earlier message(s) were moved to the archive without a summary.", words)
    assert carries_nothing("State snapshot (extractive) of 2 message(s). (4 more items left out for length)", words)
    assert carries_nothing(
        "State snapshot (extractive) of 2 message(s).\n\n(110 more items left out for length)", words
    )
    assert carries_nothing("State snapshot (extractive) of 55 message(s).\nNo text content.", words)


def test_a_record_naming_something_of_its_span_carries_it() -> None:
    words = message_words(_SPAN)
    assert not carries_nothing("State snapshot (extractive) of 2 message(s).\n\nActions taken:\n- $ bd show", words)
    assert not carries_nothing(
        "2 earlier message(s) were moved to the archive without a summary.\nUser requests:\n- Implement spotter-gqc",
        words,
    )
    assert content_words("User requests:\n- Implement spotter-gqc") == {"implement", "spotter", "gqc"}


def test_words_of_tool_calls_and_output_count() -> None:
    words = message_words(_SPAN)
    assert {"bash", "command", "show", "checking"} <= words
