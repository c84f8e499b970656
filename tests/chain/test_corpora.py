"""The chain over every real conversation of the shared corpora: builds, keeps every message, sizes add up."""

from __future__ import annotations

import pytest

from chainsum.chain import Chain
from chainsum.formats import load
from chainsum.messages import message_size
from chainsum.testing import CorpusDocument, corpora_root, iter_documents

pytestmark = pytest.mark.corpus

DOCS = list(iter_documents()) if corpora_root() is not None else []


@pytest.mark.parametrize("doc", DOCS, ids=[d.label for d in DOCS])
def test_corpus_chain_is_lossless_and_sized(doc: CorpusDocument) -> None:
    messages = load(doc.data, doc.format).messages
    chain = Chain.build(messages, repair=True, allow_pending_tail=True)
    # Only lossless repairs happen on real data: leading assistant turns and mid-chain system messages are kept,
    # consecutive human messages (bfcl's user-only histories) are merged part by part.
    dropping = [r for r in chain.repairs if r.rule in (3, 4, 6, 7)]
    assert dropping == []
    assert [p for m in chain.messages() for p in m.parts] == [p for m in messages for p in m.parts]
    if not any(r.rule == 2 for r in chain.repairs):
        assert chain.messages() == list(messages)
    assert chain.size == sum(message_size(m) for m in messages)
    assert chain.size == sum(s.size for s in chain.sections)
    pairs = [p for _, _, p in chain.pairs()]
    assert all(p.is_valid() for p in pairs[:-1])  # the last turn may still wait for its tool results
