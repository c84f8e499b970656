"""The executor: failing open, the concurrency bound, no mutation, dry runs, the report, the final checks."""

from __future__ import annotations

import asyncio
import re
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.chain import SUMMARIZATION_TOOL_NAME, SUMMARIZED_CONTENT_PREFIX, is_record_message, record_blocks
from chainsum.errors import SummarizerError
from chainsum.executor import DEFAULT_CONCURRENCY, CompactResult, compact, compact_sync
from chainsum.executor._compact import refill
from chainsum.messages import Message, Text, ToolCall, ToolResult
from chainsum.strategies import (
    CLIP_MARKER,
    MASK_PREFIX,
    Mask,
    MaskStrategy,
    Plan,
    RatioStrategy,
    Summarize,
    SummarizePart,
    clip_result,
    mask_result,
)
from chainsum.tokens import HeuristicCounter
from sampling import examples
from strategies.strategies_support import (
    CharCounter,
    FixedPlan,
    Scripted,
    agent_history,
    chat_history,
    fixed_summary,
    tool,
)


def pair_steps(n: int) -> Plan:
    """One `pair`-form summary per tool step of `agent_history(n + 1)` (its last step stays: the current turn is
    the final answer, and the step before it is kept too for clarity)."""
    return Plan(tuple(Summarize(start=2 + 2 * k, end=4 + 2 * k, form="pair", reason=f"step {k}") for k in range(n)))


def test_one_failing_summary_keeps_its_originals_and_reports_the_error() -> None:
    messages = agent_history(4)
    scripted = Scripted(fail_on=("output 1 ",))
    result = compact_sync(messages, FixedPlan(pair_steps(3)), summarizer=scripted, counter=CharCounter())
    out = result.messages
    assert len(result.errors) == 1
    assert isinstance(result.errors[0].error, SummarizerError) and result.errors[0].error.kind == "rate_limit"
    assert result.errors[0].step == pair_steps(3).steps[1]
    assert out[4:6] == tuple(messages[4:6])  # step 1 kept verbatim
    assert out[2].tool_calls[0].name == SUMMARIZATION_TOOL_NAME and out[6].tool_calls[0].name == SUMMARIZATION_TOOL_NAME
    assert result.summarizer_calls == 3 and result.messages_summarized == 4
    assert result.valid


def test_every_summary_failing_returns_the_input_with_every_error() -> None:
    messages = agent_history(4)
    scripted = Scripted(fail_on=("output",))
    result = compact_sync(messages, FixedPlan(pair_steps(3)), summarizer=scripted, counter=CharCounter())
    assert result.messages == tuple(messages)
    assert len(result.errors) == 3
    assert result.tokens_after == result.tokens_before


@pytest.mark.parametrize("bound", [1, 3, 5])
def test_concurrency_bound_is_honoured(bound: int) -> None:
    messages = agent_history(13)
    scripted = Scripted(yields=5)
    result = compact_sync(
        messages, FixedPlan(pair_steps(12)), summarizer=scripted, counter=CharCounter(), concurrency=bound
    )
    assert scripted.max_in_flight == bound
    assert result.summarizer_calls == 12


def test_by_default_the_calls_of_a_long_map_step_run_sixteen_at_a_time() -> None:
    messages = agent_history(21)
    scripted = Scripted(yields=5)
    result = compact_sync(messages, FixedPlan(pair_steps(20)), summarizer=scripted, counter=CharCounter())
    assert scripted.max_in_flight == DEFAULT_CONCURRENCY == 16
    assert result.summarizer_calls == 20


def test_inputs_are_not_mutated() -> None:
    messages = agent_history(6)
    snapshot = list(messages)
    parts = [m.parts for m in messages]
    compact_sync(messages, RatioStrategy(preserve_recent=2), summarizer=fixed_summary, counter=CharCounter())
    assert messages == snapshot and all(a is b for a, b in zip(messages, snapshot, strict=True))
    assert [m.parts for m in messages] == parts


def test_dry_run_calls_no_summarizer_and_returns_plans() -> None:
    messages = agent_history(6, output=1000)
    scripted = Scripted()
    result = compact_sync(
        messages, RatioStrategy(preserve_recent=2), summarizer=scripted, counter=CharCounter(), dry_run=True
    )
    assert scripted.calls == []
    assert result.dry_run and result.messages == tuple(messages)
    assert result.plans[0].steps and result.tokens_after < result.tokens_before


