"""What every integration shares: its manager is made from `ContextManager`'s arguments with the configuration
read from the environment (as the CLI and the server read it), and its framework is imported with an install
hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from chainsum.errors import MissingDependencyError
from chainsum.integrations._common import make_manager, require
from chainsum.manager import ConfigError, ContextManager, ManagerConfig, PhaseTimes


def test_the_environment_configures_an_integrations_manager(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    monkeypatch.setenv("SUMMARIZATION_TRIGGER_TOKEN_RATIO", "0.6")
    monkeypatch.setenv("SUMMARIZATION_RESET_TOKEN_RATIO", "0.5")
    made = make_manager(None, {"context_window": 1000}, format="bedrock")
    assert made.config.trigger_token_ratio == 0.6 and made.window == 1000
    given = make_manager(None, {"context_window": 1000, "config": ManagerConfig(trigger_token_ratio=0.9)})
    assert given.config.trigger_token_ratio == 0.9
    monkeypatch.setenv("SUMMARIZATION_TRIGGER_TOKEN_RATIO", "2")
    with pytest.raises(ConfigError, match="SUMMARIZATION_TRIGGER_TOKEN_RATIO"):
        make_manager(None, {"context_window": 1000})


def test_a_manager_or_its_arguments_not_both() -> None:
    manager = ContextManager(context_window=1000)
    assert make_manager(manager, {}) is manager
    with pytest.raises(TypeError, match="not both"):
        make_manager(manager, {"context_window": 1000})


def test_a_missing_framework_names_its_extra() -> None:
    with pytest.raises(MissingDependencyError, match=r'pip install "chainsum\[strands\]"'):
        require("no_such_framework_module", package="strands-agents", extra="strands")


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("chainsum.integrations.langchain", "ChainsumMiddleware"),
        ("chainsum.integrations.openai_agents", "ChainsumSession"),
        ("chainsum.integrations.pydantic_ai", "ChainsumHistory"),
        ("chainsum.integrations.strands", "ChainsumConversationManager"),
    ],
)
def test_every_integration_hands_a_profile_to_its_manager(module: str, name: str) -> None:
    """``profile=`` is one of `ContextManager`'s arguments, which each integration takes (the benchmarks print
    chainsum's phases through it)."""
    import importlib

    try:
        integration = getattr(importlib.import_module(module), name)
    except MissingDependencyError:
        pytest.skip(f"{module}: its framework is not installed")
    profile = PhaseTimes()
    args = ("s",) if name == "ChainsumSession" else ()
    made = integration(*args, context_window=1000, profile=profile)
    manager = made.manager_for() if name == "ChainsumMiddleware" else made.manager
    assert manager.profile is profile
