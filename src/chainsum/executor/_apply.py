"""Applying one plan: the only code that turns steps into messages."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from ..chain import (
    RecordBlock,
    append_block,
    is_record_message,
    match_results,
    new_block,
    record_blocks,
    record_message,
)
from ..errors import SummarizerError
from ..messages import Message, ToolCall, ToolResult
from ..strategies import (
    NOTE_CHARS,
    Clip,
    DropBlocks,
    Evict,
    Mask,
    Plan,
    Summarize,
    SummarizePart,
    archive_note,
    blocks_lines,
    clip_result,
    mask_call,
    mask_result,
    messages_lines,
)
from ._result import StepError
from ._run import SummarizerRun, replace_part

__all__ = ["Applied", "apply_plan", "archived_note"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Applied:
    messages: list[Message]
    applied: int
    """Steps applied (failed summaries are not)."""
    summarized: int
    """Messages replaced by summaries or moved to the archive."""
    errors: list[StepError]
    masked: list[tuple[Message, Message]]
    """(edited message, the message before the edit) for each message a `Mask` edited: what `refill` may undo."""


def archived_note(gone: Sequence[Message], chars: int = NOTE_CHARS) -> RecordBlock:
    """The depth-0 block standing for messages moved to the archive without a summary, saying in their words what
    they held, in at most `chars` more characters (`strategies.archive_note`: a note that only counted them carried
    nothing)."""
    blocks = [record_blocks(m) for m in gone]
    count = sum(sum(b.messages for b in bs) if bs is not None else 1 for bs in blocks)
    return archive_note(count, messages_lines(gone), chars)


def _dropped(record: Message, count: int, chars: int) -> Message:
    """`record` with its oldest `count` blocks replaced by one depth-0 note (merged with a note already first) that
    carries on the requests they listed."""
    blocks = record_blocks(record) or ()
    gone = blocks[:count]
    total = sum(b.messages for b in gone)
    note = archive_note(total, blocks_lines(gone), chars)
    return record_message([note, *blocks[count:]], "system" if record.role == "system" else "user")


def _with_note(out: list[Message], step: Evict, span: Sequence[Message], kept: Sequence[Message], role: str) -> None:
    """Replace ``out[start:end]`` (an `Evict` span) by the messages it keeps, noting the rest in the record before it
    (or a new one)."""
    start, end = step.start, step.end
    note = archived_note([m for m in span if not any(m is k for k in kept)], step.note_chars)
    if start > 0 and is_record_message(out[start - 1]):
        out[start - 1 : end] = [append_block(out[start - 1], note), *kept]
    else:
        out[start:end] = [record_message([note], "system" if role == "system" else "user"), *kept]


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


async def apply_plan(run: SummarizerRun, plan: Plan, messages: Sequence[Message], round_no: int, role: str) -> Applied:
    """Apply one plan to `messages` (never mutated). Summarizing steps run concurrently; a failed one keeps its
    originals and is reported, the others are applied."""
    model_steps = [s for s in plan.steps if isinstance(s, Summarize | SummarizePart)]
    run.plan_calls(model_steps, messages, plan.note)
    tasks = [asyncio.ensure_future(run.step(s, messages, role)) for s in model_steps]
    try:
        edits = await _edits(messages, [s for s in plan.steps if isinstance(s, Mask | Clip)], yielding=bool(tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
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
    masked: list[tuple[Message, Message]] = []
    # In-place edits first (they shift nothing), then spans from the end so earlier indices stay valid.
    for step in plan.steps:
        if isinstance(step, Mask | Clip):
            m = out[step.index]
            out[step.index] = m.with_parts(replace_part(m.parts, step.part, edits[id(step)]))
            if isinstance(step, Mask):
                masked.append((out[step.index], m))
            applied += 1
        elif isinstance(step, SummarizePart) and id(step) in replacements:
            edited = replacements[id(step)]
            assert isinstance(edited, Message)
            m = out[step.index]  # merge with other edits of the same message: take only the summarized part
            out[step.index] = m.with_parts(replace_part(m.parts, step.part, edited.parts[step.part]))
            applied += 1
        elif isinstance(step, DropBlocks):
            out[step.index] = _dropped(out[step.index], step.count, step.note_chars)
            applied += 1
    spans = sorted(
        (s for s in plan.steps if isinstance(s, Evict) or (isinstance(s, Summarize) and id(s) in replacements)),
        key=lambda s: -s.start,
    )
    for step in spans:
        span = messages[step.start : step.end]
        summarized += step.end - step.start
        applied += 1
        kept = [messages[k] for k in step.keep]
        if isinstance(step, Evict):
            _with_note(out, step, span, kept, role)
            continue
        new_messages = replacements[id(step)]
        assert isinstance(new_messages, list)
        before = step.start - 1
        if (
            step.form == "record"
            and before >= 0
            and is_record_message(out[before])
            and not is_record_message(messages[step.start])
        ):
            out[before : step.end] = [append_block(out[before], new_block_of(new_messages, span)), *kept]
        else:
            out[step.start : step.end] = [*new_messages, *kept]
    return Applied(out, applied, summarized, errors, masked)


async def _edits(
    messages: Sequence[Message], steps: Sequence[Mask | Clip], *, yielding: bool
) -> dict[int, ToolResult | ToolCall]:
    """The new tool result of every `Mask` and `Clip` step, by ``id(step)``. With `yielding`, control goes back to
    the event loop every few edits, so summarizer calls started just before go out and wait on the model while
    the placeholders are built (they read each output for its identifiers: hundreds of milliseconds on a long
    agent session)."""
    out: dict[int, ToolResult | ToolCall] = {}
    for k, step in enumerate(steps):
        if yielding and k % 8 == 0:
            await asyncio.sleep(0)
        out[id(step)] = _edited_part(messages, step)
    return out


def _edited_part(messages: Sequence[Message], step: Mask | Clip) -> ToolResult | ToolCall:
    """The part a `Mask` (placeholder) or `Clip` (head and tail) step puts in place of the original: a tool result,
    or for a `Mask` of a tool call, the call with its long arguments masked."""
    result = messages[step.index].parts[step.part]
    if isinstance(result, ToolCall):
        return mask_call(result)
    assert isinstance(result, ToolResult)
    if isinstance(step, Mask):
        return mask_result(result, _call_of(messages, step.index, result))
    return clip_result(result, step.head, step.tail)


def new_block_of(new_messages: Sequence[Message], span: Sequence[Message]) -> RecordBlock:
    """The block a fresh record (`summary_messages` of form ``record``) holds, to be appended to an existing one."""
    (record,) = new_messages
    blocks = record_blocks(record)
    if not blocks:  # pragma: no cover - summary_messages always writes one block
        return new_block(record.text, span)
    return blocks[0]
