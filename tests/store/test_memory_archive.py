"""`MemoryArchive`'s search: every word of a message is found, and archiving does not pay for indexing."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from chainsum.messages import Message, ToolResult
from chainsum.store import MemoryArchive
from chainsum.store._schema import indexed_words, searchable_text


def test_search_finds_words_past_the_first_sixty_four() -> None:
    archive = MemoryArchive()
    text = " ".join(f"filler{i}" for i in range(500)) + " ERR-04242 appears late"
    archive.archive_and_record(
        "s", [("m1", Message(role="tool", parts=(ToolResult(call_id="c", content=text),)))], None
    )
    archive.archive_and_record("s", [("m2", Message.of("user", "nothing relevant here"))], None)
    assert [h.message_id for h in archive.search("s", "ERR-04242")] == ["m1"]
    assert [h.message_id for h in archive.search("s", "filler499 late")] == ["m1"]
    archive.archive_and_record("s", [("m3", Message.of("assistant", "ERR-04242 again, and late"))], None)
    assert {h.message_id for h in archive.search("s", "ERR-04242")} == {"m1", "m3"}  # indexed after a search too
    assert archive.search("other", "ERR-04242") == []


@given(st.text(alphabet=st.sampled_from("abcXYZ019_ -.,;:()[]é中—ß\u00a0\t\nÀ\u2028İ\ud800"), max_size=120))
def test_indexed_words_are_the_word_expression_s_words(text: str) -> None:
    """The bytes fast path finds exactly the words ``\\w+`` finds, whatever the script."""
    message = Message.of("user", text)
    assert indexed_words(message) == frozenset(re.findall(r"\w+", searchable_text(message).lower()))


def test_a_word_in_most_messages_does_not_outrank_a_rare_one() -> None:
    archive = MemoryArchive()
    items = [(f"m{i}", Message.of("user", f"the day {i} was fine")) for i in range(300)]
    items.append(("rare", Message.of("user", "the zebra at the zoo was fine")))
    archive.archive_and_record("s", items, None)
    hits = archive.search("s", "the zebra day fine", any_word=True)
    assert hits[0].message_id == "rare"
    assert [h.message_id for h in archive.search("s", "the fine", any_word=True)][:1]  # only common words: still found
