"""tau2-bench messages: the real telecom corpus, user tool calls, hostile input, conversions. The golden fixture,
generated documents, arbitrary JSON and sniffing are asked of every format in `test_all_formats`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chainsum.errors import FormatError
from chainsum.formats import Dropped, detect_format, openai_chat, tau2
from chainsum.messages import Message, Reasoning, Text, ToolCall, ToolResult
from corpora_support import FULL, data_root, documents


def test_arguments_become_compact_json_text_and_come_back_as_the_same_object() -> None:
    args = {"b": [1, 2.5, None, True], "a": {"ünï": "çödé 📶"}, "z": ""}
    wire = [{"role": "assistant", "content": None, "tool_calls": [{"id": "c", "name": "f", "arguments": args}]}]
    (message,) = tau2.load(wire).messages
    assert message.parts == (
        ToolCall(
            id="c",
            name="f",
            arguments='{"b":[1,2.5,null,true],"a":{"ünï":"çödé 📶"},"z":""}',
            extras={"tau2": {"absent": ["requestor"]}},
        ),
    )
    assert tau2.dump([message]) == wire
    assert list(tau2.dump([message])[0]["tool_calls"][0]["arguments"]) == ["b", "a", "z"]  # key order kept


# --- the real corpus ---------------------------------------------------------------------------------------------


def _corpus() -> list[Any]:
    return [d for d in documents(include_subagents=False) if d.format == "tau2"]


def test_every_corpus_simulation_round_trips_exactly() -> None:
    docs = _corpus()
    assert len(docs) == (40 if FULL else 4)  # the corpus, or the excerpts (tests/data/corpora)
    assert [d.label for d in docs if tau2.dump(tau2.load(d.data).messages) != d.data] == []


def test_whole_simulation_objects_round_trip_with_their_envelope() -> None:
    doc = json.loads((data_root() / "tau2-bench" / "gpt-4.1_telecom_default_gpt-4.1_1trials.json").read_text("utf-8"))
    simulations = [s for s in doc["simulations"] if s is not None]  # the excerpts leave runs out as null
    assert len(simulations) == len(_corpus())
    for simulation in simulations:
        conv = tau2.load(simulation)
        assert conv.envelope["keys"] == list(simulation)
        out = tau2.dump(conv.messages, conv.envelope)
        assert out == simulation
        assert list(out) == list(simulation)


def test_every_corpus_simulation_is_detected_as_tau2() -> None:
    assert {detect_format(d.data) for d in _corpus()} == {"tau2"}


def test_user_tool_calls_stay_on_the_user_message() -> None:
    """The telecom user runs tools on their phone: lossless, the call stays where tau2 put it."""
    seen = 0
    for doc in _corpus():
        messages = tau2.load(doc.data).messages
        for wire, message in zip(doc.data, messages, strict=True):
            if wire["role"] == "user" and wire["tool_calls"]:
                assert message.role == "user"
                assert [c.id for c in message.tool_calls] == [c["id"] for c in wire["tool_calls"]]
                assert [json.loads(c.arguments) for c in message.tool_calls] == [
                    c["arguments"] for c in wire["tool_calls"]
                ]
                seen += 1
            if wire["role"] == "tool":
                assert message.parts == (
                    ToolResult(call_id=wire["id"], content=wire["content"], is_error=wire["error"]),
                )
    assert seen > (100 if FULL else 20)  # the corpus, or the excerpts' four runs


# --- malformed and hostile input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ("x", ""),
        ({"simulations": []}, "messages"),
        ([[]], "[0]"),
        ([{"role": "agent", "content": "x"}], "[0].role"),
        ([{"role": "user", "content": ["x"]}], "[0].content"),
        ([{"role": "user", "content": "x", "tool_calls": "f()"}], "[0].tool_calls"),
        ([{"role": "user", "tool_calls": ["f"]}], "[0].tool_calls[0]"),
        ([{"role": "user", "tool_calls": [{"id": "c", "arguments": {}}]}], "[0].tool_calls[0].name"),
        ([{"role": "user", "tool_calls": [{"id": 1, "name": "f", "arguments": {}}]}], "[0].tool_calls[0].id"),
        (
            [{"role": "user", "tool_calls": [{"id": "c", "name": "f", "arguments": "{}"}]}],
            "[0].tool_calls[0].arguments",
        ),
        (
            [{"role": "user", "tool_calls": [{"id": "c", "name": "f", "arguments": {}, "requestor": 0}]}],
            "[0].tool_calls[0].requestor",
        ),
        (
            [{"role": "user", "tool_calls": [{"id": "c", "name": "f", "arguments": {"x": float("nan")}}]}],
            "[0].tool_calls[0].arguments",
        ),
        ([{"role": "tool", "content": "x"}], "[0].id"),
        ([{"role": "tool", "id": "c", "content": 5}], "[0].content"),
        ([{"role": "tool", "id": "c", "content": "x", "error": "no"}], "[0].error"),
        ([{"role": "tool", "id": "c", "content": "x", "requestor": None}], "[0].requestor"),
        ([{"role": "tool", "tool_messages": {"id": "c"}}], "[0].tool_messages"),
        ([{"role": "tool", "tool_messages": [{"content": "x"}]}], "[0].tool_messages[0].id"),
        ({"messages": [{"role": "system", "content": 1}]}, "messages[0].content"),
    ],
)
def test_malformed_input_names_the_path(data: Any, where: str) -> None:
    with pytest.raises(FormatError) as err:
        tau2.load(data)
    assert err.value.where == where
    assert err.value.format == "tau2"


def test_deeply_nested_arguments_are_an_error_not_a_crash() -> None:
    deep: Any = 1
    for _ in range(100_000):
        deep = {"d": deep}
    with pytest.raises(FormatError) as err:
        tau2.load([{"role": "user", "tool_calls": [{"id": "c", "name": "f", "arguments": deep}]}])
    assert err.value.where == "[0].tool_calls[0].arguments"
    conv = tau2.load([{"role": "user", "content": "x", "raw_data": deep}])  # unknown fields are not walked
    assert tau2.dump(conv.messages)[0]["raw_data"] is deep


# --- writing messages from other formats -------------------------------------------------------------------------


def test_other_formats_are_written_as_tau2_messages_and_losses_reported() -> None:
    messages = [
        Message.of("system", "policy"),
        Message(role="user", parts=(Text(text="a"), Text(text="b")), name="ana"),
        Message(
            role="assistant",
            parts=(
                Reasoning(text="hm", signature="s"),
                ToolCall(id="c1", name="f", arguments='{"x":1}'),
                ToolCall(id="c2", name="g", arguments="not json"),
            ),
        ),
        Message(
            role="tool",
            parts=(
                ToolResult(call_id="c1", content="ok"),
                ToolResult(call_id="c2", content=(Text(text="bad"),), is_error=True),
            ),
            extras={"anthropic": {"fields": {"cache_control": {}}}},
        ),
    ]
    dropped: list[Dropped] = []
    assert tau2.dump(messages, dropped=dropped) == [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "ab", "tool_calls": None},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "name": "f", "arguments": {"x": 1}, "requestor": "assistant"},
                {"id": "c2", "name": "g", "arguments": {}, "requestor": "assistant"},
            ],
        },
        {"id": "c1", "role": "tool", "content": "ok", "requestor": "assistant", "error": False},
        {"id": "c2", "role": "tool", "content": "bad", "requestor": "assistant", "error": True},
    ]
    assert [str(d) for d in dropped] == [
        "message 1: participant name 'ana'",
        "message 2: reasoning (tau2 messages have no reasoning input)",
        "message 2: arguments of tool call 'g' (not a JSON object; written as {})",
        "message 3: anthropic-specific fields",
    ]


def test_tau2_to_openai_reports_user_tool_calls_and_tau2_fields() -> None:
    doc = next(d for d in _corpus() if any(m["role"] == "user" and m["tool_calls"] for m in d.data))
    messages = tau2.load(doc.data).messages
    dropped: list[Dropped] = []
    chat = openai_chat.dump(messages, dropped=dropped)
    user_calls = sum(len(m["tool_calls"]) for m in doc.data if m["role"] == "user" and m["tool_calls"])
    assert sum(1 for d in dropped if "made by the user role" in d.what) == user_calls
    assert {d.index for d in dropped if d.what == "tau2-specific fields"} == set(range(len(messages)))
    assistant_calls = [c for m in doc.data if m["role"] == "assistant" for c in m["tool_calls"] or []]
    assert [c["id"] for m in chat for c in m.get("tool_calls", [])] == [c["id"] for c in assistant_calls]
    assert [json.loads(c["function"]["arguments"]) for m in chat for c in m.get("tool_calls", [])] == [
        c["arguments"] for c in assistant_calls
    ]
