"""`CompactionSettings`: built once from a `ManagerConfig`, frozen, and the one way the manager, ``chainsum compact``
and ``POST /api/compact`` compact: given the same configuration, the three compact the same history into the same
document (issue 23: the CLI and the endpoint built their strategy without the manager's `TailGuard`)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Sequence
from dataclasses import FrozenInstanceError, replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chainsum.cli._app import app
from chainsum.executor import compact_sync
from chainsum.formats import dump, load
from chainsum.manager import (
    CompactionSettings,
    ConfigError,
    ContextManager,
    ManagerConfig,
    compact_document_sync,
)
from chainsum.messages import Message
from chainsum.server._stateless import compact_document as endpoint_compact
from chainsum.strategies import (
    AutoStrategy,
    Plan,
    PlanContext,
    RatioStrategy,
    StrategyOptions,
    TailGuard,
    strategy_named,
)
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing.sessions import chat
from chainsum.tokens import HeuristicCounter

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "support-session.json"


def test_the_settings_are_the_config_s_and_frozen() -> None:
    config = ManagerConfig(
        strategy="ratio",
        summary_ratio=0.5,
        preserve_recent=4,
        max_summary_chain_depth=2,
        summary_role="system",
        summarizer_input_cap_tokens=3000,
        summarizer_timeout_seconds=5.0,
    )
    settings = CompactionSettings.from_config(config)
    guard = settings.strategy
    assert isinstance(guard, TailGuard) and guard.preserve_recent == 4 and guard.name == "ratio"
    assert guard.inner == RatioStrategy(summary_ratio=0.5, preserve_recent=4)
    fallback = settings.fallback
    assert isinstance(fallback, TailGuard) and fallback.inner == AutoStrategy(summarize=False)
    assert fallback.preserve_recent == 4
    assert settings.strategy_options == StrategyOptions(summary_ratio=0.5, preserve_recent=4, min_summary_share=0.5)
    assert (settings.max_depth, settings.summary_role, settings.summarizer_input_cap_tokens) == (2, "system", 3000)
    assert settings.summarizer_timeout_seconds == 5.0 and settings.preserve_recent == 4
    assert [type(s) for s in settings.summarizers] == [ExtractiveSummarizer]
    assert settings.summarizer is settings.summarizers[0]
    with pytest.raises(FrozenInstanceError):
        settings.max_depth = 9  # type: ignore[misc]
    # another strategy: the same guard, the same (not rebuilt) summarizers
    masked = settings.with_strategy("mask")
    assert isinstance(masked.strategy, TailGuard) and masked.strategy.name == "mask"
    assert masked.strategy.preserve_recent == 4 and masked.summarizers is settings.summarizers
    assert replace(masked, strategy=settings.strategy) == settings


def test_bad_names_raise_naming_what() -> None:
    with pytest.raises(ValueError, match=r"unknown strategy 'magic'; strategies: auto, "):
        CompactionSettings.from_config(ManagerConfig()).with_strategy("magic")
    with pytest.raises(ValueError, match="unknown strategy 'magic'"):
        CompactionSettings.from_config(ManagerConfig(), strategy="magic")
    with pytest.raises(ConfigError, match="SUMMARIZATION_MODEL_ID"):
        CompactionSettings.from_config(ManagerConfig(model_id="openai:"))


class _Recording:
    """A strategy that plans what ``auto`` plans and records the context it was asked with."""

    def __init__(self) -> None:
        self.inner = AutoStrategy()
        self.keep_recent: list[int] = []

    @property
    def name(self) -> str:
        return "recording"

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        self.keep_recent.append(ctx.keep_recent)
        return self.inner.plan(messages, ctx)


def test_the_manager_builds_its_settings_once_and_compacts_with_them() -> None:
    recording = _Recording()
    config = ManagerConfig(preserve_recent=6, recall_token_ratio=0.0)
    manager = ContextManager(config, context_window=1500, strategy=recording)
    settings = manager.compaction
    assert isinstance(settings.strategy, TailGuard) and settings.strategy.inner is recording
    assert settings.summarizers is manager.summarizers
    session = chat(160).messages
    compactions = 0
    for end in range(2, len(session), 2):
        compactions += manager.prepare_sync(session[:end]).changed
    assert compactions >= 3
    assert manager.compaction is settings  # the same object for every compaction
    # every plan was asked through the guard, which keeps the verbatim tail out of the inner plans
    assert recording.keep_recent and all(1 <= k <= 6 for k in recording.keep_recent)


def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, values: dict[str, str]) -> ManagerConfig:
    """`values` as the environment of the CLI (no ``.env`` read: the working directory is `tmp_path`), and the
    configuration they make."""
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith("SUMMARIZATION_")]:
        monkeypatch.delenv(name)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return ManagerConfig.from_env(values, dotenv_path=None)


@pytest.mark.parametrize(("window", "preserve"), [(1200, "10"), (1200, "12"), (1400, "12")])
def test_the_manager_the_cli_and_the_endpoint_compact_alike(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, window: int, preserve: str
) -> None:
    """One configuration, one history: the manager's compaction (at the budget and hard limit it derives from the
    window) and ``chainsum compact`` / ``POST /api/compact`` asked for that budget and hard limit give the same
    document. The case is one where the tail guard and the manager's least summary share matter (checked below: the
    strategy the CLI built before, without them, gives another document), so a surface that built its strategy
    differently would fail here."""
    config = _env(
        monkeypatch,
        tmp_path,
        {
            "SUMMARIZATION_PRESERVE_RECENT": preserve,
            "SUMMARIZATION_CONTEXT_WINDOW": str(window),
            "SUMMARIZATION_RECALL_TOKEN_RATIO": "0",
        },
    )
    doc: list[dict[str, Any]] = json.loads(EXAMPLE.read_text())
    budget, hard = int(config.reset_token_ratio * window), window

    prepared = ContextManager(config).prepare_sync(doc)
    assert prepared.changed and prepared.tokens_after <= window
    by_manager = list(prepared.messages)

    path, out = tmp_path / "in.json", tmp_path / "out.json"
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(
        app, ["compact", str(path), "--budget", str(budget), "--hard-limit", str(hard), "-o", str(out)]
    )
    assert result.exit_code in (0, 1), result.stderr
    by_cli = json.loads(out.read_text())

    answer = asyncio.run(endpoint_compact({"conversation": doc, "budget": budget, "hard_limit": hard}, config))
    by_endpoint = answer["conversation"]

    by_library = compact_document_sync(
        doc, budget=budget, hard_limit=hard, settings=CompactionSettings.from_config(config)
    ).document

    assert by_manager == by_cli == by_endpoint == by_library
    # the strategy as `compact_options` built it (no guard, no least summary share) plans another history here
    unguarded = compact_sync(
        load(doc).messages,
        strategy_named(config.strategy, StrategyOptions(summary_ratio=config.summary_ratio)),
        summarizer=ExtractiveSummarizer(),
        counter=HeuristicCounter(),
        budget=budget,
        hard_limit=hard,
    )
    assert dump(unguarded.messages, to="openai") != by_library
