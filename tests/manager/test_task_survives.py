"""The task survives (issue 21), checked on every request of generated agent sessions and real recordings:

- the session's first user request, and every later one, is never lost: it is in the request verbatim, or its
  words are in a summary record of it;
- recall never brings back a message the request still holds.

Generated sessions (`chainsum.testing.sessions.agent_session`) vary in length, seed, window and the size of their
tool output, for a caller that keeps its history and one that sends back what it got; recordings are the Claude Code
corpus excerpt (always) and every Claude Code session of the shared corpora (``-m corpus``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.chain import is_record_message, record_blocks
from chainsum.formats import load
from chainsum.manager import ContextManager, ManagerConfig, is_recall_message
from chainsum.messages import Message, ToolResult
from chainsum.rules import repair
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing.sessions import agent_session
from corpora_support import FULL, documents
from sampling import examples

_SPACE = re.compile(r"\s+")


def _words(text: str, n: int = 6) -> str:
    return " ".join(_SPACE.split(text.strip())[:n])


_HARNESS = ("[Request interrupted", "<task-notification>", "<command-", "<local-command-", "<system-reminder>")
"""How the user messages an agent's harness writes begin (Claude Code: an interruption, a background task's
notification, a slash command and its output, a reminder): notices, not the user's requests."""


def requests_of(messages: Sequence[Message]) -> list[Message]:
    """The user requests of a history: user messages with text that neither chainsum nor the agent's harness
    wrote (`_HARNESS`)."""
    return [
        m
        for m in messages
        if m.role == "user"
        and m.text.strip()
        and not m.text.lstrip().startswith(_HARNESS)
        and not is_record_message(m)
        and not is_recall_message(m)
    ]


def lost(request: Message, out: Sequence[Message]) -> bool:
    """`request` is neither in `out` verbatim nor its first words in a record block's text."""
    if any(m.role == "user" and request.text in m.text for m in out):
        return False
    records = " ".join(b.text for m in out for b in record_blocks(m) or ())
    return _words(request.text) not in _SPACE.sub(" ", records)


def replay(messages: Sequence[Message], window: int, adopt: bool) -> int:
    """Prepare every model request of `messages` (one before each assistant message) and check the module
    docstring's properties on each; returns the compactions."""
    archive = MemoryArchive()
    manager = ContextManager(
        ManagerConfig(), context_window=window, summarizers=[ExtractiveSummarizer()], archive=archive
    )
    held: list[Message] = []
    sent_to = 0
    compactions = 0
    recalled_before: set[str] = set()
    for end in range(2, len(messages) + 1):
        if end < len(messages) and messages[end].role != "assistant":
            continue
        given_ = [*held, *messages[sent_to:end]] if adopt and held else list(messages[:end])
        prepared = manager.prepare_sync(given_)
        out = list(prepared.messages)
        compactions += prepared.changed
        gone = [r.text[:80] for r in requests_of(messages[:end]) if lost(r, out)]
        assert gone == [], f"request before message {end} ({compactions} compactions): lost {gone}"
        fresh = [i for i in prepared.recalled if prepared.rewritten or i not in recalled_before]
        back = archive.originals(manager.session, fresh).values()
        assert not [m for m in back if m in out], f"request before message {end}: recall repeats the context"
        recalled_before = set(prepared.recalled)
        held, sent_to = [m for m in out if not is_recall_message(m)], end
    return compactions


def _clipped(session: list[dict[str, object]], limit: int | None) -> list[Message]:
    messages = list(load(session, format="openai").messages)
    if limit is None:
        return messages
    out: list[Message] = []
    for m in messages:
        parts = tuple(
            replace(p, content=p.content[:limit]) if isinstance(p, ToolResult) and isinstance(p.content, str) else p
            for p in m.parts
        )
        out.append(replace(m, parts=parts))
    return out


@settings(max_examples=examples(8), deadline=None)
@given(
    st.integers(30, 120),
    st.integers(0, 10_000),
    st.sampled_from([5_000, 8_000, 12_000, 20_000]),
    st.sampled_from([1_500, 6_000, None]),
    st.booleans(),
)
def test_the_task_survives_on_generated_agent_sessions(
    n: int, seed: int, window: int, output_limit: int | None, adopt: bool
) -> None:
    """Drawn as numbers (the session's repr runs to tens of kilobytes): about `n` messages, tool output cut to
    `output_limit` characters (None: as generated, up to 60 KB)."""
    replay(_clipped(agent_session(n, seed=seed), output_limit), window, adopt)


def test_the_task_survives_a_long_agent_session_that_compacts_many_times() -> None:
    for adopt in (False, True):
        assert replay(_clipped(agent_session(160, seed=5), None), 8_000, adopt) >= 4


def _claude_code(include_subagents: bool = False) -> list[tuple[str, list[Message]]]:
    out: list[tuple[str, list[Message]]] = []
    for doc in documents(include_subagents=include_subagents):
        if doc.format != "claude-code":
            continue
        messages = list(load(doc.data, format=doc.format).messages)
        out.append((doc.label, list(repair(messages, "anthropic").messages)))
    return out


def test_the_task_survives_the_claude_code_excerpt() -> None:
    """The corpus excerpt shipped with the tests (always there): every request, at a window that compacts it."""
    sessions = _claude_code()
    assert sessions
    for label, messages in sessions[:1]:
        assert replay(messages, 24_000, adopt=False) >= 1, label


@pytest.mark.corpus
@pytest.mark.skipif(not FULL, reason="the shared corpora are not beside the checkout")
@pytest.mark.parametrize("window", [32_000, 64_000])
def test_the_task_survives_every_claude_code_session_of_the_corpora(window: int) -> None:
    for label, messages in _claude_code(include_subagents=True):
        replay(messages, window, adopt=False)
        assert label
