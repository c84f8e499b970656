"""The web page at ``/`` in a real headless Chromium (Debian's ``chromium``, driven by Playwright with
``executable_path``: no browser download), against a real server with the fake upstream.

The whole flow of ``specs/summarizing-manager-events.md`` through the page's own chat panel: the conversation crosses
the trigger, the banner shows the event's figures (exact, not the spec's "~13K": issue 22, whose figures are checked
place by place in ``test_page_figures.py``), dismissing keeps the badge, a malformed event changes nothing,
expanding a summary shows its verified originals, the gauge shows what the session API says, clearing removes the
badge and the banner. Then the API token prompt, and the dark theme on a phone with the keyboard.

Screenshots of each state go to ``$CHAINSUM_SCREENSHOTS`` (default: the test's tmp_path).
"""

from __future__ import annotations

import re
import time
from typing import Any, cast

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from chainsum.manager import ManagerConfig
from chainsum.store import SQLiteStore
from chainsum.testing import FakeLLMServer
from chainsum.testing.fake_llm import FakeText
from server.page_support import (
    WINDOW,
    Shot,
    banner_text,
    bulk_conversation,
    last_summarized_event,
    open_page,
    question,
    wait_listed,
)
from server.server_support import proxy

pytestmark = pytest.mark.slow  # a real browser / real processes: seconds each (see tests/conftest.py)

SUMMARIZED = "Context has been summarized"


CONFIG = ManagerConfig(preserve_recent=4, recall_token_ratio=0.2)
"""A small tail and a larger share for recall, so that at the small window a compaction leaves room for recall and
for "Summarize now" to find something to do."""
FIRST = "My order number is ORD-7731; please remember it."
"""The chat's first message: short enough to be recalled whole (recall gets a tenth of the window)."""
RECALLING = "Which order number did I give you at the start, ORD-7731?"


def sent(fake: FakeLLMServer) -> dict[str, Any]:
    """The body of the last request the upstream received."""
    body = fake.requests[-1].json
    assert isinstance(body, dict)
    return cast(dict[str, Any], body)


def badges(page: Page) -> set[str]:
    """The sessions whose list item carries the badge."""
    ids: list[str] = page.eval_on_selector_all(
        ".session-item", "items => items.filter(i => i.querySelector('.badge')).map(i => i.dataset.session)"
    )
    return set(ids)


