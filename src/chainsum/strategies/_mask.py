"""The ``mask`` strategy: shrink old tool output without a model (observation masking and clipping).

Tool output is most of an agent's context and goes stale fastest: a file read twenty steps ago is rarely needed
verbatim, and the model can run the tool again. So, like Anthropic's ``clear_tool_uses`` context edit (which keeps
the last 3 tool uses by default) and the observation-masking baseline of agent-context research, this strategy
replaces the results of all but the most recent tool-using steps by a one-line placeholder that keeps the tool
name, a digest of the call's arguments and the original size; masks the long string values in those steps' call
arguments the same way (`chainsum.strategies._mask_calls`: the files a coding agent wrote, like Anthropic's
``clear_tool_inputs``); and clips huge results, even recent ones, to their head and tail.

What counts as a *turn* here: one tool-using step (an assistant message that made calls, with its results). In a
chat, a user turn and its step coincide; in an agent loop the whole trajectory is often a single user turn (the
Claude Code corpus has 3 to 5 user messages for ~200 steps), and counting user turns would never mask anything.

Never touched: the current turn, meaning the last body pair of the chain and anything after it (pending calls,
the reasoning signatures a provider wants back, a trailing user message); results chainsum already masked (the
placeholder is recognized); summary pairs; results too small for a placeholder to save anything.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..chain import SUMMARIZATION_TOOL_NAME, current_turn_start, match_results
from ..messages import Message, ResultPart, Text, ToolCall, ToolResult, part_size, utf8_len
from ..summarize import key_identifiers
from ..tokens import TokenCounter
from ._mask_calls import call_mask_saving
from ._plan import Clip, Mask, Plan, PlanContext, Step

__all__ = [
    "CLIP_MARKER",
    "MASK_PREFIX",
    "MaskStrategy",
    "args_digest",
    "clip_result",
    "is_masked",
    "mask_candidates",
    "mask_result",
    "mask_saving",
    "masked_text",
    "plan_current_turn_clips",
    "plan_group_clips",
    "plan_masks",
    "result_bytes",
    "widened_mask",
]

MASK_PREFIX = "[chainsum: tool output masked"
"""Start of the placeholder that replaces a masked tool result (how masking recognizes its own work)."""

CLIP_MARKER = "[chainsum: clipped"
"""Start of the marker between the head and tail of a clipped tool result."""
_CLIPPED = re.compile(re.escape(CLIP_MARKER) + r" (\d+) of (\d+) characters\]")

_ARGS_EXCERPT = 80
_MIN_CALL_MASK_CHARS = 600
"""A call's arguments are masked only when that removes at least this many characters (about 150 tokens)."""
_KEEP_CHARS = 240
"""Most characters of identifiers a mask placeholder keeps from the output it replaces."""
_KEEP_SHARE = 0.5
"""...and at most this share of the original's size, so masking a small result still saves at least half of it.

Half, not less: the bound binds only for outputs under 480 bytes... 2 KB at most (the 240 characters bind above),
small lookups whose identifiers are most of what they say. Those outputs are the ones a summary at a smaller budget
reads and lists, and a larger budget masks after its cut; at a tenth, the placeholder dropped the field names and
dates the summary had kept (fewer identifiers at a larger budget in 13 of 1,334 budget pairs of the corpora, 1 at
half: ``bench/bench_budget.py --conversations 0``)."""
_SCAN_BELOW = 2048
"""Results up to this many bytes are bounded by their identifier-like tokens (`_placeholder_bound`)."""


def result_bytes(result: ToolResult) -> int:
    """Size of a result's content in bytes (text as UTF-8, inline data by length), as the chain counts it."""
    content = result.content
    if isinstance(content, str):
        return utf8_len(content)
    return sum(part_size(p) for p in content)


def is_masked(result: ToolResult) -> bool:
    return isinstance(result.content, str) and result.content.startswith(MASK_PREFIX)


def _result_text(result: ToolResult) -> str:
    return result.content if isinstance(result.content, str) else result.text


