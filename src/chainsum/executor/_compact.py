"""`compact`: run a strategy's plans round after round until the history fits, then repair it for the provider.

``compact(messages, strategy, ...)`` repairs the chain structure when it must, then loops: ask the strategy for a
plan on the current history, check the plan (`check_plan`), run every summarizing step of the round concurrently
under one semaphore, splice the replacements in, and go again until the plan is empty, the history fits the budget,
a round gains nothing, or `max_rounds` is reached. Then the provider's repair runs as a last pass, and if the result
is not smaller than the input, the input comes back unchanged.

Failing open (DESIGN invariant 6): a summarizer that fails (any `SummarizerError`, including the wrapped exceptions
of user callables) costs only its own step; the original messages stay, the error is recorded, and every other step
of the round is still applied.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import cast

from .._sync import sync_version
from ..chain import Chain, SummaryRole, message_depth
from ..errors import SummarizerError
from ..formats import as_messages
from ..messages import Message, ToolResult
from ..rules import get_profile, repair, validate
from ..strategies import CLIP_MARKER, Plan, PlanContext, Strategy, clip_result, is_masked, widened_mask
from ..summarize import ReachMeter, SummarizerLike, is_local, parse_transcript_target, reaching
from ..tokens import TokenCounter
from ._apply import apply_plan
from ._check import check_plan
from ._result import CompactResult, StepError
from ._run import ProgressCallback, SummarizerRun

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_CHUNKS",
    "DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS",
    "check_budget",
    "check_hard_limit",
    "compact",
    "compact_sync",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS = 8000
"""Largest transcript sent to the summarizer in one call; longer spans are chunked (map, then consolidate)."""
DEFAULT_MAX_CHUNKS = 32
"""Most chunks one summary of a model-free summarizer (``local = True``: the extractive one) is mapped over: a span
longer than that many full calls is read as excerpts (each long message clipped to head and tail), so its time is
bounded however long the history. A summarizer that calls a model reads every span whole by default (issue 32:
what it replaces is what it must have read); `compact`'s ``model_max_chunks`` bounds it, as an opt-in, and what a
bound leaves unread shows in `CompactResult.model_coverage`."""

DEFAULT_CONCURRENCY = 16
"""Summarizer calls in flight at once. A long span is mapped over many calls that must all finish before the
consolidation starts: when the map step was bounded at 32 calls, at 8 at a time the 28 map calls of a 14 MB session
waited four rounds of model latency (1.0 of 1.6 s end to end at 0.2 s a call, ``bench/bench_compact.py``), at 16
two (1.2 s), with the same result; read whole by a model, the same session takes 809 calls (18.9 s at 0.2 s a
call). A provider's rate limit is the summarizer's to respect: the LLM summarizers wait what a 429 asks."""

_DRY_RUN_SUMMARY = "[dry run: a summary of about this length would stand here]"
"""How the stand-in summaries of a dry run begin (followed by filler up to the planned length)."""


def check_budget(value: object, name: str = "budget") -> int | None:
    """`value` as a token count (None allowed), or ValueError naming `name` and saying why: the one rule for budgets
    that the library, the CLI and the HTTP service share. 0 means "as small as possible"."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{name} must be a whole number of tokens, got {type(value).__name__}")
    if isinstance(value, str):
        text = value.strip().replace("_", "").replace(",", "")
        if not text.removeprefix("-").isdigit():
            raise ValueError(f"{name} must be a whole number of tokens, got {value!r}")
        value = int(text)
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ValueError(f"{name} must be a whole number of tokens, got {value!r}")
        value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0 tokens, got {value}")
    return value


def check_hard_limit(
    hard_limit: int | None, budget: int | None, name: str = "hard_limit", budget_name: str = "the budget"
) -> None:
    """ValueError naming `name` unless `hard_limit` (checked by `check_budget` already) is None or a positive token
    count at least `budget`: the one rule the library and the CLI share."""
    if hard_limit is not None and (hard_limit < 1 or (budget is not None and hard_limit < budget)):
        raise ValueError(f"{name} must be a positive number of tokens, at least {budget_name}, got {hard_limit}")


def _depth(messages: Sequence[Message]) -> int:
    return max((message_depth(m) for m in messages), default=0)