def test_the_spec_flow_through_the_chat_panel(
    browser: Browser, fake: FakeLLMServer, store: SQLiteStore, shot: Shot
) -> None:
    fake.default = FakeText(text="Noted." + " That is fine." * 6)
    with proxy(fake, store, config=CONFIG) as run:
        other = bulk_conversation(run, "other", 8)  # summarized before the page opens
        assert other in wait_listed(run, other)
        with open_page(browser, run.url, run.token) as (page, watch):
            expect(page.locator("#live")).to_have_attribute("data-state", "live")
            expect(page.locator(f'.session-item[data-session="{other}"] .badge')).to_be_visible()

            # the chat panel, through the proxy, streamed, until the proxy announces a compaction
            page.get_by_label("Session", exact=True).fill("web")
            page.get_by_label("Model", exact=True).fill("fake-model")
            page.get_by_label("Context window", exact=True).fill(str(WINDOW))
            notes = page.locator(".chat-note")
            for i in range(10):
                page.get_by_label("Message", exact=True).fill(FIRST if i == 0 else question(i))
                page.get_by_role("button", name="Send", exact=True).click()
                expect(page.locator(".chat-assistant:not([aria-busy])")).to_have_count(i + 1)
                if notes.count():
                    break
            assert notes.count() == 1, "the chat never crossed the trigger"
            notes_at = page.locator(".chat-assistant").count()
            web = "web~anon"
            assert page.evaluate("location.hash") == f"#/s/{web}"  # the chat opened its session
            assert sent(fake)["stream"] is True
            assert fake.requests[-1].headers.get("x-chainsum-session") is None  # chainsum's headers stay here
            assert page.locator(".chat-assistant .chat-text").last.text_content() == fake.default.text

            # the banner: the spec's text for the event the server published, polite status, dismiss button
            event = last_summarized_event(run, web)
            expected = banner_text(event)
            banner = page.get_by_role("status")
            expect(banner).to_have_text(expected)
            expect(banner).to_have_attribute("aria-live", "polite")
            assert notes.inner_text() == f"{expected} before this reply."  # the `: context_summarized` comment
            badge = page.locator(f'.session-item[data-session="{web}"] .badge')
            expect(badge).to_be_visible()
            expect(badge).to_have_attribute("title", SUMMARIZED)
            expect(badge).to_have_attribute("aria-label", SUMMARIZED)
            expect(page.get_by_role("img", name=SUMMARIZED)).to_have_count(3)  # two list items and the title
            shot(page, "1-banner")

            # the gauge shows what the session API says
            with run.api() as client:
                row = client.get(f"/api/sessions/{web}").json()
            gauge = page.get_by_role("meter", name="Tokens in use against the window")
            expect(gauge).to_have_attribute("aria-valuenow", str(row["tokens"]))
            expect(gauge).to_have_attribute("aria-valuemax", str(row["window"]))
            assert row["window"] == WINDOW
            trigger = page.locator(".gauge-trigger")
            assert trigger.get_attribute("style") == f"left: {row['trigger'] * 100:.2f}%"
            box, line = gauge.bounding_box(), trigger.bounding_box()
            assert box is not None and line is not None
            assert abs(line["x"] - (box["x"] + box["width"] * row["trigger"])) < 3  # drawn where the trigger is

            # malformed events change nothing, each with a console warning; a valid one through the same path does
            banner_before, badges_before, warned_before = banner.inner_text(), badges(page), len(watch.warnings)
            result = page.evaluate(
                """async () => {
                    const events = await import('/static/events.js');
                    const { summarization } = await import('/static/banner.js');
                    const before = [...summarization.summarizedSessions].sort();
                    const used = [
                        events.handleEvent('context_summarized', '{not json'),
                        events.handleEvent('context_summarized', null),
                        events.handleEvent('context_summarized', {type: 'context_summarized', sessionId: 'web~anon',
                            tokensBefore: '9000', tokensRemoved: 5000, contextCompressionRatio: 0.5}),
                        events.handleEvent('context_summarized', {type: 'something_else', sessionId: 'ghost',
                            tokensBefore: 9000, tokensRemoved: 5000, contextCompressionRatio: 0.5}),
                        events.handleEvent('context_summarized', {type: 'context_summarized', sessionId: 'ghost',
                            tokensBefore: 9000}),
                        events.handleEvent('context_summarized', {type: 'context_summarized',
                        tokensBefore: 9000, tokensRemoved: 5000, contextCompressionRatio: 0.5}),
                    events.handleEvent('context_summarized', {type: 'context_summarized', sessionId: 'web~anon',
                        tokensBefore: 9000, tokensRemoved: NaN, contextCompressionRatio: 0.5}),
                    events.handleEvent('session_cleared', {sessionId: 'web~anon'}),
                        events.handleEvent('no_such_event', {type: 'no_such_event'}),
                    ];
                    await new Promise(r => setTimeout(r, 400));  // past the debounced refreshes
                    return {used, before, after: [...summarization.summarizedSessions].sort()};
                }"""
            )
            assert result["used"] == [False] * 9
            assert result["after"] == result["before"]
            assert banner.inner_text() == banner_before
            assert badges(page) == badges_before
            new_warnings = watch.warnings[warned_before:]
            assert len(new_warnings) == 9, new_warnings
            assert all(w.startswith(("Invalid ", "Unknown event")) for w in new_warnings), new_warnings
            shown = page.evaluate(
                """async (event) => {
                    const events = await import('/static/events.js');
                    const texts = [];
                    for (const [removed, ratio] of [[13000, 0.29], [940, 0.02], [1500, 0.125], [999, 0.5]]) {
                        events.handleEvent('context_summarized', {type: 'context_summarized', sessionId: 'web~anon',
                            tokensBefore: 45000, tokensAfter: 45000 - removed, tokensRemoved: removed,
                            messagesSummarized: 8, contextCompressionRatio: ratio, message: ''});
                        texts.push(document.querySelector('#banner').innerText);
                    }
                    events.handleEvent('context_summarized', JSON.stringify(event));  // the server's own event again
                    return texts;
                }""",
                event,
            )
            assert shown == [
                "Context optimized: 45,000 → 32,000 tokens (13,000 fewer, 29% reduction)",
                "Context optimized: 45,000 → 44,060 tokens (940 fewer, 2% reduction)",
                "Context optimized: 45,000 → 43,500 tokens (1,500 fewer, 13% reduction)",
                "Context optimized: 45,000 → 44,001 tokens (999 fewer, 50% reduction)",
            ]
            expect(banner).to_have_text(expected)
            service = page.evaluate(
                """async () => {
                    const { ContextSummarizationService } = await import('/static/banner.js');
                    const s = new ContextSummarizationService();
                    const event = (sessionId) => ({type: 'context_summarized', sessionId, tokensBefore: 2000,
                        tokensAfter: 1000, tokensRemoved: 1000, messagesSummarized: 4, contextCompressionRatio: 0.5});
                    s.setContextSummarized(event('a'));
                    s.setContextSummarized(event('b'));
                    const steps = [[s.showNotificationBanner, s.isSessionSummarized('a'), s.isSessionSummarized('b')]];
                    s.clearSession('a');  // not the banner's session: the banner stays
                    steps.push([s.showNotificationBanner, s.isSessionSummarized('a'), s.isSessionSummarized('b')]);
                    s.dismissBanner();
                    steps.push([s.showNotificationBanner, s.isSessionSummarized('a'), s.isSessionSummarized('b')]);
                    s.setContextSummarized(event('b'));
                    s.clearSession('b');  // the banner's session: both go
                    steps.push([s.showNotificationBanner, s.isSessionSummarized('a'), s.isSessionSummarized('b')]);
                    return steps;
                }"""
            )
            assert service == [
                [True, True, True],
                [True, False, True],
                [False, False, True],
                [False, False, False],
            ]

            # dismiss: the banner goes, the badge stays
            page.get_by_role("button", name="Dismiss notification").click()
            expect(page.locator("#banner .banner")).to_have_count(0)
            expect(badge).to_be_visible()
            expect(page.locator("#session-title .badge")).to_be_visible()
            shot(page, "2-dismissed")

            # a summary in the context expands to its originals, verified
            summary = page.locator('.context .msg[data-kind="summary"]').first
            expect(summary).to_be_visible()
            summary.locator("summary", has_text="Originals").first.click()
            originals = summary.locator(".originals-list .orig")
            expect(originals.first.locator(".text")).to_have_text(FIRST)
            expect(summary.locator(".verified")).to_be_visible()
            record = page.locator(".records .record").first
            with run.api() as client:
                from_api = client.get(f"/api/summaries/{record.get_attribute('data-record')}/originals").json()
            expect(originals).to_have_count(len(from_api["messages"]))
            shot(page, "3-originals")

            # search over the archive, with the match marked
            page.get_by_role("searchbox", name="Search the archive").fill("alpha1")
            page.get_by_role("button", name="Search", exact=True).click()
            hit = page.locator(".hit").first
            expect(hit.locator("mark")).to_have_text("alpha1")
            hit.locator("summary", has_text="Original").click()
            expect(hit.locator(".orig")).to_have_count(1)
            expect(hit.locator(".orig .text")).to_contain_text("Question 1: tell me about alpha1.")

            # one more turn, inside the cooldown (no compaction), that turns to what was summarized away
            page.get_by_label("Message", exact=True).fill(RECALLING)
            page.get_by_role("button", name="Send", exact=True).click()
            expect(page.locator(".chat-assistant:not([aria-busy])")).to_have_count(notes_at + 1)
            assert notes.count() == 1

            # what recall brought back into the last request is marked before the newest user message, verified
            with run.api() as client:
                context = client.get(f"/api/sessions/{web}/context").json()
                recalled = context["recalled"]
                assert recalled, "the last question recalled nothing from the archive"
                by_id = client.get(f"/api/sessions/{web}/originals", params={"ids": ",".join(recalled)}).json()
                assert client.get(f"/api/sessions/{web}/originals", params={"ids": ","}).status_code == 400
            assert [m["message_id"] for m in by_id["messages"]] == recalled and by_id["missing"] == []
            recall = page.locator('.context .msg[data-kind="recall"]')  # the view refreshed after the turn
            expect(recall).to_have_count(1)
            assert recall.locator("xpath=following-sibling::li").count() == 1  # the newest user message
            recall.locator("summary").click()
            expect(recall.locator(".orig")).to_have_count(len(recalled))
            expect(recall.locator(".verified")).to_be_visible()
            first_text = "\n".join(p["text"] for p in by_id["messages"][0]["parts"] if p["kind"] == "text")
            expect(recall.locator(".orig .text").first).to_have_text(first_text)
            # what the last question asks about reaches the model: recalled, or kept in the record (at this 1K window
            # the block made earlier in the cycle can leave a question asked inside the cooldown no room of its own)
            shown = "\n".join(str(m.get("text", "")) for m in context["messages"])
            assert FIRST in shown or first_text == FIRST

            # "Summarize now" compacts again: the banner is back; clearing another session leaves it alone
            page.get_by_role("button", name="Summarize now").click()
            expect(page.locator(".action-status")).to_contain_text("Compacted:")
            expect(banner).to_have_text(banner_text(last_summarized_event(run, web)))
            with run.api() as client:
                assert client.delete(f"/api/sessions/{other}").status_code == 200
            expect(page.locator(f'.session-item[data-session="{other}"]')).to_have_count(0)
            # the list may redraw before the session_cleared event arrives on the stream: wait for the event
            probe = f"import('/static/banner.js').then(m => m.summarization.isSessionSummarized({_json(other)}))"
            deadline = time.monotonic() + 10
            while page.evaluate(probe) is not False and time.monotonic() < deadline:
                page.wait_for_timeout(50)
            assert page.evaluate(probe) is False
            expect(banner).to_have_text(banner_text(last_summarized_event(run, web)))

            # clearing the open session through the page: its badge and its banner go, and the chat starts over
            page.get_by_role("button", name="Clear session…").click()
            page.get_by_role("button", name="Delete session").click()
            expect(page.locator(".notice")).to_have_text("Session “web” was cleared.")
            expect(page.locator("#banner .banner")).to_have_count(0)
            expect(page.locator(f'.session-item[data-session="{web}"]')).to_have_count(0)
            assert page.evaluate("import('/static/banner.js').then(m => m.summarization.summarizedSessions.size)") == 0
            expect(page.locator(".chat-msg")).to_have_count(0)
            with run.api() as client:
                assert client.get(f"/api/sessions/{web}").status_code == 404
            shot(page, "4-cleared")

            page.get_by_label("Message", exact=True).fill("Hello again")
            page.get_by_role("button", name="Send", exact=True).click()
            expect(page.locator(f'.session-item[data-session="{web}"]')).to_be_visible()
            expect(page.locator(f'.session-item[data-session="{web}"] .badge')).to_have_count(0)
            assert sent(fake)["messages"] == [{"role": "user", "content": "Hello again"}]
            assert watch.errors == [], watch.failed


