"""The end-to-end tests drive real clients (Claude Code, Codex, an Agents SDK agent) through ``chainsum serve`` to a
scripted upstream: tens of seconds each, so the default run skips them (``tests/conftest.py``, with the ``slow``
profile). ``uv run pytest -m e2e`` (what CI runs after ``npm ci --prefix tests/e2e``) or ``CHAINSUM_E2E=1`` runs them;
the checks of the checker itself always run."""
