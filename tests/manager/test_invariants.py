"""DESIGN's invariants for the `ContextManager` itself, request by request, over generated histories and the real
corpora, fed as an agent feeds them (the manager's last output plus what was recorded since):

- every request it returns is valid for the provider;
- it is never larger than what it was given;
- the user's system messages survive verbatim;
- every message taken out of the context is in the archive, with the SHA-256 a summary record holds for it;
- the current turn is untouched unless the history was over the window (where only a clip may touch it);
- no summarizer call is thrown away: a request that calls the summarizer applies what it wrote.

The strategy-level invariants are tested per strategy in ``strategies_core``; these are the manager's own: its
passes, tail guard, emergency rules and archiving compose without breaking any of them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chainsum import formats
from chainsum.chain import Chain, is_summary_system
from chainsum.manager import (
    ContextManager,
    CountingSummarizer,
    ManagerConfig,
    SummarizationEvent,
    is_recall_message,
    request_indices,
)
from chainsum.manager._recall import SMALLEST_ROOM
from chainsum.messages import Image, Message, Part, Role, Text, ToolCall, ToolResult
from chainsum.rules import repair, validate
from chainsum.store import MemoryArchive, message_sha256
from chainsum.summarize import ExtractiveSummarizer
from chainsum.testing import ChainConfig, generate_chain, iter_documents
from chainsum.tokens import HeuristicCounter
from corpora_support import document
from generators import chain_configs, histories, well_formed_histories
from sampling import THOROUGH, examples

COUNTER = HeuristicCounter()


def _key(m: Message, shas: dict[int, tuple[Message, str]]) -> str:
    """`message_sha256(m)`, once per message object in one replay: every request resends the whole history, and
    hashing it again each time took close to half of the corpus replay. `shas` holds the message itself, so its id
    is not reused while the replay runs."""
    hit = shas.get(id(m))
    if hit is None:
        hit = shas[id(m)] = (m, message_sha256(m))
    return hit[1]


def current_turn(messages: Sequence[Message]) -> tuple[list[Message], list[Message]]:
    """The last body pair (the last assistant message and its tool results) and the user messages after it."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "assistant":
            j = i + 1
            while j < len(messages) and messages[j].role == "tool":
                j += 1
            return list(messages[i:j]), list(messages[j:])
    return [], list(messages)


def unmarked(message: Message) -> Message:
    """`message` without Anthropic ``cache_control`` marks on its parts, its extras as they were before them."""
    parts: list[Part] = []
    for part in message.parts:
        ns = dict(part.extras.get("anthropic") or {})
        fields = {k: v for k, v in dict(ns.get("fields") or {}).items() if k != "cache_control"}
        if "fields" not in ns or fields == ns["fields"]:
            parts.append(part)
            continue
        ns = {k: v for k, v in ns.items() if k != "fields"} | ({"fields": fields} if fields else {})
        extras = {k: v for k, v in part.extras.items() if k != "anthropic"} | ({"anthropic": ns} if ns else {})
        parts.append(replace(part, extras=extras))
    changed = any(a is not b for a, b in zip(parts, message.parts, strict=True))
    return replace(message, parts=tuple(parts)) if changed else message


