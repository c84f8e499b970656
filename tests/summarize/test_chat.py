"""Chat facts (`chainsum.summarize._chat`): the names a person states are identifiers of a chat summary, but never a
word an identifier of the line holds already (the month of a date) nor a word that is no name ("My")."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from chainsum.messages import Message
from chainsum.summarize import ExtractiveSummarizer
from chainsum.summarize import render_transcript as render
from chainsum.summarize._chat import names
from chainsum.summarize._identifiers import combined_matches


def test_names_leave_out_a_dates_month_and_words_that_are_no_names() -> None:
    assert names("their Lucien's birthday is on March 28, remind me.") == ["Lucien"]
    assert names("the work went My cousin's new dog is called Helena Tobiasson.") == ["Helena Tobiasson"]
    assert names("we are visiting Rome March 28 with Anna") == ["Rome", "Anna"]
    # a month without a day is no identifier: it is what the person said
    assert names("I am moving in March to Rome") == ["March", "Rome"]
    assert names("she is reading The Great Gatsby") == ["The Great Gatsby"]


_WORDS = st.sampled_from(
    ["on", "my", "in", "went", "to", "is", "called", "My", "The", "Rome", "Anna", "Helena", "Tobiasson", "March",
     "June", "28", "12,", "code", "QQ-4321", "remind", "me."]
)  # fmt: skip


@given(st.lists(_WORDS, min_size=1, max_size=30))
def test_a_name_is_never_inside_an_identifier_nor_only_words_that_are_no_names(words: list[str]) -> None:
    line = " ".join(words)
    taken = [m.span() for m in combined_matches(line)]
    for name in names(line):
        # somewhere in the line as its own text, not inside an identifier's span ("on March March 28": the first
        # "March" is a name, the second is part of the date)
        starts = [m.start() for m in re.finditer(re.escape(name), line)]
        assert any(all(s + len(name) <= a or s >= b for a, b in taken) for s in starts), (name, taken)
        assert not set(name.split()) <= {"My", "The"}, name


def test_a_code_stated_once_is_listed_beside_names_and_dates_said_again_and_again() -> None:
    # 8901150 made user-stated names identifiers; each mention adds to an item's weight, so "March" (from every
    # date) and "My" (a sentence that lost its full stop) outranked the one code the user gave, and the summary of
    # this chat left the code out
    facts = [
        "our Lucien's birthday is on March 28, remind me. My locker code is QQ-4321.",
        "so went My cousin's new dog is called Helena Tobiasson.",
        "and Marguerite's birthday is on March 19, remind me.",
        "so went My cousin's new dog is called Dmitri Oskarson.",
        "and Marguerite's birthday is on March 15, remind me.",
        "so went My cousin's new dog is called Ines Margueriteson.",
    ]
    chat: list[Message] = []
    for i, fact in enumerate(facts):
        chat += [Message.of("user", f"Day {i}: about music. {fact}"), Message.of("assistant", "That sounds lovely.")]
    summary = ExtractiveSummarizer().summarize_text(render(chat, "human", target_tokens=120))
    listed = summary.split("Identifiers:")[1].splitlines()
    assert "- QQ-4321" in listed, summary
    assert "- March" not in listed and "- My" not in listed, summary
