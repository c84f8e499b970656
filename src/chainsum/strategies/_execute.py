"""The executor: the one piece of code that applies plans to messages.

``compact(messages, strategy, ...)`` repairs the chain structure when it must, then loops: ask the strategy for a
plan on the current history, check the plan (a planner bug must not become an invalid history), run every
summarizing step of the round concurrently under one semaphore, splice the replacements in, and go again until the
plan is empty, the history fits the budget, a round gains nothing, or `max_rounds` is reached. Then the provider's
repair runs as a last pass, and if the result is not smaller than the input, the input comes back unchanged.

Failing open (DESIGN invariant 6): a summarizer that fails (any `SummarizerError`, including the wrapped
exceptions of user callables) costs only its own step; the original messages stay, the error is recorded, and
every other step of the round is still applied.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast

from ..chain import (
    SUMMARIZATION_TOOL_NAME,
    SUMMARIZED_CONTENT_PREFIX,
    BodyPair,
    Chain,
    Repair,
    contains_tool_call_reasoning,
    match_results,
    safe_cuts,
)
from ..errors import SummarizerError
from ..messages import Message, Part, Text, ToolCall, ToolResult
from ..rules import Problem, RepairAction, get_profile, repair, validate
from ..summarize import SummarizerLike, call_summarizer, render_transcript, summarize_chunked
from ..tokens import TokenCounter
from ._mask import clip_result, current_turn_start, mask_result
from ._plan import Clip, Mask, Plan, PlanContext, Step, Strategy, Summarize, SummarizePart, SummaryForm, TranscriptCase

__all__ = [
    "DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS",
    "SNAPSHOT_INTRO",
    "CompactResult",
    "ProgressCallback",
    "StepError",
    "compact",
    "compact_sync",
    "is_summary_system",
    "message_depth",
    "summarizable_history",
    "summary_messages",
]

logger = logging.getLogger(__name__)

DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS = 8000
"""Largest transcript sent to the summarizer in one call; longer spans are chunked (map, then consolidate)."""

SNAPSHOT_INTRO = (
    "SYSTEM: Automated Context Restoration. The earlier conversation was compressed into the state snapshot "
    "below; treat it as the history up to this point."
)
"""How the ``snapshot`` form opens (safe-split's context-restoration message)."""

_SYSTEM_SUMMARY_TAG = "[chainsum summary depth="
_DRY_RUN_SUMMARY = "[dry run: a summary of about this length would stand here]"

ProgressCallback = Callable[[int, int], object]
"""``progress(done, total)``: summarizing steps finished and planned so far (a step may make several calls
when its span is chunked; the total grows when a later round plans more)."""


# summary forms ---------------------------------------------------------------------------------------------------
def _first_text(message: Message) -> str:
    """The first text part's text: where chainsum puts its tags, and cheap to read on huge messages."""
    for p in message.parts:
        if isinstance(p, Text):
            return p.text
    return ""


def is_summary_system(message: Message) -> bool:
    """True for a system message chainsum wrote as a ``system``-form summary (not the user's system prompt):
    strategies may summarize it again, where a user's system message is never touched."""
    return message.role == "system" and _first_text(message).startswith(_SYSTEM_SUMMARY_TAG)


def summarizable_history(messages: Sequence[Message]) -> tuple[int, int]:
    """(start, end): the span a ``system``-form summary may replace, from after the leading system prompt (the
    user's system messages; chainsum's own summaries are not skipped, so they get folded in) up to the next user
    system message, which no summary may swallow."""
    start = 0
    while start < len(messages) and messages[start].role == "system" and not is_summary_system(messages[start]):
        start += 1
    end = start
    while end < len(messages) and (messages[end].role != "system" or is_summary_system(messages[end])):
        end += 1
    return start, end


def message_depth(message: Message) -> int:
    """How many summaries deep `message` is: the tag of a system-form summary, 1 for any other summary chainsum
    writes (pair, completion, snapshot), 0 for original content."""
    role = message.role
    if role == "tool":
        return 0
    text = _first_text(message)
    if role == "system":
        if not text.startswith(_SYSTEM_SUMMARY_TAG):
            return 0
        digits = text[len(_SYSTEM_SUMMARY_TAG) : text.find("]")]
        return int(digits) if digits.isdigit() else 1
    if text.startswith((SUMMARIZED_CONTENT_PREFIX, SNAPSHOT_INTRO)):
        return 1
    if role == "assistant" and any(
        isinstance(p, ToolCall) and p.name == SUMMARIZATION_TOOL_NAME for p in message.parts
    ):
        return 1
    return 0


def summary_messages(summary: str, form: SummaryForm, replaced: Sequence[Message]) -> list[Message]:
    """The messages that stand in for `replaced` once summarized as `summary`, in `form` (see `SummaryForm`)."""
    if form == "pair":
        pair = BodyPair.from_summarization(summary, add_fake_signature=contains_tool_call_reasoning(replaced))
        return pair.messages()
    if form == "completion":
        return [Message.of("assistant", SUMMARIZED_CONTENT_PREFIX + summary)]
    if form == "system":
        depth = 1 + max((message_depth(m) for m in replaced), default=0)
        return [Message.of("system", f"{_SYSTEM_SUMMARY_TAG}{depth}]\n{summary}")]
    if form == "user":
        return [Message.of("user", "Summary of the conversation so far:\n" + summary)]
    body = summary if "<state_snapshot>" in summary else f"<state_snapshot>\n{summary}\n</state_snapshot>"
    return [Message.of("user", f"{SNAPSHOT_INTRO}\n{body}")]


# results ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StepError:
    """A summarizing step that failed; its original messages were kept."""

    round: int
    step: Step
    error: SummarizerError

    def __str__(self) -> str:
        return f"round {self.round}: {self.step.kind} ({self.step.reason}): {self.error}"


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactResult:
    """What `compact` did. For a dry run, `messages` is the input and the counts are what would happen."""

    messages: tuple[Message, ...]
    """The history to send on (the input itself when nothing was gained)."""
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    messages_summarized: int
    """Messages replaced by summaries (masking and clipping edit messages in place and do not count)."""
    summarizer_calls: int
    summarizer_input_tokens: int
    errors: tuple[StepError, ...]
    """Every failed summarizing step, in order (each kept its original messages)."""
    rounds: int
    """Rounds in which a non-empty plan was applied."""
    plans: tuple[Plan, ...]
    """Every plan the strategy returned, the final empty one included."""
    repairs: tuple[Repair, ...]
    """Structural repairs made before planning (`Chain.build(repair=True)`)."""
    provider_repairs: tuple[RepairAction, ...]
    """What the final `chainsum.rules.repair` pass changed for the provider."""
    problems: tuple[Problem, ...]
    """What `chainsum.rules.validate` still reports on `messages` (empty when valid)."""
    seconds: float
    strategy: str
    provider: str
    dry_run: bool = False

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def changed(self) -> bool:
        return not self.dry_run and self.tokens_after < self.tokens_before

    def report(self) -> dict[str, object]:
        """The CLI's JSON report."""
        return {
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "messages_summarized": self.messages_summarized,
            "summarizer_calls": self.summarizer_calls,
            "summarizer_input_tokens": self.summarizer_input_tokens,
            "seconds": round(self.seconds, 3),
            "strategy": self.strategy,
            "valid": self.valid,
        }


# the run ---------------------------------------------------------------------------------------------------------
class _Run:
    """Counting, bounded access to the summarizer for one `compact` call."""

    def __init__(
        self,
        summarizer: SummarizerLike,
        counter: TokenCounter,
        concurrency: int,
        cap: int,
        progress: ProgressCallback | None,
    ) -> None:
        self.summarizer = summarizer
        self.counter = counter
        self.concurrency = concurrency
        self.cap = cap
        self.progress = progress
        self.semaphore = asyncio.Semaphore(concurrency)
        self.calls = 0
        self.input_tokens = 0
        self.done = 0
        self.total = 0

    async def call(self, transcript: str) -> str:
        """One summarizer call, under the semaphore shared by every step and chunk of the run."""
        async with self.semaphore:
            self.calls += 1
            self.input_tokens += self.counter.count_text(transcript)
            return await call_summarizer(self.summarizer, transcript)

    async def summarize(
        self, messages: Sequence[Message], case: TranscriptCase, context: Sequence[Message], *, snapshot: bool = False
    ) -> str:
        """One summary of `messages`: a single call when the transcript fits the cap, else map-reduce."""
        transcript = render_transcript(messages, case, context)
        if self.counter.count_text(transcript) <= self.cap:
            return await self.call(transcript)
        return await summarize_chunked(
            self.call,
            messages,
            case=case,
            context=context,
            max_input_tokens=self.cap,
            count_tokens=self.counter.count_text,
            concurrency=self.concurrency,
            snapshot=snapshot,
        )

    def _tick(self) -> None:
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, self.total)

    async def step(self, step: Summarize | SummarizePart, messages: Sequence[Message]) -> list[Message] | Message:
        try:
            if isinstance(step, Summarize):
                span = messages[step.start : step.end]
                context = [messages[i] for i in step.context]
                summary = await self.summarize(span, step.case, context, snapshot=step.form == "snapshot")
                return summary_messages(summary, step.form, span)
            message = messages[step.index]
            part = message.parts[step.part]
            summary = await self.summarize([message.with_parts((part,))], "ai", ())
            return message.with_parts(_replace(message.parts, step.part, _part_summary(part, summary)))
        finally:
            self._tick()


