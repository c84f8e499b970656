"""`ExtractiveStructuredSummarizer` is model-free (``local``), as `ExtractiveSummarizer` is: a chain of a model and
it, given explicitly, is bounded by ``model_tokens_per_compaction`` like a chain of a model and the extractive
summarizer (tests/manager/test_model_tokens.py): the calls past the bound go to it, and it reads them whole."""

from __future__ import annotations

from chainsum.manager import SummarizationEvent
from chainsum.summarize import ExtractiveStructuredSummarizer, StructuredSummary
from chainsum.tokens import HeuristicCounter
from manager.manager_support import SYSTEM, Dict, ReadingModel, make, turn

COUNTER = HeuristicCounter()


class Counted:
    """The summarizer `inner`, what it read counted (the manager sees through ``inner`` whether it is model-free)."""

    def __init__(self, inner: ExtractiveStructuredSummarizer) -> None:
        self.inner = inner
        self.read: list[int] = []

    async def __call__(self, transcript: str) -> StructuredSummary:
        self.read.append(COUNTER.count_text(transcript))
        return await self.inner(transcript)


def _history(turns: int = 50, words: int = 120) -> list[Dict]:
    hist: list[Dict] = [SYSTEM]
    for i in range(turns):
        hist += turn(i, words=words)
    return hist


def test_a_model_beside_the_structured_extractive_summarizer_reads_at_most_its_share() -> None:
    model, structured = ReadingModel(), Counted(ExtractiveStructuredSummarizer())
    manager = make(window=16_000, summarizers=[model, structured], model_tokens_per_compaction=3000)
    prepared = manager.prepare_sync(_history())
    assert isinstance(prepared.event, SummarizationEvent)
    assert sum(model.read) <= 3000  # without the flag it read everything: 15,132 tokens in three calls
    assert sum(structured.read) > 3000  # the rest, read by the model-free summarizer


def test_unbounded_the_model_beside_it_reads_everything() -> None:
    model = ReadingModel()
    manager = make(window=16_000, summarizers=[model, ExtractiveStructuredSummarizer()], model_tokens_per_compaction=0)
    assert isinstance(manager.prepare_sync(_history()).event, SummarizationEvent)
    assert sum(model.read) > 3000
