"""Summary records: round trip through their dict form, caps, and stable message hashes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.messages import Message, ToolCall
from chainsum.store import (
    MAX_FACET_ITEMS,
    MAX_KEY_POINTS,
    SummaryContext,
    SummaryRecord,
    canonical_json,
    message_sha256,
)

texts = st.text(max_size=30)


@given(
    st.builds(
        SummaryRecord,
        id=st.uuids().map(str),
        timestamp_ms=st.integers(0, 2**45),
        depth=st.integers(0, 5),
        parent_id=st.none() | st.uuids().map(str),
        summary=texts,
        key_points=st.lists(texts, max_size=40).map(tuple),
        context=st.builds(SummaryContext, decisions=st.lists(texts, max_size=60).map(tuple)),
        token_estimate=st.none() | st.integers(0, 10**6),
    )
)
@settings(max_examples=80, deadline=None)
def test_round_trip_and_caps(record: SummaryRecord) -> None:
    assert len(record.key_points) <= MAX_KEY_POINTS
    assert len(record.context.decisions) <= MAX_FACET_ITEMS
    assert SummaryRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record


def test_hash_is_of_canonical_json_and_stable() -> None:
    a = Message(role="assistant", parts=(ToolCall(id="c", name="f", arguments='{"x": 1}'),), extras={"b": 1, "a": 2})
    b = Message(role="assistant", parts=(ToolCall(id="c", name="f", arguments='{"x": 1}'),), extras={"a": 2, "b": 1})
    assert canonical_json(a) == canonical_json(b)
    assert message_sha256(a) == message_sha256(b)
    assert message_sha256(a) != message_sha256(Message.of("user", "x"))


def test_invalid_records_are_refused() -> None:
    with pytest.raises(ValueError, match="depth"):
        SummaryRecord(id="x", timestamp_ms=0, depth=-1, parent_id=None, summary="s")
    with pytest.raises(ValueError, match="same length"):
        SummaryRecord(id="x", timestamp_ms=0, depth=0, parent_id=None, summary="s", original_message_ids=("a",))
