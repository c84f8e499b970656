"""Calibration from the usage a provider reports, for tokenizers we cannot run (Anthropic, Gemini) and for
whatever a request adds that the messages do not show (tool schemas, system framing)."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence

from ..messages import Message
from ._protocol import TokenCounter

__all__ = ["CalibratedCounter"]

logger = logging.getLogger(__name__)


class CalibratedCounter:
    """Wraps a counter and scales its estimates by the ratio that providers actually reported.

    After each request, call ``calibrate(messages_sent, usage.prompt_tokens)``. The ratio reported/estimated
    is folded into an exponential moving average (the first sample is taken as is), clamped to
    [`min_factor`, `max_factor`] so one odd report (a cached-prompt discount, a huge tool schema) cannot make
    the estimate absurd. Estimates are ``ceil(base * factor * (1 + margin))``: the optional safety `margin`
    makes the trigger fire early rather than let a request overflow.

    Calibration is the one piece of state a counter holds besides its cache; it is guarded by a lock so one
    counter can be shared by concurrent requests.
    """

    def __init__(
        self,
        base: TokenCounter,
        *,
        alpha: float = 0.3,
        margin: float = 0.0,
        min_factor: float = 0.5,
        max_factor: float = 2.0,
        initial_factor: float = 1.0,
    ) -> None:
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
        if not 0.0 <= margin <= 1.0:
            raise ValueError(f"margin must be in [0, 1], got {margin!r}")
        if not 0.0 < min_factor <= max_factor:
            raise ValueError(f"need 0 < min_factor <= max_factor, got {min_factor!r}, {max_factor!r}")
        if not min_factor <= initial_factor <= max_factor:
            raise ValueError("initial_factor must lie between min_factor and max_factor")
        self.base = base
        self.alpha = alpha
        self.margin = margin
        self.min_factor = min_factor
        self.max_factor = max_factor
        self._factor = initial_factor
        self._samples = 0
        self._lock = threading.Lock()
        self.name = f"calibrated:{base.name}"

    @property
    def factor(self) -> float:
        """The current reported/estimated ratio (1.0 before any calibration)."""
        return self._factor

    @property
    def samples(self) -> int:
        """How many reports have been folded in."""
        return self._samples

    def calibrate(self, messages: Sequence[Message], reported_prompt_tokens: int) -> float:
        """Fold in one provider report for exactly the `messages` that were sent; returns the new factor.

        A report that cannot be meaningful (not a positive finite number, or an empty estimate) is ignored and
        logged, because usage fields are sometimes missing or zero in streamed responses.
        """
        estimate = self.base.count_messages(messages)
        reported = float(reported_prompt_tokens)
        if estimate <= 0 or not math.isfinite(reported) or reported <= 0:
            logger.debug("estimate=<%d>, reported=<%s> | calibration sample ignored", estimate, reported_prompt_tokens)
            return self._factor
        ratio = min(self.max_factor, max(self.min_factor, reported / estimate))
        with self._lock:
            if self._samples == 0:
                self._factor = ratio
            else:
                self._factor = (1.0 - self.alpha) * self._factor + self.alpha * ratio
            self._factor = min(self.max_factor, max(self.min_factor, self._factor))
            self._samples += 1
            factor = self._factor
        logger.debug("estimate=<%d>, reported=<%d>, factor=<%.4f> | calibrated", estimate, reported, factor)
        return factor

    def reset(self, factor: float = 1.0) -> None:
        """Forget the calibration (a new model or provider)."""
        with self._lock:
            self._factor = min(self.max_factor, max(self.min_factor, factor))
            self._samples = 0

    def scale(self, tokens: int) -> int:
        """`tokens` of the base counter as this counter counts them now."""
        return self._scale(tokens)

    def _scale(self, tokens: int) -> int:
        if tokens <= 0:
            return 0
        return math.ceil(tokens * self._factor * (1.0 + self.margin) - 1e-9)

    def count_text(self, text: str) -> int:
        return self._scale(self.base.count_text(text))

    def count_message(self, message: Message) -> int:
        return self._scale(self.base.count_message(message))

    def count_messages(self, messages: Sequence[Message]) -> int:
        """The scaled count of the whole history (scaled once, not message by message, so rounding does not
        accumulate); the base counter's cache keeps this O(new messages)."""
        return self._scale(self.base.count_messages(messages))

    def __repr__(self) -> str:
        return f"CalibratedCounter(base={self.base!r}, factor={self._factor:.4f}, margin={self.margin})"
