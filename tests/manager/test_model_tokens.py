"""What a model summarizer reads per compaction is bounded (``model_tokens_per_compaction``): the calls past the
bound go to the extractive summarizer configured after it, which reads them whole, so the record still names the
oldest work; with no extractive summarizer among those given, the model reads everything as before."""

from __future__ import annotations

import json
import logging

import pytest

from chainsum.manager import SummarizationEvent
from chainsum.summarize import ExtractiveSummarizer
from manager.manager_support import SYSTEM, Dict, ReadingModel, make, turn


def _history(turns: int = 50, words: int = 120) -> list[Dict]:
    hist: list[Dict] = [SYSTEM]
    for i in range(turns):
        hist += turn(i, words=words)
    return hist


def test_the_model_reads_at_most_its_share_and_the_extractive_summarizer_the_rest() -> None:
    model = ReadingModel()
    manager = make(window=16_000, summarizers=[model, ExtractiveSummarizer()], model_tokens_per_compaction=3000)
    prepared = manager.prepare_sync(_history())
    assert isinstance(prepared.event, SummarizationEvent)
    assert sum(model.read) <= 3000  # (it may read nothing: every call of this span was over the bound)
    record = json.dumps(prepared.messages[1])
    assert "src/mod_0.py" in record  # the oldest work, read by the extractive summarizer


def test_unbounded_or_without_an_extractive_summarizer_the_model_reads_everything() -> None:
    for summarizers, bound in (((ReadingModel(),), 3000), ((ReadingModel(), ExtractiveSummarizer()), 0)):
        model = summarizers[0]
        manager = make(window=16_000, summarizers=list(summarizers), model_tokens_per_compaction=bound)
        assert isinstance(manager.prepare_sync(_history()).event, SummarizationEvent)
        assert sum(model.read) > 3000


def test_a_compaction_within_the_bound_is_the_model_s() -> None:
    model = ReadingModel()
    manager = make(window=4000, summarizers=[model, ExtractiveSummarizer()], model_tokens_per_compaction=6000)
    prepared = manager.prepare_sync(_history(24, 60))  # one call of about 4,100 tokens
    assert isinstance(prepared.event, SummarizationEvent)
    assert 0 < sum(model.read) <= 6000 and "Model summary" in json.dumps(prepared.messages)


def test_a_call_past_the_bound_is_said_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    """An operator who configured a model and reads an extractive record sees why, in one line per call."""
    manager = make(
        window=16_000, summarizers=[ReadingModel(), ExtractiveSummarizer()], model_tokens_per_compaction=3000
    )
    with caplog.at_level(logging.INFO, logger="chainsum.manager._summarizers"):
        assert isinstance(manager.prepare_sync(_history()).event, SummarizationEvent)
    said = [r.getMessage() for r in caplog.records if "past the model summarizers' bound" in r.getMessage()]
    assert said and all("bound=<3000>" in line for line in said)
