"""Claude Code session logs (``~/.claude/projects/<project>/<session>.jsonl``, and ``subagents/*.jsonl``): read only.

A session file is JSON Lines, one record per line, parsed into a list of dicts before it reaches `load`. Records
of type ``user`` and ``assistant`` carry an Anthropic Messages ``message``; everything else is bookkeeping
(``progress``, ``file-history-snapshot``, ``queue-operation``, ``summary``, most ``system`` lines), skipped and
counted in ``Conversation.envelope["skipped"]``.

The log is not a request history as the model saw it, so `load` rebuilds one:

- One API response is written as several records, one content block each, sharing ``message.id``; they are merged
  into one ``assistant`` message, blocks in order, even when the response's own tool results were logged between
  them (Claude Code runs tools while the response streams).
- Tool results arrive as separate ``user`` records (one per parallel call, in completion order). They become one
  ``tool`` message right after their assistant message, in the order of the calls, the shape Anthropic's
  ``load`` gives a user turn of results. User text logged while the response was open (an interrupt notice, an
  injected skill) follows that tool message; consecutive user records merge into one ``user`` message, as Claude
  Code merges them before sending.
- A compaction, a ``system`` record with ``subtype: "compact_boundary"`` followed by a ``user`` record with
  ``isCompactSummary: true``, starts a new message: the summary message carries
  ``extras["claude-code"]["compact_summary"] = True`` and the boundary record, verbatim, under
  ``extras["claude-code"]["compact_boundary"]``. `compaction_boundaries` lists those messages. The summary text
  is the message's first part (the local-command lines logged right after it join the same message).

Each message keeps the records it was built from under ``extras["claude-code"]["records"]``, always a list, in
log order: the record's keys (``uuid``, ``parentUuid``, ``timestamp``, ``requestId``, ``toolUseResult``, ...) but
``message``, whose own keys but ``role`` and ``content`` (``model``, ``id``, ``usage``, ``stop_reason``) sit under
``"message"``. It is provenance for replays and audits, not data any target format could carry, so conversions do
not report it as dropped. Assistant messages take the API message id as `Message.id`. A record whose ``uuid`` was
seen before (a resumed session replays lines) is skipped and counted as ``duplicates``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from ..errors import FormatError
from ..messages import Message, Part, Role, ToolCall, ToolResult
from ._base import Conversation, native, require_mapping
from .anthropic import read_content

__all__ = ["NAME", "compaction_boundaries", "load", "sniff"]

NAME: Final = "claude-code"

_RECORD_TYPES: Final = frozenset(
    {"user", "assistant", "summary", "system", "progress", "file-history-snapshot", "queue-operation"}
)


def sniff(data: Any) -> int:
    """2 for a list of Claude Code records (a ``type`` of theirs and a ``sessionId`` or ``message``), else 0.
    A record with a top-level ``role`` is a chat message, not a log line."""
    records: Any = [data] if isinstance(data, dict) else data
    if not isinstance(records, list) or not records:
        return 0
    found = False
    for raw in cast(list[Any], records):
        if not isinstance(raw, dict):
            return 0
        record = cast(dict[str, Any], raw)
        if "role" in record:
            return 0
        found = found or (record.get("type") in _RECORD_TYPES and ("sessionId" in record or "message" in record))
    return 2 if found else 0


def compaction_boundaries(messages: Sequence[Message]) -> list[int]:
    """Indices of the messages that start the context after a compaction (the summary messages)."""
    out: list[int] = []
    for i, m in enumerate(messages):
        ns = native(m.extras, NAME)
        if ns.get("compact_summary") or "compact_boundary" in ns:
            out.append(i)
    return out


@dataclass(slots=True)
class _Draft:
    """A message being assembled from one or more records."""

    role: Role
    id: str | None = None
    parts: list[Part] = field(default_factory=lambda: [])
    records: list[dict[str, Any]] = field(default_factory=lambda: [])
    hints: dict[str, Any] = field(default_factory=lambda: {})

    def add(self, parts: Sequence[Part], record: dict[str, Any]) -> None:
        self.parts += parts
        if not self.records or self.records[-1] is not record:
            self.records.append(record)

    def build(self) -> Message:
        return Message(
            role=self.role, parts=tuple(self.parts), id=self.id, extras={NAME: {"records": self.records, **self.hints}}
        )


class _Rebuilder:
    """Turns the log's records, in order, into alternating canonical messages (see the module docstring)."""

    def __init__(self) -> None:
        self.out: list[Message] = []
        self.turn: _Draft | None = None
        """The open assistant response, still collecting records with its message id."""
        self.calls: dict[str, int] = {}
        """Call id → position in the open response, to put its results in call order."""
        self.results: _Draft | None = None
        self.after: _Draft | None = None
        """User content logged while the response was open."""
        self.loose: _Draft | None = None
        """User-side content outside any response (the first prompt, a compaction summary)."""
        self.boundary: dict[str, Any] | None = None

    def _new(self, role: Role, msg_id: str | None = None) -> _Draft:
        draft = _Draft(role, msg_id)
        if self.boundary is not None:
            draft.hints["compact_boundary"] = self.boundary
            self.boundary = None
        return draft

    def close(self) -> None:
        if self.turn is not None:
            self.out.append(self.turn.build())
            if self.results is not None:
                last = len(self.calls)
                self.results.parts.sort(key=lambda p: self.calls.get(cast(ToolResult, p).call_id, last))
                self.out.append(self.results.build())
            if self.after is not None:
                self.out.append(self.after.build())
            self.turn = self.results = self.after = None
            self.calls = {}
        if self.loose is not None:
            self.out.append(self.loose.build())
            self.loose = None

    def assistant(self, parts: list[Part], record: dict[str, Any], msg_id: str | None) -> None:
        if self.turn is None or msg_id is None or self.turn.id != msg_id:
            self.close()
            self.turn = self._new("assistant", msg_id)
        for p in parts:
            if isinstance(p, ToolCall):
                self.calls.setdefault(p.id, len(self.calls))
        self.turn.add(parts, record)

    def user(self, parts: list[Part], record: dict[str, Any], *, summary: bool) -> None:
        if summary:
            self.close()
            self.loose = self._new("user")
            self.loose.hints["compact_summary"] = True
        results: list[Part] = [p for p in parts if isinstance(p, ToolResult)]
        others: list[Part] = [p for p in parts if not isinstance(p, ToolResult)] if results else parts
        if self.turn is not None:
            if results:
                self.results = self.results or self._new("tool")
                self.results.add(results, record)
            if others:
                self.after = self.after or self._new("user")
                self.after.add(others, record)
            return
        for role, chunk in (("tool", results), ("user", others)):
            if not chunk:
                continue
            if self.loose is not None and self.loose.role != role:
                self.close()
            self.loose = self.loose or self._new(cast(Role, role))
            self.loose.add(chunk, record)

    def compact_boundary(self, record: dict[str, Any]) -> None:
        self.close()
        self.boundary = record


