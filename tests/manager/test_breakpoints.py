"""The manager's Anthropic prompt-cache breakpoints (`chainsum.manager._breakpoints`), request by request over
generated agent sessions written as Anthropic requests, through compactions, for clients that mark nothing, mark
fixed blocks, or move their own mark to the newest message (as Claude Code does), keeping their history or sending
back what they got:

- never more than 4 ``cache_control`` blocks in a request (system prompt included);
- the client's own marks stay on their very blocks while those blocks are sent;
- once the session is compacted, the summary record's block carries a mark where there is room, and the last
  message does when the client marked none of its messages; every other mark is the client's;
- a session never compacted goes as the client wrote it;
- between compactions each request is the previous one plus the new messages, byte for byte, but for the one mark
  the manager moves (on the previous request's last message), and, where the client moves its own, but for that.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Sequence
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.chain import RECORD_INTRO
from chainsum.formats import dump, load
from chainsum.manager import ContextManager, ManagerConfig
from chainsum.manager._breakpoints import Breakpoints, count_marks
from chainsum.messages import Message, Text
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import ScriptedSummarizer
from chainsum.testing.sessions import agent_session
from sampling import examples

Dict = dict[str, Any]
EPHEMERAL = {"type": "ephemeral"}
SYSTEM = [{"type": "text", "text": "You are a coding agent.", "cache_control": EPHEMERAL}]


def anthropic_session(n: int, seed: int) -> list[Dict]:
    """A generated agent session as Anthropic wire messages (its system prompt left out: it goes beside them)."""
    messages = load(agent_session(n, seed=seed), format="openai").messages
    doc = dump([m for m in messages if m.role != "system"], to="anthropic")
    return cast(list[Dict], doc if isinstance(doc, list) else doc["messages"])


def blocks(item: Dict) -> list[Dict]:
    content = item["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else cast(list[Dict], content)


def ident(block: Dict) -> str:
    """What a block is, whatever happens to its content: a tool call or result by its id (a masked or clipped result
    is still the client's block, its mark with it), any other block by its JSON without the mark."""
    if block.get("type") == "tool_result":
        return f"tool_result:{block['tool_use_id']}"
    if block.get("type") == "tool_use":
        return f"tool_use:{block['id']}"
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)


def marked_blocks(items: Sequence[Dict]) -> list[str]:
    """Each marked block of `items` (tool results' inner blocks too), as its JSON without the mark."""
    out: list[str] = []
    for item in items:
        for block in blocks(item):
            inner = block.get("content")
            for b in [block, *(cast(list[Dict], inner) if isinstance(inner, list) else [])]:
                if "cache_control" in b:
                    out.append(ident(b))
    return out


def unmarked(item: Dict) -> Dict:
    """`item` with no mark on its last block, its content as blocks (a string stands for one text block)."""
    content = [dict(b) for b in blocks(item)]
    content[-1].pop("cache_control", None)
    return {**item, "content": content}


def is_record(item: Dict) -> bool:
    return any(b.get("type") == "text" and str(b.get("text", "")).startswith(RECORD_INTRO) for b in blocks(item))


def last_message(items: Sequence[Dict]) -> int:
    return max(k for k, m in enumerate(items) if m["role"] != "system")


def with_client_marks(items: list[Dict], mode: str, fixed: set[int]) -> list[Dict]:
    """The client's request: ``fixed`` marks the last block of the session's messages at the indexes in `fixed`;
    ``moving`` marks the last block of its newest message; ``none`` marks nothing."""
    out = copy.deepcopy(items)
    targets: set[int] = fixed if mode == "fixed" else {len(out) - 1} if mode == "moving" else set()
    for k in targets:
        if k < len(out):
            last = blocks(out[k])[-1]
            if last.get("type") in ("text", "tool_use", "tool_result") and (last.get("type") != "text" or last["text"]):
                out[k] = {**out[k], "content": [*blocks(out[k])[:-1], {**last, "cache_control": EPHEMERAL}]}
    return out


