"""Fixtures of the server tests: a fake upstream and a SQLite store file per test; for the page's tests, a headless
Chromium (Debian's ``chromium``, driven by Playwright with ``executable_path``: no browser download) and a
screenshot taker."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.page_support import Shot


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


def _chromium() -> str | None:
    return os.environ.get("CHAINSUM_CHROMIUM") or shutil.which("chromium")


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    path = _chromium()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium with apt-get")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium); CI installs it and runs these")
    launched = playwright.chromium.launch(executable_path=path, headless=True)
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture
def shot(tmp_path: Path, request: pytest.FixtureRequest) -> Shot:
    """Save a full-page screenshot named after the test and the state."""
    where = Path(os.environ.get("CHAINSUM_SCREENSHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    test = request.node.name.removeprefix("test_")

    def take(page: Page, state: str) -> None:
        page.evaluate("window.scrollTo(0, 0)")  # sticky columns are drawn where the viewport is
        page.screenshot(path=where / f"{test}-{state}.png", full_page=True, animations="disabled")

    return take