def check_request(
    given_: list[Message],
    out: list[Message],
    manager: ContextManager,
    archive: MemoryArchive,
    shas: dict[int, tuple[Message, str]],
) -> None:
    provider = manager.provider
    assert validate(out, provider) == [], validate(out, provider)[:3]
    # bound for Anthropic, the request carries the manager's cache marks (`chainsum.manager._breakpoints`), and a
    # caller sending back what it got sends them too: messages are compared without them (these histories have
    # none of their own)
    out, given_ = [unmarked(m) for m in out], [unmarked(m) for m in given_]
    recalled = [m for m in out if is_recall_message(m)]
    # each recall block sent since the last compaction takes at most its room, a tenth of the window or the
    # smallest room a block's frame and one excerpt need, whichever is larger (each new user message gets its own;
    # they stay where they were sent, so there may be several), the request stays under the window with them all,
    # and a caller sending back what it got sends them too: both are left out of the comparisons below
    room = max(int(manager.config.recall_token_ratio * manager.window), SMALLEST_ROOM)
    assert all(COUNTER.count_message(m) <= room for m in recalled)
    if recalled:
        assert COUNTER.count_messages(out) <= manager.window
    given_ = [m for m in given_ if not is_recall_message(m)]
    out = [m for m in out if not is_recall_message(m)]
    assert COUNTER.count_messages(out) <= COUNTER.count_messages(given_)
    text = "\n".join(m.text for m in out)
    for m in given_:
        if m.role == "system" and not is_summary_system(m) and m.text.strip():
            assert m.text in text, "a system message was lost or changed"
    removed = Counter(_key(m, shas) for m in given_) - Counter(_key(m, shas) for m in out)
    if removed:
        archived = {e.sha256 for e in archive.archived(manager.session)}
        recorded = {sha for r in archive.records(manager.session) for sha in r.original_sha256}
        for sha in removed:
            assert sha in archived, "a message left the context without being archived"
            assert sha in recorded, "an archived message is referenced by no summary record"
    if COUNTER.count_messages(given_) <= manager.window:
        pair, after = current_turn(given_)
        out_pair, out_after = current_turn(out)
        assert out_pair == pair, "the current turn changed under the window"
        # trailing user messages may be merged into one (consecutive human messages), never altered or dropped
        merged = "\n".join(m.text for m in out_after)
        assert all(t.text in merged for m in after for t in m.parts if isinstance(t, Text)), "a user message changed"


def replay_checked(messages: Sequence[Message], window: int, provider: str, **config: object) -> int:
    """Feed `messages` request by request; check every request; return how many were compacted."""
    archive = MemoryArchive()
    cfg = replace(ManagerConfig(), **config)  # type: ignore[arg-type]
    counting = CountingSummarizer(ExtractiveSummarizer(), COUNTER)
    manager = ContextManager(cfg, context_window=window, summarizers=[counting], provider=provider, archive=archive)
    history: list[Message] = []
    pos = 0
    compacted = 0
    shas: dict[int, tuple[Message, str]] = {}
    for cut in [*request_indices(messages), len(messages)]:
        history.extend(messages[pos:cut])
        pos = cut
        if not history:
            continue
        given_ = list(history)
        calls = counting.calls
        prepared = manager.prepare_sync(given_)
        out = list(prepared.messages)
        check_request(given_, out, manager, archive, shas)
        if counting.calls > calls:
            assert isinstance(prepared.event, SummarizationEvent), (
                f"{counting.calls - calls} summarizer call(s) in a request that applied nothing ({prepared.event})"
            )
        compacted += out != given_
        history = out
    return compacted


def prepared_for(messages: Sequence[Message], provider: str) -> list[Message]:
    """The history as a well-behaved agent would hold it: valid for its provider to begin with."""
    built = Chain.build(messages, repair=True, allow_pending_tail=True).messages()
    return list(repair(built, provider).messages)


def _said(role: Role, text: str = "0", *, image: bool = False) -> Message:
    picture = (Image(url="https://example.com/a.png", media_type="image/png"),) if image else ()
    return Message(role=role, parts=(Text(text=text), *picture))


def _tool_step(*ids: str) -> list[Message]:
    """An assistant message calling ``get_weather`` once per id, and the calls' empty results."""
    calls = tuple(ToolCall(id=i, name="get_weather") for i in ids)
    results = [Message(role="tool", parts=(ToolResult(call_id=i, name="get_weather"),)) for i in ids]
    return [Message(role="assistant", parts=calls), *results]


def _image_turns() -> list[Message]:
    """Four turns whose every image costs more than a 150-token window: at the summary chain's depth cap, `auto`
    planned to summarize one 6-token assistant message beside a one-block drop that freed nothing, so the round grew
    the history, the executor threw the summary away, and the summarizer was paid for nothing."""
    return [m for _ in range(4) for m in (_said("user", image=True), _said("assistant"))]


