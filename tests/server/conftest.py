"""Fixtures of the server tests: a fake upstream and a SQLite store file per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer


@pytest.fixture
def fake() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "chainsum.db")
    try:
        yield opened
    finally:
        opened.close()
