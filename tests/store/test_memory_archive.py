"""`MemoryArchive`'s search: every word of a message is found, and archiving does not pay for indexing."""

from __future__ import annotations

from chainsum.messages import Message, ToolResult
from chainsum.store import MemoryArchive


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
