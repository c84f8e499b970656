"""Calibration from provider-reported prompt tokens."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chainsum.messages import Message
from chainsum.tokens import CalibratedCounter, HeuristicCounter, TokenCounter

HISTORY = [Message.of("system", "You are terse."), Message.of("user", "What is the capital of France?")]


def test_first_report_sets_the_factor_then_it_moves_as_an_average() -> None:
    base = HeuristicCounter()
    counter = CalibratedCounter(base, alpha=0.5)
    estimate = base.count_messages(HISTORY)
    assert counter.factor == 1.0
    assert counter.count_messages(HISTORY) == estimate
    assert counter.calibrate(HISTORY, round(estimate * 1.2)) == pytest.approx(round(estimate * 1.2) / estimate)
    first = counter.factor
    counter.calibrate(HISTORY, estimate)  # ratio 1.0
    assert counter.factor == pytest.approx(0.5 * first + 0.5)
    assert counter.samples == 2
    assert counter.count_messages(HISTORY) == math.ceil(estimate * counter.factor - 1e-9)


def test_factor_is_clamped_and_bad_reports_are_ignored() -> None:
    counter = CalibratedCounter(HeuristicCounter(), min_factor=0.5, max_factor=2.0)
    counter.calibrate(HISTORY, 10**9)
    assert counter.factor == 2.0
    counter.reset()
    counter.calibrate(HISTORY, 1)
    assert counter.factor == 0.5
    for bad in (0, -5):
        assert counter.calibrate(HISTORY, bad) == 0.5
    assert counter.calibrate(HISTORY, float("nan")) == 0.5  # type: ignore[arg-type]
    assert counter.calibrate([], 100) == 0.5  # nothing estimated: nothing to learn
    assert counter.samples == 1


def test_margin_is_applied_on_top() -> None:
    base = HeuristicCounter()
    counter = CalibratedCounter(base, margin=0.1)
    assert counter.count_messages(HISTORY) == math.ceil(base.count_messages(HISTORY) * 1.1 - 1e-9)
    assert counter.count_text("") == 0
    assert counter.count_message(HISTORY[1]) >= base.count_message(HISTORY[1])


@pytest.mark.parametrize(
    "kwargs",
    [{"alpha": 0.0}, {"alpha": 1.5}, {"margin": -0.1}, {"min_factor": 0.0}, {"min_factor": 3.0}, {"initial_factor": 9}],
)
def test_bad_settings_are_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        CalibratedCounter(HeuristicCounter(), **kwargs)


@given(st.lists(st.integers(min_value=-10, max_value=10**7), max_size=20))
def test_factor_always_stays_in_range(reports: list[int]) -> None:
    counter = CalibratedCounter(HeuristicCounter(), min_factor=0.7, max_factor=1.6)
    for r in reports:
        counter.calibrate(HISTORY, r)
        assert 0.7 <= counter.factor <= 1.6


def test_is_a_token_counter() -> None:
    counter = CalibratedCounter(HeuristicCounter())
    assert isinstance(counter, TokenCounter)
    assert counter.name == "calibrated:heuristic"
    assert "factor=1.0000" in repr(counter)
