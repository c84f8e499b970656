"""Claude Code session logs: golden fixture, turn rebuilding, compaction, the real corpus, hostile input (sniffing
is asked of every format in `test_all_formats`)."""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chainsum.formats
from chainsum.errors import FormatError
from chainsum.formats import DUMPABLE, anthropic, claude_code
from chainsum.messages import Message, Reasoning, Text, ToolCall, ToolResult, messages_to_list
from chainsum.testing.corpora import CorpusDocument
from corpora_support import FULL, documents
from formats.formats_support import FIXTURES_ROOT, read_json
from sampling import examples

FIXTURES = FIXTURES_ROOT / "claude-code"


def _session_text() -> str:
    return (FIXTURES / "session.jsonl").read_text(encoding="utf-8")


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in _session_text().splitlines() if line.strip()]


def _shape(messages: tuple[Message, ...]) -> list[tuple[str, tuple[Any, ...]]]:
    """Role and parts: what survives a conversion (provenance and layout hints do not)."""
    return [(m.role, m.parts) for m in messages]


# ------------------------------------------------------------------------------------------- golden fixture


def test_golden_session() -> None:
    conversation = claude_code.load(_records())
    expected = read_json(FIXTURES / "session.expected.json")
    assert conversation.format == "claude-code"
    assert {"envelope": conversation.envelope, "messages": messages_to_list(conversation.messages)} == expected


def test_golden_session_rebuilds_turns() -> None:
    records = _records()
    messages = claude_code.load(records).messages
    read = ToolCall(id="toolu_1", name="Read", arguments='{"file_path":"/home/u/proj/test_parser.py"}')
    assert _shape(messages) == [
        ("user", (Text(text="Fix the failing test in parser.py"),)),
        (
            "assistant",
            (
                Reasoning(text="Read the test first.", signature="[REDACTED_SIGNATURE]"),
                Text(text="Let me look at the test and the parser."),
                ToolCall(id=read.id, name=read.name, arguments=read.arguments, extras=_caller()),
                ToolCall(
                    id="toolu_2",
                    name="Bash",
                    arguments='{"command":"pytest -q","description":"Run the tests"}',
                    extras=_caller(),
                ),
                ToolCall(id="toolu_3", name="Grep", arguments='{"pattern":"def parse"}', extras=_caller()),
            ),
        ),
        (
            "tool",  # in call order, though toolu_3 finished first
            (
                ToolResult(
                    call_id="toolu_1", content="     1→def test_parse():\n     2→    assert parse('1+1') == 2\n"
                ),
                ToolResult(call_id="toolu_2", content="Exit code 1\nFAILED test_parser.py::test_parse", is_error=True),
                ToolResult(
                    call_id="toolu_3",
                    content="parser.py:1:def parse(text):",
                    extras={"anthropic": {"is_error_false": True}},
                ),
            ),
        ),
        (
            "user",
            (
                Text(text="[Request interrupted by user for tool use]"),
                Text(text="<task-notification>build finished</task-notification>"),
            ),
        ),
        (
            "assistant",
            (
                Text(text="The parser returns a string; fixing."),
                ToolCall(
                    id="toolu_4",
                    name="Edit",
                    arguments='{"file_path":"/home/u/proj/parser.py","old_string":"return text",'
                    '"new_string":"return eval(text)"}',
                ),
            ),
        ),
        (
            "tool",
            (ToolResult(call_id="toolu_4", content=(Text(text="The file was updated."), Text(text="1 line changed"))),),
        ),
        ("user", messages[6].parts),
        ("assistant", (Text(text="Continuing: running the tests again."), messages[7].parts[1])),
    ]
    assert [m.id for m in messages] == [None, "msg_A", None, None, "msg_B", None, None, "msg_C"]
    uuids = [[r.get("uuid") for r in m.extras["claude-code"]["records"]] for m in messages]
    assert uuids == [
        ["u1"],
        ["a1", "a2", "a3", "a4", "a5"],
        ["r1", "r3", "r2"],
        ["i1", "i2"],
        ["a6", "a7"],
        ["r4"],
        ["c1", "c2"],
        ["a8", "a9"],
    ]
    first = messages[1].extras["claude-code"]["records"][0]
    assert first == {k: v for k, v in records[3].items() if k != "message"} | {
        "message": {k: v for k, v in records[3]["message"].items() if k not in ("role", "content")}
    }
    assert messages[2].extras["claude-code"]["records"][0]["toolUseResult"] == records[7]["toolUseResult"]


