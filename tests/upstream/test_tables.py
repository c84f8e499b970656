"""The KNOWN tables hold together (issue 33): every test a framework shim lists as failing for chainsum's different
algorithm is named in ``docs/integrations.md`` (where its reason is given to users) and has a reason of one line.
Runs in the default suite: it reads the tables, not the frameworks' suites."""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).parent
DOCS = HERE.parents[1] / "docs" / "integrations.md"
TABLES = sorted(HERE.glob("*/shim_known.py"))


def _known(path: Path) -> dict[str, str]:
    spec = importlib.util.spec_from_file_location(f"shim_known_{path.parent.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    known: dict[str, str] = module.KNOWN
    return known


def test_every_listed_test_is_in_the_docs_with_a_one_line_reason() -> None:
    assert {p.parent.name for p in TABLES} == {"langchain", "strands", "pydantic_ai", "openai_agents"}
    docs = DOCS.read_text(encoding="utf-8")
    listed = 0
    for table in TABLES:
        for nodeid, why in _known(table).items():  # empty where every test of the framework's passes
            name = nodeid.split("::")[-1].split("[")[0]
            assert f"`{name}" in docs, f"{nodeid} is listed in {table} but not in docs/integrations.md"
            assert why.strip() and "\n" not in why.strip(), f"{nodeid}: the reason must be one line"
            listed += 1
    assert listed > 0  # LangChain's and Strands' tables list the tests their algorithms fail by design
