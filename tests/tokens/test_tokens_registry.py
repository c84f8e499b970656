"""Choosing a counter by name, and the package's public surface."""

from __future__ import annotations

import pytest

from chainsum.errors import ChainsumError
from chainsum.tokens import CalibratedCounter, HeuristicCounter, TiktokenCounter, TokenCounter, get_counter


def test_heuristic_by_name() -> None:
    for name in ("heuristic", " Heuristic ", "HEURISTIC"):
        assert isinstance(get_counter(name), HeuristicCounter)
    assert isinstance(get_counter(), HeuristicCounter)
    assert get_counter() is not get_counter()  # each caller owns its cache


def test_calibrated_prefix_wraps() -> None:
    counter = get_counter("calibrated:heuristic")
    assert isinstance(counter, CalibratedCounter)
    assert isinstance(counter.base, HeuristicCounter)
    assert isinstance(counter, TokenCounter)


@pytest.mark.parametrize("name", ["", "bogus", "tiktoken:", "calibrated:", "heuristic:o200k_base"])
def test_unknown_names_are_refused(name: str) -> None:
    with pytest.raises((ValueError, ChainsumError)):
        get_counter(name)


def test_unknown_encoding_is_refused_before_any_lookup() -> None:
    with pytest.raises(ValueError, match="unknown tiktoken encoding"):
        TiktokenCounter("p50k_base")
