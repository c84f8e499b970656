"""Structured summaries: validation of model JSON, caps, errors, and the model-free extractive record."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.errors import SummarizerError
from chainsum.messages import Message
from chainsum.summarize import (
    ExtractiveStructuredSummarizer,
    StructuredSummary,
    parse_structured_summary,
    render_transcript,
    structured_instructions,
    structured_summarizer,
)
from chainsum.testing.scripted import ScriptedSummarizer

GOOD = {
    "narrative": "Fixed the build.",
    "key_points": ["bisect replaces the scan"],
    "decisions": ["use bisect"],
    "action_items": ["release v1.2.3"],
    "unresolved_questions": ["why was CI green?"],
    "entities": ["src/app.py", "v1.2.3"],
}


def test_parses_plain_fenced_and_wrapped_json() -> None:
    text = json.dumps(GOOD)
    expected = StructuredSummary.model_validate(GOOD)
    assert parse_structured_summary(text) == expected
    assert parse_structured_summary(f"```json\n{text}\n```") == expected
    assert parse_structured_summary(f"Here you go:\n{text}\nThanks") == expected


def test_lists_are_capped_and_blank_items_dropped() -> None:
    data = {"narrative": " n ", "key_points": [f"p{i}" for i in range(45)], "entities": ["", "  ", "x"] * 40}
    summary = parse_structured_summary(json.dumps(data))
    assert summary.narrative == "n"
    assert summary.key_points == tuple(f"p{i}" for i in range(30))
    assert summary.entities == ("x",) * 40
    assert summary.decisions == ()


@pytest.mark.parametrize(
    ("text", "kind", "fragment"),
    [
        ("", "empty", "empty"),
        ("not json at all", "invalid", "not JSON"),
        ("[1, 2]", "invalid", "list"),
        ('{"key_points": []}', "invalid", "narrative"),
        ('{"narrative": "x", "decisions": [1]}', "invalid", "decisions[0]"),
        ('{"narrative": "x", "entities": "a string"}', "invalid", "entities"),
        ('{"narrative": ""}', "invalid", "narrative"),
        ("[" * 100_000 + "]" * 100_000, "invalid", ""),
    ],
)
def test_bad_output_is_a_clear_summarizer_error(text: str, kind: str, fragment: str) -> None:
    with pytest.raises(SummarizerError) as info:
        parse_structured_summary(text)
    assert info.value.kind == kind
    assert fragment in str(info.value)
    assert not info.value.retryable or kind == "transport"


def test_schema_is_offered_to_text_models_and_answer_validated() -> None:
    scripted = ScriptedSummarizer([json.dumps(GOOD), "garbage"])
    summarizer = structured_summarizer(scripted)
    transcript = render_transcript([Message.of("user", "hi")], "human")
    assert asyncio.run(summarizer(transcript)).entities == ("src/app.py", "v1.2.3")
    sent = scripted.transcripts[0]
    assert sent.startswith(transcript) and '"maxItems":30' in sent and sent.endswith("</output_format>\n")
    assert sent[len(transcript) :] == structured_instructions()
    with pytest.raises(SummarizerError) as info:
        asyncio.run(summarizer(transcript))
    assert info.value.kind == "invalid"


def test_extractive_record_without_a_model() -> None:
    messages = [
        Message.of("user", "Please migrate config.yaml to TOML."),
        Message.of("assistant", "I decided to keep the key names. Wrote settings.toml at /etc/app/settings.toml."),
        Message.of("user", "Does it still read APP_HOME?"),
    ]
    record = asyncio.run(ExtractiveStructuredSummarizer()(render_transcript(messages, "ai")))
    assert isinstance(record, StructuredSummary)
    assert "I decided to keep the key names." in record.decisions
    assert record.unresolved_questions == ("Does it still read APP_HOME?",)
    assert record.action_items == ("Please migrate config.yaml to TOML.",)
    assert {"/etc/app/settings.toml", "APP_HOME", "config.yaml"} <= set(record.entities)
    assert record.narrative.startswith("Extractive summary of 3 message(s)")
    text = record.to_text()
    assert "Identifiers:\n- " in text and "Unresolved questions:" in text
    assert StructuredSummary.model_validate_json(record.model_dump_json()) == record


@given(st.text(max_size=500))
@settings(max_examples=100)
def test_any_text_is_either_a_record_or_a_summarizer_error(text: str) -> None:
    try:
        summary = parse_structured_summary(text)
    except SummarizerError as exc:
        assert exc.kind in ("invalid", "empty")
    else:
        assert summary.narrative and len(summary.key_points) <= 30


@given(st.text(max_size=2000))
@settings(max_examples=50)
def test_extractive_record_is_always_valid(text: str) -> None:
    record = ExtractiveStructuredSummarizer().summarize_text(text)
    assert record.narrative and len(record.key_points) <= 30 and len(record.entities) <= 50
