"""chainsum's own JSON form: lossless round trip, schema-valid output, clear errors on bad input."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chainsum.errors import FormatError
from chainsum.messages import (
    MESSAGE_SCHEMA,
    ROLES,
    File,
    Image,
    Message,
    Opaque,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    message_from_dict,
    messages_from_list,
    messages_to_list,
)
from sampling import examples

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
extras = st.dictionaries(
    st.sampled_from(["openai", "anthropic", "gemini"]),
    st.dictionaries(st.text(max_size=6), json_values, max_size=2),
    max_size=2,
)
opt_text = st.none() | st.text(max_size=20)
reasoning = st.builds(Reasoning, text=st.text(max_size=20), signature=opt_text, data=opt_text, extras=extras)
text = st.builds(Text, text=st.text(max_size=40), reasoning=st.none() | reasoning, extras=extras)
image = st.builds(Image, url=opt_text, data=st.none() | st.binary(max_size=20), media_type=opt_text, extras=extras)
file = st.builds(
    File, url=opt_text, data=st.none() | st.binary(max_size=20), media_type=opt_text, name=opt_text, extras=extras
)
call = st.builds(
    ToolCall,
    id=st.text(max_size=10),
    name=st.text(max_size=10),
    arguments=st.text(max_size=20),
    reasoning=st.none() | reasoning,
    extras=extras,
)
result = st.builds(
    ToolResult,
    call_id=st.text(max_size=10),
    name=opt_text,
    content=st.text(max_size=20) | st.tuples(text | image | file).map(tuple),
    is_error=st.booleans(),
    extras=extras,
)
opaque = st.builds(Opaque, format=st.sampled_from(["anthropic", "openai-responses"]), data=json_values)
parts = st.lists(text | reasoning | call | result | image | file | opaque, max_size=4).map(tuple)
messages = st.lists(
    st.builds(Message, role=st.sampled_from(ROLES), parts=parts, id=opt_text, name=opt_text, extras=extras),
    max_size=5,
)

# one validator for every example: `jsonschema.validate` checks the schema itself on every call (about 90 % of this
# test's time); `test_schema_is_a_valid_schema` checks it once
MESSAGE_VALIDATOR = jsonschema.Draft202012Validator(MESSAGE_SCHEMA)


@given(messages)
@settings(max_examples=examples(75), deadline=None)
def test_round_trip_through_json_text(msgs: list[Message]) -> None:
    data = messages_to_list(msgs)
    text = json.dumps(data)
    assert messages_from_list(json.loads(text)) == msgs
    for item in data:
        MESSAGE_VALIDATOR.validate(item)


def test_schema_is_a_valid_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(MESSAGE_SCHEMA)


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ("not a message", "messages[0]"),
        ({"role": "robot", "parts": []}, "messages[0].role"),
        ({"role": "user", "parts": "hi"}, "messages[0].parts"),
        ({"role": "user", "parts": [{"kind": "video"}]}, "messages[0].parts[0].kind"),
        ({"role": "user", "parts": [{"kind": "text"}]}, "messages[0].parts[0].text"),
        ({"role": "user", "parts": [{"kind": "text", "text": 3}]}, "messages[0].parts[0].text"),
        ({"role": "user", "parts": [{"kind": "image", "data": "***"}]}, "messages[0].parts[0].data"),
        (
            {"role": "tool", "parts": [{"kind": "tool_result", "call_id": "a", "content": 5}]},
            "messages[0].parts[0].content",
        ),
        (
            {
                "role": "tool",
                "parts": [
                    {"kind": "tool_result", "call_id": "a", "content": [{"kind": "tool_call", "id": "x", "name": "y"}]}
                ],
            },
            "messages[0].parts[0].content[0]",
        ),
        ({"role": "user", "parts": [], "extras": []}, "messages[0].extras"),
    ],
)
def test_bad_input_names_the_field(bad: Any, where: str) -> None:
    with pytest.raises(FormatError) as info:
        message_from_dict(bad, "messages[0]")
    assert info.value.where == where


def test_not_a_list() -> None:
    with pytest.raises(FormatError, match="expected a list"):
        messages_from_list({"role": "user"})
