"""The counters over every real conversation in the shared corpora (skipped when the corpora are absent)."""

from __future__ import annotations

import math

import pytest

from chainsum.formats import load
from chainsum.messages import Message
from chainsum.testing import iter_documents
from chainsum.tokens import EncodingUnavailableError, HeuristicCounter, TiktokenCounter

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def conversations() -> list[tuple[str, list[Message]]]:
    return [(doc.label, list(load(doc.data, doc.format).messages)) for doc in iter_documents()]


def test_heuristic_counts_every_conversation(conversations: list[tuple[str, list[Message]]]) -> None:
    counter = HeuristicCounter()
    for label, messages in conversations:
        total = counter.count_messages(messages)
        assert total > 0, label
        assert total == HeuristicCounter(cache_size=0).count_messages(messages), label


def test_heuristic_p95_error_against_o200k_is_within_ten_percent(
    conversations: list[tuple[str, list[Message]]],
) -> None:
    pytest.importorskip("tiktoken", reason="tiktoken (the chainsum[tiktoken] extra) is not installed")
    try:
        exact = TiktokenCounter("o200k_base", text_cache_size=0)
    except EncodingUnavailableError:
        pytest.skip("the o200k_base BPE file is not on this machine: install quicktok-v1 or set CHAINSUM_TIKTOKEN_DIR")
    heuristic = HeuristicCounter()
    errors = sorted(
        abs(heuristic.count_messages(m) - exact.count_messages(m)) / exact.count_messages(m) for _, m in conversations
    )
    assert errors, "no conversations"
    p95 = errors[min(len(errors) - 1, math.ceil(0.95 * len(errors)) - 1)]
    assert p95 <= 0.10
