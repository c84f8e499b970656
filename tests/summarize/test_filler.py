"""Records without filler (issue 32): the extractive summary never lists transcript filler or tool-call ids, and
every record of an agent span names its commands and how they ended."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainsum.chain import is_record_message, record_blocks
from chainsum.executor import compact_sync
from chainsum.messages import Message, Text, ToolCall, ToolResult
from chainsum.strategies import AutoStrategy
from chainsum.summarize import (
    EXCERPT_TITLE,
    ExtractiveSummarizer,
    is_call_id,
    is_filler,
    render_consolidation,
    render_transcript,
)
from chainsum.testing import generate_chain
from chainsum.testing.coding import DIALECTS, coding_span
from chainsum.tokens import HeuristicCounter

COUNTER = HeuristicCounter()
_ITEM = re.compile(r"^- (.*?)(?: \(x\d+\))?$")
_ID_SHAPE = re.compile(r"\b(?:toolu|call|fc)_[A-Za-z0-9_]{4,}")


def _claude_step(n: int, name: str, args: dict[str, object], output: str, *, error: bool = False) -> list[Message]:
    call_id = f"toolu_b07336f1c7a0831d82ca30{n:02d}"
    return [
        Message(role="assistant", parts=(ToolCall(id=call_id, name=name, arguments=json.dumps(args)),)),
        Message(role="tool", parts=(ToolResult(call_id=call_id, content=output, is_error=error),)),
    ]


FAILED = "Exit code 1\nTypeError: x"
ROOT = "/home/dev/billing-service"


def claude_span() -> list[Message]:
    """Claude Code's shapes: ``Bash`` with ``command``, ``Read``/``Edit``/``Write`` with ``file_path``, a failing
    ``tool_result`` flagged ``is_error``, and assistant messages with no text."""
    return [
        Message.of("user", "Make the billing tests pass"),
        *_claude_step(1, "Read", {"file_path": ROOT + "/src/billing.py"}, "def charge():\n    pass\n" * 30),
        *_claude_step(2, "Edit", {"file_path": ROOT + "/src/billing.py", "old_string": "a", "new_string": "b"}, "ok"),
        *_claude_step(3, "Write", {"file_path": ROOT + "/tests/test_billing.py", "content": "x"}, "File created"),
        *_claude_step(4, "Bash", {"command": "pytest -q tests/test_billing.py"}, FAILED, error=True),
        *_claude_step(5, "Bash", {"command": "ruff check src"}, "All checks passed!"),
    ]


def _items(summary: str) -> list[str]:
    return [m.group(1) for line in summary.splitlines() if (m := _ITEM.match(line))]


def test_a_claude_code_span_lists_its_work_and_no_call_id_or_filler() -> None:
    span = claude_span()
    summary = ExtractiveSummarizer(ratio=1.0).summarize_messages(span, "ai")
    assert "toolu_" not in summary
    assert not any(is_filler(item) for item in _items(summary))
    assert "$ pytest -q tests/test_billing.py (exit 1)" in summary
    assert "$ ruff check src (done)" in summary
    assert "src/billing.py (read, edited)" in summary  # named relative to the directory they share, once
    assert "tests/test_billing.py (written)" in summary
    assert f"(paths relative to {ROOT}/)" in summary
    assert "TypeError: x" in summary


def test_no_text_content_is_never_read_back_as_a_decision() -> None:
    """A partial summary that said nothing ("No text content.", the issue's ``- No text content. (x3)``)."""
    empty = "State snapshot (extractive) of 2 message(s).\nNo text content."
    merged = ExtractiveSummarizer().summarize_text(render_consolidation([empty, empty, empty]))
    assert "No text content. (x" not in merged
    assert not any(is_filler(item) for item in _items(merged))


def test_a_record_excerpt_is_read_as_quoted_messages_not_prose() -> None:
    """A block's excerpt, folded into a deeper summary: its cut JSON tails are no decisions, its keys no
    identifiers, its calls are calls."""
    block = "\n".join(
        [
            "State snapshot (extractive) of 4 message(s).",
            "",
            "User requests:",
            "- Ship the tracing helpers",
            "",
            EXCERPT_TITLE,
            '[assistant] [tool call: Read] {"file_path":"/repo/lib/otel_trace_helpe',
            "[... 120 characters left out ...]",
            'rs.ex","offset":90,"limit":25}',
            '[assistant] [tool call: Bash] {"command": "mix test --failed", "timeout": 30000}',
        ]
    )
    merged = ExtractiveSummarizer().summarize_text(render_consolidation([block]))
    items = _items(merged)
    assert '"offset"' not in items and '"limit"' not in items and '"timeout"' not in items
    assert not any("offset" in item and item.endswith("}") for item in items)
    assert "$ mix test --failed" in merged
    assert "Ship the tracing helpers" in merged


def test_placeholders_and_ids_are_filler() -> None:
    for text in ("No text content.", "[empty]", "[reasoning: encrypted]", "[image: image/png, 3 KB]", "(done)"):
        assert is_filler(text), text
    for text in ("Fix the cache", "$ pytest -q (exit 1)", "src/app.py (edited)"):
        assert not is_filler(text), text
    for token in ("toolu_b07336f1c7a0831d82ca3051", "call_abc123XYZ456", "call_3_1", "fc_68a1b2c3d4e5f6"):
        assert is_call_id(token), token
    for token in ("call_summarizer", "tool_result", "file_path", "toolu"):
        assert not is_call_id(token), token
    assert is_call_id("sess-42", {"sess-42"})


def test_a_tight_record_of_an_agent_span_names_every_command_and_its_outcome() -> None:
    """The issue's record of 8 messages was one clipped command line."""
    steps = [
        ("mix compile --warnings-as-errors 2>&1 | tail -30", "Compiling 3 files (.ex)\n" * 40, False),
        ("mix test test/spotter/transcripts/resources_test.exs 2>&1", "Exit code 1\n** (CompileError) x\n", True),
        ("mix credo --strict 2>&1 | tail -10", "found no issues\n" * 20, False),
        ("git add -A && git commit -m 'feat: annotations' && git push 2>&1", "[main abc1234] feat\n" * 10, False),
    ]
    span: list[Message] = []
    for n, (command, output, error) in enumerate(steps):
        span += _claude_step(n, "Bash", {"command": command}, output, error=error)
    summary = ExtractiveSummarizer().summarize_text(render_transcript(span, "ai", target_tokens=120))
    assert COUNTER.count_text(summary) <= 120
    actions = [item for item in _items(summary) if item.startswith("$ ")]
    assert len(actions) == len(steps), summary
    for (command, _, error), action in zip(sorted(steps), sorted(actions), strict=True):
        assert action.startswith("$ " + command[:12])
        assert action.endswith("(exit 1)" if error else "(done)")


def _session(seed: int, spans: int) -> list[Message]:
    messages: list[Message] = []
    for k in range(spans):
        messages += coding_span(seed + k, dialect=DIALECTS[(seed + k) % 3]).messages
    return messages


def _ids(messages: list[Message]) -> set[str]:
    return {c.id for m in messages for c in m.tool_calls} | {r.call_id for m in messages for r in m.tool_results}


def _check_records(messages: tuple[Message, ...], ids: set[str]) -> None:
    """No block's summary names a call id of the session or holds filler; its excerpt quotes calls and results
    without their ids (what a quoted tool output says, verbatim, is the output's: ``result of call_6_2``)."""
    for m in messages:
        if not is_record_message(m):
            continue
        for block in record_blocks(m):
            summary, _, excerpt = block.text.partition(EXCERPT_TITLE)
            assert not any(i in summary for i in ids), summary
            assert _ID_SHAPE.search(summary) is None, summary
            assert re.search(r"\[tool call: \S+ id=|\[tool result[^\]\n]* for ", excerpt) is None, excerpt
            for line in summary.splitlines():
                assert not is_filler(line.strip()) or not line.strip(), line
            assert not any(is_filler(item) for item in _items(summary)), summary


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 5_000), spans=st.integers(2, 8), share=st.floats(0.05, 0.6))
def test_no_record_of_a_generated_agent_session_holds_a_call_id_or_filler(seed: int, spans: int, share: float) -> None:
    messages = _session(seed, spans)
    budget = max(200, int(COUNTER.count_messages(messages) * share))
    result = compact_sync(messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=COUNTER, budget=budget)
    _check_records(result.messages, _ids(messages))


