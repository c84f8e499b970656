"""Where the tests read real conversations: the shared corpora when they are beside the checkout, else the excerpts
shipped in ``tests/data/corpora`` (licence and source in its README), so a clean clone runs every test that needs
a real conversation.

Two kinds of test read them. One that needs a few real conversations (a regression on tau2 run 10, an agent
replaying tau-bench runs) takes them from `documents()` or `document(label)` and runs in every checkout: the
excerpts keep the labels of the full corpora. One whose claim is about the whole corpus (every document round-trips
byte for byte, a p95 over all of them, the counts) carries ``@pytest.mark.corpus``: ``tests/conftest.py`` skips it,
with that reason, when the corpora are absent.

Import as ``from corpora_support import ...`` (``tests/`` must be on ``sys.path``).
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

from chainsum.testing import CorpusDocument, corpora_root, iter_documents

__all__ = ["EXCERPTS", "FULL", "data_root", "document", "documents", "parallel_step_history"]

EXCERPTS = Path(__file__).parent / "data" / "corpora"
"""The excerpts: the corpora's layout and file names, a run left out of a list file ``null``."""
FULL = corpora_root() is not None
"""True when the shared corpora are beside the checkout (or at ``$CHAINSUM_CORPORA``)."""


def data_root() -> Path:
    """The folder the real conversations are read from: the corpora, or the excerpts."""
    return corpora_root() or EXCERPTS


@cache
def documents(*, include_subagents: bool = True) -> tuple[CorpusDocument, ...]:
    """Every conversation of `data_root()`, in the corpora's order (read once per process)."""
    return tuple(iter_documents(data_root(), include_subagents=include_subagents))


def document(label: str) -> CorpusDocument:
    """The conversation with this label; every label a test names is in the excerpts too."""
    found = next((d for d in documents() if d.label == label), None)
    if found is None:
        raise LookupError(f"{label} is in neither the corpora nor tests/data/corpora (make_corpus_excerpts.py)")
    return found


def parallel_step_history() -> list[dict[str, Any]]:
    """tau-bench airline run 3 as issue 32 describes its failing conversation: the five ``get_reservation_details``
    look-ups (messages 8-17, one call each) made one five-way parallel step, moved to the end, and a short user
    message after it, the three failed payment attempts (messages 50-55) left out: 51 OpenAI Chat Completions
    messages, 8,157 tokens by the heuristic counter, the 1,255-token system prompt first. No run of the corpus has a
    parallel call; this is the shape the issue reports (a short last user message right after a five-way step)."""
    run: list[dict[str, Any]] = copy.deepcopy(document("tau-bench/gpt-4o-airline.json#3").data)
    step = copy.deepcopy(run[8])
    step["tool_calls"] = [run[i]["tool_calls"][0] for i in range(8, 18, 2)]
    results = [run[i] for i in range(9, 18, 2)]
    return [*run[:8], *run[18:50], *run[56:60], step, *results, {"role": "user", "content": "Great, which one is it?"}]
