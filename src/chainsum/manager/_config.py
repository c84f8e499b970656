"""`ManagerConfig`: every threshold of the context manager, and how to read them from the environment.

The thresholds come from two specs. ``specs/ratio-trigger-summary-chain.md`` gives the trigger (token ratio 0.8,
hysteresis reset 0.7, emergency at 1.0, cooldown 4 messages, minimum 12 messages, depth cap 3, optional forced
refresh, fail open, summarizer input capped at 8K tokens). ``specs/summarizing-manager-events.md`` gives the
environment variables (``SUMMARIZATION_ENABLED``, ``SUMMARIZATION_MODEL_ID``, ``SUMMARIZATION_SUMMARY_RATIO`` 0.1
to 0.8, ``SUMMARIZATION_PRESERVE_RECENT``). Every other threshold gets one variable named mechanically
``SUMMARIZATION_`` + the field name in upper case, so a user never has to guess; `ENV_VARS` lists them all (the
docs site renders it, docs/hooks.py) and drives the parsing, so the table and the parser cannot drift apart.

Where the specs disagree, the choice is written down here:

- ``preserve_recent`` defaults to 10 (the environment table of the events spec); the ratio spec's example says 6.
- ``model_id`` defaults to None, not the events spec's ``us.amazon.nova-micro-v1:0``: chainsum works without a
  model (the extractive summarizer), and a Bedrock id would be wrong for most users.
- An empty variable (``SUMMARIZATION_MODEL_ID=``) counts as unset, as in most deployment tools.

A value that does not parse or lies outside its range raises `ConfigError` naming the variable, the value and
what is allowed: a misconfigured service should fail at start, not summarize with a nonsense ratio.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal, TypeAlias

from ..errors import ChainsumError
from ..strategies import STRATEGIES

__all__ = [
    "BOOL_FALSE",
    "BOOL_TRUE",
    "ENV_PREFIX",
    "ENV_VARS",
    "STRATEGY_NAMES",
    "ConfigError",
    "EnvVar",
    "ManagerConfig",
    "Range",
    "parse_bool",
    "read_dotenv",
]

logger = logging.getLogger(__name__)

ENV_PREFIX = "SUMMARIZATION_"
BOOL_TRUE = frozenset({"true", "1", "yes", "on"})
BOOL_FALSE = frozenset({"false", "0", "no", "off"})
STRATEGY_NAMES: tuple[str, ...] = tuple(STRATEGIES)
"""The strategies `chainsum.strategies` provides (its `STRATEGIES` table: the names of ``--strategy``)."""

ValueType: TypeAlias = Literal["bool", "int", "float", "str"]


class ConfigError(ChainsumError, ValueError):
    """A configuration value that does not parse or lies outside its range.

    `name` is the environment variable when the value came from one (else the `ManagerConfig` field), `value`
    the offending value as given, `allowed` what would have been accepted.
    """

    def __init__(self, name: str, value: object, allowed: str, *, detail: str = "") -> None:
        self.name = name
        self.value = value
        self.allowed = allowed
        self.detail = detail
        why = f" ({detail})" if detail else ""
        super().__init__(f"{name}={value!r} is not valid{why}; allowed: {allowed}")


@dataclass(frozen=True, slots=True)
class Range:
    """An interval; either end may be open (exclusive) or absent."""

    min: float | None = None
    max: float | None = None
    min_inclusive: bool = True
    max_inclusive: bool = True

    def contains(self, value: float) -> bool:
        if self.min is not None and (value < self.min or (value == self.min and not self.min_inclusive)):
            return False
        return not (self.max is not None and (value > self.max or (value == self.max and not self.max_inclusive)))

    def __str__(self) -> str:
        lo = None if self.min is None else f"{'>=' if self.min_inclusive else '>'} {_num(self.min)}"
        hi = None if self.max is None else f"{'<=' if self.max_inclusive else '<'} {_num(self.max)}"
        if self.min is not None and self.max is not None and self.min_inclusive and self.max_inclusive:
            return f"{_num(self.min)} to {_num(self.max)}"
        return " and ".join(x for x in (lo, hi) if x) or "any"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvVar:
    """One environment variable: the row the configuration page renders and the rule `ManagerConfig.from_env`
    applies."""

    name: str
    field: str
    """The `ManagerConfig` field it sets."""
    type: ValueType
    default: str
    """The default as text, the way it is written in a ``.env`` file (empty: unset / None)."""
    range: Range | None = None
    choices: tuple[str, ...] = ()
    optional: bool = False
    """True when the field may be None (the variable unset or empty)."""
    description: str

    @property
    def allowed(self) -> str:
        """What the variable accepts, in words (the configuration page's range column and `ConfigError.allowed`)."""
        if self.type == "bool":
            return "true/false, 1/0, yes/no, on/off"
        if self.choices:
            return ", ".join(self.choices)
        kind = {"int": "an integer", "float": "a number", "str": "any text"}[self.type]
        return kind if self.range is None else f"{kind}, {self.range}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ManagerConfig:
    """Every knob of the context manager. Frozen: derive variants with `dataclasses.replace`.

    Construction checks each range (and that ``reset_token_ratio < trigger_token_ratio <= emergency_token_ratio``)
    and raises `ConfigError` naming the field.
    """

    enabled: bool = True
    """Master switch: when False the manager passes histories through untouched."""
    model_id: str | None = None
    """The summarizer model (a cheaper one than the chat model is the point): ``PROVIDER:MODEL`` (``openai:``,
    ``anthropic:``, ``litellm:``, ``bedrock:``, ``gemini:``), a Bedrock model id (``us.amazon.nova-micro-v1:0``) or
    ``gemini-...`` name with no prefix, or a bare name for any OpenAI-compatible endpoint; ``extractive`` or None:
    the embedded summarizer. Never used to look up the chat model's window."""
    model_preference: str | None = None
    """Summarizers to try in order, comma-separated (the same forms as `model_id`); overrides `model_id`."""
    base_url: str | None = None
    """Endpoint of the LLM summarizers (vLLM, Ollama, a gateway); None: each provider's default."""
    summary_ratio: float = 0.3
    """Share of the messages summarized at once (0.1 to 0.8): ``ratio`` summarizes that share of the history;
    ``auto`` makes each new summary cover at least that share of the messages not yet summarized (so summaries come
    less often than "just enough" would); a forced refresh aims that far below the current size."""
    preserve_recent: int = 10
    """Most recent messages always kept verbatim, under every strategy. Over the context window this protection
    goes (the request would be refused), and the current turn alone is kept."""
    trigger_token_ratio: float = 0.8
    """Summarize when estimated tokens / context window reaches this."""
    reset_token_ratio: float = 0.7
    """Hysteresis: after a summarization, no new one until usage fell below this (or enough messages came). It is
    also how far a compaction goes (its budget, less the recall room)."""
    cache_aware: bool = True
    """Choose the reset ratio for the session's cost with prompt caching (`chainsum.manager._depth`: deeper, rarer
    compactions), at most `reset_token_ratio`, the trigger kept; the newest `preserve_recent` messages keep the room
    the configured reset gives them. False: the configured ratios as they are."""
    cached_price_ratio: float = 0.1
    """The provider's price of a cached input token over a fresh one (the cost model's ``c``)."""
    summarizer_price_ratio: float | None = None
    """What summarizing one token of history costs, in fresh input tokens of the chat model (the cost model's
    ``s``). None: 0 when the first summarizer is the extractive one, 1.5 otherwise."""
    emergency_token_ratio: float = 1.0
    """At or above this ratio the manager summarizes ignoring the cooldown: the request would overflow."""
    cooldown_messages: int = 4
    """New messages needed after a summarization before the trigger is checked again."""
    min_messages: int = 12
    """Never summarize a history shorter than this."""
    max_summary_chain_depth: int = 3
    """Deepest summary of summaries: blocks are folded into a deeper summary only up to this depth; past it the
    oldest summaries leave the context for the archive (where recall finds them). It bounds how deeply summaries
    nest, never how often a session is summarized."""
    force_refresh_after_messages: int | None = None
    """Re-summarize after this many new messages even below the trigger, under every strategy; None: never."""
    abort_on_failure: bool = False
    """False (fail open): a failed summarization keeps the original history. True: the error is raised, the history
    untouched, whenever every summarizer failed on some span, even where the model-free path could have compacted
    around it (what the frameworks' adapters use to raise as their frameworks do)."""
    summarizer_input_cap_tokens: int = 8000
    """Largest transcript sent to the summarizer in one call; longer spans are chunked."""
    model_tokens_per_compaction: int = 0
    """Opt-in bound on what the model summarizers read in one compaction (transcript tokens); 0, the default: none,
    a configured model reads every span it replaces (chunked at `summarizer_input_cap_tokens`, then consolidated).
    Past the bound a call goes to the extractive summarizer (last among the configured ones), which reads all of
    it; the log says so at WARNING and the event and record carry it (`SummarizationEvent.model_coverage`,
    `model_free`). A cap on a cheap summarizer model's cost, at the price of the model not seeing the rest: until
    issue 32 it was on by default (3,000), and a configured model read 5.7 % of what a 500-message agent session's
    compactions summarized."""
    strategy: str = "auto"
    """The planner to use, one of `STRATEGY_NAMES`."""
    summarizer_timeout_seconds: float = 60.0
    """Longest one summarizer call may take; then it counts as failed and the next summarizer (or the model-free
    path) follows."""
    summary_role: str = "user"
    """Role of the message summaries go into: ``user`` (a framed record with no authority, the default) or
    ``system`` (the events spec's placement: text that came from tools and users then reads as system text). The
    Anthropic, Gemini and Bedrock formats keep system text in a request field of their own, which the manager never
    rewrites, so with them the record is always a user-role message."""
    recall_token_ratio: float = 0.1
    """Share of the window for the originals recalled from the archive for each new user message (0: no recall):
    each message's block has this room of its own (at least 120 tokens: a block's frame and one short excerpt),
    below the trigger and within the window."""
    cache_breakpoints: bool = True
    """On Anthropic, once a session is compacted, add prompt-cache breakpoints (``cache_control``) after the summary
    record and, when the client marked none of its messages, on the request's last block; never more than
    Anthropic's 4 a request, the client's own kept (`chainsum.manager._breakpoints`). False: the client's marks
    only."""
    lock_wait_seconds: float = 5.0
    """How long a request over the window waits for another process compacting the same session before acting
    itself (its write is still a compare-and-set, so nothing is overwritten)."""
    context_window: int | None = None
    """Overrides the model's context window from `chainsum.manager.context_window` (vLLM ``--max-model-len``,
    Ollama ``num_ctx``, or a deliberately smaller budget)."""

    def __post_init__(self) -> None:
        for var in ENV_VARS:
            _check(var, getattr(self, var.field), var.field)
        if not self.reset_token_ratio < self.trigger_token_ratio:
            raise ConfigError(
                "reset_token_ratio",
                self.reset_token_ratio,
                f"less than trigger_token_ratio ({self.trigger_token_ratio})",
            )
        if not self.trigger_token_ratio <= self.emergency_token_ratio:
            raise ConfigError(
                "emergency_token_ratio",
                self.emergency_token_ratio,
                f"at least trigger_token_ratio ({self.trigger_token_ratio})",
            )

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, dotenv_path: str | os.PathLike[str] | None = ".env"
    ) -> ManagerConfig:
        """The configuration from ``SUMMARIZATION_*`` variables: `environ` (default `os.environ`) first, then the
        ``.env`` file at `dotenv_path` (None: no file; a missing file is fine), then the defaults.

        Raises `ConfigError` naming the variable for a value that does not parse or is out of range.
        """
        env = os.environ if environ is None else environ
        dotenv = read_dotenv(dotenv_path) if dotenv_path is not None else {}
        values: dict[str, object] = {}
        for var in ENV_VARS:
            raw = env.get(var.name)
            if raw is None or not raw.strip():
                raw = dotenv.get(var.name)
            if raw is None or not raw.strip():
                continue
            values[var.field] = _parse(var, raw)
        try:
            return cls(**values)  # pyright: ignore[reportArgumentType]
        except ConfigError as e:  # a cross-field check: say which variable to fix
            var = _BY_FIELD.get(e.name)
            if var is None:
                raise
            allowed = e.allowed
            for other in ENV_VARS:
                allowed = allowed.replace(other.field, other.name)
            raise ConfigError(var.name, e.value, allowed, detail=e.detail) from None

    def to_env(self) -> dict[str, str]:
        """The ``SUMMARIZATION_*`` variables that give this configuration (None fields are left out)."""
        out: dict[str, str] = {}
        for var in ENV_VARS:
            value = getattr(self, var.field)
            if value is None:
                continue
            out[var.name] = ("true" if value else "false") if isinstance(value, bool) else str(value)
        return out