def test_nothing_gained_returns_the_input_unchanged() -> None:
    messages = chat_history(10, size=10)
    result = compact_sync(
        messages, RatioStrategy(preserve_recent=2), summarizer=lambda t: "long " * 2000, counter=CharCounter()
    )
    assert result.messages == tuple(messages) and not result.changed


def test_structure_is_repaired_first_and_reported() -> None:
    messages = agent_history(4)
    del messages[5]  # step 1 loses its result
    result = compact_sync(messages, RatioStrategy(preserve_recent=2), summarizer=fixed_summary, counter=CharCounter())
    assert result.repairs and result.repairs[0].rule in (3, 6)
    assert result.valid


def test_report_has_exactly_the_cli_keys() -> None:
    result = compact_sync(
        chat_history(10), RatioStrategy(), summarizer=fixed_summary, counter=CharCounter(), provider="anthropic"
    )
    assert set(result.report()) == {
        "tokens_before",
        "tokens_after",
        "messages_before",
        "messages_after",
        "messages_summarized",
        "summarizer_calls",
        "summarizer_input_tokens",
        "model_coverage",
        "seconds",
        "strategy",
        "provider",
        "budget",
        "fits",
        "valid",
        "problems",
        "errors",
        "changes",
    }
    assert result.report()["strategy"] == "ratio" and result.report()["valid"] is True
    assert result.model_coverage == 1.0  # a model summarizer (no ``local``) was shown every message whole


def test_model_coverage_is_none_for_the_extractive_summarizer_and_counts_excerpts() -> None:
    from chainsum.summarize import ExtractiveSummarizer

    local = compact_sync(
        chat_history(10), RatioStrategy(), summarizer=ExtractiveSummarizer(), counter=CharCounter(), provider="openai"
    )
    assert local.summarizer_calls and local.model_coverage is None
    long = [{"role": "system", "content": "s"}] + [
        {"role": r, "content": f"{i} " + "word " * 3000} for i in range(12) for r in ("user", "assistant")
    ]
    result = compact_sync(
        long, RatioStrategy(), summarizer=fixed_summary, counter=CharCounter(), provider="openai",
        max_summarizer_input_tokens=4000, model_max_chunks=2,
    )  # fmt: skip
    assert result.model_coverage is not None and result.model_coverage < 0.5  # two calls cannot show it all
    whole = compact_sync(
        long, RatioStrategy(), summarizer=fixed_summary, counter=CharCounter(), provider="openai",
        max_summarizer_input_tokens=4000, max_chunks=2,
    )  # fmt: skip
    assert whole.model_coverage == 1.0  # the model-free bound does not apply to a model: by default it reads it all


def test_progress_is_reported_per_step() -> None:
    seen: list[tuple[int, int, str]] = []
    compact_sync(
        agent_history(4),
        FixedPlan(pair_steps(3)),
        summarizer=fixed_summary,
        counter=CharCounter(),
        concurrency=1,
        progress=lambda done, total, phase: seen.append((done, total, phase)),
    )
    assert [(d, t) for d, t, _ in seen] == [(0, 3), (1, 3), (2, 3), (3, 3)]  # the planned total from the start
    assert {phase for _, _, phase in seen} == {""}  # FixedPlan's plan has no note


def test_sync_twin_inside_a_running_loop_matches_the_async_core() -> None:
    """A sync hook called from async code (LangChain, Strands) gets the same result as awaiting the core."""
    messages = chat_history(10)

    async def inner() -> tuple[object, object]:
        sync = compact_sync(messages, RatioStrategy(), summarizer=fixed_summary, counter=CharCounter())
        awaited = await compact(messages, RatioStrategy(), summarizer=fixed_summary, counter=CharCounter())
        return sync, awaited

    sync, awaited = asyncio.run(inner())
    assert isinstance(sync, CompactResult) and isinstance(awaited, CompactResult)
    assert sync.changed and sync.messages == awaited.messages and sync.report().keys() == awaited.report().keys()


def test_async_core_accepts_sync_summarizers() -> None:
    result = asyncio.run(
        compact(chat_history(10), RatioStrategy(), summarizer=fixed_summary, counter=CharCounter(), budget=None)
    )
    assert result.changed


@pytest.mark.parametrize(
    "step",
    [
        Summarize(start=2, end=3, form="pair", reason="splits a call from its result"),
        Summarize(start=0, end=2, form="pair", reason="takes the system message"),
        Summarize(start=8, end=11, form="pair", reason="takes the current turn"),
        Mask(index=1, part=0, reason="not a tool result"),
    ],
)
def test_invalid_plans_are_refused(step: Summarize | Mask) -> None:
    with pytest.raises(ValueError, match="invalid"):
        compact_sync(agent_history(4), FixedPlan(Plan((step,))), summarizer=fixed_summary, counter=CharCounter())


