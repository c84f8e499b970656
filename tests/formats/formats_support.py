"""Scaffolding shared by the wire-format tests: golden fixture files, arbitrary-JSON strategies, and the checks
that every format module must pass on hostile input.

Import as ``from formats.formats_support import ...`` (``tests/`` is on ``sys.path``). Each check takes the format
module (``chainsum.formats.gemini`` and so on), so one body serves every format whose test asks the same question.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import strategies as st

from chainsum.errors import FormatError
from chainsum.formats import Dropped
from chainsum.messages import messages_from_list, messages_to_list

__all__ = [
    "FIXTURES_ROOT",
    "assert_exact_or_format_error",
    "assert_round_trips",
    "assert_wrong_types_load_or_fail_cleanly",
    "json_paths",
    "json_values",
    "openai_chaos_documents",
    "read_canonical",
    "read_json",
    "replace_at",
    "wire_cases",
]

FIXTURES_ROOT = Path(__file__).parent / "fixtures"
"""One folder per format, named as the format's ``NAME`` (``claude-code``, ``openai-responses``...)."""


# --- golden fixtures -------------------------------------------------------------------------------------------


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def wire_cases(folder: Path) -> list[Path]:
    """The ``*.wire.json`` fixtures of a format folder, sorted (each has a ``.canonical.json`` beside it)."""
    return sorted(folder.glob("*.wire.json"))


def read_canonical(wire: Path) -> Any:
    """The ``.canonical.json`` beside a ``.wire.json`` fixture."""
    return read_json(wire.with_name(wire.name.replace(".wire.", ".canonical.")))


# --- arbitrary JSON ----------------------------------------------------------------------------------------------


def json_values() -> st.SearchStrategy[Any]:
    """Small arbitrary JSON values with any keys: for documents no format expects."""
    leaf = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=8)
    return st.recursive(
        leaf,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8,
    )


_OPENAI_KEYS = (
    "role content type text tool_calls function name arguments id call_id output summary tool_call_id refusal"
    " function_call image_url url file file_data filename custom input encrypted_content requestor error"
    " tool_messages status messages annotations detail file_url"
).split()
_OPENAI_WORDS = (
    "user assistant system developer tool function message function_call function_call_output reasoning text"
    " input_text output_text refusal image_url input_image input_file file custom custom_tool_call summary_text x"
).split()


def openai_chaos_documents() -> st.SearchStrategy[Any]:
    """Arbitrary JSON built from the keys and values of the OpenAI-shaped formats (Chat Completions, Responses,
    tau2), so that it gets deep into their readers before anything contradicts them."""
    leaf = (
        st.none() | st.booleans() | st.integers() | st.sampled_from([*_OPENAI_WORDS, "", "data:image/png;base64,AAAA"])
    )
    chaos = st.recursive(
        leaf,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_OPENAI_KEYS), inner, max_size=5),
        max_leaves=25,
    )
    return st.lists(chaos, max_size=4) | st.dictionaries(st.sampled_from(["messages", "input", "model"]), chaos)


def json_paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value inside a JSON document, the document itself (``()``) first."""
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from json_paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from json_paths(value, (*path, index))


def replace_at(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A deep copy of `doc` with the value at `path` replaced."""
    if not path:
        return value
    out = copy.deepcopy(doc)
    node = out
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return out


# --- checks ------------------------------------------------------------------------------------------------------

_WRONG_TYPES: tuple[Any, ...] = (None, 0, 1.5, "x", True, [], {}, [1], {"k": None})


def assert_wrong_types_load_or_fail_cleanly(module: ModuleType, wire: Any, payload: str) -> None:
    """Each value of `wire` swapped for each JSON type: a FormatError naming a place (only a wrong document or
    `payload`, the key holding the turns, may fail at the top), or a document that still round-trips exactly."""
    for path in json_paths(wire):
        for value in _WRONG_TYPES:
            doc = replace_at(wire, path, value)
            try:
                conv = module.load(doc)
            except FormatError as exc:
                assert exc.where or not path or path == (payload,), (path, value)
                continue
            assert module.dump(conv.messages, conv.envelope) == doc, (path, value)


def assert_exact_or_format_error(module: ModuleType, doc: Any) -> None:
    """Never a traceback: sniff answers, and load reads `doc` exactly or fails with this format's FormatError."""
    assert module.sniff(doc) in (0, 1, 2)
    try:
        conv = module.load(doc)
    except FormatError as err:
        assert err.format == module.NAME
        return
    assert module.dump(conv.messages, conv.envelope) == doc


def assert_round_trips(module: ModuleType, doc: Any) -> None:
    """`doc` is written back exactly with nothing reported dropped, also from the canonical messages after a trip
    through their JSON form (and, for a bare list, without an envelope)."""
    conv = module.load(doc)
    dropped: list[Dropped] = []
    assert module.dump(conv.messages, conv.envelope, dropped) == doc
    assert dropped == []
    again = messages_from_list(json.loads(json.dumps(messages_to_list(conv.messages))))
    assert again == list(conv.messages)
    assert module.dump(again, conv.envelope) == doc
    if not conv.envelope:
        assert module.dump(again) == doc