def parse_bool(text: str) -> bool | None:
    """True/False for the accepted spellings (case-insensitive, surrounding spaces ignored); None otherwise."""
    t = text.strip().lower()
    if t in BOOL_TRUE:
        return True
    if t in BOOL_FALSE:
        return False
    return None


def _parse(var: EnvVar, raw: str) -> object:
    text = raw.strip()
    value: object
    if var.type == "bool":
        value = parse_bool(text)
        if value is None:
            raise ConfigError(var.name, raw, var.allowed, detail="not a boolean")
    elif var.type == "int":
        try:
            value = int(text)
        except ValueError:
            raise ConfigError(var.name, raw, var.allowed, detail="not an integer") from None
    elif var.type == "float":
        try:
            value = float(text)
        except ValueError:
            raise ConfigError(var.name, raw, var.allowed, detail="not a number") from None
    else:
        value = text
    try:
        _check(var, value, var.name)
    except ConfigError as e:  # report the text as written, not the parsed value
        raise ConfigError(var.name, raw, e.allowed, detail=e.detail) from None
    return value


def _check(var: EnvVar, value: object, name: str) -> None:
    """Raise `ConfigError` under `name` unless `value` has `var`'s type and lies in its range."""
    if value is None:
        if not var.optional:
            raise ConfigError(name, value, var.allowed, detail="required")
        return
    if var.type == "bool":
        ok = isinstance(value, bool)
    elif var.type == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif var.type == "float":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    else:
        ok = isinstance(value, str)
    if not ok:
        finite = not isinstance(value, float) or math.isfinite(value)
        raise ConfigError(name, value, var.allowed, detail=f"expected {var.type}" if finite else "not finite")
    if var.range is not None and isinstance(value, (int, float)) and not var.range.contains(value):
        raise ConfigError(name, value, var.allowed, detail="out of range")
    if var.choices and value not in var.choices:
        raise ConfigError(name, value, var.allowed, detail="unknown name")