def _fail(detail: str, where: str) -> FormatError:
    return FormatError(detail, where=where, format=NAME)


def _provenance(record: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in record.items() if k != "message"}
    if len(message) > 2:
        meta["message"] = {k: v for k, v in message.items() if k != "role" and k != "content"}
    return meta


def load(data: Any) -> Conversation:
    """Read a list of session records (a single record dict is taken as a one-line log)."""
    if not isinstance(data, list | dict):
        raise _fail(f"expected a list of JSONL records, got {type(data).__name__}", "")
    records: list[Any] = cast(list[Any], data) if isinstance(data, list) else [data]
    rebuilder = _Rebuilder()
    skipped: dict[str, int] = {}
    seen: set[str] = set()
    duplicates = 0
    session_id: str | None = None
    for i, raw in enumerate(records):
        where = f"[{i}]"
        record = require_mapping(raw, where, NAME)
        kind = record.get("type")
        if not isinstance(kind, str):
            raise _fail(
                "missing record type" if kind is None else f"expected a string, got {type(kind).__name__}",
                f"{where}.type",
            )
        if session_id is None and isinstance(record.get("sessionId"), str):
            session_id = record["sessionId"]
        if kind == "user" or kind == "assistant":
            uuid = record.get("uuid")
            if isinstance(uuid, str):
                if uuid in seen:
                    duplicates += 1
                    continue
                seen.add(uuid)
            message = require_mapping(record.get("message"), f"{where}.message", NAME)
            role = message.get("role", kind)
            if role != kind:
                raise _fail(f"message role {role!r} does not match record type {kind!r}", f"{where}.message.role")
            if "content" not in message:
                raise _fail("missing required content", f"{where}.message.content")
            parts = read_content(message["content"], f"{where}.message.content", NAME)
            meta = _provenance(record, message)
            if kind == "assistant":
                msg_id = message.get("id")
                rebuilder.assistant(parts, meta, msg_id if isinstance(msg_id, str) else None)
            else:
                rebuilder.user(parts, meta, summary=record.get("isCompactSummary") is True)
        elif kind == "system" and record.get("subtype") == "compact_boundary":
            rebuilder.compact_boundary(record)
        else:
            skipped[kind] = skipped.get(kind, 0) + 1
    rebuilder.close()
    envelope: dict[str, Any] = {"records": len(records), "skipped": skipped, "duplicates": duplicates}
    if session_id is not None:
        envelope["session_id"] = session_id
    if rebuilder.boundary is not None:
        envelope["trailing_compact_boundary"] = rebuilder.boundary
    return Conversation(tuple(rebuilder.out), NAME, envelope)
