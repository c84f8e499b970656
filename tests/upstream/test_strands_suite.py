"""Strands' own tests for the class `ChainsumConversationManager` replaces, run against it (issue 33).

The files, from the strands-agents sdist at the version ``uv.lock`` pins, copied unedited:

- ``tests/strands/agent/test_summarizing_conversation_manager.py``: every test of ``SummarizingConversationManager``
  (arguments, attributes, reduction, summarizer paths, failures, proactive compression);
- ``tests/strands/test_tracking_id_history_invariant.py``: every message in the history carries a durable
  ``tracking_id``, through a real ``Agent`` (two of its tests summarize with the manager after an overflow);
- the test of ``tests/strands/session/test_repository_session_manager.py`` that restores an agent with the
  summarizing manager from a session;

with the helpers they import (``tests/fixtures/mocked_model_provider.py``,
``tests/fixtures/mock_session_repository.py``).
The shim (``tests/upstream/strands/``) puts chainsum's class where they import Strands' and lists the tests that fail
for chainsum's different algorithm in ``shim_known.KNOWN``, with why; anything else failing fails this test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from upstream.upstream_support import fetch_sdist, locked_version, run_suite

SHIM = Path(__file__).parent / "strands"

FILES = [
    "tests/__init__.py",
    "tests/strands/__init__.py",
    "tests/strands/agent/__init__.py",
    "tests/strands/agent/test_summarizing_conversation_manager.py",
    "tests/strands/test_tracking_id_history_invariant.py",
    "tests/strands/session/__init__.py",
    "tests/strands/session/test_repository_session_manager.py",
    "tests/fixtures/mocked_model_provider.py",
    "tests/fixtures/mock_session_repository.py",
]

SESSION_TESTS = ["test_initialize_restores_existing_agent_with_summarizing_conversation_manager"]

SELECT = [
    "tests/strands/agent/test_summarizing_conversation_manager.py",
    "tests/strands/test_tracking_id_history_invariant.py",
    *(f"tests/strands/session/test_repository_session_manager.py::{name}" for name in SESSION_TESTS),
]


@pytest.mark.upstream
def test_strands_own_tests_pass_against_chainsum(tmp_path: Path) -> None:
    sdist = fetch_sdist("strands-agents", locked_version("strands-agents"))
    run = run_suite(
        sdist,
        FILES,
        SHIM,
        tmp_path,
        ini={"asyncio_mode": "strict", "asyncio_default_fixture_loop_scope": "function"},
        select=SELECT,
        timeout_s=540,
    )
    print(run.summary())
    failures = "\n".join(f"{o.nodeid}: {o.result}: {o.message[:300]}" for o in run.unexpected())
    assert run.unexpected() == [], f"{run.summary()}\n{failures}\n{run.output[-4000:]}"
