"""`Bodies`: a chat request's JSON body, parsed against the same client's previous body.

Why: an agent client resends its whole conversation on every request, and its tool definitions and system prompt
with it (Claude Code: 115-350 KB a request, 80 KB of them tools). Parsing all of it builds every string, dict and
list again, the single largest part of what chainsum adds to a request with nothing to compact (a bare
pass-through proxy parses nothing); and every object it builds is compared again downstream (the tool definitions
against the last ones, the history against what the manager read last). What changed since the previous request
is a step or two at the end of the history, and a marker moved: the rest is the same bytes.

How: the previous body of the same client (route, credentials, session header) is kept with its *layout*: where
each large top-level value (``tools``, ``system``, ``instructions``, ...) and each history item lie in its bytes,
found by writing the parsed body back in the client's own JSON style (compact or ``json.dumps``' spacing, raw or
escaped non-ASCII) and checking each piece byte for byte; a body written otherwise has no layout and is simply
parsed. A new body that holds those same byte runs where they were (or shifted by its growth) is parsed with
each run replaced by a short sentinel string, and the previous objects are put back where the sentinels landed:
the unchanged tools, system prompt and all but the newest history items are then the very objects of the
previous request, so that comparing them downstream is an identity check.

Why it is exact: a run replaced is the complete JSON text of a value (or of consecutive history items), whose
parse is the object kept (it was checked equal to that object's own JSON). A sentinel is a string holding a random
nonce of this process that no client knows; only when each one parsed exactly where its run must be (the value of
that top-level key, the first history item) does the result stand, and then the body's parse is the one of the
reduced body with each sentinel replaced by the run's objects, as JSON's grammar puts a value's text alone at its
place. Anything else (a sentinel elsewhere, a duplicate key, a reduced body that does not parse) parses the whole
body as before. `tests/server/test_body.py` checks the result equal to a fresh parse on generated bodies.
"""

from __future__ import annotations

import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import orjson

from ._errors import ProxyError

__all__ = ["Bodies", "parse_body"]

_MIN_BODY = 16_384
"""Smaller bodies are parsed whole: parsing them costs less than laying them out."""
_MIN_VALUE = 1_024
"""Top-level values of at least this many bytes are kept to be reused (tools, a system prompt, instructions)."""
_SLOTS = 256
"""Previous bodies kept (one per client: route, credentials, session header), the least recently used leaving."""
_MAX_BYTES = 32 * 2**20
"""Bytes of previous bodies kept in all, the least recently used leaving first: a body's layout holds about 2.3
times its size (its bytes and its parse), and 256 Claude Code bodies of 264 KB held 154 MiB."""
_NONCE = secrets.token_hex(16)
"""What makes a sentinel one no client can write (it is never sent anywhere)."""


def parse_body(raw: bytes) -> dict[str, Any]:
    """The body as JSON: orjson (a few times faster on a long history than the standard library), else the
    standard library, which also reads what orjson refuses and an upstream may take (integers beyond 64 bits,
    ``NaN``). A body that is not a JSON object is the client's error (400)."""
    return _parse(raw)[0]


def _parse(raw: bytes) -> tuple[dict[str, Any], bool]:
    """`parse_body`, and whether orjson read it (a body only the standard library reads gets no layout)."""
    exact = True
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc).lower():
            raise ProxyError(400, "request body is nested too deeply") from None
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            raise ProxyError(400, f"request body is not valid JSON: {exc}") from None
        exact = False
    if not isinstance(body, dict):
        raise ProxyError(400, f"request body must be a JSON object, got {type(body).__name__}")
    return cast(dict[str, Any], body), exact


@dataclass(frozen=True, slots=True)
class _Style:
    """How a client writes JSON: the text of a value, and the separators between items and after a key."""

    dump: Callable[[object], bytes]
    item_sep: bytes
    key_sep: bytes


def _std(*, ascii_only: bool, compact: bool) -> Callable[[object], bytes]:
    separators = (",", ":") if compact else (", ", ": ")

    def dump(value: object) -> bytes:
        return json.dumps(value, ensure_ascii=ascii_only, separators=separators).encode()

    return dump


_COMPACT = (
    _Style(orjson.dumps, b",", b":"),  # JavaScript's JSON.stringify (Claude Code), serde_json (Codex), orjson
    _Style(_std(ascii_only=False, compact=True), b",", b":"),  # httpx's json=
    _Style(_std(ascii_only=True, compact=True), b",", b":"),
)
_SPACED = (
    _Style(_std(ascii_only=True, compact=False), b", ", b": "),  # json.dumps' defaults
    _Style(_std(ascii_only=False, compact=False), b", ", b": "),
)


