"""What the page's browser tests share: a page in a fresh browser context with its console watched, conversations
sent through the proxy, and the banner's text computed independently of the page."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Generator
from typing import Any
from urllib.parse import quote

import httpx
from playwright.sync_api import Browser, ConsoleMessage, Page, Response

from server.server_support import Running

WINDOW = 1000
"""Small, so that a chat crosses the trigger (80%) after the 12 messages a compaction needs."""

Shot = Callable[[Page, str], None]
"""The `shot` fixture: a full-page screenshot of a page in a named state."""


class Watch:
    """A page's console warnings and uncaught errors (none are expected)."""

    def __init__(self, page: Page) -> None:
        self.warnings: list[str] = []
        self.errors: list[str] = []
        self.failed: list[str] = []
        """Requests the server answered with an error status (a console error names no URL; this does)."""
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("response", self._response)

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.request.method} {response.url} {response.status}")

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "warning":
            self.warnings.append(message.text)
        elif message.type == "error":
            self.errors.append(message.text)


def js_round(x: float) -> int:
    """JavaScript's Math.round (halves round up), which the page's figures use."""
    return math.floor(x + 0.5)


def figures(event: dict[str, Any]) -> str:
    """A compaction's figures as the page must write them, computed here from the event alone: its exact pair, its
    removed tokens and its ratio (never "~2K" beside "1,578": issue 22)."""
    pair = f"{event['tokensBefore']:,} → {event['tokensAfter']:,} tokens"
    if event["tokensRemoved"] >= 0:
        percent = js_round(event["contextCompressionRatio"] * 100)
        return f"{pair} ({event['tokensRemoved']:,} fewer, {percent}% reduction)"
    return f"{pair} ({-event['tokensRemoved']:,} more)"


def banner_text(event: dict[str, Any]) -> str:
    """The banner's text for `event`."""
    return f"Context optimized: {figures(event)}"


def question(i: int) -> str:
    return f"Question {i}: tell me about alpha{i}. " + "The quick brown fox jumps over the lazy dog. " * 12


@contextlib.contextmanager
def open_page(browser: Browser, url: str, token: str | None = None, **options: Any) -> Generator[tuple[Page, Watch]]:
    """The page in a fresh browser context, closed before the server stops (its event stream would hold it);
    opened as ``chainsum serve`` prints it (``/?token=...``) when a `token` is given, else bare."""
    settings: dict[str, Any] = {"locale": "en-US", "viewport": {"width": 1400, "height": 1000}, **options}
    context = browser.new_context(**settings)
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        watch = Watch(page)
        page.goto(url + "/" + (f"?token={quote(token)}" if token else ""))
        yield page, watch
    finally:
        context.close()


def bulk_conversation(run: Running, session: str, turns: int, window: int = WINDOW) -> str:
    """A conversation sent through the proxy with httpx; returns the session id the proxy gave it."""
    headers = {"X-Chainsum-Session": session, "X-Chainsum-Context-Window": str(window)}
    history: list[dict[str, str]] = []
    sid = ""
    with httpx.Client(base_url=run.url, timeout=30) as client:
        for i in range(turns):
            history.append({"role": "user", "content": question(100 + i)})
            response = client.post(
                "/v1/chat/completions", json={"model": "fake-model", "messages": history}, headers=headers
            )
            response.raise_for_status()
            sid = response.headers["x-chainsum-session"]
            history.append({"role": "assistant", "content": response.json()["choices"][0]["message"]["content"]})
    return sid


def wait_listed(run: Running, sid: str, token: str | None = None) -> list[str]:
    """The session ids listed once `sid` is (the session directory is written in the background)."""
    deadline = time.monotonic() + 10
    with run.api(token) as client:
        while True:
            ids = [s["id"] for s in client.get("/api/sessions").json()["sessions"]]
            if sid in ids or time.monotonic() > deadline:
                return ids
            time.sleep(0.02)


def last_summarized_event(run: Running, session: str) -> dict[str, Any]:
    with run.api() as client:
        events = client.get(f"/api/sessions/{session}").json()["events"]
    found = [e for e in events if e["type"] == "context_summarized"]
    assert found, f"no context_summarized event for {session}"
    return max(found, key=lambda e: e["seq"])
