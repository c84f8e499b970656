"""The long property soak: the property and corpus tests under the Hypothesis ``thorough`` profile.

Run: ``uv run python bench/bench_properties.py [PYTEST_ARGS...]`` (e.g. ``-x`` or ``-k codec``).

The default suite runs fewer examples and a stride of the shared corpora to stay fast on CI (see
``tests/sampling.py``); ``HYPOTHESIS_PROFILE=thorough`` runs at least 1,000 examples per property test and every
corpus document. This runs pytest that way on every test file that uses Hypothesis or `sampling`, prints the
elapsed time, and exits with pytest's exit code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"


def property_test_files() -> list[str]:
    return sorted(
        str(path)
        for path in TESTS.rglob("test_*.py")
        if any(marker in path.read_text(encoding="utf-8") for marker in ("from hypothesis", "from sampling"))
    )


def main() -> int:
    files = property_test_files()
    env = {**os.environ, "HYPOTHESIS_PROFILE": "thorough"}
    start = time.perf_counter()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", *files, *sys.argv[1:]], env=env)
    print(f"thorough profile: {len(files)} test files in {time.perf_counter() - start:.1f} s (pytest exit code {code})")
    return code


if __name__ == "__main__":
    sys.exit(main())
