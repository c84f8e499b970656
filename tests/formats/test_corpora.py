"""Every real conversation in the shared corpora: detected as its format, loaded, written back byte-for-byte
equal, and converted to every other provider format without silent loss."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chainsum.formats import DUMPABLE, Dropped, detect_format, dump, load
from chainsum.messages import Message, Text, ToolCall
from chainsum.testing import CorpusDocument, corpora_root, iter_documents

pytestmark = pytest.mark.corpus

DOCS = list(iter_documents()) if corpora_root() is not None else []
TARGETS = ["openai", "openai-responses", "anthropic", "gemini", "bedrock"]


def test_corpora_are_all_there() -> None:
    formats = {d.format for d in DOCS}
    assert formats == {"openai", "tau2", "claude-code"}
    assert len(DOCS) >= 280


@pytest.mark.parametrize("doc", DOCS, ids=[d.label for d in DOCS])
def test_detect_load_and_round_trip(doc: CorpusDocument) -> None:
    assert detect_format(doc.data) == doc.format
    conv = load(doc.data)
    assert conv.format == doc.format and conv.messages
    if doc.format in DUMPABLE:
        assert dump(conv) == doc.data


def _calls(messages: tuple[Message, ...] | list[Message]) -> list[tuple[str, Any]]:
    return [(p.name, json.loads(p.arguments)) for m in messages for p in m.parts if isinstance(p, ToolCall)]


def _texts(messages: tuple[Message, ...] | list[Message]) -> list[str]:
    return [p.text.strip() for m in messages for p in m.parts if isinstance(p, Text) and p.text.strip()]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("doc", DOCS[::7], ids=[d.label for d in DOCS[::7]])
def test_conversion_loses_only_what_it_reports(doc: CorpusDocument, target: str) -> None:
    messages = load(doc.data, doc.format).messages
    dropped: list[Dropped] = []
    wire = dump(messages, to=target, dropped=dropped)
    back = load(json.loads(json.dumps(wire)), target).messages
    reported = {d.index for d in dropped}
    # Tool calls survive unless the message holding them was reported (tau2's user-made calls have no place).
    kept_calls = [m for i, m in enumerate(messages) if i not in reported]
    back_calls = _calls(back)
    if not reported:
        assert back_calls == _calls(messages)
    for call in _calls(kept_calls):
        assert call in back_calls
    everything = "\n".join([*_texts(back), *(r.text for m in back for r in m.tool_results)])
    for i, m in enumerate(messages):
        if i in reported:
            continue
        for text in _texts([m]):
            assert text in everything, f"message {i}: text lost converting to {target}"