def test_a_record_may_reach_over_a_system_message_only_to_keep_it_aside() -> None:
    """A user's system message in the middle is an instruction: a span that covers it must keep it, verbatim,
    right after the record (`Summarize.keep`); one that would summarize it is refused."""
    messages = chat_history(6, size=300)
    messages.insert(4, Message.of("system", "Answer in French from now on."))
    swallowed = Plan((Summarize(start=1, end=7, form="record", reason="takes the instruction"),))
    with pytest.raises(ValueError, match="message 4 is a system message"):
        compact_sync(messages, FixedPlan(swallowed), summarizer=fixed_summary, counter=CharCounter())
    kept = Plan((Summarize(start=1, end=7, form="record", reason="keeps it", keep=(4,)),))
    out = compact_sync(messages, FixedPlan(kept), summarizer=fixed_summary, counter=CharCounter()).messages
    assert is_record_message(out[1]) and out[2] is messages[4] and out[3:] == tuple(messages[7:])


def test_summary_forms() -> None:
    messages = chat_history(6, size=300)
    for form, check in [
        ("completion", lambda m: m.role == "assistant" and m.text.startswith(SUMMARIZED_CONTENT_PREFIX)),
        ("record", lambda m: m.role == "user" and is_record_message(m) and record_blocks(m)[0].depth == 1),
        ("snapshot", lambda m: m.role == "user" and "<state_snapshot>" in m.text and "Context Restoration" in m.text),
        ("pair", lambda m: m.role == "assistant" and m.tool_calls[0].name == SUMMARIZATION_TOOL_NAME),
    ]:
        plan = Plan((Summarize(start=1, end=5, form=form, reason="test"),))  # type: ignore[arg-type]
        out = compact_sync(messages, FixedPlan(plan), summarizer=fixed_summary, counter=CharCounter()).messages
        assert check(out[1]), form


def test_summarize_part_replaces_one_tool_result() -> None:
    messages = agent_history(3, output=4000)
    plan = Plan((SummarizePart(index=3, part=0, reason="huge"),))
    out = compact_sync(messages, FixedPlan(plan), summarizer=fixed_summary, counter=CharCounter()).messages
    part = out[3].parts[0]
    assert isinstance(part, ToolResult) and part.text.startswith("Summary of tool output:\n")
    assert part.call_id == "call_0"


def test_long_spans_are_chunked_under_the_input_cap() -> None:
    messages = agent_history(12, output=3000)
    scripted = Scripted()
    result = compact_sync(
        messages,
        FixedPlan(Plan((Summarize(start=1, end=20, form="pair", reason="long"),))),
        summarizer=scripted,
        counter=CharCounter(),
        max_summarizer_input_tokens=3000,
    )
    assert result.summarizer_calls > 1
    assert all(CharCounter().count_text(t) <= 3000 for t in scripted.calls)
    assert result.changed


def test_reasoning_signed_calls_give_the_summary_a_fake_signature() -> None:
    from chainsum.messages import Reasoning, ToolCall

    signed = ToolCall(id="c1", name="read_file", arguments="{}", reasoning=Reasoning(signature="sig"))
    messages = [
        Message.of("user", "go"),
        Message(role="assistant", parts=(Text(text="t"), signed)),
        tool("c1", "r" * 2000),
        Message.of("assistant", "done"),
    ]
    plan = Plan((Summarize(start=1, end=3, form="pair", reason="signed"),))
    out = compact_sync(messages, FixedPlan(plan), summarizer=fixed_summary, counter=CharCounter()).messages
    assert out[1].tool_calls[0].reasoning is not None


def test_library_scripted_double_sees_the_bound_and_a_scripted_failure() -> None:
    from chainsum.testing.scripted import ScriptedSummarizer

    def script(transcript: str) -> str | BaseException:
        return SummarizerError("boom", kind="transport") if "output 4 " in transcript else "ok"

    scripted = ScriptedSummarizer(script)
    result = compact_sync(
        agent_history(9), FixedPlan(pair_steps(8)), summarizer=scripted, counter=CharCounter(), concurrency=2
    )
    assert scripted.max_concurrency <= 2 and scripted.call_count == 8
    assert [e.step for e in result.errors] == [pair_steps(8).steps[4]]


