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


# Markers whose tests run only when asked for: by name in ``-m`` or by their variable. ``e2e`` drives real clients
# (tens of seconds each); ``slow`` is what crosses processes, a real browser or a whole corpus replay (seconds each),
# kept out of the default run so that it stays within its five minutes on two cores. CI runs both profiles in steps
# of their own (``.ci/run``): ``uv run pytest -m slow`` and ``uv run pytest -m e2e tests/e2e``. ``upstream`` runs the
# frameworks' own test files against the adapters (``tests/upstream``; ``uv sync --group upstream`` first).
ON_REQUEST = {"e2e": "CHAINSUM_E2E", "slow": "CHAINSUM_SLOW", "upstream": "CHAINSUM_UPSTREAM"}


def asked_for(marker: str, expression: str) -> bool:
    """Whether the run selects `marker`'s tests: its variable is 1, or ``-m`` names it other than as ``not``."""
    if os.environ.get(ON_REQUEST[marker]) == "1":
        return True
    words = expression.replace("(", " ").replace(")", " ").split()
    return any(word == marker and (i == 0 or words[i - 1] != "not") for i, word in enumerate(words))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test marked ``corpus`` makes a claim about the whole shared corpora: without them it is skipped, saying
    why (the excerpts in tests/data serve every other test; see corpora_support). A test of a marker in
    `ON_REQUEST` is skipped, saying how to run it, unless the run asks for it."""
    expression = str(config.getoption("markexpr") or "")
    for marker, variable in ON_REQUEST.items():
        if asked_for(marker, expression):
            continue
        how = pytest.mark.skip(reason=f"runs when asked for: uv run pytest -m {marker} (or {variable}=1)")
        for item in items:
            if item.get_closest_marker(marker) is not None:
                item.add_marker(how)
    if FULL:
        return
    skip = pytest.mark.skip(reason="needs the whole shared corpora (../shared/corpora or $CHAINSUM_CORPORA)")
    for item in items:
        if item.get_closest_marker("corpus") is not None:
            item.add_marker(skip, append=False)