@settings(max_examples=10, deadline=None)
@given(sections=st.integers(2, 6), calls=st.integers(1, 3))
def test_no_record_of_a_generated_chain_holds_a_call_id(sections: int, calls: int) -> None:
    """`generate_chain`'s results say ``result of call_0_1``: the id is named in the output, and still no item."""
    from chainsum.testing import ChainConfig

    config = ChainConfig(
        sections=sections,
        body_pairs_per_section=[2] * sections,
        tools_for_body_pairs=[True] * (2 * sections),
        tool_calls_per_body_pair=[calls] * (2 * sections),
    )
    messages = generate_chain(config)
    texts = [Text(text="padding " * 40)]
    messages = [m.with_parts((*m.parts, *texts)) if m.role == "user" else m for m in messages]
    budget = max(150, COUNTER.count_messages(messages) // 3)
    result = compact_sync(messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=COUNTER, budget=budget)
    _check_records(result.messages, _ids(messages))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), dialect=st.sampled_from(DIALECTS), target=st.integers(150, 800))
def test_every_record_of_a_generated_agent_span_names_its_commands_and_their_outcome(
    seed: int, dialect: str, target: int
) -> None:
    span = coding_span(seed, dialect=dialect)  # type: ignore[arg-type]
    summary = ExtractiveSummarizer().summarize_text(render_transcript(list(span.messages), "ai", target_tokens=target))
    actions = [item for item in _items(summary) if item.startswith("$ ")]
    for command in span.commands:
        listed = [a for a in actions if a.startswith("$ " + command[:12])]
        assert listed, (command, summary)
        assert all(re.search(r"\((?:exit -?\d+|done|failed)(?:, [^()]+)?\)$", a) for a in listed), listed


