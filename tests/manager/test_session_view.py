"""`SessionView`: what a session holds between calls. Reading step by step gives the counts and the history a fresh
read gives (whatever the caller did in between), a stored mapping newer than the one held is taken, and an item
changed in place is seen before anything is archived."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.manager import SessionState
from chainsum.manager._session_view import SessionView
from chainsum.manager._view import Entry, View
from chainsum.messages import Message, Text
from chainsum.tokens import HeuristicCounter
from manager.manager_support import SYSTEM, Dict, tool_turn, turn

COUNTER = HeuristicCounter()
STATE = SessionState()


def _fresh(items: list[Dict]) -> SessionView:
    seen = SessionView(COUNTER, None, "openai")
    seen.read(items, STATE)
    return seen


_EDITS = st.lists(st.sampled_from(["turn", "tool", "edit", "drop", "same"]), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(_EDITS)
def test_reading_step_by_step_equals_a_fresh_read(edits: list[str]) -> None:
    seen = SessionView(COUNTER, None, "openai")
    history: list[Dict] = [SYSTEM]
    for k, edit in enumerate(edits):
        if edit == "turn":
            history += turn(k, words=5)
        elif edit == "tool":
            history += tool_turn(k, words=5)
        elif edit == "edit" and len(history) > 1:
            history[1 + k % (len(history) - 1)] = {"role": "user", "content": f"edited {k}"}
        elif edit == "drop" and len(history) > 2:
            del history[-2:]
        request = copy.deepcopy(history)  # fresh objects every call, as a parsed body gives them
        assert seen.read(request, STATE) == []
        fresh = _fresh(copy.deepcopy(history))
        assert seen.messages() == fresh.messages()
        assert seen.tokens() == fresh.tokens() == COUNTER.count_messages(fresh.messages())
        assert seen.n_out() == len(fresh.messages())


def test_a_newer_stored_mapping_is_taken_as_far_as_the_input_matches_it() -> None:
    history = [SYSTEM, *turn(1), *turn(2), *turn(3)]
    seen = _fresh(history)
    record = Message(role="user", parts=(Text(text="summary of turns 1 and 2"),))
    # the mapping another process wrote: the first four input messages stand for one record
    source = seen.messages()
    view = View.aligned(source, seen.covers(), (source[0], record, *source[5:]), seen.prints)
    stored = SessionState(version=3, view=view.to_data())
    assert seen.read(history, stored) == []
    assert seen.version == 3
    assert seen.messages() == [source[0], record, *source[5:]]
    assert seen.tokens() == COUNTER.count_messages(seen.messages())
    # the caller edited a message inside the summarized range: the mapping's entry no longer stands
    edited = [SYSTEM, {"role": "user", "content": "a different first question"}, *history[2:]]
    dropped = seen.read(edited, stored)
    assert dropped and all(isinstance(e, Entry) for e in dropped)
    assert seen.messages() == _fresh(edited).messages()


def test_an_item_changed_in_place_is_seen_before_archiving() -> None:
    history = [SYSTEM, *tool_turn(1)]
    seen = SessionView(COUNTER, None, "openai")
    seen.read(history, STATE)
    assert not seen.changed_in_place(history)
    history[3]["content"] = "the tool said something else"  # same dict object, new content
    seen.read(history, STATE)  # by identity: not seen
    assert seen.changed_in_place(history)
    assert seen.version == -1  # the stored mapping is taken again on the next read
    seen.read(history, STATE)
    assert seen.messages() == _fresh(copy.deepcopy(history)).messages()


def test_the_system_prompt_count_is_kept_while_the_prompt_is_the_same() -> None:
    seen = SessionView(COUNTER, "anthropic", "anthropic")
    prompt = [{"type": "text", "text": "You are terse. " * 40}]
    first = seen.system_tokens(prompt)
    assert first > 0
    assert seen.system_tokens(copy.deepcopy(prompt)) == first
    assert seen.system_tokens("short") == COUNTER.count_text("short")
    assert seen.system_tokens(None) == 0
