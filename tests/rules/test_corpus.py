"""Every real conversation of the shared corpora, loaded with its format, repairs into a history every provider
accepts; real OpenAI histories (tau-bench, BFCL) are valid for OpenAI as they are."""

from __future__ import annotations

import pytest

from chainsum.formats import load
from chainsum.rules import PROVIDERS, repair, validate
from corpora_support import documents


@pytest.mark.parametrize("provider", PROVIDERS)
def test_corpus_repairs_validate(provider: str) -> None:
    seen = 0
    for doc in documents():
        messages = load(doc.data, doc.format).messages
        if doc.format == "openai" and provider == "openai":
            assert validate(messages, provider) == [], doc.label
        repaired = repair(messages, provider)
        assert validate(repaired.messages, provider) == [], doc.label
        assert repair(repaired.messages, provider).actions == (), doc.label
        seen += 1
    assert seen > 0
