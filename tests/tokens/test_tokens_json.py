"""`json_tokens`: what a request carries beside its messages (tool definitions), counted once per distinct JSON for
a counter whose counts do not move, and as the calibration stands for one whose counts do."""

from __future__ import annotations

from dataclasses import dataclass, field

from chainsum.messages import Message
from chainsum.tokens import CalibratedCounter, HeuristicCounter, json_tokens

TOOLS = [{"name": "Bash", "description": "Run a command. " * 200, "input_schema": {"type": "object"}}]


class _Counting(HeuristicCounter):
    def __init__(self) -> None:
        super().__init__()
        self.texts = 0

    def count_text(self, text: str) -> int:
        self.texts += 1
        return super().count_text(text)


def test_the_same_definitions_are_counted_once() -> None:
    counter = _Counting()
    first = json_tokens(counter, TOOLS)
    again = [json_tokens(counter, [dict(t) for t in TOOLS]) for _ in range(5)]  # equal values, new objects
    assert again == [first] * 5 and counter.texts == 1
    assert json_tokens(counter, [*TOOLS, {"name": "Read"}]) > first and counter.texts == 2


def test_a_calibrated_count_follows_the_calibration() -> None:
    counter = CalibratedCounter(HeuristicCounter())
    before = json_tokens(counter, TOOLS)
    counter.calibrate([Message.of("user", "hello there " * 40)], 400)
    assert counter.factor != 1.0
    assert json_tokens(counter, TOOLS) == counter.scale(json_tokens(counter.base, TOOLS)) != before


@dataclass
class _Unhashable:
    """A user's counter as a plain dataclass: eq without hash."""

    calls: list[str] = field(default_factory=list[str])
    name: str = "words"

    def count_text(self, text: str) -> int:
        self.calls.append(text)
        return len(text.split())


def test_a_counter_that_cannot_be_a_key_is_asked_each_time() -> None:
    counter = _Unhashable()
    assert json_tokens(counter, TOOLS) == json_tokens(counter, TOOLS) > 0  # type: ignore[arg-type]
    assert len(counter.calls) == 2