def replay(session: list[Dict], window: int, mode: str, fixed: set[int], adopt: bool) -> tuple[int, int]:
    """Prepare every request of `session` (one before each assistant message) and check the module docstring's
    properties on each; returns (compactions, requests whose record carried the manager's mark)."""
    manager = ContextManager(
        ManagerConfig(),
        context_window=window,
        summarizers=[ExtractiveSummarizer()],
        archive=MemoryArchive(),
        format="anthropic",
        provider="anthropic",
    )
    previous: list[Dict] | None = None
    held: list[Dict] = []
    sent_to = 0
    compactions = record_marks = 0
    for end in range(1, len(session) + 1):
        if end < len(session) and session[end]["role"] != "assistant":
            continue
        client = with_client_marks(session[:end], mode, fixed)
        given_ = [*held, *client[sent_to:end]] if adopt and previous is not None else client
        before = json.dumps(given_)
        prepared = manager.prepare_sync(given_, system=SYSTEM)
        assert json.dumps(given_) == before, "the caller's items were changed in place"
        sent = cast(list[Dict], json.loads(json.dumps(list(prepared.messages))))
        compactions += prepared.changed
        ours = set(marked_blocks(client))
        theirs = marked_blocks(sent)
        # never more than Anthropic's 4
        assert count_marks(SYSTEM) + count_marks(sent) <= 4, f"request before message {end}"
        # the client's marks stay on their blocks
        present = {ident(b) for b in _all_blocks(sent)}
        assert {b for b in ours if b in present} <= set(theirs), f"request before message {end}: a client mark lost"
        compacted = manager.state.summarizations > 0
        added = [b for b in theirs if b not in ours]
        if not compacted:
            assert sent == client or (adopt and previous is not None), "a session never compacted goes as it came"
        allowed: set[str] = set()
        room = 4 - count_marks(SYSTEM) - len([b for b in theirs if b in ours])
        records = [k for k, m in enumerate(sent) if is_record(m)]
        if compacted and records:
            record_block = next(b for b in blocks(sent[records[-1]]) if str(b.get("text", "")).startswith(RECORD_INTRO))
            key = ident(record_block)
            allowed.add(key)
            if room > 0:
                assert "cache_control" in record_block, f"request before message {end}: no mark after the record"
                record_marks += 1
                room -= 1 if key not in ours else 0
        last = last_message(sent)
        last_block = blocks(sent[last])[-1]
        allowed.add(ident(last_block))
        client_marked_any = any(b in present for b in ours)
        rewritten = records or not adopt  # an adopting caller's history is the model's own until it holds a record
        if (
            compacted
            and rewritten
            and room > 0
            and not client_marked_any
            and last_block.get("type") in ("text", "tool_result")
        ):
            assert "cache_control" in last_block, f"request before message {end}: no mark at the end"
        assert set(added) <= allowed, f"request before message {end}: a mark where the manager puts none"
        if client_marked_any:  # a client that marks its messages moves its own mark, or none
            end_key = ident(last_block)
            assert end_key not in added, f"request before message {end}: a moving mark beside the client's"
        # append-only between compactions, but for the mark the manager moves (and the client's, when it moves)
        if previous is not None and not prepared.rewritten:
            norm_prev, norm_sent = previous, sent
            if mode == "moving":
                norm_prev, norm_sent = _strip(previous), _strip(sent)
            k = last_message(norm_prev)
            assert norm_sent[:k] == norm_prev[:k], f"request before message {end}: not an extension"
            assert unmarked(norm_sent[k]) == unmarked(norm_prev[k]), f"request before message {end}: its item {k}"
            assert norm_sent[k + 1 : len(norm_prev)] == norm_prev[k + 1 :]
        previous, held, sent_to = sent, sent, end
    return compactions, record_marks


def _all_blocks(items: Sequence[Dict]) -> list[Dict]:
    out: list[Dict] = []
    for item in items:
        for block in blocks(item):
            inner = block.get("content")
            for b in [block, *(cast(list[Dict], inner) if isinstance(inner, list) else [])]:
                out.append({k: v for k, v in b.items() if k != "cache_control"})
    return out


def _strip(items: Sequence[Dict]) -> list[Dict]:
    """`items` with every mark taken off (a client that moves its own mark rewrites its requests itself)."""
    text = json.dumps(list(items)).replace(', "cache_control": {"type": "ephemeral"}', "")
    return [unmarked(m) if isinstance(m["content"], list) else m for m in cast(list[Dict], json.loads(text))]


@settings(max_examples=examples(10), deadline=None)
@given(
    st.integers(30, 90),
    st.integers(0, 10_000),
    st.sampled_from([5_000, 8_000, 12_000]),
    st.sampled_from(["none", "fixed", "moving"]),
    st.booleans(),
)
def test_breakpoints_over_generated_anthropic_sessions(n: int, seed: int, window: int, mode: str, adopt: bool) -> None:
    """A generated session of about `n` messages (drawn as numbers, not as the session: its repr runs to tens of
    kilobytes); `fixed` marks up to two of its first messages (the
    first, the task, stays in the context: its mark too)."""
    rng = random.Random(seed)
    fixed = set(rng.sample(range(12), rng.randint(0, 2)))
    replay(anthropic_session(n, seed), window, mode, fixed, adopt and mode != "moving")