def _image_agent() -> list[Message]:
    """An agent session whose images cost two windows of 663 tokens: the tail guard shortened a fold of the
    record to the record and one 6-token message, counted without the record's framing that the new record pays
    again, and the summary the summarizer wrote was thrown away for not being smaller."""
    three = ("call_1", "call_2", "toolu_01A")
    return [
        _said("system"),
        _said("user"),
        *_tool_step("call_1"),
        _said("assistant"),
        _said("user", image=True),
        *_tool_step("call_1", "call_2"),
        _said("assistant"),
        _said("user", "E105M116"),
        *_tool_step("call_1"),
        _said("assistant"),
        _said("user", image=True),
        *_tool_step(*three),
        *_tool_step(*three),
        _said("assistant"),
        _said("user", image=True),
        *_tool_step(*three),
        *_tool_step("call_1"),
        _said("assistant"),
    ]


@settings(max_examples=examples(50))
@given(well_formed_histories(max_turns=8), st.sampled_from(["openai", "anthropic"]), st.integers(150, 1500))
@example(_image_turns(), "openai", 150)
@example(_image_agent(), "openai", 663)
def test_generated_histories(messages: list[Message], provider: str, window: int) -> None:
    replay_checked(prepared_for(messages, provider), window, provider, min_messages=4, cooldown_messages=1)


@given(histories(), st.sampled_from(["openai", "anthropic", "gemini", "bedrock"]), st.integers(100, 1000))
def test_malformed_histories_never_raise_and_any_change_is_valid(
    messages: list[Message], provider: str, window: int
) -> None:
    """What users send is not always well formed (orphan results, unanswered calls, empty messages): the manager
    never raises for it, and what it returns, when it changed anything, is valid and never larger."""
    archive = MemoryArchive()
    cfg = replace(ManagerConfig(), min_messages=2, cooldown_messages=1)
    manager = ContextManager(
        cfg, context_window=window, summarizers=[ExtractiveSummarizer()], provider=provider, archive=archive
    )
    out = list(manager.prepare_sync(messages).messages)
    if out != messages:
        assert validate(out, provider) == []
        assert COUNTER.count_messages(out) <= COUNTER.count_messages(messages)


@given(
    chain_configs(complete=True),
    st.integers(60, 400),
)
def test_generated_chains(config: ChainConfig, window: int) -> None:
    messages = prepared_for(generate_chain(config), "openai")
    replay_checked(messages, window, "openai", min_messages=4, cooldown_messages=1, preserve_recent=2)


@pytest.mark.corpus
@pytest.mark.slow
def test_corpora() -> None:
    """Claude Code sessions at a 64K window (Anthropic), every 10th tau-bench and tau2 run at 4K (OpenAI); every run
    under the thorough profile."""
    docs = list(iter_documents(include_subagents=False))
    if not docs:
        pytest.skip("the shared corpora are not available")
    compacted = 0
    seen: Counter[str] = Counter()
    for doc in docs:
        corpus = doc.label.split("/")[0]
        seen[corpus] += 1
        if corpus == "claude-code":
            window, provider = 64_000, "anthropic"
        elif corpus in ("tau-bench", "tau2-bench") and (THOROUGH or seen[corpus] % 10 == 1):
            window, provider = 4_000, "openai"
        else:
            continue
        messages = prepared_for(formats.load(doc.data, doc.format).messages, provider)
        try:
            compacted += replay_checked(messages, window, provider)
        except AssertionError as exc:
            raise AssertionError(f"{doc.label}: {exc}") from exc
    assert compacted > 0  # the invariants were checked on compacted requests, not only on untouched ones


def test_a_span_too_small_to_shrink_is_not_sent_to_the_summarizer() -> None:
    """tau-bench airline run 53 at 4K: a long policy prompt, five short messages, then tool calls. Summarizing
    the five messages cannot save anything (a summary and its framing cost more than they do); the summarizer
    used to be called for them anyway, and its summary thrown away."""
    doc = document("tau-bench/gpt-4o-airline.json#53")
    replay_checked(prepared_for(formats.load(doc.data, doc.format).messages, "openai"), 4_000, "openai")
