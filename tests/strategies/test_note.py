"""The note that stands for what left the context without a summary says what it held (issue 21)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.chain import RecordBlock
from chainsum.messages import Message, ToolCall, ToolResult
from chainsum.strategies import NOTE_CHARS, Carried, archive_note, blocks_lines, messages_lines
from chainsum.strategies._note import note_chars, note_tokens
from chainsum.testing.record_content import carries_nothing, content_words, message_words
from chainsum.tokens import HeuristicCounter
from generators import identifier_histories


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


def _codex_step(step: int, command: str, status: int) -> list[Message]:
    call = ToolCall(id=f"call_{step}", name="exec_command", arguments=f'{{"cmd":"{command}","workdir":"/w"}}')
    tail = f"\nerror: step {step} of `{command}` stopped early" if status else ""
    output = f"Chunk ID: 1a2b3c\nWall time: 0.31 seconds\nProcess exited with code {status}\nOutput:\n1\n2\n3{tail}"
    return [Message.of("assistant", call), Message(role="tool", parts=(ToolResult(call_id=call.id, content=output),))]


def test_a_note_says_how_each_command_ended_and_the_error_line_of_a_failed_one() -> None:
    span = [*_codex_step(1, "seq 15 2970", 1), *_codex_step(2, "seq 29 2972", 0)]
    lines = archive_note(len(span), messages_lines(span)).text.splitlines()
    assert "- exec_command seq 15 2970 (exit 1)" in lines and "- exec_command seq 29 2972 (exit 0)" in lines
    assert "- (seq 15 2970) error: step 1 of `seq 15 2970` stopped early" in lines
    small = archive_note(len(span), messages_lines(span), note_chars(0)).text  # the least room: the first of each
    assert "- exec_command seq 15 2970 (exit 1)" in small and "- (seq 15 2970) error: step 1" in small, small


def test_a_dropped_summary_that_listed_only_an_error_line_is_carried_on_by_its_note() -> None:
    """Issue 21: a Codex session at a 12K window (seed 33, 8 steps, 3K-token outputs) summarized its first step in
    30 tokens, an error line and nothing else, then dropped that block past the window; the note, carrying on
    requests, actions and identifiers only, was its header alone."""
    text = "State snapshot (extractive) of 2 message(s).\n\nErrors:\n- (seq 15 2970) error: step 1 of `..."
    block = RecordBlock(id="sum_x", depth=1, messages=2, text=text)
    note = archive_note(2, blocks_lines([block]), note_chars(120)).text
    assert "Errors:\n- (seq 15 2970) error: step 1 of `..." in note, note
    assert not carries_nothing(note, content_words(text))


def test_a_note_of_a_harness_notice_alone_says_what_it_was() -> None:
    notice = "<environment_context>\n  <cwd>/home/user/work</cwd>\n  <shell>bash</shell>\n</environment_context>"
    span = [Message.of("user", notice)]
    note = archive_note(1, messages_lines(span), note_chars(120)).text
    assert note.splitlines()[1:] == [
        "Messages:",
        "- user: <environment_context> <cwd>/home/user/work</cwd> <shell>bash</shell> </environment_context>",
    ]
    assert not carries_nothing(note, message_words(span))


def test_a_harness_notice_merged_with_the_task_leaves_the_task_a_request() -> None:
    # consecutive user messages are merged: Codex's environment and the user's task come as one message
    span = [Message.of("user", "<environment_context><cwd>/w</cwd></environment_context>", "Grep the build output")]
    assert messages_lines(span).requests == ("Grep the build output",)


_TITLES = ("User requests:", "Assistant decisions and conclusions:", "Actions taken:", "Files read and written:")
_WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=12)


@st.composite
def _summary_blocks(draw: st.DrawFn) -> RecordBlock:
    """An extractive summary's text (its header, then sections of ``- `` items, maybe "(n more items left out for
    length)"), or a free-text summary."""
    lines = [f"State snapshot (extractive) of {draw(st.integers(1, 90))} message(s)."]
    titles = draw(st.lists(st.sampled_from((*_TITLES, "Errors:", "Identifiers:")), min_size=1, max_size=4, unique=True))
    for title in titles:
        items = draw(st.lists(st.lists(_WORD, min_size=1, max_size=12).map(" ".join), min_size=1, max_size=5))
        lines += ["", title, *(f"- {i}" for i in items)]
    if draw(st.booleans()):
        lines += ["", f"({draw(st.integers(1, 900))} more items left out for length)"]
    text = "\n".join(lines) if draw(st.booleans()) else " ".join(draw(st.lists(_WORD, min_size=1, max_size=30)))
    return RecordBlock(id="sum_p", depth=draw(st.integers(1, 3)), messages=4, text=text)


@settings(max_examples=60, deadline=None)
@given(st.lists(_summary_blocks(), min_size=1, max_size=4), st.integers(0, 5_000))
def test_a_note_standing_for_summaries_carries_some_of_their_words(blocks: list[RecordBlock], room: int) -> None:
    """What no record written may do (`chainsum.testing.record_content.carries_nothing`): a note standing for
    summaries that said something names something they said, whatever its room."""
    note = archive_note(sum(b.messages for b in blocks), blocks_lines(blocks), note_chars(room)).text
    assert not carries_nothing(note, content_words("\n".join(b.text for b in blocks))), note
    assert HeuristicCounter().count_text(note) <= note_tokens(note_chars(room))  # the text; its framing: about 30


@settings(max_examples=60, deadline=None)
@given(identifier_histories(), st.data(), st.integers(0, 5_000))
def test_a_note_standing_for_messages_carries_some_of_their_words(
    history: list[Message], data: st.DataObject, room: int
) -> None:
    """The same for a span of messages moved to the archive: users asking, tools run, assistants answering."""
    start = data.draw(st.integers(0, len(history) - 1))
    span = history[start : data.draw(st.integers(start + 1, len(history)))]
    note = archive_note(len(span), messages_lines(span), note_chars(room)).text
    assert not carries_nothing(note, message_words(span)), note
    assert HeuristicCounter().count_text(note) <= note_tokens(note_chars(room))  # the text; its framing: about 30
