"""Every benchmark still imports: pyright checks `src/` only, and a benchmark broken by a refactor would otherwise
only be found when someone runs it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("path", sorted(BENCH.glob("bench_*.py")), ids=lambda p: p.name)
def test_benchmark_imports_and_has_a_main(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"_bench_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # dataclasses look their module up while the class is built
    monkeypatch.syspath_prepend(str(BENCH))  # as when run as a script: a benchmark imports its helpers beside it
    spec.loader.exec_module(module)
    assert callable(getattr(module, "main", None)), f"{path.name} has no main()"
