"""The shim (loaded by ``conftest.py`` in the run) for pydantic-ai's own history-processor tests
(``tests/test_history_processor.py``, vendored unedited in
``vendored/``): chainsum's processor added where each test gives pydantic-ai a history processor.

pydantic-ai has no history-processor *class* to replace: its tests give the agent processors of their own
(functions and callable classes) through ``ProcessHistory`` and assert what pydantic-ai does with them (what the
model receives, what the run keeps, the errors for an empty history or one ending in a response, the order of
several processors, ``ReinjectSystemPrompt``). So each ``ProcessHistory(processor)`` a test builds is, here, that
processor followed by a `ChainsumHistory` (through `ChainsumCapability`, as an adopter adds it) in the same
capability: every assertion then holds pydantic-ai's behaviour with chainsum in the request path, and fails where
chainsum changes what the model receives, what the run keeps, or the errors pydantic-ai raises.

The pydantic-ai repository's conftest is not copied (it needs its test extras); the names the file imports from it
(``IsDatetime``, ``IsInstance``, ``IsStr``: matchers equal to any value of their type, as dirty-equals' are) and its
``_inline_snapshot.snapshot`` (the value itself: a snapshot that is not being updated compares as its literal) are
defined here.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pydantic_ai.capabilities
import pytest
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import RunContext

from chainsum.integrations.pydantic_ai import ChainsumCapability, ChainsumHistory

from .shim_known import KNOWN

WINDOW = 128_000
"""The window the shim's processors budget for (a gpt-4o-class model): the tests' histories are a few words."""


class _Matcher:
    """Equal to the values `matches` accepts (the other side's ``__eq__`` gives way to it)."""

    __hash__ = None  # type: ignore[assignment]

    def matches(self, other: object) -> bool:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return self.matches(other)

    def __ne__(self, other: object) -> bool:
        return not self.matches(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class IsDatetime(_Matcher):
    def matches(self, other: object) -> bool:
        return isinstance(other, datetime)


class IsStr(_Matcher):
    def __init__(self, *, regex: str | None = None) -> None:
        self.regex = regex

    def matches(self, other: object) -> bool:
        return isinstance(other, str) and (self.regex is None or re.fullmatch(self.regex, other) is not None)


class _InstanceOf(type):
    def __getitem__(cls, expected: type[Any]) -> IsInstance:
        return IsInstance(expected)


class IsInstance(_Matcher, metaclass=_InstanceOf):
    def __init__(self, expected: type[Any] | tuple[type[Any], ...]) -> None:
        self.expected = expected

    def matches(self, other: object) -> bool:
        return isinstance(other, self.expected)


_snapshot = types.ModuleType("tests._inline_snapshot")
_snapshot.snapshot = lambda value=None: value  # type: ignore[attr-defined]
sys.modules["tests._inline_snapshot"] = _snapshot

_ProcessHistory = pydantic_ai.capabilities.ProcessHistory


@dataclass
class ProcessHistory(_ProcessHistory[Any]):
    """``ProcessHistory(processor)``: the test's processor, then chainsum's (one `ChainsumHistory` per capability,
    as one per agent)."""

    chainsum: ChainsumHistory = field(
        init=False, repr=False, compare=False, default_factory=lambda: ChainsumHistory(context_window=WINDOW)
    )

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        processed = await super().before_model_request(ctx, request_context)
        return await ChainsumCapability(self.chainsum).before_model_request(ctx, processed)


WITHOUT_CHAINSUM = os.environ.get("CHAINSUM_SHIM_WITHOUT_CHAINSUM") == "1"
"""The baseline run (pydantic-ai alone): the suite test runs the file so first, to show that every test passes
against the locked pydantic-ai as it is, so that what fails with chainsum added is chainsum's."""

if not WITHOUT_CHAINSUM:
    pydantic_ai.capabilities.ProcessHistory = ProcessHistory  # type: ignore[misc]  # what the test file imports


@pytest.fixture
def create_module(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[[str], types.ModuleType]]:
    """A module made from source text (the repository's fixture of that name): written to a file and imported."""
    made: list[str] = []

    def create(source: str) -> types.ModuleType:
        name = re.sub(r"\W", "_", f"shim_module_{request.node.name}_{len(made)}")
        path = tmp_path / f"{name}.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        made.append(name)
        spec.loader.exec_module(module)
        return module

    yield create
    for name in made:
        sys.modules.pop(name, None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        reason = KNOWN.get(item.nodeid)
        if reason is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=reason))
