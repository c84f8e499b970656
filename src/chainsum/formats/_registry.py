"""Format detection, loading and dumping over the format modules: the code behind `chainsum.formats`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any, cast

from ..errors import AmbiguousFormatError, FormatError
from ..messages import Message
from . import (
    anthropic,
    bedrock,
    chainsum_json,
    claude_code,
    gemini,
    langchain,
    openai_chat,
    openai_responses,
    pydantic_ai,
    tau2,
)
from ._base import Conversation, Dropped

__all__ = [
    "DUMPABLE",
    "FORMATS",
    "FORMAT_PROVIDERS",
    "as_messages",
    "detect_format",
    "dump",
    "load",
    "output_target",
    "parse_text",
]

_MODULES: dict[str, ModuleType] = {
    m.NAME: m
    for m in (
        openai_chat,
        openai_responses,
        anthropic,
        gemini,
        bedrock,
        tau2,
        claude_code,
        chainsum_json,
        pydantic_ai,
        langchain,
    )
}
FORMATS: tuple[str, ...] = tuple(_MODULES)
"""Every format that can be loaded, in detection preference order (most common first)."""
DUMPABLE: tuple[str, ...] = tuple(n for n, m in _MODULES.items() if hasattr(m, "dump"))
"""Formats that can be written (Claude Code session logs are read only)."""


FORMAT_PROVIDERS: dict[str, str] = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "claude-code": "anthropic",
    "gemini": "gemini",
    "bedrock": "bedrock",
    "tau2": "openai",
    "chainsum": "openai",
    "pydantic-ai": "openai",
    "langchain": "openai",
}
"""The provider whose rules a conversation in each format must follow (a Claude Code log is Anthropic's)."""
_PROVIDER_FORMATS = {"openai": "openai", "anthropic": "anthropic", "gemini": "gemini", "bedrock": "bedrock"}


def output_target(input_format: str, provider: str | None = None, *, keep_format: bool = False) -> tuple[str, str]:
    """(the provider whose rules apply, the format to write) for a conversation read in `input_format`: the rules of
    `provider` when given (and its format), else the input format's provider and the input format itself when it can
    be written (a read-only Claude Code log is written as Anthropic JSON). With `keep_format` the input format is
    written whenever it can be, even for a given `provider` (``chainsum repair``: the provider's rules, the file's
    own format). The one place the CLI and the service decide it, so that "valid for" and what is written never
    disagree."""
    if provider is not None:
        if keep_format and input_format in DUMPABLE:
            return provider, input_format
        return provider, _PROVIDER_FORMATS.get(provider, "chainsum")
    target = FORMAT_PROVIDERS.get(input_format, "openai")
    return target, input_format if input_format in DUMPABLE else _PROVIDER_FORMATS[target]


_TOO_DEEP = "input nested too deeply to process"
"""The detail of the `FormatError` for a document nested deeper than Python's recursion limit allows."""


def parse_text(text: str | bytes) -> Any:
    """Parse JSON, or JSON Lines (one object per line) when the text is not a single JSON document.

    A UTF-8 byte order mark at the start is skipped (Windows editors write one); a document nested deeper than the
    parser can follow is a `FormatError`, not a `RecursionError`."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise FormatError(f"not UTF-8 text (byte {exc.start})") from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise FormatError("empty input")
    try:
        return json.loads(text)
    except RecursionError:
        raise FormatError(_TOO_DEEP) from None
    except json.JSONDecodeError as first:
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(lines) < 2:
            raise FormatError(f"invalid JSON: {first.msg}", where=f"line {first.lineno} column {first.colno}") from None
        items: list[Any] = []
        for n, line in lines:
            try:
                items.append(json.loads(line))
            except RecursionError:
                raise FormatError(_TOO_DEEP, where=f"line {n}") from None
            except json.JSONDecodeError as exc:
                raise FormatError(
                    f"invalid JSON (tried JSON Lines too): {exc.msg}", where=f"line {n} column {exc.colno}"
                ) from None
        return items


def _module(name: str) -> ModuleType:
    try:
        return _MODULES[name]
    except KeyError:
        raise FormatError(f"unknown format {name!r}; known formats: {', '.join(FORMATS)}") from None


def _same_content(a: Sequence[Message], b: Sequence[Message]) -> bool:
    """Equal ignoring provider extras: two formats that read a document the same way are not a real choice."""

    def strip(m: Message) -> tuple[Any, ...]:
        return (
            m.role,
            m.name,
            tuple((p.kind, getattr(p, "text", None), getattr(p, "id", None)) for p in m.parts),
        )

    return len(a) == len(b) and all(strip(x) == strip(y) for x, y in zip(a, b, strict=True))


def _progress(error: FormatError) -> tuple[int, ...]:
    """How far into the document a loader got before `error`: the indexes in its path, outermost first
    (``messages[3].content[1]`` is further than ``messages[3].role``, which is further than ``messages[2]``); empty
    when it read nothing (the document itself, or a first message that is not even the right kind of value)."""
    first = re.match(r"\w*\[(\d+)\](.*)", error.where)
    if first is None or (first[1] == "0" and not first[2]):
        return ()
    return tuple(int(n) for n in re.findall(r"\[(\d+)\]", error.where))


def _closest(data: Any, names: Sequence[str]) -> str:
    """ "; closest: FORMAT, at WHERE: WHAT" for the format of `names` whose loader reads furthest into `data` before
    it fails (the first in `FORMATS` order on a tie): the same first problem ``--format`` names, so a document that
    is nearly right says what to fix. The list of formats when every loader fails at the document itself."""
    best: FormatError | None = None
    for name in names:
        try:
            _MODULES[name].load(data)
        except FormatError as exc:
            if best is None or _progress(exc) > _progress(best):
                best = exc
        except RecursionError:
            return f"; {_TOO_DEEP}"
    if best is None or not _progress(best):
        return f"; formats: {', '.join(names)}"
    return f"; closest: {best}"


def detect_format(data: Any) -> str:
    """The name of the format of parsed `data`.

    The highest `sniff` score wins. When several formats tie, the document is loaded with each: if they all read
    the same messages (a plain ``[{"role": "user", "content": "hi"}]`` is valid in several), the first in
    `FORMATS` order is taken; otherwise `AmbiguousFormatError` names the candidates.
    """
    scores = {name: cast(int, m.sniff(data)) for name, m in _MODULES.items()}
    best = max(scores.values())
    if best <= 0:
        shape = type(data).__name__
        if isinstance(data, list) and data:
            first = cast(list[Any], data)[0]
            shape += f" of {type(first).__name__}"
            if isinstance(first, dict):
                keys = sorted(cast(dict[str, Any], first))[:6]
                shape += " with keys " + ", ".join(keys)
        raise FormatError(f"no known chat format matches this document ({shape}){_closest(data, FORMATS)}")
    candidates = [name for name, s in scores.items() if s == best]
    if len(candidates) == 1:
        return candidates[0]
    loaded: list[tuple[str, tuple[Message, ...]]] = []
    for name in candidates:
        try:
            loaded.append((name, _MODULES[name].load(data).messages))
        except FormatError:
            continue
    if not loaded:
        raise FormatError(f"no format reads this document{_closest(data, candidates)}")
    if all(_same_content(loaded[0][1], other) for _, other in loaded[1:]):
        return loaded[0][0]
    raise AmbiguousFormatError([name for name, _ in loaded])


def load(data: Any, format: str | None = None) -> Conversation:
    """Read `data` (parsed JSON, or JSON/JSONL text or bytes) in `format`, detected when not given."""
    if isinstance(data, str | bytes):
        data = parse_text(data)
    try:
        name = format or detect_format(data)
        return cast(Conversation, _module(name).load(data))
    except RecursionError:
        raise FormatError(_TOO_DEEP) from None


def as_messages(items: Conversation | Mapping[str, Any] | Sequence[Any] | str | bytes) -> Sequence[Message]:
    """Canonical messages from what a Python caller may hand the library: `Message` objects (returned as they
    are, the same sequence), or a wire history in any format (a list of message dicts, a whole request document,
    its JSON text or a loaded `Conversation`), read with `load` and its format detection.

    Raises `FormatError` naming the index and field of the first thing that is neither: a dict among `Message`
    objects, or a wire message that no format reads (the closest format's first problem).
    """
    if isinstance(items, Conversation):
        return items.messages
    if isinstance(items, str | bytes | Mapping):
        return load(items).messages
    kinds = [isinstance(m, Message) for m in items]
    if all(kinds):
        return cast(Sequence[Message], items)
    if any(kinds):
        i = kinds.index(False)
        raise FormatError(
            f"expected a chainsum Message like the others, got {type(items[i]).__name__} (pass Messages only, or "
            "wire message dicts only)",
            where=f"[{i}]",
        )
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise FormatError(
                f"expected a message dict or a chainsum Message, got {type(item).__name__}", where=f"[{i}]"
            )
    return load(list(items)).messages


def dump(
    conversation: Conversation | Sequence[Message],
    to: str | None = None,
    dropped: list[Dropped] | None = None,
) -> Any:
    """Write messages in format `to` (default: the conversation's own format).

    The envelope of a `Conversation` is reused only when writing back to its own format. Anything the target
    cannot express is appended to `dropped` when given.
    """
    if isinstance(conversation, Conversation):
        messages: Sequence[Message] = conversation.messages
        target = to or conversation.format
        envelope = conversation.envelope if target == conversation.format else None
    else:
        messages, envelope = conversation, None
        if to is None:
            raise FormatError("dump of a plain message list needs a target format (to=...)")
        target = to
    module = _module(target)
    if not hasattr(module, "dump"):
        raise FormatError(f"format {target!r} can be read but not written; writable: {', '.join(DUMPABLE)}")
    return module.dump(messages, envelope, dropped)
