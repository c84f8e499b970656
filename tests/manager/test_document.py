"""`compact_document`: a wire document in any format in, the compacted document out (the input's format or the
provider's), with the report and what the conversion dropped; bad input is one line naming what; a failing
summarizer loses nothing; and, for generated sessions, the result keeps the configured verbatim tail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainsum
from chainsum.errors import FormatError, SummarizerError
from chainsum.formats import dump, load
from chainsum.manager import (
    CompactedDocument,
    CompactionSettings,
    ManagerConfig,
    compact_document,
    compact_document_sync,
)
from chainsum.messages import Text
from chainsum.rules import validate
from chainsum.strategies import PlanContext
from chainsum.strategies._guard import tail_room
from chainsum.testing.sessions import chat
from chainsum.tokens import HeuristicCounter

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE: list[dict[str, Any]] = json.loads((ROOT / "examples" / "support-session.json").read_text())
THINKING: dict[str, Any] = {
    "system": "You are terse.",
    "messages": [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "greet back", "signature": "c2lnbmF0dXJl"},
                {"type": "text", "text": "hello"},
            ],
        },
    ],
}


def test_the_input_s_format_comes_back_compacted_with_its_report() -> None:
    anthropic_doc = dump(load(EXAMPLE).messages, to="anthropic")
    done = compact_document_sync(anthropic_doc, budget=800)
    assert isinstance(done, CompactedDocument)
    assert (done.format, done.provider, done.dropped) == ("anthropic", "anthropic", ())
    out = load(done.document, format="anthropic")
    assert validate(out.messages, "anthropic") == []
    assert done.result.fits and done.result.tokens_after <= 800 < done.result.tokens_before
    # the document reads as the result, but for consecutive user messages (the record, then the newest user message
    # kept verbatim after it), which Anthropic's alternation joins into one message of their parts
    merged: list[tuple[str, list[str]]] = []
    for m in done.result.messages:
        texts = [p.text for p in m.parts if isinstance(p, Text)]
        if merged and merged[-1][0] == m.role == "user":
            merged[-1][1].extend(texts)
        else:
            merged.append((m.role, texts))
    assert [(m.role, [p.text for p in m.parts if isinstance(p, Text)]) for m in out.messages] == merged
    assert done.document["system"] == anthropic_doc["system"]
    assert done.report() == done.result.report() and done.report()["provider"] == "anthropic"


def test_a_provider_writes_its_format_and_says_what_it_dropped() -> None:
    done = compact_document_sync(THINKING, provider="openai")
    assert (done.format, done.provider) == ("openai", "openai")
    assert done.document == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
    assert [d.what for d in done.dropped] == ["reasoning (Chat Completions accepts no reasoning input)"]
    # in its own format nothing is lost, and a history under the budget comes back as it was
    same = compact_document_sync(json.dumps(THINKING), budget=1000)
    assert same.document == THINKING and same.dropped == () and not same.result.changed


def test_the_library_surface_exports_it() -> None:
    assert chainsum.compact_document is compact_document
    assert chainsum.compact_document_sync is compact_document_sync
    assert chainsum.CompactedDocument is CompactedDocument


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"budget": "lots"}, ValueError, "budget must be a whole number of tokens, got 'lots'"),
        ({"budget": -3}, ValueError, "budget must be >= 0 tokens, got -3"),
        ({"budget": 100, "hard_limit": 50}, ValueError, "hard_limit must be a positive number of tokens"),
        ({"provider": "acme"}, ValueError, "unknown provider 'acme'; choose one of "),
        ({"strategy": "magic"}, ValueError, "unknown strategy 'magic'"),
        ({"format": "nosuchformat"}, FormatError, "nosuchformat"),
    ],
)
def test_bad_input_is_one_line_naming_what(kwargs: dict[str, Any], error: type[Exception], needle: str) -> None:
    with pytest.raises(error) as caught:
        compact_document_sync(EXAMPLE, **kwargs)
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_an_unreadable_document_is_a_format_error() -> None:
    with pytest.raises(FormatError) as caught:
        compact_document_sync({"what": 1}, budget=100)
    assert "\n" not in str(caught.value)


def _failing_settings(calls: list[str]) -> CompactionSettings:
    async def failing(transcript: str) -> str:
        calls.append(transcript)
        raise SummarizerError("the model is down", kind="transport")

    return CompactionSettings.from_config(ManagerConfig(), summarizers=[failing])


def test_a_failing_summarizer_loses_nothing_and_is_reported() -> None:
    calls: list[str] = []
    done = compact_document_sync(EXAMPLE, budget=800, strategy="ratio", settings=_failing_settings(calls))
    assert calls  # the configured summarizer was called, as it is (no extractive fallback unasked)
    assert done.document == EXAMPLE
    assert done.result.errors and "the model is down" in str(done.result.errors[0].error)


def test_a_dry_run_calls_no_model_and_returns_the_input() -> None:
    calls: list[str] = []
    done = compact_document_sync(EXAMPLE, budget=800, settings=_failing_settings(calls), dry_run=True)
    assert calls == [] and done.document == EXAMPLE
    assert any(p.steps for p in done.result.plans) and done.result.tokens_after <= 800


@settings(max_examples=12, deadline=None)
@given(
    n=st.integers(14, 60),
    seed=st.integers(0, 1000),
    share=st.floats(0.2, 0.9),
    preserve=st.integers(2, 12),
)
def test_the_verbatim_tail_stays_whenever_it_fits(n: int, seed: int, share: float, preserve: int) -> None:
    """With the settings' tail guard (which ``chainsum compact`` and ``/api/compact`` lacked before issue 23), the
    last ``preserve_recent`` messages come back verbatim whenever they fit the budget beside the system prompt and
    a summary; the output is valid, in the input's format, never larger, and the system prompt stays first."""
    doc: list[dict[str, Any]] = chat(n, seed=seed).messages
    messages = load(doc).messages
    counter = HeuristicCounter()
    budget = int(counter.count_messages(messages) * share)
    config = ManagerConfig(preserve_recent=preserve)
    done = compact_document_sync(doc, budget=budget, settings=CompactionSettings.from_config(config))
    out = load(done.document).messages
    assert done.format == "openai" and validate(out, "openai") == []
    assert done.result.tokens_after <= done.result.tokens_before
    assert out[0] == messages[0]
    room = tail_room(messages, PlanContext(budget=budget, counter=counter))
    assert room is not None
    tail = messages[-preserve:]
    if sum(counter.count_message(m) for m in tail) <= room:
        assert out[-preserve:] == tail
