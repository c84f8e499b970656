"""pydantic-ai's own history-processor tests (``tests/test_history_processor.py`` of its repository) with chainsum's
`ChainsumHistory` in the request path.

Where the file comes from: neither the ``pydantic-ai`` nor the ``pydantic-ai-slim`` sdist ships tests, CI reaches
only package registries, and the copy this test was written against may not be committed (the index it came from
keeps its code out of commits; ``vendored/README.md``). So it runs where the file is put in
``tests/upstream/pydantic_ai/vendored/tests/`` (git ignores it there) or a pydantic-ai checkout is named by
``$CHAINSUM_PYDANTIC_AI_TESTS``, and skips saying so elsewhere, CI included.

The file tests pydantic-ai's processor mechanism (``ProcessHistory`` with processors the tests write themselves,
``ReinjectSystemPrompt``), not a class chainsum could replace: there is none. So the shim adds chainsum's processor
to every ``ProcessHistory`` a test builds (after the test's own processor, as an adopter adds it) and keeps every
assertion: what the model receives, what the run keeps (``all_messages``, ``new_messages``), the errors pydantic-ai
raises for an empty history or one ending in a response, the order and signatures of processors, streamed runs.
The two tests that build no ``ProcessHistory`` (a resumed run with tools, a run id from an earlier run) and the two
``ReinjectSystemPrompt`` ones run as they are: chainsum is not in their path, so they say nothing about it (counted
apart in the report).

The runner is `run_suite` with a folder laid out like the repository as its ``sdist``: the vendored file, with the one
difference between the version stored and pydantic-ai 2.68.0 mapped (`_PINNED`): 2.68's responses carry a
``model_id`` (``"function:<model name>"`` for a ``FunctionModel``) that the stored file's snapshots predate, so each
snapshot's ``model_name=...,`` line gets ``model_id=IsStr(),`` beside it, an assertion added, none removed. The file
runs twice: pydantic-ai alone first (every test must pass: the mapping is the whole difference), then with chainsum.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from upstream.upstream_support import SuiteRun, run_suite

SHIM = Path(__file__).parent / "pydantic_ai"
VENDORED = SHIM / "vendored"
FILES = ("tests/test_history_processor.py",)

_SNAPSHOT_MODEL_NAME = re.compile(
    r"^( +)(model_name='(?:function:capture_model_function:capture_model_stream_function|test)',)$", re.M
)
_PINNED = 30
"""The snapshot ``model_name`` lines of the vendored file: a count that changes means the file changed, and the
mapping is to be looked at again."""


SOURCE_VARIABLE = "CHAINSUM_PYDANTIC_AI_TESTS"
"""A pydantic-ai checkout (the folder holding its ``tests/``) to take the file from, where it is not in `VENDORED`."""


def _vendored() -> Path | None:
    """The file, from `VENDORED` or the checkout `SOURCE_VARIABLE` names; None where neither has it."""
    given = os.environ.get(SOURCE_VARIABLE)
    for root in (VENDORED, *([Path(given)] if given else [])):
        if (root / FILES[0]).is_file():
            return root / FILES[0]
    return None


def _as_locked(work: Path, vendored: Path) -> Path:
    """The vendored folder's layout, copied, with the file and 2.68's ``model_id`` beside each snapshot's
    ``model_name``."""
    source = work / "source"
    shutil.copytree(VENDORED, source, dirs_exist_ok=True)
    path = source / FILES[0]
    if not path.exists():
        shutil.copy2(vendored, path)
    text, n = _SNAPSHOT_MODEL_NAME.subn(r"\1\2\n\1model_id=IsStr(),", path.read_text(encoding="utf-8"))
    assert n == _PINNED, n
    path.write_text(text, encoding="utf-8")
    return source


def _run(source: Path, work: Path) -> SuiteRun:
    work.mkdir()
    return run_suite(source, copy=FILES, shim=SHIM, work=work, ini={"timeout": "60"}, select=FILES, timeout_s=300)


def _failures(run: SuiteRun) -> str:
    return "\n".join(f"{o.nodeid}: {o.result}: {o.message[:300]}" for o in run.unexpected())


@pytest.mark.upstream
def test_pydantic_ais_history_processor_tests_pass_with_chainsum_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vendored = _vendored()
    if vendored is None:
        pytest.skip(
            "pydantic-ai's tests/test_history_processor.py is in no sdist on PyPI and is not committed here (see "
            f"{VENDORED / 'README.md'}): set {SOURCE_VARIABLE} to a pydantic-ai checkout to run it"
        )
    source = _as_locked(tmp_path, vendored)
    with monkeypatch.context() as alone:
        alone.setenv("CHAINSUM_SHIM_WITHOUT_CHAINSUM", "1")
        baseline = _run(source, tmp_path / "alone")
    assert baseline.outcomes and baseline.unexpected() == [], _failures(baseline)
    run = _run(source, tmp_path / "with-chainsum")
    print(f"pydantic-ai alone: {baseline.summary()}; with chainsum: {run.summary()}")
    assert len(run.outcomes) == len(baseline.outcomes), run.output
    assert run.unexpected() == [], _failures(run)
