"""Picking a counter by name, for configuration files, environment variables and the CLI."""

from __future__ import annotations

from ._calibrated import CalibratedCounter
from ._heuristic import HeuristicCounter
from ._protocol import TokenCounter
from ._tiktoken import TiktokenCounter

__all__ = ["COUNTER_NAMES", "get_counter"]

COUNTER_NAMES: tuple[str, ...] = ("heuristic", "tiktoken", "tiktoken:o200k_base", "tiktoken:cl100k_base")
"""Names `get_counter` accepts; any of them may also be prefixed with ``calibrated:``."""


def get_counter(name: str = "heuristic") -> TokenCounter:
    """A new counter for `name`: ``heuristic`` (the default, no dependency), ``tiktoken`` (``o200k_base``),
    ``tiktoken:<encoding>``, or any of these behind ``calibrated:`` for a `CalibratedCounter` around it.

    Each call returns a fresh counter with its own cache, so keep the one you get for the life of a session.
    Raises `ValueError` for an unknown name, `MissingDependencyError` / `EncodingUnavailableError` when tiktoken
    or its encoding file is missing.
    """
    key = name.strip().lower()
    if key.startswith("calibrated:"):
        return CalibratedCounter(get_counter(key.removeprefix("calibrated:")))
    if key == "heuristic":
        return HeuristicCounter()
    if key == "tiktoken":
        return TiktokenCounter("o200k_base")
    if key.startswith("tiktoken:"):
        return TiktokenCounter(key.removeprefix("tiktoken:"))
    raise ValueError(f"unknown token counter {name!r}; known: {', '.join(COUNTER_NAMES)} (optionally calibrated:...)")
