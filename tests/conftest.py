"""Suite-wide Hypothesis settings.

Speed targets live in ``bench/``, not in tests, so no property test may fail because a shared CI machine was
slow for a moment: the per-example deadline is off everywhere. ``HYPOTHESIS_PROFILE=thorough`` runs 1,000
examples for every test that does not set its own count, for a local soak; the costliest tests take their count
from `sampling.examples` and their share of the corpora from `sampling.every` / `every_per_corpus`, so the
thorough profile runs them whole too (``uv run python bench/bench_properties.py``).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from sampling import THOROUGH_EXAMPLES

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "thorough", deadline=None, max_examples=THOROUGH_EXAMPLES, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
