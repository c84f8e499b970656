"""The OpenAI Agents SDK's own session tests, from the locked sdist, against `ChainsumSession`.

Files chosen (``tests/memory/`` of ``openai-agents``, copied unedited; the shim in ``tests/upstream/openai_agents``
makes the ``SQLiteSession`` they construct a `ChainsumSession` wrapping the SDK's own `SQLiteSession`):

- ``test_session.py``: the `Session` protocol as the SDK tests it: ``get_items`` (with and without a limit, the
  ``session_settings`` limit and its override), ``add_items``, ``pop_item``, ``clear_session``, sessions kept apart,
  concurrent access, unicode and hostile content, and ``Runner.run`` / ``run_sync`` / ``run_streamed`` reading and
  writing the session (memory across turns, session input callbacks, the settings override of a run);
- ``test_session_limit.py``: ``SessionSettings(limit=...)`` through the Runner: the newest N items, none for 0, all
  for None or a limit past the history, and no function-call output left without its call by the cut.

Not chosen, with why: ``test_session_persistence_sanitize.py`` tests a private function of the SDK's OpenAI
Conversations persistence, no session at all; ``test_session_context_wrapper.py`` tests how the Runner dispatches
to session classes the file defines itself (context-aware and legacy signatures), no `SQLiteSession` to replace;
``test_openai_conversations_session.py``, ``test_openai_responses_compaction_session.py``,
``test_compaction_model_visibility.py``, ``test_compaction_suffix.py`` and ``test_sqlalchemy_compaction.py`` test
other classes (the OpenAI Conversations session, the SDK's compaction session over OpenAI's ``responses.compact``
endpoint and its SQLAlchemy and encrypted stores): their assertions are about those classes' own backends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from upstream.upstream_support import fetch_sdist, locked_version, run_suite

SHIM = Path(__file__).parent / "openai_agents"

FILES = ("tests/memory/test_session.py", "tests/memory/test_session_limit.py")
COPY = (*FILES, "tests/test_responses.py")
"""The chosen files and the helper module they import (``tests/__init__.py`` comes with it)."""


@pytest.mark.upstream
def test_the_agents_sdks_session_tests_pass_against_chainsum_session(tmp_path: Path) -> None:
    sdist = fetch_sdist("openai-agents", locked_version("openai-agents"))
    run = run_suite(
        sdist,
        copy=COPY,
        shim=SHIM,
        work=tmp_path,
        ini={"asyncio_mode": "auto", "asyncio_default_fixture_loop_scope": "session", "timeout": "60"},
        select=FILES,
        timeout_s=300,
    )
    unexpected = run.unexpected()
    print(run.summary())
    assert run.outcomes, run.output
    assert unexpected == [], "\n".join(f"{o.nodeid}: {o.result}: {o.message[:300]}" for o in unexpected)
