"""`Codec`: reading a history incrementally gives what reading it from scratch gives, whatever the caller does
between two requests (appends, moves a marker onto its newest message, edits an earlier item, drops the tail), and
whether or not `rereads_little` vouched for the input just before (the proxy's quick path reads it after that
check without comparing the unchanged items again)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.manager._codec import Codec
from manager.manager_support import Dict

_EDITS = st.sampled_from(["append", "marker", "edit-earlier", "drop-tail", "same"])


def _step(i: int) -> list[Dict]:
    call = f"toolu_{i:024d}"
    return [
        {"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "Bash", "input": {"n": i}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": f"output {i}"}]},
    ]


def _request(hist: list[Dict], edit: str, k: int) -> list[Dict]:
    """The next request's items (fresh copies, as a parsed body gives them) after `edit` to `hist`."""
    out = copy.deepcopy(hist)
    if edit == "append":
        out += _step(k)
    elif edit == "edit-earlier" and len(out) > 2:
        out[k % (len(out) - 1)]["content"].append({"type": "text", "text": f"edited {k}"})
    elif edit == "drop-tail" and len(out) > 2:
        del out[-2:]
    if edit in ("append", "marker"):
        for item in out:
            for block in item["content"]:
                block.pop("cache_control", None)
        out[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return out


@settings(max_examples=60, deadline=None)
@given(edits=st.lists(_EDITS, min_size=1, max_size=12), vouch=st.lists(st.booleans(), min_size=12, max_size=12))
def test_incremental_reads_equal_a_fresh_read(edits: list[str], vouch: list[bool]) -> None:
    codec = Codec("anthropic")
    hist: list[Dict] = [{"role": "user", "content": [{"type": "text", "text": "start"}]}]
    codec.read(copy.deepcopy(hist))
    for k, edit in enumerate(edits):
        items: list[Any] = _request(hist, edit, k)
        if vouch[k]:
            codec.rereads_little(items, max_items=16, max_chars=1_000_000)
        codec.read(items)
        fresh = Codec("anthropic")
        fresh.read(items)
        assert codec.messages == fresh.messages
        assert codec.src == fresh.src
        hist = items


def test_a_vouch_is_for_the_input_it_checked_only() -> None:
    """`rereads_little` vouches for one input; another list read after it (or the same one after
    `forget_vouched`) is compared as usual, so an edit in it is seen."""
    hist: list[Dict] = [{"role": "user", "content": [{"type": "text", "text": "start"}]}, *_step(0), *_step(1)]
    codec = Codec("anthropic")
    codec.read(copy.deepcopy(hist))
    checked = copy.deepcopy(hist) + _step(2)
    assert codec.rereads_little(checked, max_items=16, max_chars=100_000)
    edited = copy.deepcopy(checked)
    edited[1]["content"][0]["input"] = {"n": 99}
    codec.read(edited)
    fresh = Codec("anthropic")
    fresh.read(edited)
    assert codec.messages == fresh.messages

    again = copy.deepcopy(edited) + _step(3)
    assert codec.rereads_little(again, max_items=16, max_chars=100_000)
    again[2]["content"][0]["content"] = "changed"  # after the check: what it vouched for no longer holds
    codec.forget_vouched()
    codec.read(again)
    fresh = Codec("anthropic")
    fresh.read(again)
    assert codec.messages == fresh.messages
