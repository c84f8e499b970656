"""Suite-wide Hypothesis settings.

Speed targets live in ``bench/``, not in tests, so no property test may fail because a shared CI machine was
slow for a moment: the per-example deadline is off everywhere. ``HYPOTHESIS_PROFILE=thorough`` runs 1,000
examples for every test that does not set its own count, for a local soak; the costliest tests take their count
from `sampling.examples` and their share of the corpora from `sampling.every` / `every_per_corpus`, so the
thorough profile runs them whole too (``uv run python bench/bench_properties.py``).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from corpora_support import FULL
from sampling import THOROUGH_EXAMPLES

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "thorough", deadline=None, max_examples=THOROUGH_EXAMPLES, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test marked ``corpus`` makes a claim about the whole shared corpora: without them it is skipped, saying
    why (the excerpts in tests/data serve every other test; see corpora_support)."""
    if FULL:
        return
    skip = pytest.mark.skip(reason="needs the whole shared corpora (../shared/corpora or $CHAINSUM_CORPORA)")
    for item in items:
        if item.get_closest_marker("corpus") is not None:
            item.add_marker(skip, append=False)