def _part_summary(part: Part, summary: str) -> Part:
    if isinstance(part, ToolResult):
        return ToolResult(
            call_id=part.call_id,
            name=part.name,
            content="Summary of tool output:\n" + summary,
            is_error=part.is_error,
            extras=part.extras,
        )
    return Text(text="Summary of a long text:\n" + summary)


def _replace(parts: tuple[Part, ...], index: int, new: Part) -> tuple[Part, ...]:
    return (*parts[:index], new, *parts[index + 1 :])


def _check_plan(plan: Plan, messages: Sequence[Message], name: str) -> None:
    """Reject a plan that would break an invariant: overlapping steps, unsafe cuts, system messages, the current
    turn. A planner bug raises here (ValueError naming the strategy and step) rather than reaching a provider."""
    n = len(messages)
    cuts = safe_cuts(messages)
    protected = current_turn_start(messages)
    covered: set[int] = set()
    parts: set[tuple[int, int]] = set()

    def bad(step: Step, why: str) -> ValueError:
        return ValueError(f"strategy {name!r} planned an invalid {step.kind} step ({step.reason}): {why}")

    for step in plan.steps:
        if isinstance(step, Summarize):
            if not 0 <= step.start < step.end <= n:
                raise bad(step, f"span {step.start}:{step.end} outside 0:{n}")
            if not (cuts[step.start] and cuts[step.end]):
                raise bad(step, f"span {step.start}:{step.end} separates a tool call from its result")
            if step.end > protected:
                raise bad(step, f"span {step.start}:{step.end} reaches the current turn (from {protected})")
            span = range(step.start, step.end)
            for i in span:
                m = messages[i]
                if m.role == "system" and not is_summary_system(m):
                    raise bad(step, f"message {i} is a system message")
            if covered.intersection(span) or any(i in span for i, _ in parts):
                raise bad(step, "overlaps another step")
            if any(not 0 <= i < n or i in span for i in step.context):
                raise bad(step, "context index outside the history or inside the span")
            covered.update(span)
        else:
            if not 0 <= step.index < n or not 0 <= step.part < len(messages[step.index].parts):
                raise bad(step, f"no part {step.part} in message {step.index}")
            target = messages[step.index].parts[step.part]
            allowed = isinstance(target, ToolResult) or (isinstance(step, SummarizePart) and isinstance(target, Text))
            if not allowed or messages[step.index].role == "system":
                raise bad(step, f"part {step.part} of message {step.index} cannot be edited this way")
            if step.index in covered or (step.index, step.part) in parts:
                raise bad(step, "overlaps another step")
            parts.add((step.index, step.part))


