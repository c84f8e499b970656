"""What every wire format is asked alike, one parametrized test per question: golden fixtures read to their
canonical form and written back exactly, generated documents round-tripped, arbitrary JSON read exactly or refused
with a `FormatError`, and each format's detection score (`sniff`) on its own and on other formats' shapes.

What only one format does (split turns, signatures, conversions, its error paths) stays in that format's file. The
Hypothesis example counts are each format's own (`EXAMPLES`), through `sampling.examples`.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.formats import (
    Dropped,
    anthropic,
    bedrock,
    claude_code,
    detect_format,
    gemini,
    openai_chat,
    openai_responses,
    tau2,
)
from chainsum.messages import Message, messages_from_list, messages_to_list
from formats.formats_support import (
    FIXTURES_ROOT,
    assert_exact_or_format_error,
    assert_round_trips,
    assert_wrong_types_load_or_fail_cleanly,
    json_values,
    openai_chaos_documents,
    read_canonical,
    read_json,
    wire_cases,
)
from formats.wire_documents import DOCUMENTS
from generators import histories
from sampling import examples

MODULES: dict[str, ModuleType] = {
    m.NAME: m for m in (openai_chat, openai_responses, tau2, anthropic, claude_code, gemini, bedrock)
}


def _run(fmt: str, count: int, strategy: st.SearchStrategy[Any], check: Any) -> None:
    """Run the property `check(module, value)` for format `fmt` on `count` examples (`sampling.examples`) of
    `strategy`: one Hypothesis test per format, each with its own count."""
    module = MODULES[fmt]

    @settings(max_examples=examples(count))
    @given(strategy)
    def run(value: Any) -> None:
        check(module, value)

    # one example-database key per format and property, as Hypothesis gives each case of a parametrized test
    inner: Any = run.hypothesis.inner_test  # type: ignore[attr-defined]
    inner._hypothesis_internal_add_digest = f"{check.__name__}:{fmt}".encode()
    run()


# --- golden fixtures ---------------------------------------------------------------------------------------------
#
# Each folder of ``fixtures/`` (named as the format) holds ``NAME.wire.json`` and its ``NAME.canonical.json``: the
# canonical messages (``messages_to_list``), alone or with the envelope as ``{"messages": ..., "envelope": ...}``.
# Claude Code logs are read only; their golden session is in `test_claude_code`.

FIXTURES: dict[str, list[str]] = {
    "openai": ["legacy_and_edges", "request"],
    "openai-responses": ["request", "string_input"],
    "tau2": ["simulation"],
    "anthropic": ["blocks", "request"],
    "gemini": ["legacy_edges", "request", "sdk_snake"],
    "bedrock": ["converse_request", "strands_session"],
}
GOLDEN: list[tuple[str, Path]] = [
    (fmt, FIXTURES_ROOT / fmt / f"{name}.wire.json") for fmt, names in FIXTURES.items() for name in names
]
GOLDEN_IDS = [f"{fmt}-{path.name.split('.')[0]}" for fmt, path in GOLDEN]


def _canonical(path: Path) -> tuple[list[Any], dict[str, Any] | None]:
    """The canonical messages beside a wire fixture, and the envelope when the fixture states it."""
    data = read_canonical(path)
    if isinstance(data, dict):
        return data["messages"], data["envelope"]
    return data, None


def test_every_fixture_is_listed() -> None:
    assert {fmt: [p.name.split(".")[0] for p in wire_cases(FIXTURES_ROOT / fmt)] for fmt in FIXTURES} == FIXTURES


@pytest.mark.parametrize(("fmt", "path"), GOLDEN, ids=GOLDEN_IDS)
def test_fixture_loads_to_the_expected_canonical_messages(fmt: str, path: Path) -> None:
    conv = MODULES[fmt].load(read_json(path))
    messages, envelope = _canonical(path)
    assert conv.format == fmt
    assert messages_to_list(conv.messages) == messages
    if envelope is not None:
        assert conv.envelope == envelope


@pytest.mark.parametrize(("fmt", "path"), GOLDEN, ids=GOLDEN_IDS)
def test_fixture_round_trips_exactly(fmt: str, path: Path) -> None:
    module, wire = MODULES[fmt], read_json(path)
    conv = module.load(wire)
    dropped: list[Dropped] = []
    assert module.dump(conv.messages, conv.envelope, dropped) == wire
    assert dropped == []


@pytest.mark.parametrize(("fmt", "path"), GOLDEN, ids=GOLDEN_IDS)
def test_fixture_round_trips_through_chainsum_json(fmt: str, path: Path) -> None:
    """The layout hints live in the canonical values' extras, so their JSON form (and the envelope) is enough to
    rebuild the wire document."""
    module, wire = MODULES[fmt], read_json(path)
    messages, envelope = _canonical(path)
    if envelope is None:
        envelope = module.load(wire).envelope
    assert module.dump(messages_from_list(json.loads(json.dumps(messages))), envelope) == wire


@pytest.mark.parametrize(("fmt", "path"), GOLDEN, ids=GOLDEN_IDS)
def test_fixture_is_detected(fmt: str, path: Path) -> None:
    assert MODULES[fmt].sniff(read_json(path)) == 2
    assert detect_format(read_json(path)) == fmt


# --- generated documents -----------------------------------------------------------------------------------------

EXAMPLES: dict[str, int] = {
    "openai": 100,
    "openai-responses": 100,
    "tau2": 100,
    "anthropic": 130,
    "gemini": 100,
    "bedrock": 100,
}
"""Examples per format for `test_generated_documents_round_trip` (`sampling.examples` of these)."""


@pytest.mark.parametrize("fmt", EXAMPLES)
def test_generated_documents_round_trip(fmt: str) -> None:
    """Every document of `wire_documents.DOCUMENTS` is written back exactly, reporting nothing dropped."""
    _run(fmt, EXAMPLES[fmt], DOCUMENTS[fmt], assert_round_trips)


# --- arbitrary JSON ----------------------------------------------------------------------------------------------

CHAOS: dict[str, tuple[st.SearchStrategy[Any], int]] = {
    "openai": (openai_chaos_documents(), 150),
    "openai-responses": (openai_chaos_documents(), 150),
    "tau2": (openai_chaos_documents(), 150),
    "gemini": (json_values(), 100),
    "bedrock": (json_values(), 100),
}
"""Arbitrary JSON for each format (built from the OpenAI-shaped formats' keys, or any keys at all), with its
example count. Anthropic and Claude Code ask their own question of their own hostile JSON, in their files."""


@pytest.mark.parametrize("fmt", CHAOS)
def test_any_json_either_round_trips_or_fails_with_a_format_error(fmt: str) -> None:
    """Never a traceback: whatever shape arrives, sniff answers and load reads it exactly or says where it fails."""
    strategy, count = CHAOS[fmt]
    _run(fmt, count, strategy, assert_exact_or_format_error)


WRONG_TYPES = [
    (fmt, payload, name) for fmt, payload in (("gemini", "contents"), ("bedrock", "messages")) for name in FIXTURES[fmt]
]
"""The formats whose fixtures go through `assert_wrong_types_load_or_fail_cleanly`, with the key holding the turns."""


@pytest.mark.parametrize(("fmt", "payload", "name"), WRONG_TYPES, ids=[f"{f}-{n}" for f, _, n in WRONG_TYPES])
def test_every_node_replaced_by_a_wrong_type_loads_or_fails_cleanly(fmt: str, payload: str, name: str) -> None:
    """Each value of each fixture swapped for each JSON type: a FormatError naming a place, or a document that
    still round-trips exactly. Never another exception."""
    wire = read_json(FIXTURES_ROOT / fmt / f"{name}.wire.json")
    assert_wrong_types_load_or_fail_cleanly(MODULES[fmt], wire, payload)


# --- canonical histories -----------------------------------------------------------------------------------------


def _stable_wire_form(module: ModuleType, messages: list[Message]) -> None:
    first = module.dump(messages, dropped=[])
    conv = module.load(json.loads(json.dumps(first)))
    dropped: list[Dropped] = []
    assert module.dump(conv.messages, conv.envelope, dropped) == first
    assert dropped == []


@pytest.mark.parametrize("fmt", ["gemini", "bedrock"])
def test_any_canonical_history_dumps_to_a_stable_wire_form(fmt: str) -> None:
    """Whatever another format hands over, the wire form is a fixed point: reading it back and writing it again
    changes nothing."""
    _run(fmt, 75, histories(), _stable_wire_form)


# --- detection ---------------------------------------------------------------------------------------------------

SNIFF: dict[str, list[tuple[Any, int]]] = {
    "openai": [
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}], 1),
        ([], 1),
        ({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}, 1),
        ([{"role": "developer", "content": "x"}], 2),
        ([{"role": "tool", "tool_call_id": "c", "content": "x"}], 2),
        ([{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]}], 2),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}], 2),
        ([{"role": "assistant", "function_call": {"name": "f", "arguments": "{}"}}], 2),
        # contradictions: other formats' shapes
        ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}], 0),
        ([{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}], 0),
        ([{"role": "user", "parts": [{"text": "hi"}]}], 0),
        ([{"role": "model", "content": "hi"}], 0),
        ([{"role": "user", "content": [{"text": "hi"}]}], 0),
        ([{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t"}}]}], 0),
        ([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}], 0),
        ([{"type": "message", "role": "user", "content": "hi"}], 0),
        ([{"role": "tool", "id": "c", "content": "x", "requestor": "assistant"}], 0),
        ([{"role": "assistant", "tool_calls": [{"id": "c", "name": "f", "arguments": {}}]}], 0),
        ({"system": "x", "messages": [{"role": "user", "content": "hi"}]}, 0),
        ({"input": [{"role": "user", "content": "hi"}]}, 0),
        ("text", 0),
        (None, 0),
        ([1, 2], 0),
        ([{"role": ["user"], "content": "x"}], 0),
    ],
    "openai-responses": [
        ([{"role": "user", "content": "hi"}], 1),
        ([{"role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]}], 1),
        ([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}], 2),
        ([{"type": "message", "role": "user", "content": "hi"}], 2),
        ([{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}], 2),
        ([{"type": "function_call_output", "call_id": "c", "output": "x"}], 2),
        ([{"type": "reasoning", "id": "r", "summary": []}], 2),
        ([{"type": "web_search_call", "id": "w"}], 2),
        ({"model": "m", "input": "hello"}, 2),
        ({"input": [{"role": "user", "content": "hi"}]}, 2),
        # contradictions
        ([{"role": "tool", "tool_call_id": "c", "content": "x"}], 0),
        ([{"role": "assistant", "content": None, "tool_calls": []}], 0),
        ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], 0),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}], 0),
        ([{"role": "user", "content": "hi", "turn_idx": 1}], 0),
        ([{"type": "user", "message": {"role": "user", "content": "hi"}}], 0),
        ([{"role": "model", "parts": [{"text": "hi"}]}], 0),
        ({"messages": [{"role": "user", "content": "hi"}]}, 0),
        ({"model": "m"}, 0),
        ([{"role": "user", "content": None}], 0),
        ([{"type": ["message"]}], 0),
        ("hi", 0),
    ],
    "tau2": [
        ([{"role": "user", "content": "hi", "turn_idx": 0}], 2),
        ([{"id": "c", "role": "tool", "content": "x", "requestor": "user", "error": False}], 2),
        ({"messages": [{"role": "assistant", "content": "hi", "turn_idx": 0}]}, 2),
        ([{"role": "assistant", "tool_calls": [{"id": "c", "name": "f", "arguments": {}, "requestor": "user"}]}], 2),
        ([{"role": "tool", "tool_messages": []}], 2),
        ([{"role": "user", "content": "hi"}], 0),  # plausible, but nothing tau2-specific: leave it to OpenAI
        ([{"role": "user", "content": "hi", "turn_idx": 0, "tool_call_id": "c"}], 0),
        (
            [
                {
                    "role": "assistant",
                    "turn_idx": 1,
                    "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
                }
            ],
            0,
        ),
        ([{"role": "model", "turn_idx": 0}], 0),
        ([{"type": "message", "role": "user", "turn_idx": 0}], 0),
        ([None], 0),
        ({"simulations": []}, 0),
        ("x", 0),
    ],
    "anthropic": [
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}], 1),
        ([], 1),
        ({"system": "Be kind.", "messages": [{"role": "user", "content": "hi"}]}, 2),
        ([{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}], 2),
        ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]}], 2),
        ([{"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": "s"}]}], 2),
        ([{"role": "assistant", "content": [{"type": "redacted_thinking", "data": "d"}]}], 2),
        ([{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "u"}}]}], 2),
        ([{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function"}]}], 0),
        ([{"role": "tool", "tool_call_id": "c", "content": "r"}], 0),
        ([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}], 0),
        ([{"role": "user", "name": "bob", "content": "hi"}], 0),
        ([{"role": "user", "parts": [{"text": "hi"}]}], 0),
        ([{"role": "user", "content": [{"text": "hi"}]}], 0),
        ([{"role": "user", "content": [{"toolResult": {"toolUseId": "t", "content": [{"text": "r"}]}}]}], 0),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "u"}}]}], 0),
        ([{"type": "function_call", "role": "assistant", "content": "x"}], 0),
        ([{"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}}], 0),
        ([{"role": "user", "content": 5}], 0),
        ([5], 0),
        ({"messages": 3}, 0),
        ({"model": "m"}, 0),
        ("text", 0),
        (None, 0),
    ],
    "claude-code": [
        ([{"type": "progress", "sessionId": "s"}], 2),
        ([{"type": "file-history-snapshot", "messageId": "m"}, {"type": "user", "message": {}}], 2),
        ([{"type": "file-history-snapshot", "messageId": "m"}], 0),
        ([{"role": "user", "content": "hi"}], 0),
        ([{"type": "user", "sessionId": "s"}, {"role": "user", "content": "hi"}], 0),
        ([{"type": "human", "data": {"content": "hi"}}], 0),
        ([{"type": "system", "data": {"content": "hi"}}], 0),
        ([], 0),
        ([5], 0),
        ("x", 0),
        (None, 0),
    ],
    "gemini": [
        ({"contents": []}, 2),
        ([{"role": "user", "parts": [{"text": "hi"}]}], 2),
        ([{"parts": [{"text": "hi"}]}], 2),
        ([], 1),
        ([{"role": "user", "content": "hi"}], 0),
        ([{"role": "user", "content": [{"text": "hi"}]}], 0),
        ([{"role": "assistant", "parts": [{"text": "hi"}]}], 0),
        ([{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "hi"}]}], 0),
        ([{"role": "user", "parts": [{"type": "text", "text": "hi"}]}], 0),
        ([{"role": "user", "parts": "hi"}], 0),
        ({"messages": []}, 0),
        ({"contents": "hi"}, 0),
        ("hi", 0),
        ([1], 0),
    ],
    "bedrock": [
        ([{"role": "user", "content": [{"text": "hi"}]}], 2),
        ([{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": {}}}]}], 2),
        ({"messages": [], "system": [{"text": "be brief"}]}, 2),
        ({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}, 2),
        ([], 1),
        ([{"role": "user", "content": []}], 1),
        ({"messages": []}, 1),
        ([{"role": "user", "content": [{"type": "text", "text": "hi"}]}], 0),
        ([{"role": "user", "content": "hi"}], 0),
        ([{"role": "system", "content": [{"text": "hi"}]}], 0),
        ([{"role": "tool", "content": [{"text": "hi"}]}], 0),
        ({"messages": [{"role": "user", "content": [{"text": "hi"}]}], "system": "be brief"}, 0),
        ({"messages": [], "system": [{"type": "text", "text": "x"}]}, 0),
        ([{"role": "user", "parts": [{"text": "hi"}]}], 0),
        ({"contents": []}, 0),
        (3, 0),
    ],
}
"""Per format: documents (its own shapes, and other formats' that must score 0) and the score `sniff` gives."""
SNIFF_CASES = [(fmt, data, score) for fmt, rows in SNIFF.items() for data, score in rows]


@pytest.mark.parametrize(
    ("fmt", "data", "score"), SNIFF_CASES, ids=[f"{fmt}-{i}" for fmt, rows in SNIFF.items() for i in range(len(rows))]
)
def test_sniff(fmt: str, data: Any, score: int) -> None:
    assert MODULES[fmt].sniff(data) == score