def test_dry_run_simulates_later_rounds_without_the_summarizer() -> None:
    from chainsum.strategies import AutoStrategy

    messages = agent_history(10, output=6000)
    budget = CharCounter().count_messages(messages) // 20
    scripted = Scripted()
    result = compact_sync(
        messages,
        AutoStrategy(keep_last_turns=2),
        summarizer=scripted,
        counter=CharCounter(),
        budget=budget,
        hard_limit=budget * 5,  # over it, masking comes first; under it, in round 2, summaries follow
        dry_run=True,
    )
    assert scripted.calls == []
    assert result.messages == tuple(messages)
    phases = [p.note for p in result.plans if p.steps]
    assert phases and "summary" in phases[0] and "masked" in phases[0]  # one round: a summary, then masks after it
    assert result.tokens_after <= budget  # the simulated outcome
    assert result.summarizer_calls > 0  # the stand-in's calls: what the real run would make


@pytest.mark.parametrize(
    ("budget", "hard_limit", "match"),
    [(-1, None, "budget"), (-5, None, "budget"), (100, 0, "hard_limit"), (100, 50, "hard_limit"), (None, -1, "hard")],
)
def test_budget_and_hard_limit_are_checked(budget: int | None, hard_limit: int | None, match: str) -> None:
    messages = agent_history(3)
    with pytest.raises(ValueError, match=match):
        compact_sync(
            messages, MaskStrategy(), summarizer=None, counter=CharCounter(), budget=budget, hard_limit=hard_limit
        )


def test_masks_not_needed_for_the_budget_are_undone_newest_first() -> None:
    """A plan that masks every old tool result for a budget that needs three of them masked: `compact` gives the
    newest ones back while the history stays within the budget, so it lands just under it."""
    messages = agent_history(8, output=2000)
    counter = CharCounter()
    result_indexes = [i for i, m in enumerate(messages) if m.role == "tool"][:-1]  # the current turn stays
    plan = Plan(tuple(Mask(index=i, part=0, reason="old") for i in result_indexes))
    masked_all = compact_sync(messages, FixedPlan(plan), summarizer=None, counter=counter).messages
    saving = counter.count_message(messages[3]) - counter.count_message(masked_all[3])
    budget = counter.count_messages(messages) - 3 * saving + 10  # three masks needed
    result = compact_sync(messages, FixedPlan(plan), summarizer=None, counter=counter, budget=budget)
    still_masked = [i for i in result_indexes if result.messages[i] != messages[i]]
    assert still_masked == result_indexes[:3]  # the oldest stay masked, the newer ones came back
    assert budget - saving < result.tokens_after <= budget and result.fits


def test_room_too_small_for_an_excerpt_widens_the_placeholder_with_more_identifiers() -> None:
    counter = HeuristicCounter()
    output = "\n".join(f'{{"order_id": "ORD-{k:05d}", "status": "shipped"}}' for k in range(60))
    result = ToolResult(call_id="c1", name="orders", content=output)
    original = Message(role="tool", parts=(result,))
    masked = Message(role="tool", parts=(mask_result(result, None),))
    room = 120  # tokens: below the 200 an excerpt needs
    (widened,) = refill([masked], {id(masked): (masked, original)}, counter, room)
    before = set(re.findall(r"ORD-\d{5}", masked.parts[0].text))
    after = set(re.findall(r"ORD-\d{5}", widened.parts[0].text))
    assert before < after and len(after) - len(before) >= 10
    assert counter.count_message(masked) < counter.count_message(widened) <= counter.count_message(masked) + room
    assert widened.parts[0].text.startswith(mask_result(result, None).text.split("; mentions: ")[0])


def test_without_a_budget_nothing_is_given_back() -> None:
    messages = agent_history(4, output=2000)
    result_indexes = [i for i, m in enumerate(messages) if m.role == "tool"][:-1]
    plan = Plan(tuple(Mask(index=i, part=0, reason="old") for i in result_indexes))
    result = compact_sync(messages, FixedPlan(plan), summarizer=None, counter=CharCounter())
    assert all(result.messages[i] != messages[i] for i in result_indexes)


