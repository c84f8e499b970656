"""How much of the costliest work the default suite does: a part of it, and all of it under the thorough profile.

The default suite has to stay well under five minutes on a 2-core CI machine, so the costliest property tests run
fewer examples (`examples`) and the tests that loop over the shared corpora take a stride of their documents
(`every`, `every_per_corpus`). With ``HYPOTHESIS_PROFILE=thorough`` (what ``bench/bench_properties.py`` sets)
those property tests run at least the profile's 1,000 examples and the corpus loops read every document.
The assertions are the same in both.

Import as ``from sampling import ...`` (``tests/`` must be on ``sys.path``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TypeVar

from chainsum.testing import CorpusDocument

__all__ = ["THOROUGH", "THOROUGH_EXAMPLES", "every", "every_per_corpus", "examples"]

T = TypeVar("T")

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
"""True under ``HYPOTHESIS_PROFILE=thorough``: the long soak, not the default suite."""
THOROUGH_EXAMPLES = 1000
"""Examples per property test under the thorough profile (tests/conftest.py registers it with this count)."""


def examples(default: int) -> int:
    """`max_examples` for a costly property test: `default` in the default suite, at least `THOROUGH_EXAMPLES`
    under the thorough profile (an explicit ``settings(max_examples=...)`` wins over the loaded profile)."""
    return max(default, THOROUGH_EXAMPLES) if THOROUGH else default


def every(items: Iterable[T], n: int) -> list[T]:
    """The first of `items` and every `n`-th after it in the default suite; all of them under the thorough
    profile."""
    items = list(items)
    return items if THOROUGH else items[::n]


def every_per_corpus(docs: Iterable[CorpusDocument], n: int) -> list[CorpusDocument]:
    """`every` applied to each corpus on its own (the corpus is the first part of a document's label), so every
    corpus keeps its first document and a stride of the rest; the order of `docs` is kept."""
    docs = list(docs)
    if THOROUGH:
        return docs
    seen: dict[str, int] = {}
    kept: list[CorpusDocument] = []
    for doc in docs:
        corpus = doc.label.split("/")[0]
        i = seen.get(corpus, 0)
        seen[corpus] = i + 1
        if i % n == 0:
            kept.append(doc)
    return kept