def test_the_api_token_is_asked_once_and_nothing_is_reachable_without_it(
    browser: Browser, fake: FakeLLMServer, store: SQLiteStore, shot: Shot
) -> None:
    with proxy(fake, store, api_token="s3cret") as run:
        sid = bulk_conversation(run, "private", 1)
        listed = wait_listed(run, sid, "s3cret")
        calls = [
            ("GET", "/api/sessions"),
            ("GET", f"/api/sessions/{sid}"),
            ("GET", f"/api/sessions/{sid}/context"),
            ("GET", f"/api/sessions/{sid}/search?q=alpha"),
            ("GET", f"/api/sessions/{sid}/originals?ids=x"),
            ("GET", "/api/summaries/rec_x/originals"),
            ("GET", "/api/events"),
            ("POST", f"/api/sessions/{sid}/compact"),
            ("POST", "/api/compact"),
            ("DELETE", f"/api/sessions/{sid}"),
        ]
        for token in ("", "wrong"):
            with run.api(token) as client:
                for method, path in calls:
                    body = {} if method == "POST" else None  # a bare POST is refused as cross-site first (403)
                    assert client.request(method, path, json=body).status_code == 401, (token, method, path)
        assert listed == [sid]
        assert httpx.get(run.url + "/").status_code == 200  # the page itself holds no data

        with open_page(browser, run.url) as (page, watch):
            dialog = page.get_by_role("dialog", name="API token")
            expect(dialog).to_be_visible()
            expect(page.locator(".session-item")).to_have_count(0)
            shot(page, "1-prompt")
            page.get_by_label("Token", exact=True).fill("wrong")
            page.get_by_role("button", name="Use token").click()
            expect(dialog).to_be_visible()
            expect(page.locator("#token-error")).to_have_text("The server refused that token. Check it and try again.")
            shot(page, "2-refused")
            page.get_by_label("Token", exact=True).fill("s3cret")
            page.get_by_role("button", name="Use token").click()
            expect(dialog).to_be_hidden()
            expect(page.locator(f'.session-item[data-session="{sid}"]')).to_be_visible()
            expect(page.locator("#live")).to_have_attribute("data-state", "live")  # the event stream has it too
            expect(page.get_by_role("heading", name="No session open")).to_be_visible()
            assert page.evaluate("sessionStorage.getItem('chainsum-api-token')") == "s3cret"
            shot(page, "3-accepted")

            page.reload()  # asked once: the tab keeps it
            expect(page.locator(f'.session-item[data-session="{sid}"]')).to_be_visible()
            expect(page.locator("#live")).to_have_attribute("data-state", "live")
            expect(dialog).to_be_hidden()
            refused = "Failed to load resource: the server responded with a status of 401 (Unauthorized)"
            assert all(e == refused for e in watch.errors), watch.errors  # only the calls before the token