async def compact(
    messages: Sequence[Message],
    strategy: Strategy,
    *,
    summarizer: SummarizerLike | None,
    counter: TokenCounter,
    budget: int | None = None,
    hard_limit: int | None = None,
    provider: str = "openai",
    concurrency: int = DEFAULT_CONCURRENCY,
    max_rounds: int = 6,
    max_summarizer_input_tokens: int = DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS,
    max_chunks: int = DEFAULT_MAX_CHUNKS,
    model_max_chunks: int | None = None,
    max_depth: int = 3,
    summary_role: SummaryRole = "user",
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
    check_summaries: bool = True,
) -> CompactResult:
    """Compact `messages` with `strategy` until they fit `budget` (tokens, by `counter`), valid for `provider`.

    `hard_limit` (tokens; the model's context window) is where the provider would reject the request: a strategy
    may then, as a last resort, clip tool output in the current turn or move old messages to the archive (see
    `PlanContext.hard_limit`). `max_depth` bounds summaries of summaries (`PlanContext.max_depth`).
    `summary_role` is the role of the record message summaries go into (``user``: a record without authority;
    ``system``: the events spec's placement).

    `summarizer` may be None only for strategies that never summarize (``mask``) or for a dry run. A dry run calls no
    model and returns the input with the plans and the counts: with a summarizer that runs locally and is
    deterministic (`ExtractiveSummarizer`, or any object with ``local = True``) it runs that summarizer, so the plans
    and calls are exactly those of the real run; otherwise every summary is a stand-in of its planned length, so the
    plans are what the real run does when the model keeps to the length it is asked for. Never mutates `messages`
    or anything in it.

    `max_chunks` bounds the map step of one summary (its calls) for a summarizer that calls no model;
    `model_max_chunks` (default None: no bound) for one that calls a model, which by default reads every span it
    replaces, chunked at `max_summarizer_input_tokens` and consolidated.

    `check_summaries`: a model's summary of a span is checked against the span's messages, and what it left out of
    the user's requests, files, commands with their outcome, errors and the identifiers the newest turn names is
    appended from the extractive digest, within the summary's length target (`chainsum.summarize.check_summary`;
    never for a summarizer that calls no model, nor in a dry run).
    """
    started = time.perf_counter()
    budget = check_budget(budget)
    hard_limit = check_budget(hard_limit, "hard_limit")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
    check_hard_limit(hard_limit, budget)
    get_profile(provider)  # an unknown provider fails before any work
    original = tuple(as_messages(messages))  # wire dicts of any format too (FormatError naming where)
    tokens_before = counter.count_messages(original)
    chain = Chain.build(original, repair=True, allow_pending_tail=True)
    current = tuple(chain.messages()) if chain.repairs else original
    # Plans are made on what will be sent where a provider repair changes sizes without touching what is protected:
    # a user's tool calls become text for providers without them (tau2's user tools), and planned before that the
    # result landed far under the budget. (Other repairs wait for the end: a system message folded into a user
    # turn would lose its protection.)
    early = repair(current, provider, only=("fold-misplaced-calls",))
    if early.actions:
        current = tuple(early.messages)
    local = summarizer is None or is_local(summarizer)
    if dry_run and not local:
        effective: SummarizerLike = _dry_summary
    elif summarizer is None:
        effective = _no_summarizer
    else:
        effective = summarizer
    run = SummarizerRun(
        effective,
        counter,
        concurrency=concurrency,
        cap=max_summarizer_input_tokens,
        max_chunks=max_chunks if local else model_max_chunks,
        progress=None if dry_run else progress,
        check_summaries=check_summaries and not dry_run,
    )
    plans: list[Plan] = []
    errors: list[StepError] = []
    rounds = 0
    summarized = 0
    undo: dict[int, tuple[Message, Message]] = {}
    size = counter.count_messages(current)
    # What the provider repair at the end adds (an error result for a call left without one, in a saved log) is
    # planned for: a history filled to the budget would otherwise go over it by that much.
    added = 0 if budget is None else max(0, counter.count_messages(repair(current, provider).messages) - size)
    plan_budget = None if budget is None else max(1, budget - added)
    reach = ReachMeter()
    with reaching(reach):  # what chunked summarization shows no summarizer (`CompactResult.model_coverage`)
        for round_no in range(max_rounds):
            ctx = PlanContext(
                budget=plan_budget,
                hard_limit=hard_limit,
                counter=counter,
                round=round_no,
                depth=_depth(current),
                max_depth=max_depth,
                extra={"tokens_before": tokens_before},
            )
            plan = strategy.plan(current, ctx)
            plans.append(plan)
            logger.debug(
                "strategy=<%s>, round=<%d>, steps=<%d> | planned: %s",
                strategy.name,
                round_no,
                len(plan.steps),
                plan.note,
            )
            if not plan:
                break
            check_plan(plan, current, strategy.name)
            rounds += 1
            done = await apply_plan(run, plan, current, round_no, summary_role)
            errors.extend(done.errors)
            if not done.applied:
                break  # every step failed: planning again would plan the same
            new_size = counter.count_messages(done.messages)
            if new_size >= size:
                logger.debug(
                    "round=<%d>, tokens=<%d>, before=<%d> | round gained nothing; stopping", round_no, new_size, size
                )
                break
            current, size = tuple(done.messages), new_size
            logger.debug("round=<%d>, tokens=<%d>, budget=<%s> | round applied", round_no, size, budget)
            summarized += done.summarized
            undo.update((id(edited), (edited, before)) for edited, before in done.masked)
            if budget is not None and (
                size <= budget or counter.count_messages(repair(current, provider).messages) <= budget
            ):
                break  # what is sent is the provider-repaired history: when that fits, another round would only lose
    if budget is not None and undo and size < budget:
        current = refill(current, undo, counter, budget - size)
    finish = getattr(strategy, "finish", None)
    if rounds and callable(finish):  # a strategy's own post-processing (safe-split's role alternation)
        current = tuple(cast("Sequence[Message]", finish(current)))
    final = repair(current, provider)
    result = CompactResult(
        messages=final.messages,
        tokens_before=tokens_before,
        tokens_after=counter.count_messages(final.messages),
        messages_before=len(original),
        messages_after=len(final.messages),
        messages_summarized=summarized,
        summarizer_calls=run.calls,
        summarizer_input_tokens=run.input_tokens,
        errors=tuple(errors),
        rounds=rounds,
        plans=tuple(plans),
        repairs=chain.repairs,
        provider_repairs=(*early.actions, *final.actions),
        problems=(),
        seconds=0.0,
        strategy=strategy.name,
        provider=provider,
        budget=budget,
        dry_run=dry_run,
        model_coverage=run.coverage(reach.unread_chars) if not dry_run else None,
    )
    if dry_run:  # what would happen; the caller keeps its input
        result = replace(result, messages=original)
    elif result.tokens_after >= tokens_before:  # nothing gained: the input, unchanged (invariant 5)
        result = replace(
            result,
            messages=original,
            tokens_after=tokens_before,
            messages_after=len(original),
            messages_summarized=0,
            repairs=(),
            provider_repairs=(),
        )
    return replace(result, problems=tuple(validate(result.messages, provider)), seconds=time.perf_counter() - started)


