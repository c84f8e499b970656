"""`ContextSummarizedEvent`: the spec's unit tests ("SSE formatting, factory method"), ported to pytest.

The spec's own example event (``specs/summarizing-manager-events.md``, "SSE Event Format") is the fixture: 45,000
tokens down to 32,000, 8 messages, session ``abc123``.
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from chainsum.manager._events import CONTEXT_SUMMARIZED, ContextSummarizedEvent, SummarizationEvent

SPEC_KEYS = [
    "type",
    "sessionId",
    "tokensBefore",
    "tokensAfter",
    "tokensRemoved",
    "messagesSummarized",
    "contextCompressionRatio",
    "message",
]


def spec_event() -> ContextSummarizedEvent:
    return ContextSummarizedEvent.create(
        session_id="abc123", tokens_before=45000, tokens_after=32000, messages_summarized=8
    )


# factory method ----------------------------------------------------------------------------------------------------
def test_create_computes_removed_tokens_ratio_and_message() -> None:
    e = spec_event()
    assert e.type == "context_summarized"
    assert e.session_id == "abc123"
    assert (e.tokens_before, e.tokens_after, e.tokens_removed) == (45000, 32000, 13000)
    assert e.messages_summarized == 8
    assert e.context_compression_ratio == pytest.approx(13000 / 45000)
    assert round(e.context_compression_ratio, 2) == 0.29  # the spec example's value, as displayed
    assert e.message == "Context optimized: 13,000 tokens compressed"


def test_create_with_zero_tokens_before_has_ratio_zero() -> None:
    e = ContextSummarizedEvent.create(session_id="s", tokens_before=0, tokens_after=0, messages_summarized=0)
    assert e.context_compression_ratio == 0
    assert e.tokens_removed == 0
    assert e.message == "Context optimized: 0 tokens compressed"


def test_message_uses_thousands_separators() -> None:
    e = ContextSummarizedEvent.create(
        session_id="s", tokens_before=2_500_000, tokens_after=1_000, messages_summarized=3
    )
    assert e.message == "Context optimized: 2,499,000 tokens compressed"
    small = ContextSummarizedEvent.create(session_id="s", tokens_before=900, tokens_after=400, messages_summarized=2)
    assert small.message == "Context optimized: 500 tokens compressed"


def test_event_is_frozen_and_rejects_unknown_fields() -> None:
    e = spec_event()
    with pytest.raises(ValidationError):
        e.tokens_before = 1  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ContextSummarizedEvent.model_validate({**e.to_json_dict(), "extra": 1})


# JSON and SSE --------------------------------------------------------------------------------------------------------
def test_json_uses_the_spec_camel_case_keys_in_order() -> None:
    data = spec_event().to_json_dict()
    assert list(data) == SPEC_KEYS
    assert data == {
        "type": "context_summarized",
        "sessionId": "abc123",
        "tokensBefore": 45000,
        "tokensAfter": 32000,
        "tokensRemoved": 13000,
        "messagesSummarized": 8,
        "contextCompressionRatio": pytest.approx(0.2888888),
        "message": "Context optimized: 13,000 tokens compressed",
    }


def test_to_sse_format_frames_one_event() -> None:
    e = spec_event()
    sse = e.to_sse_format()
    assert sse.startswith("event: context_summarized\ndata: ")
    assert sse.endswith("\n\n")
    assert sse.count("\n") == 3  # event line, data line, blank line
    data_line = sse.split("\n")[1]
    assert data_line.startswith("data: ")
    assert json.loads(data_line[len("data: ") :]) == e.to_json_dict()
    assert sse == f"event: {CONTEXT_SUMMARIZED}\ndata: {json.dumps(e.to_json_dict())}\n\n"


def test_sse_payload_round_trips_through_the_aliases_and_the_python_names() -> None:
    e = spec_event()
    payload = json.loads(e.to_sse_format().split("data: ", 1)[1])
    assert ContextSummarizedEvent.model_validate(payload) == e
    assert ContextSummarizedEvent.model_validate(e.model_dump()) == e


def test_client_side_validation_fields_are_numbers() -> None:
    """The spec's client drops an event whose tokensBefore / tokensRemoved are not numbers."""
    payload = json.loads(spec_event().to_sse_format().split("data: ", 1)[1])
    assert payload["type"] == "context_summarized"
    assert isinstance(payload["tokensBefore"], int)
    assert isinstance(payload["tokensRemoved"], int)