@settings(max_examples=examples(40))
@given(st.lists(st.integers(5, 400), min_size=1, max_size=8), st.integers(0, 3000), st.integers(0, 3000))
def test_refill_gives_back_at_a_larger_room_all_it_gave_back_at_a_smaller_one(
    sizes: list[int], room_a: int, room_b: int
) -> None:
    """Masked outputs of these sizes (in words, every third with an order id) given back at two rooms: what the
    smaller room restored whole is restored whole at the larger one too, and neither goes over its room (a
    placeholder widened to list more ids included)."""
    counter = HeuristicCounter()
    messages: list[Message] = []
    undo: dict[int, tuple[Message, Message]] = {}
    for k, size in enumerate(sizes):
        content = f"output {k}: " + " ".join(f"word ORD-{k}-{j}" if j % 3 == 0 else "word" for j in range(size))
        result = ToolResult(call_id=f"c{k}", name="read", content=content)
        original = Message(role="tool", parts=(result,))
        masked = Message(role="tool", parts=(mask_result(result, None),))
        undo[id(masked)] = (masked, original)
        messages.append(masked)
    small, large = sorted((room_a, room_b))
    before = counter.count_messages(messages)
    at_small = refill(messages, undo, counter, small)
    at_large = refill(messages, undo, counter, large)
    whole_small = {i for i, m in enumerate(at_small) if m == undo[id(messages[i])][1]}
    whole_large = {i for i, m in enumerate(at_large) if m == undo[id(messages[i])][1]}
    assert whole_small <= whole_large
    assert counter.count_messages(at_small) - before <= small
    assert counter.count_messages(at_large) - before <= large


def test_refill_gives_back_the_newest_first_and_nothing_older_than_an_output_that_stays_cut() -> None:
    """The newest tool output is the last thing to lose (DESIGN invariant 11): `refill` gives masked outputs back
    newest first, and none older than an output that stays clipped (a clip is not undone), as a step's outputs are
    of one age."""
    counter = HeuristicCounter()

    def step(k: int, content: str) -> list[Message]:
        call = Message(role="assistant", parts=(ToolCall(id=f"c{k}", name="read", arguments="{}"),))
        return [call, Message(role="tool", parts=(ToolResult(call_id=f"c{k}", name="read", content=content),))]

    originals = [step(k, f"output {k} " + "word " * 600) for k in range(4)]
    clipped = clip_result(originals[2][1].parts[0], 100, 50)  # stays clipped: not in `undo`
    undo: dict[int, tuple[Message, Message]] = {}
    messages: list[Message] = [Message.of("user", "go")]
    for k, (call, result) in enumerate(originals):
        if k == 2:
            messages += [call, result.with_parts((clipped,))]
            continue
        masked = result.with_parts((mask_result(result.parts[0], None),))  # type: ignore[arg-type]
        undo[id(masked)] = (masked, result)
        messages += [call, masked]
    out = refill(messages, undo, counter, 10_000)
    whole = [k for k in range(4) if out[2 + 2 * k] == originals[k][1]]
    assert whole == [3]  # the newest came back; the ones older than the clipped one stay masked
    assert out[6] == messages[6]
    room = counter.count_message(originals[3][1]) - counter.count_message(messages[8]) - 1
    partly = refill(messages, undo, counter, room)  # not quite room for the newest: an excerpt of it, nothing older
    assert partly[2] == messages[2] and partly[4] == messages[4] and partly[8] != messages[8]
    excerpt = partly[8].tool_results[0].text
    assert CLIP_MARKER in excerpt and not excerpt.startswith(MASK_PREFIX)


def test_a_model_free_structured_summarizer_runs_in_a_dry_run_as_for_real() -> None:
    """`ExtractiveStructuredSummarizer` is local (no model, deterministic): a dry run runs it, and its record
    counts as its text form, so the dry run's outcome is the real run's (before, every summary it wrote was
    rejected as "returned StructuredSummary, not text", and a dry run showed a stand-in of another length)."""
    from chainsum.strategies import AutoStrategy
    from chainsum.summarize import ExtractiveStructuredSummarizer, SummarizerLike

    messages = agent_history(10, output=6000)
    budget = CharCounter().count_messages(messages) // 4

    def run(dry_run: bool) -> CompactResult:
        return compact_sync(
            messages,
            AutoStrategy(keep_last_turns=2),
            # typed as a text summarizer's; `call_summarizer` takes the record it answers in its text form
            summarizer=cast("SummarizerLike", ExtractiveStructuredSummarizer()),
            counter=CharCounter(),
            budget=budget,
            dry_run=dry_run,
        )

    real, dry = run(False), run(True)
    assert not real.errors and real.messages_summarized > 0
    assert any("Extractive summary of" in b.text for m in real.messages for b in record_blocks(m) or ())
    assert not dry.errors and dry.messages == tuple(messages)
    assert (dry.tokens_after, dry.plans) == (real.tokens_after, real.plans)