def _caller() -> dict[str, Any]:
    return {"anthropic": {"fields": {"caller": {"type": "direct"}}}}


def test_compaction_is_identifiable() -> None:
    records = _records()
    messages = claude_code.load(records).messages
    assert claude_code.compaction_boundaries(messages) == [6]
    summary = messages[6]
    assert summary.extras["claude-code"]["compact_summary"] is True
    assert summary.extras["claude-code"]["compact_boundary"] == records[20]
    assert summary.extras["claude-code"]["compact_boundary"]["compactMetadata"] == {
        "trigger": "auto",
        "preTokens": 150321,
    }
    first = summary.parts[0]
    assert isinstance(first, Text) and first.text.startswith("This session is being continued")
    assert "compact_summary" not in messages[5].extras["claude-code"]


def test_bookkeeping_is_counted_in_the_envelope() -> None:
    assert claude_code.load(_records()).envelope == {
        "records": 25,
        "skipped": {"summary": 1, "file-history-snapshot": 1, "progress": 1, "queue-operation": 1, "system": 1},
        "duplicates": 1,
        "session_id": "s-1234",
    }


def test_jsonl_text_is_detected_and_loaded() -> None:
    conversation = chainsum.formats.load(_session_text())
    assert conversation.format == "claude-code"
    assert conversation.messages == claude_code.load(_records()).messages


def test_dumps_as_anthropic_and_reads_back_the_same_messages() -> None:
    messages = claude_code.load(_records()).messages
    dropped: list[chainsum.formats.Dropped] = []
    wire = chainsum.formats.dump(messages, to="anthropic", dropped=dropped)
    assert dropped == []
    assert [m["role"] for m in wire] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    assert _shape(anthropic.load(wire).messages) == _shape(messages)


def test_is_read_only() -> None:
    assert not hasattr(claude_code, "dump")
    assert "claude-code" not in DUMPABLE
    with pytest.raises(FormatError, match="can be read but not written"):
        chainsum.formats.dump(claude_code.load(_records()), to="claude-code")


# ------------------------------------------------------------------------------------------- rebuilding rules


def _line(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "sessionId": "s", "message": {"role": kind, "content": content}} | extra


def _reply(msg_id: str | None, *blocks: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": list(blocks)}
    if msg_id is not None:
        message["id"] = msg_id
    return {"type": "assistant", "sessionId": "s", "message": message}


def _use(call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "f", "input": {}}


def _result(call_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call_id, "content": call_id.upper()}


def test_results_before_any_response_and_responses_without_id() -> None:
    records = [
        _line("user", [_result("early")]),
        _line("user", "hello"),
        _reply(None, _use("a")),
        _reply(None, {"type": "text", "text": "no id: a separate response"}),
        _line("user", [_result("a"), {"type": "text", "text": "and a note"}]),
    ]
    messages = claude_code.load(records).messages
    assert _shape(messages) == [
        ("tool", (ToolResult(call_id="early", content="EARLY"),)),
        ("user", (Text(text="hello"),)),
        ("assistant", (ToolCall(id="a", name="f"),)),
        ("assistant", (Text(text="no id: a separate response"),)),
        ("tool", (ToolResult(call_id="a", content="A"),)),
        ("user", (Text(text="and a note"),)),
    ]
    assert messages[4].extras["claude-code"]["records"] == messages[5].extras["claude-code"]["records"]


def test_parallel_results_follow_the_call_order_and_unknown_ones_go_last() -> None:
    records = [
        _line("user", "go"),
        _reply("m1", _use("a"), _use("b")),
        _line("user", [_result("stray")]),
        _line("user", [_result("b")]),
        _reply("m1", _use("c")),
        _line("user", [_result("c")]),
        _line("user", [_result("a")]),
    ]
    messages = claude_code.load(records).messages
    assert [p.call_id for p in messages[2].tool_results] == ["a", "b", "c", "stray"]
    assert [p.id for p in messages[1].tool_calls] == ["a", "b", "c"]


def test_trailing_compact_boundary_is_kept_in_the_envelope() -> None:
    boundary = {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"preTokens": 9}}
    conversation = claude_code.load([_line("user", "hi"), boundary])
    assert conversation.envelope["trailing_compact_boundary"] == boundary
    assert claude_code.compaction_boundaries(conversation.messages) == []