@dataclass(frozen=True, slots=True)
class _Layout:
    """A parsed body and where its reusable parts lie in its bytes."""

    raw: bytes
    body: dict[str, Any]
    style: _Style
    values: dict[str, tuple[int, int]]
    """Top-level key -> (start, end) of its value's text, for the large ones."""
    history: str
    first: int
    """Where the history's first item starts (-1: the body has no history list)."""
    ends: list[int]
    """Where each history item's text ends, for the leading items whose text is known."""


def _layout(raw: bytes, body: dict[str, Any], history: str) -> _Layout | None:
    """`body`'s layout in `raw`, in the first style whose writing of it is `raw` byte for byte; None when none is."""
    if not body or raw[:1] != b"{":
        return None
    first_key = orjson.dumps(next(iter(body)))
    spaced = raw.startswith(b": ", 1 + len(first_key))
    for style in _SPACED if spaced else _COMPACT:
        found = _walk(raw, body, history, style)
        if found is not None:
            return found
    return None


def _walk(raw: bytes, body: dict[str, Any], history: str, style: _Style) -> _Layout | None:
    dump, item_sep, key_sep = style.dump, style.item_sep, style.key_sep
    pos = 1
    values: dict[str, tuple[int, int]] = {}
    first, ends = -1, list[int]()
    for index, (key, value) in enumerate(body.items()):
        if index and not raw.startswith(item_sep, pos):
            return None
        pos += len(item_sep) if index else 0
        text = dump(key) + key_sep
        if not raw.startswith(text, pos):
            return None
        pos += len(text)
        items = cast(list[Any], value) if isinstance(value, list) else None
        if key == history and items is not None and raw.startswith(b"[", pos):
            first = pos = pos + 1
            for k, item in enumerate(items):
                text = item_sep + dump(item) if k else dump(item)
                if not raw.startswith(text, pos):
                    return None
                pos += len(text)
                ends.append(pos)
            if not raw.startswith(b"]", pos):
                return None
            pos += 1
            continue
        text = dump(cast(object, value))
        if not raw.startswith(text, pos):
            return None
        if len(text) >= _MIN_VALUE:
            values[key] = (pos, pos + len(text))
        pos += len(text)
    if pos != len(raw) - 1 or not raw.endswith(b"}") or not ends:  # no history items: nothing to reuse next time
        return None
    return _Layout(raw, body, style, values, history, first, ends)


def _sentinel(index: int) -> tuple[bytes, str]:
    """Sentinel `index`: a JSON string no client writes (its text, and the string it parses to)."""
    return f'"\\u0000chainsum:{_NONCE}:{index}"'.encode(), f"\x00chainsum:{_NONCE}:{index}"


_SENTINELS = [_sentinel(i) for i in range(64)]


def _at(raw: bytes, run: memoryview, guesses: tuple[int, int]) -> int | None:
    """Where `raw` holds `run`, among the places it is likely to be (where it was, or shifted by the body's growth)."""
    for at in guesses:
        if at >= 0 and raw.startswith(run, at):
            return at
    return None


def _history_run(raw: bytes, last: _Layout, shift: int) -> tuple[int, int] | None:
    """How many of `last`'s history items `raw` holds unchanged at the start of its history, all of them or all but
    the newest (a client moves its ``cache_control`` marker off the newest), and where they start. The newest
    item's bytes are compared first, alone: the run of all of them compared in vain would read the whole history
    up to its last item (Claude Code's case, every request)."""
    old = memoryview(last.raw)
    n = len(last.ends)
    newest = last.ends[n - 2] if n > 1 else last.first  # where the newest item's text (with its separator) starts
    for start in dict.fromkeys((last.first, last.first + shift)):
        if start < 0:
            continue
        kept = n if raw.startswith(old[newest : last.ends[n - 1]], start + newest - last.first) else n - 1
        if kept and raw.startswith(old[last.first : last.ends[kept - 1]], start):
            return kept, start
    return None