def test_a_session_that_compacts_gets_the_record_mark_for_every_kind_of_client() -> None:
    """One session that surely compacts several times (the property may draw sessions that do not)."""
    session = anthropic_session(110, 5)
    for mode, adopt in (("none", False), ("none", True), ("fixed", False), ("moving", False)):
        compactions, record_marks = replay(session, 8_000, mode, {0, 3}, adopt)
        assert compactions >= 2 and record_marks >= 5, (mode, adopt, compactions, record_marks)


def test_the_setting_turns_the_manager_marks_off() -> None:
    session = anthropic_session(110, 5)
    manager = ContextManager(
        ManagerConfig(cache_breakpoints=False),
        context_window=8_000,
        summarizers=[ScriptedSummarizer()],
        format="anthropic",
        provider="anthropic",
    )
    compacted = 0
    for end in range(1, len(session) + 1):
        if end < len(session) and session[end]["role"] != "assistant":
            continue
        prepared = manager.prepare_sync(session[:end], system=SYSTEM)
        compacted += prepared.changed
        assert count_marks(list(prepared.messages)) == 0
    assert compacted >= 2


def test_marks_elsewhere_in_the_request_leave_less_room() -> None:
    """Tool definitions with 3 marks and a marked system prompt: the manager adds none."""
    session = anthropic_session(110, 5)
    manager = ContextManager(
        context_window=8_000, summarizers=[ScriptedSummarizer()], format="anthropic", provider="anthropic"
    )
    outs: list[int] = []
    for end in range(1, len(session) + 1):
        if end < len(session) and session[end]["role"] != "assistant":
            continue
        prepared = manager.prepare_sync(session[:end], system=SYSTEM, outside_cache_marks=3)
        outs.append(count_marks(list(prepared.messages)))
    assert manager.state.summarizations >= 2 and set(outs) == {0}


def test_message_objects_bound_for_anthropic_get_the_marks_in_their_extras() -> None:
    """The library with `Message` objects and ``provider="anthropic"``: the marks ride in the parts' extras, which
    the Anthropic writer puts on the wire."""
    messages = list(load(agent_session(110, seed=5), format="openai").messages)
    manager = ContextManager(context_window=8_000, summarizers=[ScriptedSummarizer()], provider="anthropic")
    seen = 0
    for end in range(2, len(messages) + 1):
        if end < len(messages) and messages[end].role != "assistant":
            continue
        prepared = manager.prepare_sync(messages[:end])
        out = cast(list[Message], list(prepared.messages))
        wire = dump(out, to="anthropic")
        wire_messages = cast(list[Dict], wire["messages"] if isinstance(wire, dict) else wire)
        assert count_marks(out) == count_marks(wire_messages) <= 4
        if manager.state.summarizations:
            record = next(m for m in out if isinstance(m.parts[0], Text) and m.text.startswith(RECORD_INTRO))
            assert count_marks(record) == 1 and count_marks(out[-1]) == 1
            seen += 1
    assert seen > 5


def test_marks_sent_back_are_taken_back_not_piled_up() -> None:
    """`Breakpoints.unmark` gives back the item as it was for each item the last request marked, sent back as it
    went; an item the caller changed since is the caller's."""
    marks = Breakpoints()
    record = {"role": "user", "content": RECORD_INTRO + "\n<record_x>...</record_x>"}
    items = [record, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "next"}]
    out = list(marks.place(items, outside=1, rewritten=True))
    assert count_marks(out) == 2 and out[1] is items[1]
    assert list(marks.unmark(out)) == items
    edited = [out[0], out[1], {"role": "user", "content": [{"type": "text", "text": "x", "cache_control": EPHEMERAL}]}]
    assert list(marks.unmark(edited)) == [record, items[1], edited[2]]
    plain = items[1:]
    assert marks.place(plain, outside=1, rewritten=False) is plain  # a session never compacted goes as it came
    assert count_marks(list(marks.place(plain, outside=1, rewritten=True))) == 1  # the moving one alone
    assert marks.place(items, outside=4, rewritten=True) is items  # no room