def test_boundary_without_summary_marks_the_next_message() -> None:
    boundary = {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"preTokens": 9}}
    messages = claude_code.load([_line("user", "hi"), _reply("m", _use("x")), boundary, _line("user", "next")]).messages
    assert claude_code.compaction_boundaries(messages) == [2]
    assert messages[2].extras["claude-code"]["compact_boundary"] == boundary
    assert "compact_summary" not in messages[2].extras["claude-code"]


def test_a_single_record_is_a_one_line_log() -> None:
    record = _line("user", "alone")
    assert claude_code.sniff(record) == 2
    assert _shape(claude_code.load(record).messages) == [("user", (Text(text="alone"),))]


# ------------------------------------------------------------------------------------------- hostile input

HOSTILE: list[tuple[Any, str]] = [
    (42, ""),
    ("text", ""),
    (None, ""),
    ([5], "[0]"),
    ([{"sessionId": "s"}], "[0].type"),
    ([{"type": 5}], "[0].type"),
    ([{"type": "user", "message": "hi"}], "[0].message"),
    ([{"type": "user"}], "[0].message"),
    ([{"type": "user", "message": {"role": "assistant", "content": "x"}}], "[0].message.role"),
    ([{"type": "assistant", "message": {"role": "assistant"}}], "[0].message.content"),
    ([{"type": "user", "message": {"role": "user", "content": 5}}], "[0].message.content"),
    ([{"type": "progress"}, _reply("m", {"type": "tool_use", "id": "t", "input": {}})], "[1].message.content[0].name"),
    (
        [_line("user", [{"type": "tool_result", "tool_use_id": "t", "content": [1]}])],
        "[0].message.content[0].content[0]",
    ),
]


@pytest.mark.parametrize(("data", "where"), HOSTILE)
def test_hostile_input_names_the_path(data: Any, where: str) -> None:
    with pytest.raises(FormatError) as info:
        claude_code.load(data)
    assert (info.value.where, info.value.format) == (where, "claude-code")


_BLOCKS = st.lists(
    st.one_of(
        st.builds(_use, st.sampled_from(["a", "b"])),
        st.builds(_result, st.sampled_from(["a", "b", "z"])),
        st.just({"type": "text", "text": "t"}),
    ),
    max_size=3,
)
_WELL_TYPED = st.one_of(
    st.builds(
        lambda c, u: _line("user", c, uuid=u), st.text(max_size=3) | _BLOCKS, st.sampled_from(["u1", "u2", "u3", None])
    ),
    st.builds(lambda i, c: _reply(i, *c), st.sampled_from(["m1", "m2", None]), _BLOCKS),
    st.just({"type": "system", "subtype": "compact_boundary", "compactMetadata": {}}),
    st.just(_line("user", "summary", isCompactSummary=True)),
    st.just({"type": "progress", "sessionId": "s"}),
)
_RECORDS = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["user", "assistant", "system", "progress", "summary", 3])},
        optional={
            "uuid": st.sampled_from(["u1", "u2", None]),
            "subtype": st.just("compact_boundary"),
            "isCompactSummary": st.booleans(),
            "message": st.one_of(
                st.none(),
                st.text(max_size=3),
                st.fixed_dictionaries(
                    {},
                    optional={
                        "role": st.sampled_from(["user", "assistant"]),
                        "id": st.sampled_from(["m1", "m2", 7]),
                        "content": st.one_of(
                            st.text(max_size=3),
                            st.integers(),
                            st.lists(
                                st.one_of(
                                    st.builds(_use, st.sampled_from(["a", "b"])),
                                    st.builds(_result, st.sampled_from(["a", "b", "z"])),
                                    st.just({"type": "text", "text": "t"}),
                                    st.just({"type": "text"}),
                                    st.just({"type": "mystery"}),
                                    st.integers(),
                                ),
                                max_size=3,
                            ),
                        ),
                    },
                ),
            ),
        },
    ),
    max_size=8,
) | st.lists(_WELL_TYPED, max_size=12)


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.too_slow])
@given(_RECORDS)
def test_arbitrary_records_give_a_conversation_or_a_format_error(records: list[Any]) -> None:
    assert claude_code.sniff(records) in (0, 2)
    try:
        conversation = claude_code.load(records)
    except FormatError as e:
        assert e.format == "claude-code"
        return
    messages = conversation.messages
    assert (sum(len(m.tool_calls) for m in messages), sum(len(m.tool_results) for m in messages)) == _block_counts(
        records
    )
    # results answering no call of an open response may be reordered by Anthropic's results-first merge, so only
    # the parts themselves are compared here (the corpus tests compare whole messages)
    back = anthropic.load(anthropic.dump(messages)).messages
    assert sorted(map(repr, (p for m in back for p in m.parts))) == sorted(
        map(repr, (p for m in messages for p in m.parts))
    )


