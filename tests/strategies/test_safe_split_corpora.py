"""Safe-split over every real conversation of the shared corpora: each cut is safe, each plan well placed."""

from __future__ import annotations

import pytest

from chainsum.chain import safe_cuts
from chainsum.formats import load
from chainsum.strategies import PlanContext, Summarize
from chainsum.strategies._safe_split import SafeSplitConfig, SafeSplitStrategy
from chainsum.strategies._safe_split_cut import protected_start, system_prefix
from chainsum.testing import CorpusDocument, corpora_root, iter_documents
from strategies.safe_split_words import COUNTER

pytestmark = pytest.mark.corpus

DOCS = list(iter_documents()) if corpora_root() is not None else []


@pytest.mark.parametrize("doc", DOCS, ids=[d.label for d in DOCS])
def test_corpus_split_is_safe(doc: CorpusDocument) -> None:
    messages = load(doc.data, doc.format).messages
    total = COUNTER.count_messages(messages)
    strategy = SafeSplitStrategy(
        SafeSplitConfig(conversational_token_threshold=max(1, total // 2), message_token_threshold=10**9)
    )
    plan = strategy.plan(messages, PlanContext(budget=None, counter=COUNTER))
    ceiling = protected_start(messages)
    for step in plan.steps:
        assert isinstance(step, Summarize)
        assert system_prefix(messages) <= step.start < step.end <= ceiling
        assert all(m.role != "system" for m in messages[step.start : step.end])
        assert safe_cuts(messages)[step.end]
    decision = strategy.split(messages, PlanContext(budget=None, counter=COUNTER))
    if decision.phase:
        assert safe_cuts(messages)[decision.index] and messages[decision.index].role != "tool"
