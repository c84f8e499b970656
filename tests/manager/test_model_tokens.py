"""What a model summarizer reads per compaction: by default everything it replaces (issue 32: the bound's old
default, 3,000 tokens, left a configured model 5.7 % of a long session's compactions), reported as model coverage
on the event and the record; the bound (``model_tokens_per_compaction``) is opt-in, and where it applies the calls
past it go to the extractive summarizer configured after the model, said at WARNING and carried by the event."""

from __future__ import annotations

import json
import logging

import pytest

from chainsum.errors import SummarizerError
from chainsum.manager import ManagerConfig, SummarizationEvent
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from manager.manager_support import SYSTEM, Dict, ReadingModel, make, turn


def _history(turns: int = 50, words: int = 120) -> list[Dict]:
    hist: list[Dict] = [SYSTEM]
    for i in range(turns):
        hist += turn(i, words=words)
    return hist


def test_by_default_the_model_reads_everything_it_replaces() -> None:
    assert ManagerConfig().model_tokens_per_compaction == 0
    model = ReadingModel()
    archive = MemoryArchive()
    manager = make(window=16_000, summarizers=[model, ExtractiveSummarizer()], archive=archive)
    event = manager.prepare_sync(_history()).event
    assert isinstance(event, SummarizationEvent)
    assert sum(model.read) > 3000  # past the old default bound: every chunk went to the model
    assert event.model_coverage is not None and event.model_coverage >= 0.95
    assert event.model_free == ""
    (record,) = archive.records(manager.session)
    assert record.model_coverage == event.model_coverage and record.model_free == ""


def test_the_opt_in_bound_caps_the_model_and_says_what_was_summarized_model_free(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ReadingModel()
    manager = make(window=16_000, summarizers=[model, ExtractiveSummarizer()], model_tokens_per_compaction=3000)
    with caplog.at_level(logging.WARNING, logger="chainsum.manager._summarizers"):
        prepared = manager.prepare_sync(_history())
    event = prepared.event
    assert isinstance(event, SummarizationEvent)
    assert sum(model.read) <= 3000  # (it may read nothing: every call of this span was over the bound)
    assert "src/mod_0.py" in json.dumps(prepared.messages[1])  # the oldest work, read by the extractive summarizer
    assert event.model_coverage is not None and event.model_coverage < 0.5
    assert "model-free: past model_tokens_per_compaction (3000)" in event.model_free
    said = [r for r in caplog.records if "past the model summarizers' bound" in r.getMessage()]
    assert said and all(r.levelno == logging.WARNING and "bound=<3000>" in r.getMessage() for r in said)


def test_without_an_extractive_summarizer_the_bound_leaves_the_model_everything() -> None:
    model = ReadingModel()
    manager = make(window=16_000, summarizers=[model], model_tokens_per_compaction=3000)
    event = manager.prepare_sync(_history()).event
    assert isinstance(event, SummarizationEvent)
    assert sum(model.read) > 3000 and event.model_coverage is not None and event.model_coverage >= 0.95


def test_a_compaction_within_the_bound_is_the_model_s() -> None:
    model = ReadingModel()
    manager = make(window=4000, summarizers=[model, ExtractiveSummarizer()], model_tokens_per_compaction=6000)
    prepared = manager.prepare_sync(_history(24, 60))  # one call of about 4,100 tokens
    assert isinstance(prepared.event, SummarizationEvent)
    assert 0 < sum(model.read) <= 6000 and "Model summary" in json.dumps(prepared.messages)
    assert prepared.event.model_coverage == 1.0


def test_a_failing_model_counts_as_not_read() -> None:
    def failing(transcript: str) -> str:
        raise SummarizerError("upstream said no", kind="invalid")

    manager = make(window=16_000, summarizers=[failing, ExtractiveSummarizer()])
    event = manager.prepare_sync(_history()).event
    assert isinstance(event, SummarizationEvent)
    assert event.model_coverage == 0.0
    assert "model-free: the model failed" in event.model_free


def test_with_no_model_configured_there_is_no_coverage_to_report() -> None:
    event = make(window=16_000).prepare_sync(_history()).event
    assert isinstance(event, SummarizationEvent)
    assert event.model_coverage is None and event.model_free == ""
    assert "modelCoverage" not in event.to_context_summarized().to_json_dict()


def test_the_wire_event_carries_the_coverage() -> None:
    event = make(window=16_000, summarizers=[ReadingModel()]).prepare_sync(_history()).event
    assert isinstance(event, SummarizationEvent) and event.model_coverage is not None
    assert event.to_context_summarized().to_json_dict()["modelCoverage"] == event.model_coverage


def test_with_no_model_no_transcript_is_read_again_for_coverage(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chain of the extractive summarizer alone says it is local, so the executor neither checks its summaries
    nor parses each transcript for a coverage nobody reports."""
    import chainsum.executor._run as run
    import chainsum.manager._summarizers as chain

    parsed: list[str] = []

    def counting(transcript: str) -> int | None:
        parsed.append(transcript)
        return None

    monkeypatch.setattr(run, "transcript_reach", counting)
    monkeypatch.setattr(chain, "transcript_reach", counting)
    event = make(window=16_000).prepare_sync(_history()).event
    assert isinstance(event, SummarizationEvent) and event.summarizer_calls > 0
    assert parsed == []
    with_model = make(window=16_000, summarizers=[ReadingModel(), ExtractiveSummarizer()])
    assert isinstance(with_model.prepare_sync(_history()).event, SummarizationEvent)
    assert parsed  # a model is configured: its reading is measured