# ------------------------------------------------------------------------------------------- the real corpus


@cache
def _corpus() -> tuple[CorpusDocument, ...]:
    return tuple(d for d in documents() if d.format == "claude-code")


def _require_corpus() -> tuple[CorpusDocument, ...]:
    found = _corpus()
    assert found, "no Claude Code session in the corpora nor in tests/data/corpora"
    return found


def _block_counts(records: list[Any]) -> tuple[int, int]:
    """tool_use and tool_result blocks in the user/assistant records, each record counted once by uuid."""
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    for record in records:
        if record.get("type") not in ("user", "assistant") or not isinstance(record.get("message"), dict):
            continue
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue
            seen.add(uuid)
        content = record["message"].get("content")
        if isinstance(content, list):
            counts.update(b.get("type") for b in content if isinstance(b, dict))
    return counts["tool_use"], counts["tool_result"]


def test_corpus_files_all_load() -> None:
    found = _require_corpus()
    labels = [d.label for d in found]
    # two sessions with four subagent logs, or the excerpt: the start and the compaction of one, and its compactor
    assert len([label for label in labels if "/subagents/" in label]) == (4 if FULL else 1)
    assert len(labels) == (6 if FULL else 2)
    for doc in found:
        conversation = claude_code.load(doc.data)
        assert conversation.messages, doc.label
        assert conversation.messages[0].role == "user", doc.label
        roles = [m.role for m in conversation.messages]
        assert all(a != b for a, b in pairwise(roles)), f"{doc.label}: a role repeats"


def test_corpus_loses_no_tool_call_or_result() -> None:
    for doc in _require_corpus():
        messages = claude_code.load(doc.data).messages
        calls = sum(len(m.tool_calls) for m in messages)
        results = sum(len(m.tool_results) for m in messages)
        assert (calls, results) == _block_counts(doc.data), doc.label


def test_corpus_every_call_is_answered_right_after_its_message() -> None:
    for doc in _require_corpus():
        messages = claude_code.load(doc.data).messages
        last_assistant = max(i for i, m in enumerate(messages) if m.role == "assistant")
        for i, m in enumerate(messages):
            if m.role == "tool":
                assert messages[i - 1].role == "assistant", f"{doc.label}: message {i}"
            if m.role != "assistant" or not m.tool_calls or i == last_assistant:
                continue
            answer = messages[i + 1] if i + 1 < len(messages) else None
            assert answer is not None and answer.role == "tool", f"{doc.label}: message {i} has no results"
            assert [r.call_id for r in answer.tool_results] == [c.id for c in m.tool_calls], f"{doc.label}: {i}"


def test_corpus_compactions_are_found() -> None:
    for doc in _require_corpus():
        messages = claude_code.load(doc.data).messages
        found = claude_code.compaction_boundaries(messages)
        if "/subagents/" in doc.label:
            assert found == [], doc.label
            continue
        assert len(found) == 1, doc.label
        summary = messages[found[0]]
        first = summary.parts[0]
        assert summary.role == "user"
        assert isinstance(first, Text) and first.text.startswith("This session is being continued"), doc.label
        assert len(first.text) > 10_000
        metadata = summary.extras["claude-code"]["compact_boundary"]["compactMetadata"]
        assert isinstance(metadata["preTokens"], int) and metadata["preTokens"] > 100_000


def test_corpus_round_trips_through_anthropic() -> None:
    for doc in _require_corpus():
        messages = claude_code.load(doc.data).messages
        dropped: list[chainsum.formats.Dropped] = []
        wire = anthropic.dump(messages, dropped=dropped)
        assert dropped == [], doc.label
        assert anthropic.sniff(wire) in (1, 2)  # 1 when no tool block tells it apart
        assert _shape(anthropic.load(wire).messages) == _shape(messages), doc.label


def test_corpus_is_detected() -> None:
    for doc in _require_corpus():
        assert chainsum.formats.detect_format(doc.data) == "claude-code", doc.label
