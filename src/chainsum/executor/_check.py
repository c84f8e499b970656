"""The plan check: a planner bug must become a clear error, never an invalid history at the provider."""

from __future__ import annotations

from collections.abc import Sequence

from ..chain import current_turn_start, is_record_message, is_summary_system, newest_turn_start, safe_cuts
from ..messages import Message, ToolCall, ToolResult
from ..strategies import DropBlocks, Evict, Mask, Plan, Step, Summarize, SummarizePart

__all__ = ["check_plan"]


def check_plan(plan: Plan, messages: Sequence[Message], name: str) -> None:
    """Reject a plan that would break an invariant: overlapping steps, unsafe cuts, the user's system messages (a
    span may reach over one only to keep it aside, verbatim), the current turn (from `Plan.turn_start` when the plan
    lets the last body pair give way, never past the newest user message). Raises ValueError naming the strategy
    and the step."""
    n = len(messages)
    cuts = safe_cuts(messages)
    protected = current_turn_start(messages)
    if plan.turn_start is not None:  # the last body pair gives way: never past the newest user message after it
        if not protected <= plan.turn_start <= newest_turn_start(messages):
            raise ValueError(
                f"strategy {name!r} planned with the current turn from message {plan.turn_start}, outside "
                f"{protected}..{newest_turn_start(messages)}"
            )
        protected = plan.turn_start
    covered: set[int] = set()
    parts: set[tuple[int, int]] = set()
    records: set[int] = set()

    def bad(step: Step, why: str) -> ValueError:
        return ValueError(f"strategy {name!r} planned an invalid {step.kind} step ({step.reason}): {why}")

    for step in plan.steps:
        if isinstance(step, Summarize | Evict):
            if not 0 <= step.start < step.end <= n:
                raise bad(step, f"span {step.start}:{step.end} outside 0:{n}")
            if not (cuts[step.start] and cuts[step.end]):
                raise bad(step, f"span {step.start}:{step.end} separates a tool call from its result")
            if step.end > protected:
                raise bad(step, f"span {step.start}:{step.end} reaches the current turn (from {protected})")
            span = range(step.start, step.end)
            for i in span:
                m = messages[i]
                if m.role == "system" and not is_summary_system(m) and i not in step.keep:
                    raise bad(step, f"message {i} is a system message")
            if covered.intersection(span) or any(i in span for i, _ in parts) or records.intersection(span):
                raise bad(step, "overlaps another step")
            if isinstance(step, Summarize) and any(not 0 <= i < n or i in span for i in step.context):
                raise bad(step, "context index outside the history or inside the span")
            for k in step.keep:
                kept = messages[k]
                plain = (kept.role == "user" and not kept.tool_calls) or (
                    kept.role == "system" and not is_summary_system(kept)
                )
                if k not in span or not plain:
                    raise bad(
                        step,
                        f"message {k} cannot be kept aside: outside the span, or not a plain user or system message",
                    )
            if isinstance(step, Summarize) and step.keep and step.form != "record":
                raise bad(step, "only a record summary keeps messages aside")
            if isinstance(step, Summarize) and step.excerpt_from is not None:
                if step.form != "record" or not step.start <= step.excerpt_from < step.end:
                    raise bad(step, "an excerpt is of a record summary's own span")
            if isinstance(step, Summarize) and len(span) <= len(step.keep):
                raise bad(step, "nothing to summarize: the span holds only messages kept aside")
            covered.update(span)
            before = step.start - 1
            if before >= 0 and is_record_message(messages[before]) and not is_record_message(messages[step.start]):
                if before in covered:
                    raise bad(step, "the record it adds to is replaced by another step")
                covered.add(before)  # this step rewrites the record (a DropBlocks on it may come first)
        elif isinstance(step, DropBlocks):
            if not 0 <= step.index < n or not is_record_message(messages[step.index]):
                raise bad(step, f"message {step.index} is not a record message")
            if step.count < 1 or step.index in records:
                raise bad(step, "nothing to drop, or the record is edited twice")
            records.add(step.index)
        else:
            if not 0 <= step.index < n or not 0 <= step.part < len(messages[step.index].parts):
                raise bad(step, f"no part {step.part} in message {step.index}")
            target = messages[step.index].parts[step.part]
            allowed = (
                isinstance(target, ToolResult)
                or (isinstance(step, SummarizePart) and target.kind == "text")
                or (isinstance(step, Mask) and isinstance(target, ToolCall))
            )
            if not allowed or messages[step.index].role == "system":
                raise bad(step, f"part {step.part} of message {step.index} cannot be edited this way")
            if step.index in covered or (step.index, step.part) in parts:
                raise bad(step, "overlaps another step")
            parts.add((step.index, step.part))
