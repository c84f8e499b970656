"""DESIGN invariants 10 and 11 over generated agent sessions, request by request through a `ContextManager` at a
window a few tool results wide:

- between two compactions each request is the previous one plus the new messages, compared as the wire dicts the
  caller gets (what chainsum added, a recall block or a masked or clipped result, stays as it was sent); a
  compaction attempt that summarized nothing counts as a compaction only where it folded in recall blocks that held
  the request over the window (`Prepared.rewritten`);
- the newest tool output is the last thing to lose: no older output is whole while a newer one is masked or
  clipped (results of one step are of one age; an output whose mask would cost about what it replaces is left
  out: the planner keeps it whole, masking it would gain nothing).

Each recall block takes at most a tenth of the window (each new user message gets its own room) and never repeats
a message the request holds.

The caller either keeps its full history (a chat app, the proxy) or sends back what it got plus what happened
since (an agent framework that replaces its state); the session gets a few more user messages than the generator
writes, naming identifiers of earlier tool output, so that recall brings originals back between compactions."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.formats import load
from chainsum.manager import ContextManager, ManagerConfig, is_recall_message
from chainsum.messages import Message, ToolCall, ToolResult
from chainsum.store import MemoryArchive
from chainsum.strategies._mask import CLIP_MARKER, is_masked, mask_saving
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing.sessions import agent_session
from chainsum.tokens import HeuristicCounter
from sampling import examples

Dict = dict[str, Any]
COUNTER = HeuristicCounter()


def _with_questions(session: list[Dict], seed: int, every: int) -> list[Dict]:
    """`session` with a user message after every `every`-th tool step (where the next message is an assistant's),
    asking about identifiers planted in the output before it."""
    rng = random.Random(seed)
    out: list[Dict] = []
    steps = 0
    for k, message in enumerate(session):
        out.append(message)
        following = session[k + 1] if k + 1 < len(session) else None
        if message["role"] == "tool" and following is not None and following["role"] == "assistant":
            steps += 1
            if steps % every == 0:
                step = rng.randint(1, steps)
                out.append(
                    {"role": "user", "content": f"Before you go on: what did ERR-{step:05d} say about unit_{step}.py?"}
                )
    return out


def _dumps(items: Sequence[Any]) -> list[str]:
    return [json.dumps(item, sort_keys=True) for item in items]


def _originals(session: Sequence[Dict]) -> dict[str, tuple[ToolCall, ToolResult]]:
    """Each call id of the session with its call and its result as first written."""
    messages = load(list(session), format="openai").messages
    calls = {p.id: p for m in messages for p in m.parts if isinstance(p, ToolCall)}
    return {p.call_id: (calls[p.call_id], p) for m in messages for p in m.parts if isinstance(p, ToolResult)}


def _maskable(message: Message, result: ToolResult, call: ToolCall) -> bool:
    """The planner would mask `result` (of the tool message `message`) if it had to: masking is expected to save
    something (`mask_saving`). For a short list of paths the placeholder, which names the tool, its arguments and
    the output's identifiers, is no shorter than the output, and the output stays whole."""
    return mask_saving(result, call, COUNTER.count_message(message), COUNTER) > 0


def newest_lost_first(out: Sequence[Message], originals: dict[str, tuple[ToolCall, ToolResult]]) -> list[str]:
    """Problems with invariant 11 in one request: an output kept whole (and large enough for a mask to shrink it)
    in a step older than a step with a masked or clipped output."""
    whole: list[tuple[int, str]] = []  # (step, call id)
    cut: list[tuple[int, str]] = []
    step = -1
    for i, message in enumerate(out):
        if message.role == "assistant" and message.tool_calls:
            step = i
        for part in message.parts:
            if not isinstance(part, ToolResult) or part.call_id not in originals:
                continue
            call, original = originals[part.call_id]
            if is_masked(part) or CLIP_MARKER in part.text:
                cut.append((step, part.call_id))
            elif part.content == original.content and _maskable(message, original, call):
                whole.append((step, part.call_id))
    newest_cut = max(cut, default=None)
    if newest_cut is None:
        return []
    return [
        f"{c} (step {s}) is whole while {newest_cut[1]} (step {newest_cut[0]}) is not"
        for s, c in whole
        if s < newest_cut[0]
    ]


def replay(session: list[Dict], window: int, adopt: bool) -> tuple[int, int]:
    """Prepare every model request of `session` (one before each assistant message) and check both invariants on
    each; returns (compactions, requests that carried a recall block)."""
    archive = MemoryArchive()
    manager = ContextManager(
        ManagerConfig(), context_window=window, summarizers=[ExtractiveSummarizer()], archive=archive
    )
    originals = _originals(session)
    previous: list[str] | None = None
    held: list[Any] = []  # what an adopting caller holds: the last output, and what happened since
    sent_to = 0
    recalled_before: set[str] = set()
    compactions = recalled = 0
    for end in range(2, len(session) + 1):
        if end < len(session) and session[end]["role"] != "assistant":
            continue
        given_ = [*held, *session[sent_to:end]] if adopt and previous is not None else list(session[:end])
        prepared = manager.prepare_sync(given_)
        sent = _dumps(prepared.messages)
        compactions += prepared.changed
        if not prepared.rewritten and previous is not None:
            first = next((k for k, (a, b) in enumerate(zip(previous, sent, strict=False)) if a != b), len(sent))
            assert sent[: len(previous)] == previous, f"request before message {end}: differs at item {first}"
        out = list(load(list(prepared.messages), format="openai").messages)
        assert newest_lost_first(out, originals) == [], f"request before message {end}"
        blocks = [m for m in out if is_recall_message(m)]
        recalled += bool(blocks)
        # each block within its own room (a tenth of the window), the request under the window with all of them,
        # and no block repeats what the model sees already
        assert all(COUNTER.count_message(m) <= window // 10 for m in blocks)
        assert COUNTER.count_messages(out) <= window
        assert len(set(prepared.recalled)) == len(prepared.recalled)
        # (a block made earlier may come to repeat a message the caller wrote again since)
        fresh = [i for i in prepared.recalled if prepared.rewritten or i not in recalled_before]
        originals_back = archive.originals(manager.session, fresh).values()
        assert not [m for m in originals_back if m in out], "a recalled original is in the context already"
        recalled_before = set(prepared.recalled)
        previous, held, sent_to = sent, list(prepared.messages), end
    return compactions, recalled


@settings(max_examples=examples(8), deadline=None)
@given(
    st.integers(30, 110),
    st.integers(0, 10_000),
    st.integers(2, 6),
    st.sampled_from([5_000, 8_000, 12_000]),
    st.booleans(),
)
def test_requests_only_grow_between_compactions_and_the_newest_output_goes_last(
    n: int, seed: int, every: int, window: int, adopt: bool
) -> None:
    """A generated session of about `n` messages with a question every `every` tool steps (drawn as numbers, not
    as the session: its repr runs to tens of kilobytes)."""
    replay(_with_questions(agent_session(n, seed=seed), seed, every), window, adopt)


def test_a_session_that_compacts_and_recalls_keeps_both_invariants() -> None:
    """One session that surely compacts several times and recalls between compactions (the property above draws
    sessions that may do neither), for both kinds of caller."""
    session = _with_questions(agent_session(120, seed=5), seed=1, every=3)
    for adopt in (False, True):
        compactions, recalled = replay(session, 8_000, adopt)
        assert compactions >= 3 and recalled >= 3, (adopt, compactions, recalled)
