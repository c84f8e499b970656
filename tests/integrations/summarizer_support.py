"""What every framework-model summarizer test checks, shared by the four integrations' tests: a history over the
trigger, the transcript a model received is chainsum's framed one, and a failing model falls back and loses
nothing."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest

from chainsum.chain import RECORD_INTRO
from chainsum.formats import dump, load
from chainsum.manager import ContextManager, ManagerConfig, SummarizationEvent
from chainsum.messages import Message, Text
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer, parse_transcript
from chainsum.summarize.llm import DEFAULT_SYSTEM_PROMPT

WINDOW = 3000

SIZES = ((12, WINDOW), (20, 2000))
"""(turns, window) of the agent runs in which a framework's own model writes the summaries: the short run, and a
40-message chat at a 2,000-token window, each message over a hundred words (issue 32: there, with the old default
bound on what a model reads per compaction, none of the four frameworks' models was called)."""

CONFIG = ManagerConfig(summarizer_timeout_seconds=0.5)
"""A short timeout, so a hanging model costs the test half a second."""

SUMMARY = "FRAMEWORK-MODEL-SUMMARY: the user asked about src/mod_3.py; f_3 computes 3."
"""What the fake framework models answer: short, so it passes the size check, and easy to find."""


def history(turns: int = 24) -> list[Message]:
    """User questions and assistant answers naming identifiers, well over the trigger of a `WINDOW` window."""
    out = [Message(role="system", parts=(Text(text="You are a careful coding assistant."),))]
    for i in range(turns):
        ask = f"Question {i}: please look at src/mod_{i}.py and explain function f_{i}. " + "detail " * 30
        answer = f"Answer {i}: f_{i} in src/mod_{i}.py computes value {i}. " + "because " * 30
        out += [Message(role="user", parts=(Text(text=ask),)), Message(role="assistant", parts=(Text(text=answer),))]
    return out


def assert_framed(system: str | None, transcript: str) -> None:
    """The model got chainsum's system prompt and a transcript `render_transcript` framed (with its nonce)."""
    assert system == DEFAULT_SYSTEM_PROMPT
    parsed = parse_transcript(transcript.split("\n", 1)[1] if transcript.startswith("<meta ") else transcript)
    assert parsed.kind is not None and len(parsed.nonce) >= 8, transcript[:300]
    assert transcript.startswith("<meta total_messages="), transcript[:120]  # the manager's meta header
    # the history (a question, an answer, or a summary of them) in its blocks
    assert any(word in block.body for block in parsed.blocks for word in ("src/mod_", "Answer ", "Question "))


def assert_model_read(compactions: Sequence[SummarizationEvent]) -> None:
    """Every compaction that summarized was the framework model's to write: it read nearly all of it."""
    summarized = [e for e in compactions if e.model_coverage is not None]
    assert summarized, [(e.summarizer_calls, e.model_free) for e in compactions]
    assert all(e.model_coverage is not None and e.model_coverage >= 0.95 for e in summarized), [
        (e.model_coverage, e.model_free) for e in summarized
    ]


def record_text(messages: Sequence[Message]) -> str:
    records = [m.text for m in messages if m.text.startswith(RECORD_INTRO)]
    assert len(records) == 1, [m.text[:80] for m in messages]
    return records[0]


def assert_fell_back(
    manager: ContextManager,
    given: Sequence[Message],
    kind: str,
    caplog: pytest.LogCaptureFixture,
    wire: str | None = None,
) -> SummarizationEvent:
    """`prepare` over `given` with a failing framework model: the failure was of class `kind` (the manager's log
    line), the extractive summarizer wrote the record, and every message taken out is in the archive. With `wire`,
    the manager reads that format: `given` goes in written in it, and its output is read back."""
    sent: list[Any] = list(given) if wire is None else list(dump(list(given), wire))
    with caplog.at_level(logging.WARNING, logger="chainsum.manager._summarizers"):
        prepared = manager.prepare_sync(sent)
    output: Sequence[Message] = prepared.messages if wire is None else load(list(prepared.messages), wire).messages
    event = prepared.event
    assert isinstance(event, SummarizationEvent), event
    failed = [r.getMessage() for r in caplog.records if "summarizer call failed" in r.getMessage()]
    assert failed and all("summarizer=<0>" in line and f"kind=<{kind}>" in line for line in failed), failed
    assert isinstance(manager.summarizers[-1], ExtractiveSummarizer)
    assert SUMMARY not in record_text(output)
    assert_nothing_lost(manager, given, output)
    return event


def assert_nothing_lost(manager: ContextManager, given: Sequence[Message], output: Sequence[Message]) -> None:
    kept = {(m.role, m.text) for m in output}
    archive = manager.archive
    assert isinstance(archive, MemoryArchive)  # what the integrations make by default
    archived = {(m.role, m.text) for r in archive.records(manager.session) for m in archive.expand(r.id)}
    missing = [m.text[:60] for m in given if (m.role, m.text) not in kept | archived]
    assert not missing, missing
