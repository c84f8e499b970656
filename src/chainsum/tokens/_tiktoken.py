"""Exact counts for OpenAI models with tiktoken (the optional ``chainsum[tiktoken]`` extra), loaded offline."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ..errors import ChainsumError, MissingDependencyError
from ._base import DEFAULT_CACHE_SIZE, CachedCounter
from ._bpe_files import ENCODINGS, find_ranks
from ._cache import LRUCache

if TYPE_CHECKING:  # pragma: no cover
    import tiktoken

__all__ = ["EncodingUnavailableError", "TiktokenCounter", "load_encoding"]

_TEXT_CACHE_MIN = 64
"""Strings shorter than this are encoded every time: hashing them costs about as much as encoding them."""

_lock = threading.Lock()
_loaded: dict[str, Any] = {}


class EncodingUnavailableError(ChainsumError, LookupError):
    """tiktoken is installed but the encoding's BPE file is nowhere on this machine (and we do not download)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        super().__init__(
            f"the tiktoken encoding {encoding!r} is not available offline: put {encoding}.tiktoken in "
            "$CHAINSUM_TIKTOKEN_DIR, point $TIKTOKEN_CACHE_DIR at a tiktoken cache that holds it, "
            'or pip install quicktok-v1 (it ships the ranks); or use get_counter("heuristic")'
        )


def _import_tiktoken() -> Any:
    try:
        import tiktoken
    except ImportError as exc:
        raise MissingDependencyError("tiktoken", "tiktoken") from exc
    return tiktoken


def load_encoding(name: str) -> tiktoken.Encoding:
    """The named encoding, built from a verified local BPE file (see `chainsum.tokens._bpe_files`) and kept for
    the life of the process. Never touches the network.

    Raises `MissingDependencyError` without tiktoken, `EncodingUnavailableError` without the file, and
    `ValueError` for an encoding chainsum does not know.
    """
    spec = ENCODINGS.get(name)
    if spec is None:
        raise ValueError(f"unknown tiktoken encoding {name!r}; known: {', '.join(sorted(ENCODINGS))}")
    tiktoken = _import_tiktoken()
    with _lock:
        encoding = _loaded.get(name)
        if encoding is None:
            found = find_ranks(spec)
            if found is None:
                raise EncodingUnavailableError(name)
            ranks, _path = found
            encoding = tiktoken.Encoding(
                name=name, pat_str=spec.pattern, mergeable_ranks=ranks, special_tokens=dict(spec.special_tokens)
            )
            _loaded[name] = encoding
    return encoding


class TiktokenCounter(CachedCounter):
    """Exact token counts for OpenAI encodings (``o200k_base`` for GPT-4o, GPT-4.1, o-series and GPT-5;
    ``cl100k_base`` for GPT-4 and GPT-3.5), plus the chat framing shared with every counter.

    Special-token text in a message (``<|endoftext|>``) is counted as the ordinary text it is: a provider never
    lets a user message inject a special token. Strings of 64 characters or more are also cached by value, so a
    history re-parsed on every request (fresh objects, no identity hit) is still cheap to count again.
    """

    def __init__(
        self,
        encoding: str = "o200k_base",
        *,
        cache_size: int = DEFAULT_CACHE_SIZE,
        text_cache_size: int = 8192,
    ) -> None:
        super().__init__(cache_size=cache_size)
        self.encoding = load_encoding(encoding)
        self.name = f"tiktoken:{encoding}"
        self._texts: LRUCache[str] = LRUCache(text_cache_size)

    def _encode_len(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(text))

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        if len(text) < _TEXT_CACHE_MIN:
            return self._encode_len(text)
        return self._texts.get_or_compute(text, lambda: self._encode_len(text))

    def clear_cache(self) -> None:
        super().clear_cache()
        self._texts.clear()
