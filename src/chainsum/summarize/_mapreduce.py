"""Chunked summarization (map, then consolidate), for spans larger than the summarizer's input cap.

The summarizer's own input overflowing is one of the failures users report most, so every transcript sent here is
checked against `max_input_tokens` before the call:

1. If the whole transcript fits, one call.
2. Otherwise the messages are packed greedily, in order, into chunks whose transcript fits (a message too large on
   its own is split by text into pieces of the same role); chunks are summarized concurrently, at most
   `concurrency` at a time.
3. The partial summaries are consolidated: one pass asking for one coherent summary (or, with ``snapshot=True``,
   safe-split's single ``<state_snapshot>``). If the consolidation input is itself too large, the partial
   summaries are grouped and consolidated level by level.
4. At `max_depth` levels, or as soon as a level does not make the text smaller (a summarizer that echoes or
   inflates its input), the consolidation input is truncated to fit (head and tail kept, the middle cut with a
   marker): the spec's forced truncation. A partial summary longer than its own input is cut to that length.

So the number of calls is bounded and the loop always ends, whatever the summarizer returns.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TypeVar

from ..messages import Message, Text
from ._protocol import SummarizerLike, call_summarizer
from ._reach import report_unread
from ._transcript import (
    Bodies,
    TranscriptCase,
    body_limit,
    clip_body,
    render_consolidation,
    render_transcript,
    transcript_lines,
)

__all__ = ["CountLines", "approx_tokens", "summarize_chunked", "to_state_snapshot", "truncate_to_tokens"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

CountLines = Callable[[Sequence[str], str], int]
"""``count_lines(lines, text)``: the tokens of `text`, which is `lines` joined by newlines, counted from the lines
(a counter that remembers what it counted reads a body it has seen once, not once per transcript that holds it:
``HeuristicCounter.count_joined``). Gives what the plain count of `text` gives."""
_SNAPSHOT = re.compile(r"<state_snapshot>(.*?)</state_snapshot>", re.DOTALL)
_SNAPSHOT_TAG = re.compile(r"</?state_snapshot>")


def approx_tokens(text: str) -> int:
    """The default count when none is given: about 4 characters a token, rounded up (errs on the large side for
    English and code; pass a real counter for exact caps)."""
    return (len(text) + 3) // 4


def truncate_to_tokens(text: str, max_tokens: int, count_tokens: Callable[[str], int] = approx_tokens) -> str:
    """`text` cut to at most `max_tokens`, keeping the head (a third) and the tail (the most recent, two thirds)
    with a marker saying how much was cut. Binary search over the kept length: O(n log n) in counts."""
    if count_tokens(text) <= max_tokens:
        return text
    lo, hi = 0, len(text)
    best = ""
    while lo <= hi:
        keep = (lo + hi) // 2
        head = keep // 3
        tail = keep - head
        marker = f"\n[... {len(text) - keep} characters truncated ...]\n"
        candidate = text[:head] + marker + (text[len(text) - tail :] if tail else "")
        if count_tokens(candidate) <= max_tokens:
            best = candidate
            lo = keep + 1
        else:
            hi = keep - 1
    return best


def to_state_snapshot(text: str) -> str:
    """Exactly one ``<state_snapshot>...</state_snapshot>`` element: a model's single snapshot is kept, several are
    merged in order, none is wrapped; stray tags inside are removed so the element cannot be closed early."""
    inner = [m.group(1).strip() for m in _SNAPSHOT.finditer(text)]
    body = "\n\n".join(part for part in inner if part) if inner else text.strip()
    body = _SNAPSHOT_TAG.sub("", body).strip()
    return f"<state_snapshot>\n{body}\n</state_snapshot>"


async def _bounded(limit: int, jobs: Sequence[Callable[[], Awaitable[_T]]]) -> list[_T]:
    """Run `jobs` with at most `limit` at a time, results in order; on the first failure the rest are cancelled."""
    semaphore = asyncio.Semaphore(limit)

    async def run(job: Callable[[], Awaitable[_T]]) -> _T:
        async with semaphore:
            return await job()

    tasks = [asyncio.ensure_future(run(job)) for job in jobs]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


_NONCE_LIKE = hashlib.sha256(b"").hexdigest()[:16]
_BLOCK_MARKERS = f'<m_{_NONCE_LIKE} n="99999" role="assistant" section="content">\n\n</m_{_NONCE_LIKE}>\n'
"""The marker lines a message's block adds to a transcript (see `_transcript._assemble`), with a nonce as random
as a real one: counters charge hex digits by the character."""
_CLIP_MARKER = "\n[... 123456 characters left out ...]\n"
_MIN_EXCERPT = 48
"""The shortest excerpt (characters) a message is cut to when a span must fit `max_chunks` calls."""


class _Chunker:
    """Packs messages into chunks whose rendered transcript fits the cap.

    A message's cost is counted once, on its own block (body plus markers), not by rendering a whole transcript
    per message: the instructions and context are the same for every chunk (`base`), and each packed chunk is
    checked against the real transcript at the end (`rendered`), since counts are not exactly additive. What
    each message shows is rendered once (`bodies`), however many transcripts it is measured and sent in."""

    def __init__(
        self,
        case: TranscriptCase,
        context: Sequence[Message],
        cap: int,
        count: Callable[[str], int],
        target_tokens: int | None = None,
        max_body_chars: int | None = None,
        bodies: Bodies | None = None,
        count_lines: CountLines | None = None,
    ) -> None:
        self.bodies = bodies if bodies is not None else Bodies()
        self.count_lines = count_lines
        self.case: TranscriptCase = case
        self.context = tuple(context)
        self.cap = cap
        self.count = count
        self.target_tokens = target_tokens
        self.max_body_chars = max_body_chars
        if self.context and not self._fits([Message.of("user", "")]):
            logger.warning("context_messages=<%d> | context alone exceeds the input cap; dropped", len(self.context))
            self.context = ()
        self.base = self.count(self.render([Message.of("user", "")]))
        floor = max(self.base, count(render_consolidation(["x" * 64])))
        if floor > cap:
            raise ValueError(f"max_input_tokens={cap} is too small for the summarization instructions alone")
        self.markers = count(_BLOCK_MARKERS)

    def render(self, messages: Sequence[Message]) -> str:
        return render_transcript(
            messages,
            self.case,
            self.context,
            target_tokens=self.target_tokens,
            max_body_chars=self.max_body_chars,
            bodies=self.bodies,
        )

    def _measure(self, lines: Sequence[str], text: str) -> int:
        return self.count(text) if self.count_lines is None else self.count_lines(lines, text)

    def _fits(self, messages: Sequence[Message]) -> bool:
        return self.count(self.render(messages)) <= self.cap

    def _cost(self, message: Message) -> int:
        """Tokens `message` adds to a transcript (its block: excerpted body and markers)."""
        return self.count(self.bodies.body(message, self.max_body_chars)) + self.markers

    def _pieces(self, message: Message) -> list[Message]:
        """A message too large on its own, split by text into pieces that each fit."""
        body = self.bodies.body(message, self.max_body_chars)
        per_token = len(body) / max(1, self.count(body))
        size = max(1, int((self.cap - self.base - self.markers) * per_token * 0.9))
        pieces: list[Message] = []
        start = 0
        while start < len(body):
            piece = body[start : start + size]
            while len(piece) > 1 and not self._fits([Message.of(message.role, piece)]):
                piece = piece[: len(piece) // 2]
            pieces.append(Message(role=message.role, parts=(Text(text=piece),), name=message.name))
            start += len(piece)
        return pieces

    def chunks(self, messages: Sequence[Message]) -> list[tuple[list[Message], str]]:
        """`messages` packed into chunks that fit, each with its transcript (as `rendered`)."""
        units: list[tuple[Message, int]] = []
        for message in messages:
            cost = self._cost(message)
            if self.base + cost <= self.cap:
                units.append((message, cost))
            else:
                units.extend((piece, self._cost(piece)) for piece in self._pieces(message))
        chunks: list[list[Message]] = []
        current: list[Message] = []
        used = self.base
        for unit, cost in units:
            if current and used + cost > self.cap:
                chunks.append(current)
                current, used = [], self.base
            current.append(unit)
            used += cost
        if current:
            chunks.append(current)
        return self.rendered(chunks)

    def rendered(self, chunks: Sequence[list[Message]]) -> list[tuple[list[Message], str]]:
        """`chunks`, each halved until its real transcript fits (token counts are not exactly additive), with that
        transcript: the text its check measured is the one sent, not rendered again."""
        return [pair for chunk in chunks for pair in self._rendered(chunk)]

    def _rendered(self, chunk: list[Message]) -> list[tuple[list[Message], str]]:
        lines = transcript_lines(
            chunk,
            self.case,
            self.context,
            target_tokens=self.target_tokens,
            max_body_chars=self.max_body_chars,
            bodies=self.bodies,
        )
        text = "\n".join(lines)
        if len(chunk) == 1 or self._measure(lines, text) <= self.cap:
            return [(chunk, text)]
        middle = len(chunk) // 2
        return self._rendered(chunk[:middle]) + self._rendered(chunk[middle:])


async def _summarize_capped(summarizer: SummarizerLike, transcript: str, limit: int) -> str:
    """One call; a summary longer than `limit` characters (its own input) is cut to it: a summary must not grow."""
    summary = await call_summarizer(summarizer, transcript)
    return summary if len(summary) <= limit else summary[:limit]


def _group(summaries: Sequence[str], cap: int, count: Callable[[str], int], snapshot: bool) -> list[list[str]]:
    groups: list[list[str]] = []
    current: list[str] = []
    for summary in summaries:
        if current and count(render_consolidation([*current, summary], snapshot=snapshot)) > cap:
            groups.append(current)
            current = []
        current.append(summary)
    if current:
        groups.append(current)
    return groups


async def summarize_chunked(
    summarizer: SummarizerLike,
    messages: Sequence[Message],
    *,
    case: TranscriptCase,
    context: Sequence[Message] = (),
    max_input_tokens: int,
    count_tokens: Callable[[str], int] | None = None,
    concurrency: int = 8,
    max_depth: int = 5,
    snapshot: bool = False,
    target_tokens: int | None = None,
    max_chunks: int | None = None,
    count_lines: CountLines | None = None,
) -> str:
    """Summarize `messages`, chunking and consolidating when their transcript exceeds `max_input_tokens`.

    `snapshot=True` returns a single ``<state_snapshot>`` element (safe-split's form). `target_tokens` is the length
    the final summary is asked to keep to. `max_chunks` bounds the map step: when the messages would need more
    chunks, each long message is rendered as an excerpt (head and tail, `clip_body`) with one common length limit
    chosen so that they fit, so the calls stay bounded however long the span. Errors from the summarizer propagate
    as `SummarizerError` (the caller falls back; nothing here replaces history). `count_lines` measures a chunk's
    transcript from its lines (`CountLines`: the count `count_tokens` gives, at less cost, since a counter that
    remembers the bodies it counted need not read them again). Raises `ValueError` for an empty span (or one with
    nothing a transcript can show) or a cap too small for the instructions alone.
    """
    if concurrency < 1 or max_depth < 0 or max_input_tokens < 1 or (max_chunks is not None and max_chunks < 1):
        raise ValueError("concurrency, max_input_tokens and max_chunks must be >= 1, max_depth >= 0")
    if not messages:
        raise ValueError("cannot summarize an empty message list")
    count = count_tokens or approx_tokens
    bodies = Bodies()
    context = _oriented(context, max_input_tokens, count, bodies)
    read, limit = _readable(messages, case, context, max_input_tokens, count, max_chunks, target_tokens, bodies)
    chunker = _Chunker(case, context, max_input_tokens, count, target_tokens, limit, bodies, count_lines)
    packed = chunker.chunks(read)
    chunks = [chunk for chunk, _ in packed]
    if not chunks:  # only parts no transcript can show (an opaque provider item): as empty as an empty span
        raise ValueError("nothing in the span can be rendered for a summarizer")
    if len(chunks) == 1 and len(read) == len(messages) and all(a is b for a, b in zip(chunks[0], read, strict=True)):
        whole = packed[0][1]  # the transcript of `messages` itself: the one chunk is all of them
        summary = await _summarize_capped(summarizer, whole, len(whole))
        return to_state_snapshot(summary) if snapshot else summary
    # Each partial summary asks for its share of what one consolidation call can read, so the partials are merged
    # in one call (not level after level), and the final summary still asks for `target_tokens`.
    room = int(max_input_tokens * 0.8) - count(render_consolidation(["x"], snapshot=snapshot))
    share = max(_MIN_EXCERPT, room // len(chunks))
    chunker.target_tokens = share if target_tokens is None else min(target_tokens, share)
    transcripts = [text for _, text in chunker.rendered(chunks)]
    logger.debug("messages=<%d>, chunks=<%d>, share=<%d> | map", len(messages), len(transcripts), chunker.target_tokens)
    summaries = await _bounded(concurrency, [partial(_summarize_capped, summarizer, t, len(t)) for t in transcripts])
    result = await _consolidate(
        summarizer, summaries, max_input_tokens, count, concurrency, max_depth, snapshot, target_tokens
    )
    return to_state_snapshot(result) if snapshot else result


CONTEXT_SHARE = 0.25
"""Most of a call's input cap the context section (the user's messages shown so the summarizer knows what was
asked, not summarized) may take; longer ones are shown as excerpts."""


def _oriented(context: Sequence[Message], cap: int, count: Callable[[str], int], bodies: Bodies) -> Sequence[Message]:
    """`context` as the transcripts show it: whole when it takes at most `CONTEXT_SHARE` of the cap, else each
    message an excerpt (head and tail) of an equal share. It is repeated in every chunk's transcript, so one large
    user message (a pasted file, a harness's own summary) left whole starved every chunk of room for the span
    itself: on a Claude Code session a 6,700-token request left 64 tokens a call, and 94 % of the span was read as
    91-character excerpts."""
    if not context:
        return context
    texts = [bodies.body(m) for m in context]
    tokens = sum(count(t) for t in texts)
    room = int(cap * CONTEXT_SHARE)
    if tokens <= room:
        return context
    per_token = sum(len(t) for t in texts) / max(1, tokens)
    share = max(200, int(room * per_token / len(context)))
    return [
        Message(role=m.role, parts=(Text(text=clip_body(t, share)),), name=m.name)
        for m, t in zip(context, texts, strict=True)
    ]


def _evenly(indices: Sequence[int], k: int) -> list[int]:
    """`k` of `indices`, evenly spread (first and last included when k > 1)."""
    if k >= len(indices):
        return list(indices)
    if k <= 0:
        return []
    if k == 1:
        return [indices[-1]]
    return [indices[round(j * (len(indices) - 1) / (k - 1))] for j in range(k)]


def _readable(
    messages: Sequence[Message],
    case: TranscriptCase,
    context: Sequence[Message],
    cap: int,
    count: Callable[[str], int],
    max_chunks: int | None,
    target_tokens: int | None,
    bodies: Bodies,
) -> tuple[Sequence[Message], int | None]:
    """What of `messages` the map step reads so that it fits `max_chunks` transcripts of `cap` tokens: the messages
    and a per-message excerpt length (`body_limit`; None: whole). Estimated from a sample's characters per token and
    each block's markers, without rendering the whole span.

    When even excerpts of `_MIN_EXCERPT` characters do not fit (thousands of messages: each block's markers alone
    cost tokens), the span is read as a sample: every message of the user and the assistant first, then tool
    results evenly spread over the span with what is left. The calls stay bounded however long the history."""
    if max_chunks is None:
        return messages, None
    lengths = [bodies.length(m) for m in messages]
    sample = "\n".join(bodies.body(m, 2000) for m in messages[:: max(1, len(messages) // 64)][:64])
    per_token = len(sample) / max(1, count(sample))
    fixed = count(render_transcript([Message.of("user", "")], case, context, target_tokens=target_tokens))
    markers = count(_BLOCK_MARKERS)
    budget = max_chunks * max(1, int(cap * 0.85) - fixed)
    clip = len(_CLIP_MARKER)
    least = [markers + (n if n <= _MIN_EXCERPT else _MIN_EXCERPT + clip) / per_token for n in lengths]
    if sum(least) > budget:
        people = [i for i, m in enumerate(messages) if m.role != "tool"]
        tools = [i for i, m in enumerate(messages) if m.role == "tool"]
        spent = sum(least[i] for i in people)
        if spent > budget:
            people = _evenly(people, int(len(people) * budget / spent))
            tools = []
        elif tools:
            average = sum(least[i] for i in tools) / len(tools)
            tools = _evenly(tools, int((budget - spent) / average))
        kept = sorted((*people, *tools))
        logger.debug("messages=<%d>, read=<%d> | span read as a sample to bound the calls", len(messages), len(kept))
        chosen = set(kept)
        report_unread(sum(n for i, n in enumerate(lengths) if i not in chosen))
        messages = [messages[i] for i in kept]
        lengths = [lengths[i] for i in kept]
    allowed = int((budget - len(messages) * markers) * per_token)
    limit = body_limit(lengths, max(allowed, 0), floor=_MIN_EXCERPT)
    if limit is not None:
        logger.debug("messages=<%d>, body_chars=<%d> | span read as excerpts to bound the calls", len(messages), limit)
        report_unread(sum(n - limit for n in lengths if n > limit))
    return messages, limit


async def _consolidate(
    summarizer: SummarizerLike,
    summaries: list[str],
    cap: int,
    count: Callable[[str], int],
    concurrency: int,
    max_depth: int,
    snapshot: bool,
    target_tokens: int | None = None,
) -> str:
    depth = 0
    while True:
        depth += 1
        transcript = render_consolidation(summaries, snapshot=snapshot, target_tokens=target_tokens)
        if count(transcript) <= cap:
            return await _summarize_capped(summarizer, transcript, len(transcript))
        groups = _group(summaries, cap, count, snapshot)
        if depth >= max_depth or len(groups) >= len(summaries):
            return await _forced(summarizer, summaries, cap, count, snapshot, depth)
        logger.debug("depth=<%d>, summaries=<%d>, groups=<%d> | consolidate", depth, len(summaries), len(groups))
        rendered = [render_consolidation(g, snapshot=snapshot) for g in groups]
        merged = await _bounded(concurrency, [partial(_summarize_capped, summarizer, t, len(t)) for t in rendered])
        if sum(len(m) for m in merged) >= sum(len(s) for s in summaries):
            return await _forced(summarizer, merged, cap, count, snapshot, depth)
        summaries = merged


async def _forced(
    summarizer: SummarizerLike,
    summaries: Sequence[str],
    cap: int,
    count: Callable[[str], int],
    snapshot: bool,
    depth: int,
) -> str:
    """The depth limit (or no progress): cut the joined summaries to fit, then one last consolidation."""
    logger.warning("depth=<%d>, summaries=<%d> | consolidation forced by truncation", depth, len(summaries))
    overhead = count(render_consolidation(["x"], snapshot=snapshot))
    joined = "\n\n".join(summaries)
    room = max(1, cap - overhead)
    text = truncate_to_tokens(joined, room, count)
    transcript = render_consolidation([text], snapshot=snapshot)
    while count(transcript) > cap and text:
        room = max(0, room - max(1, room // 10))
        text = truncate_to_tokens(joined, room, count) if room else ""
        transcript = render_consolidation([text], snapshot=snapshot)
    return await _summarize_capped(summarizer, transcript, len(transcript))
