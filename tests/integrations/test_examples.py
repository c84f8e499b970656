"""The README's framework examples run offline, on each framework's own test model, and do what they say: the
history is compacted by summaries the framework's own (fake) model wrote, its usage reported, and its originals come
back from the archive. (Strands' example is run by its own tests.)"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("name", "needles"),
    [
        ("langchain_agent", ("chainsum: summarized", "originals in the archive", "summarizer model: 900 input")),
        ("openai_agents_agent", ("compacted:", "summary records:", "the first record replaced", ", summarizer ")),
        ("pydantic_ai_agent", ("checked against their SHA-256", "summarizer model: ")),
    ],
)
def test_the_example_runs_offline(
    name: str, needles: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    main = load(name, monkeypatch).main
    # pydantic-ai's run_sync keeps a loop of its own on the main thread, never closed: give it this one, closed after
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        result = main()
        if inspect.iscoroutine(result):
            loop.run_until_complete(result)
    finally:
        asyncio.set_event_loop(None)
        loop.close()
    out = capsys.readouterr().out
    for needle in needles:
        assert needle in out, (name, needle, out[-2000:])