# .env ------------------------------------------------------------------------------------------------------------
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}


def read_dotenv(path: str | os.PathLike[str]) -> dict[str, str]:
    """The ``KEY=VALUE`` pairs of a ``.env`` file; {} when it does not exist.

    Accepted: blank lines, ``#`` comments (whole line, or after an unquoted value following a space), an
    ``export `` prefix, values in single quotes (literal) or double quotes (``\\n``, ``\\t``, ``\\"``, ``\\\\``
    escapes). A line that is none of these is skipped with a warning rather than failing: the file is often shared
    with other tools, and only the ``SUMMARIZATION_*`` keys matter here. Later lines win.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    out: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        parsed = _dotenv_line(line)
        if parsed is None:
            if line.strip() and not line.strip().startswith("#"):
                logger.warning("path=<%s>, line=<%d> | ignoring malformed .env line", p, lineno)
            continue
        out[parsed[0]] = parsed[1]
    return out


def _dotenv_line(line: str) -> tuple[str, str] | None:
    s = line.strip()
    if not s or s.startswith("#"):
        return None
    if s.startswith("export "):
        s = s[len("export ") :].lstrip()
    key, sep, value = s.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        return None
    value = value.strip()
    if value[:1] in ("'", '"'):
        quote = value[0]
        end = _closing_quote(value, quote)
        if end is None:
            return None
        inner = value[1:end]
        return key, _unescape(inner) if quote == '"' else inner
    comment = value.find(" #")
    if comment >= 0:
        value = value[:comment]
    return key, value.strip()


def _closing_quote(value: str, quote: str) -> int | None:
    i = 1
    while i < len(value):
        c = value[i]
        if c == "\\" and quote == '"':
            i += 2
            continue
        if c == quote:
            return i
        i += 1
    return None


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in _ESCAPES:
            out.append(_ESCAPES[text[i + 1]])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


# the table -------------------------------------------------------------------------------------------------------
def _var(
    field: str,
    type: ValueType,
    default: str,
    description: str,
    *,
    range: Range | None = None,
    choices: tuple[str, ...] = (),
    optional: bool = False,
) -> EnvVar:
    return EnvVar(
        name=ENV_PREFIX + field.upper(),
        field=field,
        type=type,
        default=default,
        range=range,
        choices=choices,
        optional=optional,
        description=description,
    )


ENV_VARS: tuple[EnvVar, ...] = (
    _var("enabled", "bool", "true", "Master switch for summarization."),
    _var(
        "model_id",
        "str",
        "",
        "The summarizer: PROVIDER:MODEL (openai:, anthropic:, litellm:, bedrock:, gemini:), a Bedrock model id "
        "(us.amazon.nova-micro-v1:0) or a gemini-... model as written, or a bare OpenAI-compatible model name; "
        "unset: the extractive summarizer.",
        optional=True,
    ),
    _var(
        "model_preference",
        "str",
        "",
        "Summarizers to try in order, comma-separated (same forms as SUMMARIZATION_MODEL_ID); overrides it.",
        optional=True,
    ),
    _var(
        "base_url",
        "str",
        "",
        "Endpoint of the LLM summarizers (vLLM, Ollama, a gateway; boto3's endpoint_url for Bedrock); unset: the "
        "provider's default.",
        optional=True,
    ),
    _var(
        "summary_ratio",
        "float",
        "0.3",
        "Share of the compressible messages summarized at once.",
        range=Range(0.1, 0.8),
    ),
    _var(
        "preserve_recent",
        "int",
        "10",
        "Most recent messages always kept verbatim.",
        range=Range(2, None),
    ),
    _var(
        "trigger_token_ratio",
        "float",
        "0.8",
        "Summarize when estimated tokens / context window reaches this.",
        range=Range(0, 1, min_inclusive=False),
    ),
    _var(
        "reset_token_ratio",
        "float",
        "0.7",
        "Hysteresis: no new summarization until usage drops below this; must be below the trigger ratio.",
        range=Range(0, 1, max_inclusive=False),
    ),
    _var(
        "cache_aware",
        "bool",
        "true",
        "Choose the reset ratio (at most the one set) for the cost with prompt caching: deeper, rarer compactions.",
    ),
    _var(
        "cached_price_ratio",
        "float",
        "0.1",
        "Price of a cached input token over a fresh one (the cache-aware choice's cost model).",
        range=Range(0, 1),
    ),
    _var(
        "summarizer_price_ratio",
        "float",
        "",
        "Cost of summarizing one token, in fresh input tokens; unset: 0 for the extractive summarizer, 1.5 otherwise.",
        range=Range(0, None),
        optional=True,
    ),
    _var(
        "emergency_token_ratio",
        "float",
        "1.0",
        "At or above this ratio summarize even during the cooldown; at least the trigger ratio.",
        range=Range(0, 2, min_inclusive=False),
    ),
    _var(
        "cooldown_messages",
        "int",
        "4",
        "New messages needed after a summarization before the trigger is checked again.",
        range=Range(0, None),
    ),
    _var("min_messages", "int", "12", "Never summarize a history shorter than this.", range=Range(0, None)),
    _var(
        "max_summary_chain_depth",
        "int",
        "3",
        "Deepest summary of summaries; past it the oldest summaries move to the archive (never stops a session).",
        range=Range(1, None),
    ),
    _var(
        "force_refresh_after_messages",
        "int",
        "",
        "Re-summarize after this many new messages even below the trigger; unset: never.",
        range=Range(1, None),
        optional=True,
    ),
    _var(
        "abort_on_failure",
        "bool",
        "false",
        "Raise when summarization fails; false keeps the original history (fail open).",
    ),
    _var(
        "summarizer_input_cap_tokens",
        "int",
        "8000",
        "Largest transcript sent to the summarizer in one call; longer spans are chunked.",
        range=Range(100, None),
    ),
    _var(
        "model_tokens_per_compaction",
        "int",
        "0",
        "Opt-in bound on transcript tokens the model summarizers read per compaction (0: none); past it, extractive.",
        range=Range(0, None),
    ),
    _var("strategy", "str", "auto", "The compaction strategy.", choices=STRATEGY_NAMES),
    _var(
        "summarizer_timeout_seconds",
        "float",
        "60",
        "Longest one summarizer call may take before the next summarizer (or the model-free path) follows.",
        range=Range(0, None, min_inclusive=False),
    ),
    _var(
        "summary_role",
        "str",
        "user",
        "Role of the summary message: user (a record, no authority) or system (the events spec's placement).",
        choices=("user", "system"),
    ),
    _var(
        "recall_token_ratio",
        "float",
        "0.1",
        "Share of the window for originals recalled from the archive for each new user message; 0 turns recall off.",
        range=Range(0, 0.5),
    ),
    _var(
        "cache_breakpoints",
        "bool",
        "true",
        "Anthropic, once compacted: cache breakpoints after the summary record and (if the client set none) the end.",
    ),
    _var(
        "lock_wait_seconds",
        "float",
        "5",
        "How long a request over the window waits for another process compacting the same session.",
        range=Range(0, None),
    ),
    _var(
        "context_window",
        "int",
        "",
        "Context window in tokens, overriding the model table (vLLM --max-model-len, Ollama num_ctx).",
        range=Range(1, None),
        optional=True,
    ),
)
"""Every ``SUMMARIZATION_*`` variable, in the order the configuration page lists them."""

_BY_FIELD = {v.field: v for v in ENV_VARS}
assert set(_BY_FIELD) == {f.name for f in fields(ManagerConfig)}, "ENV_VARS must cover every ManagerConfig field"