def _replayed(seed: int, spans: int) -> list[Message]:
    """A generated session as an agent replaying its `AgentScript` sends it: the script's own fillers included
    (``(no output recorded)``, ``(empty output)``, a closing ``(done)`` turn), call ids of the replaying SDK."""
    from chainsum.testing.agent_script import DONE, EMPTY_OUTPUT, NO_OUTPUT, script_from_messages

    script = script_from_messages(_session(seed, spans), label="generated")
    out: list[Message] = []
    n = 0
    for run in script.runs:
        out.append(Message.of("user", run.user))
        for turn in run.turns:
            calls = []
            for step in turn.calls:
                n += 1
                calls.append(ToolCall(id=f"call_{n:03d}abcdefghijklmno", name=step.name, arguments=step.arguments))
            out.append(Message(role="assistant", parts=(Text(text=turn.text or DONE), *calls)))
            for k, call in enumerate(calls):
                output = (NO_OUTPUT, EMPTY_OUTPUT, turn.calls[k].output)[(n + k) % 3]
                out.append(Message(role="tool", parts=(ToolResult(call_id=call.id, content=output),)))
    return out


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 5_000), spans=st.integers(2, 6), share=st.floats(0.05, 0.5))
def test_no_record_of_a_replayed_agent_script_holds_a_call_id_or_filler(seed: int, spans: int, share: float) -> None:
    messages = _replayed(seed, spans)
    budget = max(200, int(COUNTER.count_messages(messages) * share))
    result = compact_sync(messages, AutoStrategy(), summarizer=ExtractiveSummarizer(), counter=COUNTER, budget=budget)
    _check_records(result.messages, _ids(messages))