def refill(
    messages: Sequence[Message], undo: dict[int, tuple[Message, Message]], counter: TokenCounter, room: int
) -> tuple[Message, ...]:
    """`messages` with masks undone, as long as they add up to at most `room` tokens.

    A plan is made on estimates (how long a summary will be, the masking headroom that spares a growing session
    from being masked again a few messages later), so a round often clears more than it had to; what it cleared
    beyond the budget is given back here: the newest outputs first, then the next older one as a head-and-tail
    excerpt when only part of it fits. Newest first, not smallest first (which gave back the most outputs), because
    the newest tool output is the last thing to lose (DESIGN invariant 11): an older output given back whole while a
    newer one stays masked is what the agent needs least kept and what it needs most lost. What is given back at a
    budget is always given back at a larger one too (a prefix of one fixed order), so the result lands just under the
    budget and a larger budget keeps more. Nothing older than an output that stays cut (clipped, or masked by an
    earlier compaction) is given back, for the same reason. `undo` maps ``id(edited)`` to (edited message, message
    before the edit); a message masked twice is followed back to its original."""
    out = list(messages)
    floor = _newest_cut_step(out, undo)
    candidates: list[tuple[int, int, Message, int]] = []  # (cost, index, original, edited cost)
    for i, edited in enumerate(out):
        entry = undo.get(id(edited))
        if entry is None or entry[0] is not edited or i < floor:
            continue
        original = entry[1]
        while (older := undo.get(id(original))) is not None and older[0] is original:
            original = older[1]
        edited_cost = counter.count_message(edited)
        candidates.append((counter.count_message(original) - edited_cost, i, original, edited_cost))
    for cost, i, original, edited_cost in sorted(candidates, key=lambda c: -c[1]):
        if cost <= room:
            out[i] = original
            room -= cost
            continue
        partial = _excerpt(original, edited_cost + room, counter) if room >= _MIN_PARTIAL_TOKENS else None
        if partial is None:
            partial = _widened(out[i], original, edited_cost + room, counter)
        if partial is not None:
            out[i] = partial
        break
    return tuple(out)


