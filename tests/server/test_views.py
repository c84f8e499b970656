"""What the session API calls a record and a context block (`chainsum.server._views`): only one with summary text is
a summary; a masking pass, a move to the archive and an empty record are each called what they are (issue 22)."""

from __future__ import annotations

import pytest

from chainsum.chain import RecordBlock, record_message
from chainsum.manager import has_summary_text, no_summary_text
from chainsum.messages import Message, ToolResult
from chainsum.server._views import block_kind, context_entry, record_kind, record_row
from chainsum.store import SummaryRecord
from chainsum.strategies import MASK_PREFIX
from chainsum.tokens import HeuristicCounter


def record(summary: str, *, depth: int = 1, originals: int = 2, blocks: tuple[str, ...] = ()) -> SummaryRecord:
    return SummaryRecord(
        id="rec_x",
        timestamp_ms=0,
        depth=depth,
        parent_id=None,
        summary=summary,
        original_message_ids=tuple(f"msg_{i}" for i in range(originals)),
        original_sha256=tuple("0" * 64 for _ in range(originals)),
        token_estimate=945,
        blocks=blocks,
    )


@pytest.mark.parametrize(
    ("rec", "kind"),
    [
        (record("The user asked for ORD-7731.", blocks=("sum_a",)), "summary"),
        (record(no_summary_text(2), depth=0), "masked"),
        (record(no_summary_text(2), depth=0, blocks=("sum_b",)), "moved"),
        (record(no_summary_text(2), depth=1, blocks=("sum_c",)), "empty"),  # a summary block without text
        (record("  ", depth=1, blocks=("sum_d",)), "empty"),
        (record("", depth=0, originals=0), "empty"),
    ],
)
def test_record_kind(rec: SummaryRecord, kind: str) -> None:
    assert record_kind(rec) == kind


def test_the_stand_in_text_is_not_summary_text() -> None:
    assert not has_summary_text(no_summary_text(1)) and not has_summary_text(no_summary_text(12))
    assert not has_summary_text(" \n")
    assert has_summary_text("2 message(s) compacted without a summary, says the user")  # someone wrote this


def test_a_masking_record_counts_the_tool_results_it_took_out_and_has_no_summary_tokens() -> None:
    originals = {
        "msg_0": Message.of("tool", ToolResult(call_id="c1", content="row 1\nrow 2")),
        "msg_1": Message.of("tool", ToolResult(call_id="c2", content=f"{MASK_PREFIX}: already masked]")),
    }
    row = record_row(record(no_summary_text(2), depth=0), (4797, 3965), HeuristicCounter(), originals)
    assert (row["kind"], row["tool_results"], row["summary_tokens"], row["original_tokens"]) == ("masked", 1, None, 945)
    figures = row["figures"]
    assert (figures["tokensBefore"], figures["tokensAfter"], figures["tokensRemoved"]) == (4797, 3965, 832)
    assert record_row(record("A summary."), (None, None), HeuristicCounter(), {})["figures"] is None


def test_context_blocks_and_messages() -> None:
    counter = HeuristicCounter()
    moved = RecordBlock(id="sum_m", depth=0, messages=3, text="")
    empty = RecordBlock(id="sum_e", depth=1, messages=3, text=" ")
    said = RecordBlock(id="sum_s", depth=1, messages=3, text="They chose plan B.")
    assert [block_kind(b) for b in (moved, empty, said)] == ["moved", "empty", "summary"]
    assert context_entry(counter, 0, record_message([moved, empty]), {})["kind"] == "archived"
    entry = context_entry(counter, 0, record_message([moved, said]), {"sum_s": "rec_s"})
    assert entry["kind"] == "summary" and [b["kind"] for b in entry["blocks"]] == ["moved", "summary"]
    assert entry["blocks"][1]["record_id"] == "rec_s"
    masked = Message.of("tool", ToolResult(call_id="c", content=f"{MASK_PREFIX}: lookup(batch=1)]"))
    assert context_entry(counter, 3, masked, {}) | {"tokens": 0} == {
        "index": 3,
        "role": "tool",
        "tokens": 0,
        "kind": "masked",
        "masked": 1,
        "text": "",
    }
