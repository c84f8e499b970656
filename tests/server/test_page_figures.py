"""Issue 22 in a real headless Chromium: one compaction reads the same everywhere on the page, and only a summary is
called one.

The report: after one manual compaction the page said "Compacted: 4,797 → 3,965 tokens", "~2K tokens compressed (33%
reduction)" and "1,578 tokens compressed", the gauge 3,965 and the context header 3,216; the gauge stayed at 99 %
under the banner; a record that only masked tool output read "Summary 945 tokens"; an empty summary was shown as a
summary; the sticky banner lay over the text. Here the same compactions run through the proxy and the page's own
"Summarize now", with recall on (the recall block is what made the request's figures and the history's differ),
and every place is read back: the inline note, the banner, the events, the records, the gauge, the context header
and the sessions list must give the one pair of the server's event.

Screenshots go to ``$CHAINSUM_SCREENSHOTS`` (default: the test's tmp_path).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route, expect

from chainsum.chain import RecordBlock, block_id, record_message
from chainsum.manager import ManagerConfig
from chainsum.messages import Message, messages_to_list
from chainsum.store import SQLiteStore, SummaryRecord, message_sha256
from chainsum.testing import FakeLLMServer
from chainsum.testing.fake_llm import FakeText
from chainsum.tokens import HeuristicCounter
from server.page_support import WINDOW, Shot, figures, last_summarized_event, open_page, question, wait_listed
from server.server_support import Running, proxy

pytestmark = pytest.mark.slow  # a real browser / real processes: seconds each (see tests/conftest.py)

FIRST = "My order number is ORD-7731; please remember it."
RECALLING = "Which order number did I give you at the start, ORD-7731?"
CONFIG = ManagerConfig(preserve_recent=4, recall_token_ratio=0.2)
"""Recall on, with room: the request the model gets carries archived originals, so its tokens are not the
history's: the figures of the report came from that difference."""


def recall_note(event: dict[str, Any]) -> str:
    return f"the {event['tokensAfter']:,} include {event['recallTokens']:,} tokens recalled from the archive"


def turn(client: httpx.Client, history: list[dict[str, Any]], text: str, session: str) -> httpx.Response:
    """One chat turn through the proxy (the history grows in place)."""
    history.append({"role": "user", "content": text})
    response = client.post(
        "/v1/chat/completions",
        json={"model": "fake-model", "messages": history},
        headers={"X-Chainsum-Session": session, "X-Chainsum-Context-Window": str(WINDOW)},
    )
    response.raise_for_status()
    history.append({"role": "assistant", "content": response.json()["choices"][0]["message"]["content"]})
    return response


