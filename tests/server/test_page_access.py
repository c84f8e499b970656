"""The page and the server's token in a real headless Chromium: opened as ``chainsum serve`` prints it
(``/?token=...``), it keeps the token in the tab and takes it out of the address bar; given a client's own API key
instead, it shows that client's sessions and no other's."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Browser, expect

from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from server.page_support import WINDOW, open_page, question, wait_listed
from server.server_support import Running, proxy

pytestmark = pytest.mark.slow  # a real browser / real processes: seconds each (see tests/conftest.py)


def _talk(run: Running, session: str, key: str, turns: int = 8) -> str:
    """A conversation through the proxy with the client's own key; the session id the proxy gave it."""
    headers = {
        "X-Chainsum-Session": session,
        "X-Chainsum-Context-Window": str(WINDOW),
        "Authorization": f"Bearer {key}",
    }
    history: list[dict[str, str]] = []
    sid = ""
    with httpx.Client(base_url=run.url, timeout=30) as client:
        for i in range(turns):
            history.append({"role": "user", "content": question(200 + i)})
            r = client.post("/v1/chat/completions", json={"model": "fake-model", "messages": history}, headers=headers)
            r.raise_for_status()
            sid = r.headers["x-chainsum-session"]
            history.append({"role": "assistant", "content": r.json()["choices"][0]["message"]["content"]})
    return sid


def test_the_token_in_the_url_is_kept_in_the_tab_and_a_clients_key_shows_its_own_sessions(
    browser: Browser, fake: FakeLLMServer, store: SQLiteStore
) -> None:
    with proxy(fake, store) as run:
        alice, bob = _talk(run, "alice-notes", "sk-alice"), _talk(run, "bob-notes", "sk-bob")
        assert {alice, bob} <= set(wait_listed(run, bob)) and alice in wait_listed(run, alice)

        with open_page(browser, run.url, run.token) as (page, watch):
            expect(page.locator(f'.session-item[data-session="{alice}"]')).to_be_visible()
            expect(page.locator(f'.session-item[data-session="{bob}"]')).to_be_visible()
            expect(page.locator("#live")).to_have_attribute("data-state", "live")
            assert "token" not in page.url and page.url == run.url + "/"  # out of the address bar (and history)
            assert page.evaluate("sessionStorage.getItem('chainsum-api-token')") == run.token
            assert watch.errors == [], watch.failed

        with open_page(browser, run.url, "sk-alice") as (page, watch):
            expect(page.locator(f'.session-item[data-session="{alice}"]')).to_be_visible()
            expect(page.locator("#live")).to_have_attribute("data-state", "live")
            expect(page.locator(".session-item")).to_have_count(1)  # Bob's is not listed
            page.goto(run.url + f"/#/s/{bob}")  # nor shown when asked for by id
            expect(page.locator(f'.session-item[data-session="{bob}"]')).to_have_count(0)
            assert (
                page.evaluate(
                    f"fetch('/api/sessions/{bob}/context', {{headers: {{Authorization: 'Bearer sk-alice'}}}})"
                    ".then(r => r.status)"
                )
                == 404
            )