def _call_of(messages: Sequence[Message], index: int, result: ToolResult) -> ToolCall | None:
    """The call a tool result answers, paired the way the chain pairs them (`match_results`: by id in order, so
    reused ids pair with the right call), among the calls of the nearest message before it that is not a tool
    message."""
    i = index - 1
    while i >= 0 and messages[i].role == "tool":
        i -= 1
    if i < 0:
        return None
    j = i + 1
    while j < len(messages) and messages[j].role == "tool":
        j += 1
    calls = messages[i].tool_calls
    results = [r for m in messages[i + 1 : j] for r in m.tool_results]
    answers, _ = match_results(calls, results)
    return next((c for c, r in zip(calls, answers, strict=True) if r is result), None)


async def _apply(
    run: _Run, plan: Plan, messages: tuple[Message, ...], round_no: int
) -> tuple[list[Message], int, int, list[StepError]]:
    """Apply one plan: returns the new messages, the steps applied, messages summarized, and the failures."""
    model_steps = [s for s in plan.steps if isinstance(s, (Summarize, SummarizePart))]
    run.total += len(model_steps)
    outcomes = await asyncio.gather(*(run.step(s, messages) for s in model_steps), return_exceptions=True)
    errors: list[StepError] = []
    replacements: dict[int, list[Message] | Message] = {}
    for step, outcome in zip(model_steps, outcomes, strict=True):
        if isinstance(outcome, SummarizerError):
            logger.warning(
                "round=<%d>, step=<%s>, error=<%s> | summary failed; originals kept", round_no, step.kind, outcome
            )
            errors.append(StepError(round_no, step, outcome))
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            replacements[id(step)] = outcome
    out = list(messages)
    applied = 0
    summarized = 0
    # part edits first (they shift nothing), then spans from the end so earlier indices stay valid
    for step in plan.steps:
        if isinstance(step, (Mask, Clip)):
            m = out[step.index]
            result = m.parts[step.part]
            assert isinstance(result, ToolResult)
            new = (
                mask_result(result, _call_of(messages, step.index, result))
                if isinstance(step, Mask)
                else (clip_result(result, step.head, step.tail))
            )
            out[step.index] = m.with_parts(_replace(m.parts, step.part, new))
            applied += 1
        elif isinstance(step, SummarizePart) and id(step) in replacements:
            edited = replacements[id(step)]
            assert isinstance(edited, Message)
            # merge with other edits of the same message: take only the summarized part
            m = out[step.index]
            out[step.index] = m.with_parts(_replace(m.parts, step.part, edited.parts[step.part]))
            applied += 1
    spans = sorted(
        (s for s in plan.steps if isinstance(s, Summarize) and id(s) in replacements), key=lambda s: -s.start
    )
    for step in spans:
        new_messages = replacements[id(step)]
        assert isinstance(new_messages, list)
        out[step.start : step.end] = new_messages
        applied += 1
        summarized += step.end - step.start
    return out, applied, summarized, errors


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
    concurrency: int = 8,
    max_rounds: int = 6,
    max_summarizer_input_tokens: int = DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
) -> CompactResult:
    """Compact `messages` with `strategy` until they fit `budget` (tokens, by `counter`), valid for `provider`.

    `hard_limit` (tokens; the model's context window) is where the provider would reject the request: a strategy
    may then, as a last resort, clip tool output in the current turn (see `PlanContext.hard_limit`).

    `summarizer` may be None only for strategies that never summarize (``mask``) or for a dry run; a dry run
    plans every round against a stand-in summary of fixed length, never calls the real summarizer, and returns
    the input with the plans and the estimated counts. Never mutates `messages` or anything in it.
    """
    started = time.perf_counter()
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    if max_rounds < 1:
        raise ValueError(f"max_rounds must be >= 1, got {max_rounds}")
    if budget is not None and budget < 0:  # 0: as small as the strategy can make it
        raise ValueError(f"budget must be a number of tokens >= 0, got {budget}")
    if hard_limit is not None and (hard_limit < 1 or (budget is not None and hard_limit < budget)):
        raise ValueError(f"hard_limit must be a positive number of tokens, at least the budget, got {hard_limit}")
    get_profile(provider)  # an unknown provider fails before any work
    original = tuple(messages)
    tokens_before = counter.count_messages(original)
    chain = Chain.build(original, repair=True, allow_pending_tail=True)
    current = tuple(chain.messages()) if chain.repairs else original
    if dry_run:
        effective: SummarizerLike = _dry_summary
    elif summarizer is None:
        effective = _no_summarizer
    else:
        effective = summarizer
    run = _Run(effective, counter, concurrency, max_summarizer_input_tokens, None if dry_run else progress)
    plans: list[Plan] = []
    errors: list[StepError] = []
    rounds = 0
    summarized = 0
    size = counter.count_messages(current)
    for round_no in range(max_rounds):
        ctx = PlanContext(
            budget=budget,
            hard_limit=hard_limit,
            counter=counter,
            round=round_no,
            depth=_depth(current),
            extra={"tokens_before": tokens_before},
        )
        plan = strategy.plan(current, ctx)
        plans.append(plan)
        logger.debug(
            "strategy=<%s>, round=<%d>, steps=<%d> | planned: %s", strategy.name, round_no, len(plan.steps), plan.note
        )
        if not plan:
            break
        _check_plan(plan, current, strategy.name)
        rounds += 1
        new, applied, n_summarized, failed = await _apply(run, plan, current, round_no)
        errors.extend(failed)
        if not applied:
            break  # every step failed: planning again would plan the same
        new_size = counter.count_messages(new)
        if new_size >= size:
            logger.debug(
                "round=<%d>, tokens=<%d>, before=<%d> | round gained nothing; stopping", round_no, new_size, size
            )
            break
        current, size = tuple(new), new_size
        summarized += n_summarized
        if budget is not None and size <= budget:
            break
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
        provider_repairs=final.actions,
        problems=(),
        seconds=0.0,
        strategy=strategy.name,
        provider=provider,
        dry_run=dry_run,
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