def args_digest(call: ToolCall | None) -> str:
    """A short, stable stand-in for a call's arguments: the JSON text itself when short, else its start and a
    sha256 prefix (so two different long calls never read the same)."""
    if call is None:
        return "?"
    args = " ".join(call.arguments.split())
    if len(args) <= _ARGS_EXCERPT:
        return args
    digest = hashlib.sha256(call.arguments.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{args[:_ARGS_EXCERPT]}… sha256:{digest}"


def _placeholder_head(result: ToolResult, call: ToolCall | None) -> str:
    name = result.name or (call.name if call else None) or "?"
    return f"{MASK_PREFIX}: tool={name} args={args_digest(call)} original={result_bytes(result)} bytes"


def _mentions_room(result: ToolResult) -> int:
    """Characters a placeholder may spend on the identifiers of `result` (see `_KEEP_CHARS`, `_KEEP_SHARE`)."""
    return min(_KEEP_CHARS, int(result_bytes(result) * _KEEP_SHARE))


_IDENTIFIER_LIKE = re.compile(r"[\w./:@#-]*[\d_/A-Z][\w./:@#-]*")
"""Any token with a digit, an underscore, a slash or a capital: a superset of what `key_identifiers` keeps."""


def _placeholder_bound(result: ToolResult, call: ToolCall | None) -> str:
    """A stand-in at least as long as the placeholder `masked_text` will write, without reading the output for
    its identifiers with every pattern: planning compares sizes for every old result, and only the ones masked need
    the real text. A small output is scanned once for identifier-like tokens, which bound its list far more
    tightly than its size does."""
    head, room = _placeholder_head(result, call), _mentions_room(result)
    if result_bytes(result) <= _SCAN_BELOW:
        found = set(_IDENTIFIER_LIKE.findall(_result_text(result)))
        room = min(room, sum(len(t) + 2 for t in found))
    return f"{head}{_MENTIONS}{'x/' * (room // 2)}]" if room else f"{head}]"


def masked_text(result: ToolResult, call: ToolCall | None) -> str:
    """The placeholder for a masked result: enough for the model to know what it ran, and to run it again, plus
    the identifiers the output mentioned (file paths, ids, error codes, numbers with units), most frequent first.

    Tool output is where most of a conversation's identifiers live; a bare placeholder loses them all, and a
    model that no longer knows *which* file held the bug re-runs the whole search. The list is bounded by
    `_KEEP_CHARS` and by `_KEEP_SHARE` of the original, so a placeholder always saves most of what it replaces.
    """
    head = _placeholder_head(result, call)
    kept = _mentions(_result_text(result), _mentions_room(result))
    return f"{head}{_MENTIONS}{', '.join(kept)}]" if kept else f"{head}]"


_MENTIONS = "; mentions: "
"""Between a placeholder's head and the identifiers it lists."""


@lru_cache(maxsize=8192)
def _mentions(text: str, room: int) -> tuple[str, ...]:
    """`key_identifiers`, remembered: planning builds the placeholder of every small old result each round."""
    return tuple(key_identifiers(text, room))


def widened_mask(masked: ToolResult, original: ToolResult, extra: int) -> ToolResult | None:
    """`masked` (the placeholder `mask_result` wrote for `original`) listing the identifiers of `original` within
    `extra` more characters than it does; None when that lists nothing more, or `masked` is not such a placeholder.
    What `refill` gives back when a budget has room for more of what an output named, not for an excerpt of it:
    else a larger budget that masked an output a smaller one had summarized lost the identifiers the summary
    listed and the placeholder's bound left out."""
    text = masked.content if isinstance(masked.content, str) else ""
    marker = f" original={result_bytes(original)} bytes"
    end = text.rfind(marker)  # mentions hold no spaces: the last match ends the head
    if not text.startswith(MASK_PREFIX) or end < 0:
        return None
    head = text[: end + len(marker)]
    listed = len(text) - len(head) - len(_MENTIONS) - 1 if text.startswith(_MENTIONS, len(head)) else 0
    kept = _mentions(_result_text(original), listed + extra)
    widened = f"{head}{_MENTIONS}{', '.join(kept)}]" if kept else f"{head}]"
    if len(widened) <= len(text):
        return None
    return ToolResult(
        call_id=masked.call_id, name=masked.name, content=widened, is_error=masked.is_error, extras=masked.extras
    )


def mask_result(result: ToolResult, call: ToolCall | None) -> ToolResult:
    return ToolResult(
        call_id=result.call_id,
        name=result.name,
        content=masked_text(result, call),
        is_error=result.is_error,
        extras=result.extras,
    )


def clip_result(result: ToolResult, head: int, tail: int) -> ToolResult:
    """Head and tail of a result's text with a marker saying how much was cut. Non-text content (images, files)
    is kept in front of the clipped text: clipping is about text; masking handles the rest."""
    content = result.content
    others: tuple[ResultPart, ...] = ()
    if isinstance(content, str):
        text = content
    else:
        text = "\n".join(p.text for p in content if isinstance(p, Text))
        others = tuple(p for p in content if not isinstance(p, Text))
    if len(text) <= head + tail:
        return result
    # a result clipped before (and clipped again, for a smaller window) says how long the original was
    earlier = _CLIPPED.search(text)
    total = int(earlier.group(2)) if earlier is not None else len(text)
    cut = total - head - tail
    clipped = f"{text[:head]}\n{CLIP_MARKER} {cut} of {total} characters]\n{text[len(text) - tail :]}"
    new_content: str | tuple[ResultPart, ...] = (*others, Text(text=clipped)) if others else clipped
    return ToolResult(
        call_id=result.call_id, name=result.name, content=new_content, is_error=result.is_error, extras=result.extras
    )


def _calls_for_results(messages: Sequence[Message], limit: int) -> dict[tuple[int, int], ToolCall | None]:
    """For each (message index, part index) of a tool result before `limit`, the call it answers (None when
    it answers nothing visible), pairing the way the chain does."""
    out: dict[tuple[int, int], ToolCall | None] = {}
    i = 0
    while i < limit:
        m = messages[i]
        j = i + 1
        while j < len(messages) and messages[j].role == "tool":
            j += 1
        if j > i + 1 and m.role != "tool":
            slots = [(k, pi, p) for k in range(i + 1, j) for pi, p in enumerate(messages[k].parts)]
            results = [p for _, _, p in slots if isinstance(p, ToolResult)]
            answers, _ = match_results(m.tool_calls, results)
            by_result = {id(r): c for c, r in zip(m.tool_calls, answers, strict=True) if r is not None}
            for k, pi, p in slots:
                if isinstance(p, ToolResult):
                    out[(k, pi)] = by_result.get(id(p))
        i = j if j > i + 1 else i + 1
    return out


def mask_candidates(
    messages: Sequence[Message],
    ctx: PlanContext,
    *,
    keep_last_turns: int,
    clip_chars: int,
    head: int,
    tail: int,
    end: int | None = None,
) -> list[tuple[Step, int]]:
    """Every mask and clip step the history allows before `end` (default: the current turn, from
    `PlanContext.turn_start` when set), oldest first, each with
    the tokens it is expected to save. Results of the last `keep_last_turns` tool-using steps are only clipped (when
    huge), never masked; masked results, summary pairs and results too small to gain anything are left alone. The
    long arguments of calls before those steps are masked too (`mask_call`: a file an agent wrote is stale as soon
    as it wrote the next version)."""
    turn = current_turn_start(messages) if ctx.turn_start is None else ctx.turn_start
    limit = turn if end is None else min(end, turn)
    steps_with_calls = [i for i in range(limit) if messages[i].tool_calls and messages[i].role != "tool"]
    if keep_last_turns == 0:
        recent_from = limit
    elif keep_last_turns <= len(steps_with_calls):
        recent_from = steps_with_calls[-keep_last_turns]
    else:
        recent_from = 0
    calls = _calls_for_results(messages, limit)
    counter = ctx.counter

    def tokens_of(i: int, result: ToolResult) -> int:
        # a tool message holding just this result is counted already (counters cache per message)
        message = messages[i]
        return counter.count_message(message) if len(message.parts) == 1 else counter.count_text(_result_text(result))

    out: list[tuple[Mask | Clip, int]] = []
    # In the recent steps only huge output is clipped; each result older than the newest one clipped is masked (or
    # clipped, when huge itself) with it, so no older output stays whole while a newer one is cut (DESIGN invariant
    # 11). Results of one step are of one age: they answer one message.
    clipped_from = max(
        (
            _step_of(messages, i)
            for (i, pi), _ in calls.items()
            if i >= recent_from and _clippable(messages[i].parts[pi], clip_chars)
        ),
        default=-1,
    )
    for i in steps_with_calls:
        if i >= recent_from:
            break
        for pi, part in enumerate(messages[i].parts):
            if not isinstance(part, ToolCall) or part.name == SUMMARIZATION_TOOL_NAME:
                continue
            chars = call_mask_saving(part)
            if chars < _MIN_CALL_MASK_CHARS:
                continue
            saving = counter.count_text(part.arguments) * chars // max(1, len(part.arguments))
            reason = (
                f"old tool call arguments ({len(part.arguments)} characters), "
                f"before the last {keep_last_turns} tool-using steps"
            )
            out.append((Mask(index=i, part=pi, reason=reason), saving))
    for (i, pi), call in sorted(calls.items()):
        result = messages[i].parts[pi]
        assert isinstance(result, ToolResult)
        if is_masked(result) or result.name == SUMMARIZATION_TOOL_NAME:
            continue
        if call is not None and call.name == SUMMARIZATION_TOOL_NAME:
            continue
        size = result_bytes(result)
        older = i >= recent_from and _step_of(messages, i) < clipped_from and not _clippable(result, clip_chars)
        if i < recent_from or older:
            saving = mask_saving(result, call, tokens_of(i, result), counter)
            if saving > 0:
                reason = (
                    f"old tool output ({size} bytes), before the last {keep_last_turns} tool-using steps"
                    if not older
                    else f"tool output ({size} bytes) older than a huge one clipped after it"
                )
                out.append((Mask(index=i, part=pi, reason=reason), saving))
                continue
        text = _result_text(result)
        if _clippable(result, clip_chars):
            kept = head + tail
            saving = tokens_of(i, result) * (len(text) - kept) // len(text)
            reason = f"tool output of {len(text)} characters exceeds {clip_chars}; keeping head and tail"
            out.append((Clip(index=i, part=pi, head=head, tail=tail, reason=reason), saving))
    out.sort(key=lambda entry: (entry[0].index, entry[0].part))  # oldest first, calls and results alike
    return [(step, saving) for step, saving in out]


def mask_saving(result: ToolResult, call: ToolCall | None, tokens: int, counter: TokenCounter) -> int:
    """Tokens that masking `result` (which costs `tokens`) is expected to save, from a bound on its placeholder
    (`_placeholder_bound`); 0 or less: it is not masked, the placeholder would cost about what it replaces."""
    placeholder = _placeholder_bound(result, call)
    if result_bytes(result) <= utf8_len(placeholder):
        return 0
    return tokens - counter.count_text(placeholder)


def _clippable(part: object, clip_chars: int) -> bool:
    """A tool result so long that even a recent step's is clipped to its head and tail (and not clipped yet)."""
    if not isinstance(part, ToolResult) or is_masked(part):
        return False
    text = _result_text(part)
    return len(text) > clip_chars and CLIP_MARKER not in text


def _step_of(messages: Sequence[Message], i: int) -> int:
    """The index of the message whose calls the tool message ``messages[i]`` answers (its step): results of one step
    are of one age."""
    while i > 0 and messages[i].role == "tool":
        i -= 1
    return i


def plan_masks(
    messages: Sequence[Message],
    ctx: PlanContext,
    *,
    keep_last_turns: int,
    clip_chars: int,
    head: int,
    tail: int,
    need: int | None,
    end: int | None = None,
) -> tuple[list[Step], int]:
    """Mask and clip steps, oldest first, stopping once their estimated saving reaches `need` tokens (all of
    them when `need` is None), and that estimate. Shared with the ``auto`` strategy, whose first, cheapest phase
    this is."""
    out: list[Step] = []
    saved = 0
    for step, saving in mask_candidates(
        messages, ctx, keep_last_turns=keep_last_turns, clip_chars=clip_chars, head=head, tail=tail, end=end
    ):
        if need is not None and saved >= need:
            break
        out.append(step)
        saved += saving
    return out, saved


def plan_current_turn_clips(messages: Sequence[Message], ctx: PlanContext, *, need: int, min_keep: int) -> list[Step]:
    """Clips of the current turn's tool output as a group, cutting about `need` tokens in all: the results share
    what the group may keep (water filling: small results stay whole, the largest are clipped most, to one common
    size), each keeping at least `min_keep` characters of head and tail, or 200 when the window is too small for
    that.

    The last resort of the ``auto`` strategy when the history is over the context window (`PlanContext.hard_limit`):
    a tool that returned more than the window holds would otherwise make the next request fail at the provider,
    turn after turn. The original is archived by the manager like every other edit, so `expand` brings it back.
    """
    why = "current-turn tool output of {chars} characters over the hard limit; keeping {keep}"
    return [*plan_group_clips(messages, ctx, range(current_turn_start(messages), len(messages)), need, min_keep, why)]


def plan_group_clips(
    messages: Sequence[Message], ctx: PlanContext, indices: Iterable[int], need: int, min_keep: int, why: str
) -> list[Clip]:
    """Clips of the tool output of ``messages[i]`` for `indices` as a group, cutting about `need` tokens in all (see
    `plan_current_turn_clips`); `why` is the reason, formatted with ``chars`` and ``keep``."""
    counter = ctx.counter
    found: list[tuple[int, int, int, str]] = []
    for i in indices:
        for pi, part in enumerate(messages[i].parts):
            if isinstance(part, ToolResult) and not is_masked(part):
                # a result clipped before is clipped again when the group needs it (a window learned smaller since)
                text = _result_text(part)
                found.append((counter.count_text(text), i, pi, text))
    total = sum(f[0] for f in found)
    room = max(0, total - need)
    cap = _water_level([f[0] for f in found], room)
    floor_chars = min_keep if room >= len(found) * (min_keep // 3) else 200
    out: list[Clip] = []
    for tokens, i, pi, text in found:
        if cap is None or tokens <= cap:
            continue
        keep = max(floor_chars, len(text) * cap * 9 // (max(tokens, 1) * 10))  # 10 % margin: token estimates
        if keep >= len(text) * 9 // 10:  # saves under a tenth: not worth losing the middle of the output
            continue
        head = keep * 2 // 3
        reason = why.format(chars=len(text), keep=keep)
        out.append(Clip(index=i, part=pi, head=head, tail=keep - head, reason=reason))
    out.sort(key=lambda c: (c.index, c.part))
    return out


def _water_level(sizes: Sequence[int], room: int) -> int | None:
    """The common size the largest of `sizes` are cut to so that they add up to at most `room`; None when they fit."""
    if sum(sizes) <= room:
        return None
    ordered = sorted(sizes)
    left = room
    for k, size in enumerate(ordered):
        share = left // (len(ordered) - k)
        if size > share:
            return max(share, 1)
        left -= size
    return None  # pragma: no cover - unreachable: the sum was over the room


@dataclass(frozen=True, slots=True)
class MaskStrategy:
    """Mask old tool output and clip huge tool output; never calls a model.

    With a budget it masks oldest first and stops as soon as the estimate fits (fewer edits, more of the prompt
    cache survives); without one it masks and clips everything it may.
    """

    keep_last_turns: int = 3
    """Tool-using steps (before the current turn) whose results stay verbatim."""
    clip_chars: int = 20000
    """Results longer than this (in characters) are clipped, even recent ones."""
    head: int = 4000
    """Characters a clipped result keeps from its start."""
    tail: int = 2000
    """Characters a clipped result keeps from its end."""
    name: str = "mask"

    def __post_init__(self) -> None:
        if self.keep_last_turns < 0:
            raise ValueError(f"keep_last_turns must be >= 0, got {self.keep_last_turns}")
        if self.head < 0 or self.tail < 0 or self.head + self.tail >= self.clip_chars:
            raise ValueError(
                f"head ({self.head}) + tail ({self.tail}) must be non-negative and below clip_chars ({self.clip_chars})"
            )

    def plan(self, messages: Sequence[Message], ctx: PlanContext) -> Plan:
        need: int | None = None
        if ctx.budget is not None:
            tokens = ctx.counter.count_messages(messages)
            if tokens <= ctx.budget:
                return Plan(note=f"fits the budget ({tokens} <= {ctx.budget} tokens): nothing to do")
            need = tokens - ctx.budget
        steps, _ = plan_masks(
            messages,
            ctx,
            keep_last_turns=self.keep_last_turns,
            clip_chars=self.clip_chars,
            head=self.head,
            tail=self.tail,
            need=need,
        )
        if not steps:
            return Plan(note="no tool output left to mask or clip")
        return Plan(tuple(steps), note=f"{len(steps)} tool results to mask or clip")