def test_dark_theme_on_a_phone_with_the_keyboard(
    browser: Browser, fake: FakeLLMServer, store: SQLiteStore, shot: Shot
) -> None:
    with proxy(fake, store) as run:
        sid = bulk_conversation(run, "phone", 8)
        assert sid in wait_listed(run, sid)
        with open_page(
            browser, run.url, run.token, color_scheme="dark", viewport={"width": 390, "height": 844}, is_mobile=True
        ) as (page, watch):
            expect(page.locator(f'.session-item[data-session="{sid}"] .badge')).to_be_visible()
            expect(page.locator("#live")).to_have_attribute("data-state", "live")

            # the keyboard: the skip link first, with a visible focus ring; then into the list, Enter opens
            page.keyboard.press("Tab")
            focused = page.evaluate(
                "(() => { const e = document.activeElement; const s = getComputedStyle(e);"
                " return {cls: e.className, outline: s.outlineStyle, width: parseFloat(s.outlineWidth)}; })()"
            )
            assert focused == {"cls": "skip-link", "outline": "solid", "width": 3}
            for _ in range(10):
                page.keyboard.press("Tab")
                if page.evaluate("document.activeElement.closest('.session-item') !== null"):
                    break
            page.keyboard.press("Enter")
            expect(page.locator("#session-title")).to_contain_text("phone")
            expect(page.get_by_role("meter")).to_be_visible()

            # readable: nothing wider than the phone, and the text colours contrast with their backgrounds
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            pairs = {
                "text": (".card", "color", ".card", "background-color"),
                "muted": (".session-meta", "color", ".card", "background-color"),
                "summary": (".kind-tag.kind-summary", "color", ".msg.kind-summary", "background-color"),
                "link": ("details > summary", "color", ".card", "background-color"),
            }
            for name, (fg_sel, fg_prop, bg_sel, bg_prop) in pairs.items():
                fg = _rgb(page.eval_on_selector(fg_sel, f"e => getComputedStyle(e)[{_json(_camel(fg_prop))}]"))
                bg = _rgb(page.eval_on_selector(bg_sel, f"e => getComputedStyle(e)[{_json(_camel(bg_prop))}]"))
                assert _contrast(fg, bg) >= 4.5, (name, fg, bg)
            body = _rgb(page.evaluate("getComputedStyle(document.body).backgroundColor"))
            assert _luminance(body) < 0.05  # dark
            shot(page, "1-session")
            assert watch.errors == []


def _json(value: object) -> str:
    import json

    return json.dumps(value)


def _camel(prop: str) -> str:
    return re.sub(r"-(\w)", lambda m: m.group(1).upper(), prop)


def _rgb(css: str) -> tuple[float, float, float]:
    found = [float(x) for x in re.findall(r"[\d.]+", css)[:3]]
    assert len(found) == 3, css
    return found[0], found[1], found[2]


def _luminance(rgb: tuple[float, float, float]) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)
