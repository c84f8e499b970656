"""How deep a compaction goes, chosen for what the session costs with prompt caching (issue 21).

A provider bills a cached prefix at a tenth of the price; a compaction changes the history from its first
summarized message on, so the request after it is sent again uncached from there, and the summarizer is paid for
what it reads. A compaction that leaves more behind (a higher reset ratio) is followed sooner by the next one, each
paying that again. The spec's defaults (trigger 0.8, reset 0.7 of the window) compact a little, often: measured
with `bench/bench_cost.py` at 32K, 5 to 12 compactions of a session where LangChain's middleware made 0 to 2.

The model. Sizes are shares of the window, prices are in fresh input tokens: a cached token costs ``c``
(``cached_price_ratio``, 0.1: $0.30 against $3 a million), summarizing one token of history costs ``s``
(``summarizer_price_ratio``: what the summarizer is paid to read it and write its share of a summary; 0 for the
model-free extractive summarizer, 1.5 for a model at the chat model's prices that writes a tenth of what it reads at
5x the input price: 1 + 0.1 x 5). Between two compactions the history grows from ``A`` (just after one) to the
trigger ``T``, by ``g`` a request: (T - A) / g requests. Each costs ``c`` for its cached prefix and 1 for the ``g``
new tokens (1 - c more than cached). A compaction sends about ``A`` again uncached (the summary record comes first:
little before it stays), (1 - c) A more than cached, and pays ``s (T - A)`` for the span it summarizes. Per request,
over one cycle:

    F(A, T) = c (A + T) / 2  +  (1 - c) g  +  g s  +  g (1 - c) A / (T - A)

F alone is lowest with nothing kept at all (A = 0). What a session keeps of its work grows with what the model
sees, (A + T) / 2 on average (the identifier and fact shares of bench_cost follow it), so the choice minimises the
cost per request of what is kept, F / ((A + T) / 2):

    J(A, T) = c  +  2 g (1 - c) T / (T^2 - A^2)  +  2 g s / (T + A)

``g`` is a common factor: the choice does not depend on how fast the session grows, and needs nothing measured at
run time (it is made once, deterministic). dJ/dT < 0: a trigger nearer the window would be cheaper by the model;
measured, it was not (bench_cost at 32K, extractive, reset 0.4: trigger 0.95 cost 1.00-1.06x what 0.8 did on the
three sessions; the model leaves out that a step can carry a history past the window, which then compacts at once),
so the trigger stays the configured one, the one the spec, the proxy's headers and the trigger tests describe.
dJ/dA = 0 gives the reset:

    2 (1 - c) x = s (1 - x)^2,  x = A / T   (x = 0 when s = 0; x = 0.35 for c = 0.1, s = 1.5)

and the reset ratio is ``max(floor, x T)``, never above the configured reset. The floor is what is kept for the
facts: ``KEEP_FLOOR`` (0.3) of the window plus ``KEEP_TOKENS`` (3,000) for what a compaction keeps whatever the window
(the summary record, the task's words, the current step): at 16K a reset of 0.49, at 32K 0.39, at 200K 0.32, and up
to a window of 7,500 tokens the spec's 0.7 as it is. (With 2,000 tokens, the Claude Code excerpt at 16K had a
compaction write a record that said nothing, tests/manager/test_task_survives.py.) The recall blocks' room
(``recall_token_ratio``) comes out of the reset as before: the compaction's budget is the reset less that room.

When it applies: with ``cache_aware`` (on by default; ``SUMMARIZATION_CACHE_AWARE=false`` turns it off). The reset
it chooses is never above the configured one, and the trigger is the configured one. Off, the configured ratios are
used as they are (the spec's 0.8 and 0.7). The deeper reset summarizes older work, never the newest
``preserve_recent`` messages the configured reset keeps verbatim: the manager raises a compaction's budget to what
that tail needs (`chainsum.strategies.tail_need`), up to the configured reset's budget
(`CompactionChoice.configured_reset`). Without that, the proxy's fidelity test (tests/server/test_proxy_fidelity.py:
a Claude Code turn with an image and a document, 4,700 tokens, at a 12K window) had its image message summarized.
`CompactionChoice.why` says which ratios, with the figures, and the manager logs it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ._config import ManagerConfig
from ._summarizers import AnySummarizer, model_free

__all__ = ["KEEP_FLOOR", "KEEP_TOKENS", "LLM_SUMMARIZER_PRICE_RATIO", "CompactionChoice", "choose_depth", "reset_share"]

KEEP_FLOOR = 0.3
"""Share of the window a compaction keeps at least for the session's facts (the recall room included)."""
KEEP_TOKENS = 3000
"""Tokens a compaction keeps at least beyond `KEEP_FLOOR`, whatever the window: the record and the current work."""

LLM_SUMMARIZER_PRICE_RATIO = 1.5
"""``summarizer_price_ratio`` assumed for a summarizer that calls a model: it reads each token at the input price and
writes a tenth as many at 5x (1 + 0.1 x 5)."""


@dataclass(frozen=True, slots=True)
class CompactionChoice:
    """The trigger and reset ratios a manager uses, and why."""

    config: ManagerConfig
    """The configuration with the chosen ratios (the given one when the choice does not apply)."""
    cache_aware: bool
    """True when the reset was chosen by the cost model; False: the configured ratios as they are."""
    summarizer_price_ratio: float
    """``s`` of the model: the configured value, or the one assumed for the first summarizer."""
    configured_reset: float
    """The reset ratio as configured: how much room the verbatim tail keeps at most when the chosen reset is lower."""
    why: str
    """One line: which ratios, from what."""


def reset_share(cached_price_ratio: float, summarizer_price_ratio: float) -> float:
    """``x = A / T`` minimising J (the module docstring): the root in [0, 1) of ``s x^2 - 2 (s + 1 - c) x + s``."""
    c, s = cached_price_ratio, summarizer_price_ratio
    if s <= 0:
        return 0.0
    b = s + (1 - c)
    return (b - math.sqrt(b * b - s * s)) / s


def choose_depth(config: ManagerConfig, summarizers: tuple[AnySummarizer, ...], window: int) -> CompactionChoice:
    """The ratios a manager with `config`, `summarizers` (the first is the one that normally answers) and a context
    window of `window` tokens uses."""
    given = config.summarizer_price_ratio
    if given is not None:
        s, source = given, "configured"
    elif summarizers and model_free(summarizers[0]):
        s, source = 0.0, "model-free summarizer"
    else:
        s, source = LLM_SUMMARIZER_PRICE_RATIO, "model summarizer assumed"
    on = config.cache_aware
    if not on:
        why = (
            f"configured ratios: trigger {config.trigger_token_ratio:g}, reset {config.reset_token_ratio:g}"
            " (cache_aware off)"
        )
        return CompactionChoice(config, False, s, config.reset_token_ratio, why)
    trigger = config.trigger_token_ratio
    x = reset_share(config.cached_price_ratio, s)
    floor = round(KEEP_FLOOR + KEEP_TOKENS / window, 3)
    reset = min(max(floor, round(x * trigger, 3)), config.reset_token_ratio)
    why = (
        f"cache-aware: reset {reset:g} = max(floor {floor:g}, {x:.2f} x trigger {trigger:g}) (at most the configured"
        f" {config.reset_token_ratio:g}) for a cached token at {config.cached_price_ratio:g} and summarizing at {s:g}"
        f" ({source}) of a fresh input token's price"
    )
    return CompactionChoice(replace(config, reset_token_ratio=reset), True, s, config.reset_token_ratio, why)