def _newest_cut_step(messages: Sequence[Message], undo: dict[int, tuple[Message, Message]]) -> int:
    """Index of the message that made the calls of the newest tool output in `messages` that is masked or clipped
    and that `refill` may not give back (0 when there is none): outputs of that step are of its age, older ones stay
    cut with it."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role != "tool":
            continue
        entry = undo.get(id(m))
        if entry is not None and entry[0] is m:
            continue
        if any(isinstance(p, ToolResult) and (is_masked(p) or CLIP_MARKER in p.text) for p in m.parts):
            while i > 0 and messages[i].role == "tool":
                i -= 1
            return i
    return 0


_MIN_PARTIAL_TOKENS = 200
"""Room (tokens) below which `refill` gives no excerpt back: an excerpt shorter than this says little more than
the mask's placeholder."""


def _widened(edited: Message, original: Message, tokens: int, counter: TokenCounter) -> Message | None:
    """`edited` (one masked tool result) with its placeholder listing more of `original`'s identifiers, so that it
    costs at most `tokens`; None when it is no such message or nothing more fits (`widened_mask`)."""
    if not (len(edited.parts) == len(original.parts) == 1 and isinstance(masked := edited.parts[0], ToolResult)):
        return None
    if not isinstance(part := original.parts[0], ToolResult):
        return None
    extra = (tokens - counter.count_message(edited)) * 3  # identifiers: about 3 characters a token
    for _ in range(4):  # counts are estimates: shrink until it fits
        widened = widened_mask(masked, part, extra)
        if widened is None:
            return None
        candidate = edited.with_parts((widened,))
        if counter.count_message(candidate) <= tokens:
            return candidate
        extra = extra * 3 // 4
    return None


def _excerpt(message: Message, tokens: int, counter: TokenCounter) -> Message | None:
    """`message` (one tool result) with its output clipped to head and tail so that it costs at most `tokens`;
    None when it is not a single tool result or no excerpt fits."""
    if len(message.parts) != 1 or not isinstance(part := message.parts[0], ToolResult):
        return None
    text = part.text
    per_token = len(text) / max(1, counter.count_text(text))
    chars = int((tokens - counter.count_message(message.with_parts((clip_result(part, 0, 0),)))) * per_token)
    for _ in range(4):  # counts are estimates: shrink until it fits
        if chars < 200:
            return None
        candidate = message.with_parts((clip_result(part, chars * 2 // 3, chars - chars * 2 // 3),))
        if counter.count_message(candidate) <= tokens:
            return candidate
        chars = chars * 3 // 4
    return None


async def _dry_summary(transcript: str) -> str:
    """A stand-in summary of the length the transcript asks for (about 100 tokens when it asks for none), and never
    more than a third of what it summarizes (about 4 characters a token), as summaries of short spans are short."""
    target = min(parse_transcript_target(transcript) or 100, len(transcript) // 12)
    return _DRY_RUN_SUMMARY + " " + " ".join(["text"] * max(1, target - 15))


async def _no_summarizer(transcript: str) -> str:
    del transcript
    raise SummarizerError("the strategy planned a summary but no summarizer was given", kind="invalid")


compact_sync = sync_version(compact)
