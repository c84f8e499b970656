"""Over the context window: what the manager does when the ratio trigger alone cannot keep a request acceptable.

A tool that returns more than the window holds, a verbatim tail that is all that is left, a session at its depth
cap: in each case every later request would be refused by the provider, so the manager acts on what it otherwise
protects, with model-free, reversible edits only (the originals are archived)."""

from __future__ import annotations

from chainsum.formats import openai_chat
from chainsum.manager import ManagerEvent, SummarizationEvent
from chainsum.store import MemoryArchive
from chainsum.strategies import CLIP_MARKER
from chainsum.tokens import HeuristicCounter
from manager.manager_support import SYSTEM, Dict, make, tool_turn, turn

COUNTER = HeuristicCounter()


def tokens(history: list[Dict]) -> int:
    return COUNTER.count_messages(openai_chat.load(history).messages)


def huge_current_turn(n_turns: int, output_words: int) -> list[Dict]:
    """`n_turns` small tool turns, then a call whose result (the current turn) is `output_words` words long."""
    hist: list[Dict] = [SYSTEM]
    for i in range(n_turns):
        hist += tool_turn(i, words=20)
    hist.append({"role": "user", "content": "Dump the whole log, please."})
    call = {"id": "call_big", "type": "function", "function": {"name": "cat", "arguments": '{"path": "app.log"}'}}
    hist.append({"role": "assistant", "content": None, "tool_calls": [call]})
    body = " ".join(f"entry{k} ok" for k in range(output_words))
    hist.append({"role": "tool", "tool_call_id": "call_big", "content": f"BEGIN {body} END"})
    return hist


def test_a_tool_result_larger_than_the_window_is_clipped_and_archived() -> None:
    archive = MemoryArchive()
    events: list[ManagerEvent] = []
    manager = make(window=4000, archive=archive, events=events)
    hist = huge_current_turn(4, output_words=3000)
    assert tokens(hist) > 4000
    prepared = manager.prepare_sync(hist)
    out = list(prepared.messages)
    assert tokens(out) <= 4000
    assert isinstance(events[-1], SummarizationEvent) and events[-1].reason == "emergency"
    clipped = out[-1]["content"]
    assert clipped.startswith("BEGIN ") and clipped.endswith(" END") and CLIP_MARKER in clipped
    assert out[-2] == hist[-2]  # the call is kept
    # nothing is lost for good: the full output comes back from the archive
    originals = [m for r in archive.records("default") for m in archive.expand(r.id)]
    assert any(r.text == hist[-1]["content"] for m in originals for r in m.tool_results)


def test_under_the_window_the_current_turn_is_left_whole() -> None:
    manager = make(window=20_000)
    hist = huge_current_turn(4, output_words=3000)
    assert tokens(hist) < 20_000
    out = list(manager.prepare_sync(hist).messages)
    assert out[-1] == hist[-1]


def test_recent_tool_output_is_masked_when_the_window_is_exceeded() -> None:
    """The last tool steps and the verbatim tail are protected, until keeping them would overflow the window."""
    archive = MemoryArchive()
    manager = make(window=3000, archive=archive, preserve_recent=10)
    hist: list[Dict] = [SYSTEM]
    for i in range(3):
        hist += tool_turn(i, words=1200)  # three big results, all inside the verbatim tail
    hist.append({"role": "user", "content": "And now?"})
    assert tokens(hist) > 3000
    out = list(manager.prepare_sync(hist).messages)
    assert tokens(out) <= 3000
    big = [m for m in hist if m["role"] == "tool"]
    assert sum(any(m == b for m in out) for b in big) < len(big)  # masked or summarized: not all kept whole
    assert out[-1] == hist[-1]


def test_an_emergency_with_failing_summarizers_runs_the_model_free_path() -> None:
    def broken(transcript: str) -> str:
        raise RuntimeError("model down")

    archive = MemoryArchive()
    events: list[ManagerEvent] = []
    manager = make(window=3000, archive=archive, summarizers=[broken], events=events)
    hist: list[Dict] = [SYSTEM]
    for i in range(12):
        hist += [*turn(i, words=150), *tool_turn(i, words=30)]
    assert tokens(hist) > 3000
    prepared = manager.prepare_sync(hist)
    out = list(prepared.messages)
    assert tokens(out) <= 3000 and not prepared.over_window
    assert archive.records("default") and archive.records("default")[0].depth == 0  # masked, archived, no summary
    event = prepared.event
    assert isinstance(event, SummarizationEvent) and event.errors  # the failure is reported with the result