def test_session_id_with_quotes_and_newlines_stays_on_one_data_line() -> None:
    e = ContextSummarizedEvent.create(session_id='a"b\nc', tokens_before=10, tokens_after=5, messages_summarized=1)
    sse = e.to_sse_format()
    assert sse.count("\n") == 3
    assert json.loads(sse.split("\n")[1][6:])["sessionId"] == 'a"b\nc'


def test_the_optional_gauge_fields_are_sent_when_known_after_the_spec_keys() -> None:
    e = ContextSummarizedEvent.create(
        session_id="s", tokens_before=4797, tokens_after=3965, messages_summarized=9, recall_tokens=746, window=5000
    )
    data = e.to_json_dict()
    assert list(data) == [*SPEC_KEYS, "recallTokens", "window"]
    assert (data["recallTokens"], data["window"]) == (746, 5000)
    assert ContextSummarizedEvent.model_validate(data) == e
    assert ContextSummarizedEvent.model_validate(spec_event().to_json_dict()).recall_tokens is None  # spec-only input


# the client's banner text --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("before", "after", "text"),
    [
        (45000, 32000, "Context optimized: 45,000 → 32,000 tokens (13,000 fewer, 29% reduction)"),
        (1000, 600, "Context optimized: 1,000 → 600 tokens (400 fewer, 40% reduction)"),
        (1000, 995, "Context optimized: 1,000 → 995 tokens (5 fewer, 1% reduction)"),  # Math.round(0.5) == 1
        (4797, 3965, "Context optimized: 4,797 → 3,965 tokens (832 fewer, 17% reduction)"),  # the figures
        (2000, 0, "Context optimized: 2,000 → 0 tokens (2,000 fewer, 100% reduction)"),
        (300, 360, "Context optimized: 300 → 360 tokens (60 more)"),  # recalled originals outweighed the removal
    ],
)
def test_display_message_matches_the_client(before: int, after: int, text: str) -> None:
    """The twin of the page's `displayMessage` (``static/figures.js``): exact figures, the same in every place."""
    e = ContextSummarizedEvent.create(session_id="s", tokens_before=before, tokens_after=after, messages_summarized=1)
    assert e.display_message() == text


# from the manager's event --------------------------------------------------------------------------------------------
def test_summarization_event_converts_to_the_wire_event() -> None:
    ev = SummarizationEvent(
        reason="ratio", depth=1, tokens_before=45000, tokens_after=32000, messages_compressed=8, session_id="abc123"
    )
    assert ev.tokens_removed == 13000
    assert ev.compression_ratio == pytest.approx(13000 / 45000)
    assert ev.to_context_summarized() == spec_event()
    assert ev.to_context_summarized("other").session_id == "other"


def test_the_wire_pair_is_the_request_the_model_gets_when_measured() -> None:
    """The manager measures the request before and after (recall block included): the wire event carries that
    pair, the one a window gauge shows, with the recall share and the window."""
    ev = SummarizationEvent(
        reason="manual",
        depth=1,
        tokens_before=4797,
        tokens_after=3219,
        messages_compressed=9,
        request_tokens_before=4797,
        request_tokens_after=3965,
        recall_tokens=746,
        window=5000,
    )
    wire = ev.to_context_summarized("s")
    assert (wire.tokens_before, wire.tokens_after, wire.tokens_removed) == (4797, 3965, 832)
    assert (wire.recall_tokens, wire.window) == (746, 5000)
    assert wire.context_compression_ratio == pytest.approx(832 / 4797)
    assert ev.tokens_removed == 1578  # the history's own figures stay on the manager's event (metrics, logs)
