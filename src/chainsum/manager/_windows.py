"""Context windows of common models, for the manager's token-ratio trigger.

`context_window(model_id)` answers "how many prompt tokens does this model take", so that the manager can compute
``tokens / window`` without the user looking it up. It tries, in order:

1. the id as given (lower-cased), in the user's `overrides` merged over the table;
2. the id without provider prefixes: ``openai/gpt-4o``, ``openrouter/anthropic/claude-3.5-sonnet``,
   ``models/gemini-2.5-pro`` (everything up to the last ``/``), and Bedrock's ``us.anthropic.`` /
   ``amazon.`` region and vendor prefixes;
3. the longest known name that the id starts with, ending at a separator (``-`` ``:`` ``.`` ``@`` ``_``): dated
   snapshots (``gpt-4o-2024-08-06``), size and tag suffixes (``llama3.1:70b``, ``Qwen2.5-7B-Instruct``).

Unknown ids raise `UnknownModelError` with the closest names: guessing a window silently would make the trigger
fire too late (the request overflows) or far too early (needless summaries).

What the numbers mean: the most tokens the model accepts in one request, as its provider publishes it. Where the
provider caps input below the total window, the cap is used (GPT-5: 272K of its 400K, the rest is output). Where a
larger window exists only behind a beta flag or an extra-priced tier (Claude Sonnet 4/4.5 at 1M), the standard
window is used. Open models list their trained window; a server often runs them with less (vLLM
``--max-model-len``, Ollama ``num_ctx``, 2048 or 4096 tokens by default), so pass the served size as an override or
``ManagerConfig.context_window``. When unsure, the table errs low: a trigger that fires early costs a summary; one
that fires late costs the request.

Sources, checked November 2026: the providers' model pages as mirrored by LiteLLM's
``model_prices_and_context_window.json`` (OpenAI, Anthropic, Gemini, DeepSeek, Mistral, Phi via Azure AI) and the
model cards on Hugging Face. Values marked "uncertain" below were not confirmed by a second source.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping
from types import MappingProxyType

from ..errors import ChainsumError

__all__ = ["CONTEXT_WINDOWS", "UnknownModelError", "context_window", "known_window", "normalize_model_id"]


class UnknownModelError(ChainsumError, LookupError):
    """No context window is known for `model_id`; `close` lists the most similar known names."""

    def __init__(self, model_id: str, close: tuple[str, ...]) -> None:
        self.model_id = model_id
        self.close = close
        hint = f"; close names: {', '.join(close)}" if close else ""
        super().__init__(
            f"no context window known for model {model_id!r}{hint}; give the window in tokens: "
            "--context-window on the command line, SUMMARIZATION_CONTEXT_WINDOW in the environment, "
            "context_window= in Python"
        )


_K = 1024
_WINDOWS: dict[str, int] = {
    # OpenAI ----------------------------------------------------------------------------------------------------
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 128_000,
    "gpt-4-1106-preview": 128_000,
    "gpt-4-0125-preview": 128_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4.5": 128_000,  # uncertain (preview, retired)
    "gpt-4.1": 1_047_576,  # gpt-4.1, -mini, -nano
    "o1": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,  # o3, o3-pro
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    "gpt-5": 272_000,  # input cap of the 400K window (128K reserved for output); -mini, -nano, -codex, 5.1, 5.2
    "gpt-5-chat": 128_000,
    "gpt-oss": 131_072,  # open weights gpt-oss-20b / -120b
    # Anthropic (200K; Sonnet 4 / 4.5 reach 1M only with a beta header) -------------------------------------------
    "claude": 200_000,  # any Claude 3 or later not listed below
    "claude-2": 100_000,
    "claude-instant": 100_000,
    "claude-3-haiku": 200_000,
    "claude-3-sonnet": 200_000,
    "claude-3-opus": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-5-haiku": 200_000,
    "claude-3.5-sonnet": 200_000,
    "claude-3.5-haiku": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-3.7-sonnet": 200_000,
    "claude-sonnet-4": 200_000,  # also claude-sonnet-4-5, -4-6 (4.6: 1M listed by some sources; uncertain)
    "claude-opus-4": 200_000,  # also claude-opus-4-1, -4-5, -4-6
    "claude-haiku-4-5": 200_000,
    # Google Gemini ---------------------------------------------------------------------------------------------
    "gemini-pro": 32_760,
    "gemini-1.0-pro": 32_760,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,  # and -8b
    "gemini-2.0-flash": 1_048_576,  # and -lite
    "gemini-2.0-pro": 2_097_152,  # uncertain (experimental only)
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,  # and -lite
    "gemini-3": 1_048_576,  # gemini-3-pro-preview; uncertain for later variants
    # Amazon Nova (the events spec's default summarizer) ----------------------------------------------------------
    "nova-micro": 128_000,
    "nova-lite": 300_000,
    "nova-pro": 300_000,
    "nova-premier": 1_000_000,
    # Meta Llama (Hugging Face, Ollama and Bedrock spellings) ------------------------------------------------------
    "llama3": 8 * _K,
    "llama-3": 8 * _K,
    "meta-llama-3": 8 * _K,
    "llama3.1": 128 * _K,
    "llama-3.1": 128 * _K,
    "meta-llama-3.1": 128 * _K,
    "llama3-1": 128 * _K,
    "llama3.2": 128 * _K,
    "llama-3.2": 128 * _K,
    "llama3-2": 128 * _K,
    "llama3.3": 128 * _K,
    "llama-3.3": 128 * _K,
    "llama3-3": 128 * _K,
    # Qwen (native windows; YaRN extends to 128K when the server enables it) --------------------------------------
    "qwen2.5": 32 * _K,
    "qwen2.5-coder": 32 * _K,
    "qwen3": 32 * _K,  # 2507 updates have 256K: pass an override
    # Mistral ---------------------------------------------------------------------------------------------------
    "mistral": 32 * _K,  # Ollama's mistral = Mistral 7B v0.3
    "mistral-7b": 32 * _K,
    "open-mistral-7b": 32 * _K,
    "mistral-nemo": 128 * _K,
    "open-mistral-nemo": 128 * _K,
    "mistral-small": 32 * _K,  # Small 3 (2501); 3.1 and 3.2 below
    "mistral-small-3.1": 128 * _K,
    "mistral-small3.1": 128 * _K,
    "mistral-small-3.2": 128 * _K,
    "mistral-small3.2": 128 * _K,
    "mistral-large": 128 * _K,  # Large 2 (2407, 2411); Large 3 has 256K: pass an override
    "mixtral": 32 * _K,
    "mixtral-8x7b": 32 * _K,
    "open-mixtral-8x7b": 32 * _K,
    "mixtral-8x22b": 64 * _K,
    "mixtral:8x22b": 64 * _K,
    "open-mixtral-8x22b": 64 * _K,
    "codestral": 32 * _K,  # the 22B open weights; the hosted codestral-latest has 256K
    # DeepSeek --------------------------------------------------------------------------------------------------
    "deepseek-v3": 128 * _K,
    "deepseek-r1": 128 * _K,  # and the distilled Qwen / Llama models Ollama serves as deepseek-r1:<size>
    "deepseek-chat": 128 * _K,
    "deepseek-reasoner": 128 * _K,
    # Google Gemma ----------------------------------------------------------------------------------------------
    "gemma2": 8 * _K,
    "gemma-2": 8 * _K,
    "gemma3": 128 * _K,
    "gemma-3": 128 * _K,
    "gemma3:1b": 32 * _K,
    "gemma-3-1b": 32 * _K,
    # Microsoft Phi ---------------------------------------------------------------------------------------------
    "phi3": 4 * _K,  # Ollama phi3 = phi-3-mini-4k
    "phi-3": 4 * _K,
    "phi-3-mini-4k": 4 * _K,
    "phi-3-medium-4k": 4 * _K,
    "phi-3-small-8k": 8 * _K,
    "phi-3-mini-128k": 128 * _K,
    "phi-3-small-128k": 128 * _K,
    "phi-3-medium-128k": 128 * _K,
    "phi3.5": 128 * _K,
    "phi-3.5": 128 * _K,
    "phi4": 16 * _K,
    "phi-4": 16 * _K,
    "phi4-mini": 128 * _K,
    "phi-4-mini": 128 * _K,
}

CONTEXT_WINDOWS: Mapping[str, int] = MappingProxyType(_WINDOWS)
"""The built-in table (read-only): lower-case model name or name prefix -> tokens."""

_SEPARATORS = frozenset("-:.@_")
_BEDROCK_PREFIX = re.compile(
    r"^(?:(?:us|eu|apac|global|us-gov|ca|jp|au)\.)?"
    r"(?:anthropic|amazon|meta|mistral|deepseek|cohere|ai21|openai|qwen|google|writer)\."
)


def normalize_model_id(model_id: str) -> list[str]:
    """The spellings of `model_id` to look up, most specific first: as given (lower-cased, trimmed), without the
    path up to the last ``/``, without a Bedrock region/vendor prefix."""
    names: list[str] = []
    name = model_id.strip().lower()
    for candidate in (name, name.rsplit("/", 1)[-1]):
        for c in (candidate, _BEDROCK_PREFIX.sub("", candidate)):
            if c and c not in names:
                names.append(c)
    return names


def _prefix_match(name: str, table: Mapping[str, int]) -> str | None:
    best: str | None = None
    for key in table:
        if (
            name.startswith(key)
            and (len(name) == len(key) or name[len(key)] in _SEPARATORS or key[-1] in _SEPARATORS)
            and (best is None or len(key) > len(best))
        ):
            best = key
    return best


def context_window(
    model_id: str, overrides: Mapping[str, int] | None = None, *, table: Mapping[str, int] = CONTEXT_WINDOWS
) -> int:
    """The context window of `model_id` in tokens (see the module docstring for the lookup order).

    `overrides` adds to or replaces entries of `table` (names are matched case-insensitively, prefixes apply as
    for the table); pass `table` to use an entirely different table. Raises `UnknownModelError` when nothing
    matches, naming the closest known names.
    """
    merged: dict[str, int] = {k.lower(): v for k, v in table.items()}
    for k, v in (overrides or {}).items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f"context window for {k!r} must be a positive integer, got {v!r}")
        merged[k.strip().lower()] = v
    found = _lookup(model_id, merged)
    if found is not None:
        return found
    names = normalize_model_id(model_id)
    close: list[str] = []
    for name in names:
        for c in difflib.get_close_matches(name, list(merged), n=5, cutoff=0.6):
            if c not in close:
                close.append(c)
    raise UnknownModelError(model_id, tuple(close[:5]))


def _lookup(model_id: str, merged: Mapping[str, int]) -> int | None:
    """`model_id`'s window in `merged` (lower-case names): an exact name, else the longest prefix; None when none."""
    names = normalize_model_id(model_id)
    for name in names:
        if name in merged:
            return merged[name]
    for name in names:
        key = _prefix_match(name, merged)
        if key is not None:
            return merged[key]
    return None


_DEFAULT = {k.lower(): v for k, v in CONTEXT_WINDOWS.items()}


@functools.lru_cache(maxsize=512)
def known_window(model_id: str) -> int | None:
    """`context_window` of `model_id` in the default table, or None where it is unknown, remembered: what the proxy
    asks of every request's model. It never looks for the closest names, which only an error shows: for a model
    the table does not know (a local one behind the proxy), that search cost 0.14 ms a request, as much as the rest
    of what chainsum adds to a request with nothing to compact."""
    return _lookup(model_id, _DEFAULT)
