"""Token counting: the `TokenCounter` protocol and its implementations.

- `HeuristicCounter`: the default, no dependency, a character-class model fitted to o200k.
- `TiktokenCounter`: exact for OpenAI encodings, with the ``tiktoken`` extra; loads its BPE file offline.
- `CalibratedCounter`: scales any counter by the prompt tokens providers report.
- `get_counter(name)`: pick one by name.

Every counter caches counts per message, so counting a growing history costs O(new messages).
"""

from ._calibrated import CalibratedCounter
from ._heuristic import HeuristicCounter
from ._media import image_tokens, pixel_tokens
from ._protocol import TokenCounter
from ._registry import COUNTER_NAMES, get_counter
from ._structure import json_tokens
from ._text import Coefficients
from ._tiktoken import EncodingUnavailableError, TiktokenCounter, load_encoding

__all__ = [
    "COUNTER_NAMES",
    "CalibratedCounter",
    "Coefficients",
    "EncodingUnavailableError",
    "HeuristicCounter",
    "TiktokenCounter",
    "TokenCounter",
    "get_counter",
    "image_tokens",
    "json_tokens",
    "load_encoding",
    "pixel_tokens",
]