def screenshots(tmp_path: Path) -> Path:
    where = Path(os.environ.get("CHAINSUM_SCREENSHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)
    return where


def shown_figures(page: Page, sid: str) -> dict[str, str]:
    """The text of every place on the page that speaks of the last compaction, or of the tokens in the window."""
    newest_event = page.locator(".events .event-context_summarized").first
    newest_record = page.locator(".records .record").last
    return {
        "note": page.locator(".action-status").inner_text(),
        "banner": page.locator("#banner .banner-text").inner_text(),
        "event": newest_event.locator(".event-text").inner_text(),
        "record": newest_record.locator("dt:text-is('Tokens before → after') + dd").inner_text(),
        "gauge": page.get_by_role("meter").get_attribute("aria-valuenow") or "",
        "legend": page.locator(".gauge-value").inner_text(),
        "header": page.locator(".context-total").inner_text(),
        "header_all": page.locator(".section-context > p").first.inner_text(),
        "list": page.locator(f'.session-item[data-session="{sid}"] .session-tokens').inner_text(),
    }


def test_one_compaction_shows_one_pair_everywhere(
    browser: Browser, fake: FakeLLMServer, store: SQLiteStore, shot: Shot, tmp_path: Path
) -> None:
    fake.default = FakeText(text="Noted." + " That is fine." * 6)
    where = screenshots(tmp_path)
    with proxy(fake, store, config=CONFIG) as run, httpx.Client(base_url=run.url, timeout=30) as client:
        history: list[dict[str, Any]] = []
        sid = ""
        for i in range(6):  # under the trigger: no compaction yet
            response = turn(client, history, FIRST if i == 0 else question(i), "figures")
            assert response.headers["x-chainsum-summarized"] == "false"
            sid = response.headers["x-chainsum-session"]
        assert sid in wait_listed(run, sid)

        with open_page(browser, run.url, run.token) as (page, watch):
            page.evaluate(f"location.hash = '#/s/{sid}'")
            expect(page.locator("#live")).to_have_attribute("data-state", "live")
            gauge = page.get_by_role("meter", name="Tokens in use against the window")
            expect(gauge).to_have_attribute("aria-valuenow", str(run.get(f"/api/sessions/{sid}")["tokens"]))

            # 1. A compaction by the proxy, with the page's own refreshes held: the banner and the gauge move
            # together, from the event alone.
            held: list[Route] = []
            holding = [True]
            refreshes = re.compile(r"/api/sessions/[^/?]+(/context)?$")
            page.route(refreshes, lambda route: held.append(route) if holding[0] else route.continue_())
            response = turn(client, history, RECALLING, "figures")
            assert response.headers["x-chainsum-summarized"] == "true"
            auto = last_summarized_event(run, sid)
            assert auto["recallTokens"] > 0, "the request after the compaction carries no recall block"
            assert auto["tokensAfter"] == int(response.headers["x-chainsum-tokens-after"])
            banner = page.locator("#banner .banner-text")
            expect(banner).to_have_text(f"Context optimized: {figures(auto)}")
            expect(gauge).to_have_attribute("aria-valuenow", str(auto["tokensAfter"]))
            expect(page.locator(".gauge-value")).to_contain_text(f"{auto['tokensAfter']:,} / {WINDOW:,} tokens")
            expect(page.locator(".context-total")).to_have_text(f"{auto['tokensAfter']:,} tokens in the window")
            deadline = time.monotonic() + 5
            while not held and time.monotonic() < deadline:  # the event's refresh was asked for, and held
                page.wait_for_timeout(50)
            assert held, "the page did not refresh on the event"
            page.screenshot(path=where / "figures-1-event-only.png", animations="disabled")
            holding[0] = False
            for route in held:
                route.continue_()
            page.unroute(refreshes)

            # 2. "Summarize now" through the page: the compaction of the report.
            with page.expect_response(lambda r: r.url.endswith("/compact") and r.request.method == "POST") as posted:
                page.get_by_role("button", name="Summarize now").click()
            answer = posted.value.json()
            assert answer["status"] == "compacted", answer
            event = answer["event"]
            expect(page.locator(".events .event-context_summarized")).to_have_count(2)
            stream = {k: v for k, v in last_summarized_event(run, sid).items() if k not in ("seq", "created_ms")}
            assert stream == event  # the stream's event and the POST's answer are one event
            assert (answer["tokens_before"], answer["tokens_after"]) == (event["tokensBefore"], event["tokensAfter"])
            assert event["recallTokens"] > 0

            pair = figures(event)
            expect(page.locator(".context-total")).to_have_text(f"{event['tokensAfter']:,} tokens in the window")
            expect(page.locator(f'.session-item[data-session="{sid}"] .session-tokens')).to_have_text(
                f"{event['tokensAfter']:,} / {WINDOW:,} tokens"
            )
            shown = shown_figures(page, sid)
            assert shown["note"] == f"Compacted: {pair}; {recall_note(event)}."
            assert shown["banner"] == f"Context optimized: {pair}"
            assert shown["event"] == f"Context optimized: {pair}; {recall_note(event)}"
            assert shown["record"] == pair
            assert shown["gauge"] == str(event["tokensAfter"])
            assert shown["legend"].startswith(f"{event['tokensAfter']:,} / {WINDOW:,} tokens")
            assert shown["header"] == f"{event['tokensAfter']:,} tokens in the window"
            assert shown["list"] == f"{event['tokensAfter']:,} / {WINDOW:,} tokens"
            # the first compaction's event and record still say what its event said
            assert page.locator(".events .event-context_summarized .event-text").nth(1).inner_text() == (
                f"Context optimized: {figures(auto)}; {recall_note(auto)}"
            )
            first_record = page.locator(".records .record").first.locator("dt:text-is('Tokens before → after') + dd")
            assert first_record.inner_text() == figures(auto)

            # The header's parts are the request's, counted as the gauge counts: they add up to its figure.
            context = run.get(f"/api/sessions/{sid}/context")
            assert context["total_tokens"] == event["tokensAfter"] == run.get(f"/api/sessions/{sid}")["tokens"]
            assert context["tokens"] + context["recall_tokens"] + context["outside_tokens"] == context["total_tokens"]
            assert context["recall_tokens"] == event["recallTokens"]
            header = shown["header_all"]
            assert f"{len(context['messages'])} messages: {context['tokens']:,}" in header
            assert f"recalled originals: {context['recall_tokens']:,}" in header
            # No other token count of this compaction anywhere in the session view: every figure is one of the pair,
            # of its parts, or of a single message or record.
            view = page.locator("#session-view").inner_text()
            assert not re.search(r"~\d", view) and "compressed" not in view  # no "~2K", no "1,578 tokens compressed"

            shot(page, "2-summarize-now")
            assert watch.errors == [], watch.failed

            # 3. The banner lies in the flow above the session: scrolled down, it never covers the text.
            assert page.evaluate("getComputedStyle(document.getElementById('banner')).position") == "static"
            for y in (0, 250, 600, 2000):
                page.evaluate(f"window.scrollTo(0, {y})")
                boxes = page.evaluate(
                    """() => [document.getElementById('banner'), document.getElementById('session-view')]
                        .map(e => e.getBoundingClientRect()).map(r => ({top: r.top, bottom: r.bottom}))"""
                )
                assert boxes[0]["bottom"] <= boxes[1]["top"] + 0.5, (y, boxes)
            page.evaluate("window.scrollTo(0, 600)")
            page.screenshot(path=where / "figures-3-scrolled.png", animations="disabled")


def tool_turn(i: int) -> list[dict[str, Any]]:
    """A user question, a tool call, its long output (25 rows of identifiers), the answer."""
    rows = [f"row {j}: order ORD-{i}{j:03d} shipped from W{j} by UPS, tracking 1Z{i}{j:05d}" for j in range(25)]
    call = {
        "id": f"call_{i}",
        "type": "function",
        "function": {"name": "lookup", "arguments": json.dumps({"batch": i})},
    }
    return [
        {"role": "user", "content": f"Look up the orders of batch {i}."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{i}", "content": "\n".join(rows)},
        {"role": "assistant", "content": f"Batch {i} is shipped."},
    ]


def empty_session(store: SQLiteStore) -> str:
    """A session whose context holds a summary block with no text, and whose record has no summary: what a
    summarizer that answered nothing would leave."""
    sid = "empty~anon"
    originals = [Message.of("user", f"Question {i}: what about alpha{i}?") for i in range(3)]
    pairs = [(f"msg_empty_{i}", m) for i, m in enumerate(originals)]
    block = RecordBlock(id=block_id("", 1, 3), depth=1, messages=3, text="")
    context = [record_message([block]), Message.of("user", "And now?")]
    tokens = HeuristicCounter().count_messages(context)  # the server's counter: the header's parts add up
    info = {"tokens": tokens, "window": WINDOW, "messages": 2, "compactions": 1, "summarized": True}
    store.touch_session(sid, "empty", info, json.dumps(messages_to_list(context)))
    record = SummaryRecord(
        id="rec_empty",
        timestamp_ms=int(time.time() * 1000),
        depth=1,
        parent_id=None,
        summary=" ",
        original_message_ids=tuple(mid for mid, _ in pairs),
        original_sha256=tuple(message_sha256(m) for m in originals),
        blocks=(block.id,),
    )
    assert store.archive_and_record(sid, pairs, record)
    return sid


def test_masked_and_empty_records_are_not_called_summaries(
    browser: Browser, fake: FakeLLMServer, store: SQLiteStore, shot: Shot
) -> None:
    fake.default = FakeText(text="Done.")
    config = ManagerConfig(preserve_recent=4, strategy="mask")
    with proxy(fake, store, config=config) as run:
        sid = masked_session(run)
        records = run.get(f"/api/sessions/{sid}")["records"]
        assert records and all(r["kind"] == "masked" for r in records), records
        assert all(r["tool_results"] > 0 and r["summary_tokens"] is None for r in records)
        empty = empty_session(store)

        with open_page(browser, run.url, run.token) as (page, watch):
            page.evaluate(f"location.hash = '#/s/{sid}'")
            items = page.locator(".records .record")
            expect(items).to_have_count(len(records))
            for item, record in zip(items.all(), records, strict=True):
                n = record["tool_results"]
                label = f"Masked tool output: {n} {'result' if n == 1 else 'results'}"
                expect(item.locator(".record-label")).to_have_text(label)
                assert item.get_attribute("data-kind") == "masked"
                assert "Summary" not in item.inner_text()  # no "Summary 945 tokens", no "Summary text"
                assert item.locator("dt:text-is('Tokens before → after') + dd").inner_text() == figures(
                    record["figures"]
                )
            masked = page.locator('.context .msg[data-kind="masked"]')
            expect(masked.first).to_be_visible()
            expect(masked.first.locator(".kind-tag")).to_have_text("Masked tool output: 1 result")
            expect(page.locator('.context .msg[data-kind="summary"]')).to_have_count(0)
            shot(page, "1-masked")

            page.evaluate(f"location.hash = '#/s/{empty}'")
            record = page.locator(".records .record")
            expect(record).to_have_count(1)
            expect(record.locator(".record-label")).to_have_text("Empty record: no summary text for 3 messages")
            assert record.get_attribute("data-kind") == "empty"
            assert "Summary" not in record.inner_text()  # neither a summary's label, nor its tokens, nor its text
            message = page.locator(".context .msg").first
            expect(message).to_have_attribute("data-kind", "archived")
            expect(message.locator(".kind-tag")).to_have_text("Archived")
            block = message.locator(".block")
            expect(block.locator(".block-head strong")).to_have_text("Empty summary: no text for 3 messages")
            expect(block.locator(".depth-tag")).to_have_count(0)
            block.locator("summary", has_text="Originals").click()  # what it stands for is still in the archive
            expect(block.locator(".orig")).to_have_count(3)
            expect(page.locator('.context .msg[data-kind="summary"]')).to_have_count(0)
            header = page.locator(".section-context > p").first.inner_text()
            assert "summary message" not in header
            context = run.get(f"/api/sessions/{empty}/context")
            assert context["tokens"] + context["outside_tokens"] == context["total_tokens"]
            shot(page, "2-empty")
            assert watch.errors == [], watch.failed


def masked_session(run: Running) -> str:
    """A conversation of tool calls through the proxy, compacted by masking alone; returns its session id."""
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are the order desk."}]
    headers = {"X-Chainsum-Session": "tools", "X-Chainsum-Context-Window": "3000"}
    sid = ""
    with httpx.Client(base_url=run.url, timeout=30) as client:
        for i in range(6):
            history += tool_turn(i)
            response = client.post(
                "/v1/chat/completions", json={"model": "fake-model", "messages": history}, headers=headers
            )
            response.raise_for_status()
            sid = response.headers["x-chainsum-session"]
    assert sid in wait_listed(run, sid)
    return sid


def test_a_record_says_what_the_configured_model_read_of_what_it_summarizes(
    browser: Browser, fake: FakeLLMServer, store: SQLiteStore, shot: Shot
) -> None:
    """Issue 32: with a summarizer model configured, the page says who wrote each summary and what share of the
    summarized conversation the model read (the record's `model_coverage`), in the records and in the events."""
    fake.default = FakeText(text="Noted." + " That is fine." * 6)
    config = ManagerConfig(preserve_recent=4, model_id="openai:fake-summarizer", base_url=fake.openai_base_url)
    with proxy(fake, store, config=config) as run, httpx.Client(base_url=run.url, timeout=30) as client:
        history: list[dict[str, Any]] = []
        sid = ""
        for i in range(12):
            response = turn(client, history, FIRST if i == 0 else question(i), "model")
            sid = response.headers["x-chainsum-session"]
            if response.headers["x-chainsum-summarized"] == "true":
                break
        else:
            pytest.fail("no compaction in 12 turns")
        records = [r for r in run.get(f"/api/sessions/{sid}")["records"] if r["kind"] == "summary"]
        assert records and all(r["model_coverage"] >= 0.95 for r in records), records
        assert any(b"fake-summarizer" in r.raw for r in fake.requests)  # the summarizer model was called
        with open_page(browser, run.url, run.token) as (page, watch):
            page.evaluate(f"location.hash = '#/s/{sid}'")
            newest = page.locator(".records .record").last
            written = newest.locator("dt:text-is('Written by') + dd")
            share = records[-1]["model_coverage"]
            expect(written).to_have_text(f"the model (read {int(share * 1000) / 10:g}% of what it summarizes)")
            event = page.locator(".events .event-context_summarized").first.locator(".event-text")
            expect(event).to_contain_text("summary by the model (read")
            shot(page, "model-coverage")
            assert watch.errors == [], watch.failed
