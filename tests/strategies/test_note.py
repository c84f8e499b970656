"""The note that stands for what left the context without a summary says what it held (issue 21)."""

from __future__ import annotations

from collections.abc import Sequence

from chainsum.chain import RecordBlock
from chainsum.messages import Message, ToolCall, ToolResult
from chainsum.strategies import NOTE_CHARS, Carried, archive_note, blocks_lines, messages_lines
from chainsum.strategies._note import note_chars, note_tokens
from chainsum.testing.record_content import carries_nothing, message_words
from chainsum.tokens import HeuristicCounter


def _agent_span() -> list[Message]:
    call = ToolCall(id="c1", name="Bash", arguments='{"command": "bd show spotter-gqc.1 2>/dev/null"}')
    read = ToolCall(id="c2", name="Read", arguments='{"file_path": "/srv/app/lib/session_live.ex"}')
    return [
        Message.of("user", "Implement spotter-gqc, the three tasks of the epic, then push the branch"),
        Message.of("assistant", "Let me look.", call, read),
        Message(role="tool", parts=(ToolResult(call_id="c1", content="ok"), ToolResult(call_id="c2", content="x"))),
        Message.of("user", "<task-notification> a background task finished </task-notification>"),
        Message.of("user", "Also run the tests before you push"),
    ]


def test_a_note_of_evicted_messages_names_their_requests_and_calls() -> None:
    span = _agent_span()
    note = archive_note(len(span), messages_lines(span))
    assert note.depth == 0 and note.messages == 5
    lines = note.text.splitlines()
    assert lines[0] == "5 earlier message(s) were moved to the archive without a summary."
    assert "- Implement spotter-gqc, the three tasks of the epic, then push the branch" in lines
    assert "- Also run the tests before you push" in lines
    assert "- Bash bd show spotter-gqc.1 2>/dev/null" in lines
    assert "- Read /srv/app/lib/session_live.ex" in lines
    assert not any("task-notification" in line for line in lines)  # the harness's notice is not a request
    assert not carries_nothing(note.text, message_words(span))


def test_a_note_keeps_the_first_request_and_the_newest_within_its_room() -> None:
    span = [Message.of("user", f"request number {k} about ticket APP-{k} " + "word " * 10) for k in range(60)]
    note = archive_note(60, messages_lines(span))
    assert len(note.text) <= NOTE_CHARS + 100
    assert HeuristicCounter().count_text(note.text) + 30 <= note_tokens(NOTE_CHARS)
    assert "request number 0 about" in note.text and "request number 59 about" in note.text
    assert "more)" in note.text  # how many were left out between them


def test_dropped_blocks_carry_on_the_requests_they_listed() -> None:
    summary = RecordBlock(
        id="sum_a",
        depth=1,
        messages=12,
        text="State snapshot (extractive) of 12 message(s).\n\nUser requests:\n- Fix the nightly build APP-1000\n\n"
        "Actions taken:\n- $ pytest -q (exit 1)\n\nIdentifiers:\n- APP-1000",
    )
    free_text = RecordBlock(id="sum_b", depth=1, messages=4, text="The user wants the login page redesigned.")
    earlier = archive_note(3, Carried(("Set up the repository",), ("Bash git clone x",)))
    carried = blocks_lines([earlier, summary, free_text])
    requests, tools = list(carried.requests), list(carried.actions)
    assert requests == [
        "Set up the repository",
        "Fix the nightly build APP-1000",
        "(summary) The user wants the login page redesigned.",
    ]
    assert tools == ["Bash git clone x", "$ pytest -q (exit 1)"]
    assert carried.identifiers == ("APP-1000",)
    note = archive_note(19, carried)
    assert "- Set up the repository" in note.text and "- Fix the nightly build APP-1000" in note.text
    assert "Identifiers:\n- APP-1000" in note.text


def _chat_summary(name: str, places: Sequence[str]) -> RecordBlock:
    listed = "\n".join(f"- {p}" for p in places)
    head = f"State snapshot (extractive) of 8 message(s).\n\nUser requests:\n- Hi, I am {name}"
    text = f"{head}\n\nIdentifiers:\n{listed}"
    return RecordBlock(id=f"sum_{name}", depth=1, messages=8, text=text)


def test_a_note_standing_for_chat_summaries_keeps_what_they_listed_newest_first() -> None:
    # at a 1,000-token window a chat's record reaches the depth cap every few compactions: a note that kept only the
    # requests lost the names and places its summaries had listed (memorybank kept fewer facts than truncation)
    older = _chat_summary("Linda", ["Madrid", "Granada", "2023-05-05"])
    newer = _chat_summary("Linda again", ["Bruno", "Acme Corp"])
    carried = blocks_lines([older, newer])
    assert carried.identifiers == ("Bruno", "Acme Corp", "Madrid", "Granada", "2023-05-05")
    text = archive_note(16, carried).text
    assert text.endswith("Identifiers:\n- Bruno\n- Acme Corp\n- Madrid\n- Granada\n- 2023-05-05"), text
    # a note standing for this one (the depth cap reached again) carries them on
    assert blocks_lines([archive_note(16, carried)]).identifiers[:3] == ("Bruno", "Acme Corp", "Madrid")


def test_identifiers_share_a_note_with_the_actions_and_never_outgrow_its_room() -> None:
    names = [f"ticket APP-{k:04d}" for k in range(200)]
    calls = tuple(f"Bash make target-{k}" for k in range(50))
    for chars in (120, 300, NOTE_CHARS):
        note = archive_note(90, Carried(("Fix the build",), calls, tuple(names)), chars).text
        assert HeuristicCounter().count_text(note) + 30 <= note_tokens(chars)
        if chars >= 300:
            assert "- ticket APP-0000" in note  # the first listed first
            assert "Actions taken:" in note  # the actions keep half of what the requests leave


def test_a_note_of_nothing_to_say_is_its_header() -> None:
    assert archive_note(2, Carried()).text == "2 earlier message(s) were moved to the archive without a summary."


def test_a_small_budget_s_note_says_less_within_what_it_is_counted_at() -> None:
    span = [Message.of("user", f"request number {k} about ticket APP-{k} " + "word " * 10) for k in range(60)]
    for room in (50, 150, 400, 5_000):
        chars = note_chars(room)
        note = archive_note(60, messages_lines(span), chars)
        assert 120 <= chars <= NOTE_CHARS
        assert HeuristicCounter().count_text(note.text) + 30 <= note_tokens(chars)
        assert "request number 0 about" in note.text  # the session's first request, always
