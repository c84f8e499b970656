"""The agent-session reference share (`chainsum.testing.reference`): Claude Code's own compaction summary as the
reference, its key items read independently of the summarizer's patterns; and, over the corpora's two sessions,
how much of it chainsum's defaults keep beside plain truncation (``bench/bench_reference.py`` prints the table)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from chainsum.formats import load
from chainsum.messages import Message
from chainsum.testing import corpora_root
from chainsum.testing.reference import ReferenceCase, key_items, measure_reference, reference_case, reference_share

TARGETS = {8_000: 0.75, 20_000: 0.90}


def test_key_items_are_backticked_names_and_paths_that_the_history_holds() -> None:
    reference = (
        "Modified `lib/app/annotation.ex` and mix.exs; ran `mix compile --force`.\n"
        "```elixir\ndefmodule `NotAnItem` do\nend\n```\n"
        "Also `made_up_name` and docs/never_seen.md."
    )
    history = "Edit lib/app/annotation.ex ... mix.exs ... $ mix compile --force ... defmodule `NotAnItem`"
    assert key_items(reference, history) == {"lib/app/annotation.ex", "mix.exs", "mix compile --force"}


def test_the_share_counts_items_found_verbatim_in_the_output() -> None:
    output = [Message.of("user", "we changed lib/app/annotation.ex")]
    assert reference_share({"lib/app/annotation.ex", "mix.exs"}, output) == 0.5
    assert reference_share(set(), output) == 1.0


def _cases() -> list[ReferenceCase]:
    root = corpora_root()
    assert root is not None
    out: list[ReferenceCase] = []
    for path in sorted(Path(root, "claude-code").glob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        case = reference_case(load(records, format="claude-code").messages)
        assert case is not None, path
        out.append(case)
    return out


def _shares(case: ReferenceCase, budget: int) -> tuple[float, float, int]:
    run = asyncio.run(measure_reference(case, budget))
    return run.share, run.truncation, run.tokens_after


@pytest.fixture(scope="module")
def measured() -> dict[int, list[tuple[float, float, int]]]:
    cases = _cases()
    return {budget: [_shares(case, budget) for case in cases] for budget in TARGETS}


@pytest.mark.corpus
def test_chainsum_keeps_more_of_the_reference_than_truncation_within_the_budget(
    measured: dict[int, list[tuple[float, float, int]]],
) -> None:
    for budget, rows in measured.items():
        assert len(rows) == 2
        for share, baseline, tokens in rows:
            assert tokens <= budget
            assert share > baseline, (budget, share, baseline)
    # a larger budget keeps at least as much of the reference, session by session
    for small, large in zip(measured[8_000], measured[20_000], strict=True):
        assert large[0] >= small[0]


@pytest.mark.corpus
@pytest.mark.xfail(reason="issue 32's targets (0.75 at 8K, 0.90 at 20K) are not met yet: see bench_reference.py")
def test_the_reference_share_meets_its_targets(measured: dict[int, list[tuple[float, float, int]]]) -> None:
    for budget, rows in measured.items():
        for share, _, _ in rows:
            assert share >= TARGETS[budget], (budget, share)
