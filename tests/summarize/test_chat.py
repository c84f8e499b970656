"""Chat facts (`chainsum.summarize._chat`): the names a person states are identifiers of a chat summary, but never a
word an identifier of the line holds already (the month of a date) nor a word that is no name ("My"); a client's tag
before a message (a session's date) is not what the person stated; and a summary folded into the next one keeps
the names it listed, in its order, ahead of the dates."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chainsum.chain import new_block, record_message
from chainsum.messages import Message
from chainsum.summarize import ExtractiveSummarizer
from chainsum.summarize import render_transcript as render
from chainsum.summarize._chat import names, split_tag
from chainsum.summarize._identifiers import combined_matches
from chainsum.testing import corpora_root
from chainsum.testing.chat_facts import contains, memorybank_chats, prepared_without_recall, stated_facts, truncated
from chainsum.tokens import HeuristicCounter


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
@example(["28", "March", "March", "March"])  # the name "March March" overlaps the date's "March March"
@example(["on", "My", "My", "March", "28"])  # cut before the date, the run left "My My"
def test_a_name_is_never_inside_an_identifier_nor_only_words_that_are_no_names(words: list[str]) -> None:
    line = " ".join(words)
    taken = [m.span() for m in combined_matches(line)]
    for name in names(line):
        # somewhere in the line as its own text, not inside an identifier's span ("on March March 28": the first
        # "March" is a name, the second is part of the date); every occurrence, overlapping ones too ("28 March
        # March March": the name is the last two words, and the first two, inside the date, match it as well)
        starts = [m.start() for m in re.finditer(f"(?={re.escape(name)})", line)]
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


def _identifiers(summary: str) -> list[str]:
    block = summary.split("Identifiers:\n", 1)[1] if "Identifiers:\n" in summary else ""
    return [line[2:] for line in block.split("\n") if line.startswith("- ")]


def test_a_tag_is_a_short_bracketed_prefix_with_text_after_it() -> None:
    assert split_tag("[2023-05-05] Hi friend. I'm Linda.") == ("[2023-05-05] ", "Hi friend. I'm Linda.")
    assert split_tag("[#general] we moved to Lisbon") == ("[#general] ", "we moved to Lisbon")
    # a placeholder or a note alone on its line is no tag: nothing a person wrote follows it
    assert split_tag("[image]") == ("", "[image]")
    assert split_tag("[Request interrupted by user]") == ("", "[Request interrupted by user]")
    assert split_tag("no tag [here] at all") == ("", "no tag [here] at all")
    assert split_tag("[" + "x" * 60 + "] text")[0] == ""  # too long for a tag: text in brackets


def _dated_chat(days: int) -> list[Message]:
    """A companion chat of `days` sessions, each opened with its date as a tag (as memorybank's are rendered), the
    user stating a place on the first line of each session."""
    places = ["Madrid", "Granada", "Kyoto", "Oaxaca", "Tallinn", "Valparaiso", "Zanzibar", "Bergen"]
    chat: list[Message] = []
    for day in range(days):
        place = places[day % len(places)]
        chat += [
            Message.of("user", f"[2023-05-{day + 1:02d}] Hi friend, next month I travel to {place} with my sister."),
            Message.of("assistant", f"How lovely, {place} in the spring is a fine idea. What will you see there?"),
        ]
    return chat


def test_the_names_after_a_tag_are_the_users_and_the_tags_dates_come_after_them() -> None:
    # a line opening with "[" was read whole as a placeholder: the place stated after the session's date was no
    # identifier, and the dates (a digit each, every session one more) filled the list
    summary = ExtractiveSummarizer().summarize_text(render(_dated_chat(6), "human", target_tokens=120))
    listed = _identifiers(summary)
    places = [x for x in listed if not x[0].isdigit()]
    assert {"Madrid", "Granada", "Kyoto", "Oaxaca", "Tallinn", "Valparaiso"} <= set(places), summary
    dates = [listed.index(x) for x in listed if x.startswith("2023-")]
    assert all(listed.index(p) < min(dates, default=len(listed)) for p in places), summary


def test_a_folded_summary_keeps_the_names_it_listed_in_its_order() -> None:
    # Read back as text, a listed name weighed 2 and a date 3: each fold put the dates first, and a companion chat at
    # a 1,000-token window ended with a record of its session dates and none of the places the user had planned.
    summarizer = ExtractiveSummarizer()
    chat = _dated_chat(8)
    first = summarizer.summarize_text(render(chat[:8], "human", target_tokens=120))
    earlier = [x for x in _identifiers(first) if not x.startswith("2023-")]
    assert set(earlier) == {"Madrid", "Granada", "Kyoto", "Oaxaca"}, first
    record = record_message([new_block(first, chat[:8])])
    folded = summarizer.summarize_text(render([record, *chat[8:]], "human", target_tokens=120))
    listed = _identifiers(folded)
    assert {*earlier, "Tallinn", "Valparaiso", "Zanzibar", "Bergen"} <= set(listed), folded
    # in the order the earlier summary listed them (but "Madrid": the request it lists names it too, a mention more)
    rest = [x for x in earlier if x != "Madrid"]
    assert [x for x in listed if x in rest] == rest, folded


def test_the_names_in_a_request_an_earlier_summary_listed_stay_identifiers() -> None:
    # the note standing for summaries moved to the archive keeps their requests, not their identifiers: a fold
    # reading "I want to go to Spain ... Madrid, Barcelona" back as a request only kept the names while the request
    # itself fit
    earlier = "State snapshot (extractive) of 6 message(s).\n\nUser requests:\n- I want to visit Madrid and Granada."
    record = record_message([new_block(earlier, _dated_chat(3))])
    later = [Message.of("user", "Thanks, friend."), Message.of("assistant", "You are welcome.")]
    folded = ExtractiveSummarizer().summarize_text(render([record, *later], "human", target_tokens=60))
    assert {"Madrid", "Granada"} <= set(_identifiers(folded)), folded


_QUESTION = "What do you remember about me?"


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize(
    "window",
    [1000, 2000],
)
def test_memorybank_facts_without_recall_are_at_least_truncations(window: int) -> None:
    """Every memorybank chat fed request by request with recall off keeps, in all, at least as many of the facts
    its user stated as plain truncation at the same window (``bench/bench_summaries.py --parts b``)."""
    chats = memorybank_chats(corpora_root())
    if not chats:
        pytest.skip("the memorybank corpus is not beside the checkout")
    counter = HeuristicCounter()
    ours = theirs = 0
    for messages in chats:
        facts = stated_facts(messages)
        kept = json.dumps(prepared_without_recall(messages, window, _QUESTION), default=str).lower()
        cut = json.dumps(truncated([*messages, {"role": "user", "content": _QUESTION}], window, counter)).lower()
        ours += sum(contains(kept, x) for x in facts)
        theirs += sum(contains(cut, x) for x in facts)
    assert theirs > 0
    assert ours >= theirs, (ours, theirs)