def _reuse(raw: bytes, last: _Layout) -> tuple[dict[str, Any], _Layout] | None:
    """The parse of `raw` with the byte runs it shares with `last` taken as `last`'s objects, and its layout; None
    when it shares too little or a check fails (then it is parsed whole)."""
    if not last.ends or len(last.values) >= len(_SENTINELS):
        return None
    shift = len(raw) - len(last.raw)
    old = memoryview(last.raw)
    runs: list[tuple[int, int, int, str]] = []  # (start, end, sentinel, key; the history's is "")
    for index, (key, (start, end)) in enumerate(last.values.items(), start=1):
        at = _at(raw, old[start:end], (start, start + shift))
        if at is None:
            return None
        runs.append((at, at + end - start, index, key))
    found = _history_run(raw, last, shift)
    if found is None:
        return None
    kept, first = found
    runs.append((first, first + last.ends[kept - 1] - last.first, 0, ""))
    runs.sort()
    pieces: list[bytes] = []
    pos = 0
    for start, end, index, _ in runs:
        if start < pos:
            return None
        pieces += (raw[pos:start], _SENTINELS[index][0])
        pos = end
    pieces.append(raw[pos:])
    try:
        reduced = orjson.loads(b"".join(pieces))
    except orjson.JSONDecodeError:
        return None
    if not isinstance(reduced, dict):
        return None
    body = cast(dict[str, Any], reduced)
    items = body.get(last.history)
    if not isinstance(items, list) or not items or not _is(cast(list[Any], items)[0], 0):
        return None
    if not all(_is(body.get(key), index) for _, _, index, key in runs if key):
        return None
    values: dict[str, tuple[int, int]] = {}
    for start, end, _, key in runs:
        if key:
            body[key] = last.body[key]
            values[key] = (start, end)
    new = cast(list[Any], items)[1:]
    body[last.history] = cast(list[Any], last.body[last.history])[:kept] + new
    ends = [end - last.first + first for end in last.ends[:kept]]
    pos = ends[-1]
    dump, item_sep = last.style.dump, last.style.item_sep
    for item in new:  # the new items' texts, where they are written as the rest was
        text = item_sep + dump(item)
        if not raw.startswith(text, pos):
            break
        pos += len(text)
        ends.append(pos)
    return body, _Layout(raw, body, last.style, values, last.history, first, ends)


def _is(value: object, index: int) -> bool:
    """Whether `value` is what sentinel `index` parses to."""
    return type(value) is str and value == _SENTINELS[index][1]


class Bodies:
    """The previous body of each recent client, and the parse of a new body against it (see the module docstring).
    One per app; used on the event loop only. A client's body is kept until `idle_s` pass without a request of
    that client (the server's session idle time: its session leaves memory then too) or `slots` newer clients
    push it out."""

    def __init__(
        self,
        slots: int = _SLOTS,
        min_body: int = _MIN_BODY,
        idle_s: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
        max_bytes: int = _MAX_BYTES,
    ) -> None:
        self._last: OrderedDict[tuple[str, ...], tuple[float, _Layout]] = OrderedDict()
        """Each client's last body's layout and when it came, the least recently used first."""
        self._slots = slots
        self._max_bytes = max_bytes
        self._bytes = 0
        """Bytes of the bodies in `_last`."""
        self._min_body = min_body
        """Bodies smaller than this are parsed whole and not laid out (tests lay out small ones)."""
        self._idle_s = idle_s
        self._clock = clock
        self.reused = 0
        """Bodies parsed against a previous one (the rest were parsed whole)."""

    def __len__(self) -> int:
        return len(self._last)

    def parse(self, raw: bytes, client: tuple[str, ...], history: str) -> dict[str, Any]:
        """`parse_body(raw)`, the same value, from less work when `client`'s previous body shares most of it.
        `client` names whose body it is (the next body of the same client is parsed against this one); `history`
        is the body field holding the history."""
        if len(raw) < self._min_body:
            return parse_body(raw)
        now = self._clock()
        while self._last and next(iter(self._last.values()))[0] < now - self._idle_s:
            self._drop(next(iter(self._last)))
        kept = self._last.get(client)
        if kept is not None and kept[1].history == history:
            found = _reuse(raw, kept[1])
            if found is not None:
                self.reused += 1
                self._keep(client, now, found[1])
                return found[0]
        body, exact = _parse(raw)
        layout = _layout(raw, body, history) if exact else None
        if layout is None:
            self._drop(client)
        else:
            self._keep(client, now, layout)
        return body

    @property
    def kept_bytes(self) -> int:
        """Bytes of the previous bodies kept (at most `max_bytes`)."""
        return self._bytes

    def _keep(self, client: tuple[str, ...], now: float, layout: _Layout) -> None:
        self._drop(client)
        self._last[client] = (now, layout)
        self._bytes += len(layout.raw)
        while self._last and (len(self._last) > self._slots or self._bytes > self._max_bytes):
            self._drop(next(iter(self._last)))

    def _drop(self, client: tuple[str, ...]) -> None:
        gone = self._last.pop(client, None)
        if gone is not None:
            self._bytes -= len(gone[1].raw)
