"""The shim (loaded by ``conftest.py`` in the run) for the OpenAI Agents SDK's own session tests
(``tests/memory/``, copied unedited from the locked sdist):
the `SQLiteSession` they construct is chainsum's `ChainsumSession` wrapping the SDK's own `SQLiteSession` (what an
adopter does: ``ChainsumSession(session_id, db_path=..., session_settings=...)`` where ``SQLiteSession(...)`` was),
so every protocol call the tests and the Runner make goes through chainsum.

The SDK's conftest is not copied (it sets up a tracing processor of its test package); the fixtures its files rely
on that matter here are below: an API key in the environment, no default runner left by a test, real model clients
refused, and tracing off (nothing may leave the machine).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import agents
import agents.memory
import pytest
from agents import SessionSettings, set_tracing_disabled
from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
from agents.models.openai_responses import OpenAIResponsesModel
from agents.run import set_default_agent_runner

from chainsum.integrations.openai_agents import ChainsumSession  # binds the SDK's real SQLiteSession first

from .shim_known import KNOWN

WINDOW = 128_000
"""The window the shim's sessions budget for (a gpt-4.1-class model): the tests' histories are a few items."""

_RealSQLiteSession = agents.SQLiteSession


class _StoreClass(type):
    """The SDK's `SQLiteSession`'s class attributes (its per-file lock tables, which a test reads on the class)
    read through from the shim's class."""

    def __getattr__(cls, name: str) -> Any:
        return getattr(_RealSQLiteSession, name)


class SQLiteSession(ChainsumSession, metaclass=_StoreClass):
    """``SQLiteSession(session_id, db_path=":memory:", session_settings=None)`` as chainsum's session: the SDK's
    `SQLiteSession` underneath, created (and closed) by `ChainsumSession`, the settings on the session the Runner
    reads. The SQLite store's own attributes (its connections, locks, ``_get_connection``), which some of the tests
    read or patch to check the store under load or failure, are read and written through to the wrapped store, so
    those assertions hold the store's behaviour under chainsum's session (a lock of chainsum's that served one
    event loop only made the SDK's three-thread test hang)."""

    def __init__(
        self,
        session_id: str,
        db_path: str | Path = ":memory:",
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        super().__init__(session_id, db_path=db_path, session_settings=session_settings, context_window=WINDOW)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["underlying_session"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        store = self.__dict__.get("underlying_session")
        if store is not None and name not in self.__dict__ and hasattr(store, name):
            setattr(store, name, value)
        else:
            super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        store = self.__dict__.get("underlying_session")
        if name in self.__dict__ or store is None:
            super().__delattr__(name)
        elif name in vars(store):  # a patch of the store's undone; its class's attribute shows again
            delattr(store, name)


agents.SQLiteSession = SQLiteSession  # type: ignore[misc]  # what ``from agents import SQLiteSession`` gets
agents.memory.SQLiteSession = SQLiteSession  # type: ignore[misc]
set_tracing_disabled(True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        reason = KNOWN.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=reason))


@pytest.fixture(scope="session", autouse=True)
def ensure_openai_api_key() -> None:
    os.environ.setdefault("OPENAI_API_KEY", "test_key")


@pytest.fixture(autouse=True)
def clear_default_runner() -> None:
    set_default_agent_runner(None)


@pytest.fixture(autouse=True)
def disable_real_model_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_version(*args: Any, **kwargs: Any) -> Any:
        pytest.fail("Real models should not be used in tests!")

    for model in (OpenAIResponsesModel, OpenAIChatCompletionsModel):
        monkeypatch.setattr(model, "get_response", failing_version)
        monkeypatch.setattr(model, "stream_response", failing_version)
