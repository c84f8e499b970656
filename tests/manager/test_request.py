"""`RequestWriter`: the request a call hands back. With nothing mapped and no recall block, the caller's own list
object comes back (no copy); its sizes are the view's plus what lies outside the messages; a request over the window
gets an event whose floor is the system prompt, the reserve, the system messages and the current turn."""

from __future__ import annotations

from chainsum.manager import ManagerConfig, SessionState
from chainsum.manager._request import RequestWriter
from chainsum.manager._session_view import Frame, SessionView
from chainsum.manager._state_cell import StateCell
from chainsum.store import MemoryArchive
from chainsum.tokens import HeuristicCounter
from manager.manager_support import SYSTEM, Dict, turn

COUNTER = HeuristicCounter()


def _writer(items: list[Dict], window: int) -> tuple[RequestWriter, SessionView, Frame]:
    seen = SessionView(COUNTER, None, "openai")
    seen.read(items, SessionState())
    cell = StateCell(MemoryArchive(), "s", lambda _: None)
    writer = RequestWriter(seen, cell, ManagerConfig(), window, COUNTER, "openai")
    frame = Frame(items, system_tokens=40, reserved=60, tokens=seen.tokens() + 100)
    return writer, seen, frame


def test_nothing_mapped_gives_back_the_callers_own_list() -> None:
    items = [SYSTEM, *turn(1), *turn(2)]
    writer, seen, frame = _writer(items, 100_000)
    prepared = writer.prepared(frame, None, ())
    assert prepared.messages is items
    assert prepared.tokens_after == prepared.tokens_before == seen.tokens() + 100
    assert not prepared.over_window and not prepared.rewritten and prepared.recall_tokens == 0


def test_a_request_over_the_window_says_what_no_compaction_can_go_under() -> None:
    items = [SYSTEM, *turn(1, words=200), {"role": "user", "content": "the current question " * 200}]
    writer, seen, frame = _writer(items, 500)
    prepared = writer.prepared(frame, None, ())
    assert prepared.over_window
    event = writer.window_exceeded(prepared.tokens_after, frame)
    messages = seen.messages()
    floor = 100 + COUNTER.count_message(messages[0]) + COUNTER.count_message(messages[-1])
    assert event.floor_tokens == floor and event.window == 500 and event.tokens == prepared.tokens_after
    assert floor > 500 and event.detail == "the system prompt and the current turn alone exceed the window"
    # a history over the window whose current turn alone fits: the history could still be brought under it
    items = [SYSTEM, *turn(1, words=400), {"role": "user", "content": "a short question"}]
    writer, _, frame = _writer(items, 500)
    event = writer.window_exceeded(writer.prepared(frame, None, ()).tokens_after, frame)
    assert event.floor_tokens < 500 and event.detail == "the history could not be brought under the window now"