async def _dry_summary(transcript: str) -> str:
    del transcript
    return _DRY_RUN_SUMMARY


async def _no_summarizer(transcript: str) -> str:
    del transcript
    raise SummarizerError("the strategy planned a summary but no summarizer was given", kind="invalid")


def compact_sync(
    messages: Sequence[Message],
    strategy: Strategy,
    *,
    summarizer: SummarizerLike | None,
    counter: TokenCounter,
    budget: int | None = None,
    hard_limit: int | None = None,
    provider: str = "openai",
    concurrency: int = 8,
    max_rounds: int = 6,
    max_summarizer_input_tokens: int = DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS,
    dry_run: bool = False,
    progress: ProgressCallback | None = None,
) -> CompactResult:
    """`compact` for code without an event loop. Raises RuntimeError when called inside one (await `compact`)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError("compact_sync() called from a running event loop; await compact() instead")
    # A loop of our own rather than asyncio.run: on CPython 3.11, asyncio.Runner's SIGINT handling formats the
    # repr of the main task, which formats every message it was given (80 ms on a 300-message session).
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(
            compact(
                messages,
                strategy,
                summarizer=summarizer,
                counter=counter,
                budget=budget,
                hard_limit=hard_limit,
                provider=provider,
                concurrency=concurrency,
                max_rounds=max_rounds,
                max_summarizer_input_tokens=max_summarizer_input_tokens,
                dry_run=dry_run,
                progress=progress,
            )
        )
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()
