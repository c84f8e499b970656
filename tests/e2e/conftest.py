"""The end-to-end tests drive real clients (Claude Code, Codex, an Agents SDK agent) through ``chainsum serve`` to a
scripted upstream: tens of seconds each, so the default run skips them. ``uv run pytest -m e2e`` (what CI runs
after ``npm ci --prefix tests/e2e``) or ``CHAINSUM_E2E=1`` runs them; the checks of the checker itself always run."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    expression = str(config.getoption("markexpr") or "")
    asked = os.environ.get("CHAINSUM_E2E") == "1" or ("e2e" in expression and "not e2e" not in expression)
    if asked:
        return
    skip = pytest.mark.skip(reason="end-to-end run with real clients: uv run pytest -m e2e (or CHAINSUM_E2E=1)")
    for item in items:
        if item.get_closest_marker("e2e") is not None:
            item.add_marker(skip)
