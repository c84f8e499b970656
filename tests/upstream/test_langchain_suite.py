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


def test_the_known_table_is_the_one_in_the_docs() -> None:
    """``docs/integrations.md`` lists every test of the shim's ``KNOWN`` table with the same reason, and no other."""
    from upstream.langchain.shim_known import KNOWN

    docs = (Path(__file__).parents[2] / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = docs[docs.index("### LangChain's own tests") : docs.index("## OpenAI Agents SDK")]
    rows = {
        line.split("|")[1].strip().strip("`"): line.split("|", 2)[2].rsplit("|", 1)[0].strip()
        for line in section.splitlines()
        if line.startswith("| `test_")
    }
    assert rows == {nodeid.split("::", 1)[1]: why.replace("|", "/") for nodeid, why in KNOWN.items()}
