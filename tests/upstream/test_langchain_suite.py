"""LangChain 1.5.2's own tests of ``SummarizationMiddleware`` (``test_summarization.py``, from the locked sdist, copied
unedited) against chainsum's `ChainsumMiddleware`, through the shim in ``tests/upstream/langchain/``: every test
passes or is listed in the shim's ``KNOWN`` table with why it is algorithm-specific."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langchain.agents")

from upstream.upstream_support import fetch_sdist, locked_version, run_suite

SHIM = Path(__file__).parent / "langchain"
TESTS = "tests/unit_tests/agents/middleware/implementations/test_summarization.py"
COPY = [
    "pyproject.toml",  # a test reads the package's major version from it
    "tests/unit_tests/agents/model.py",
    "tests/unit_tests/agents/middleware/implementations/__init__.py",
    TESTS,
]
INI = {
    "asyncio_mode": "auto",
    "asyncio_default_fixture_loop_scope": "function",
    "timeout": "120",
    "filterwarnings": "ignore::langchain_core._api.beta_decorator.LangChainBetaWarning",
}


@pytest.mark.upstream
def test_langchains_summarization_tests_pass_against_chainsum(tmp_path: Path) -> None:
    sdist = fetch_sdist("langchain", locked_version("langchain"))
    run = run_suite(sdist, copy=COPY, shim=SHIM, work=tmp_path, ini=INI, select=[TESTS])
    print(run.summary())
    failures = "\n".join(f"{o.nodeid}: {o.result}: {o.message[:300]}" for o in run.unexpected())
    assert run.unexpected() == [], f"{run.summary()}\n{failures}\n{run.output[-4000:]}"
