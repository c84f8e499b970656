"""Rich renderings of chains and problems for humans; dict renderings for ``--json``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.tree import Tree

from ..chain import Chain, Section
from ..messages import Message

if TYPE_CHECKING:
    from ..manager import ReplayReport

__all__ = ["chain_dict", "chain_tree", "file_index", "in_file_terms", "replay_table"]

_MESSAGE_INDEX = re.compile(r"\bmessage (\d+)\b")


def file_index(index: int, positions: Sequence[int | None]) -> int | None:
    """Canonical message `index` as the input file counts its messages (`positions` is
    `chainsum.formats.wire_indexes` of the loaded conversation): None for a system prompt kept beside the message
    list. An index past the input (a message a repair added at the end) continues the count."""
    if 0 <= index < len(positions):
        return positions[index]
    last = max((p for p in positions if p is not None), default=-1)
    return last + 1 + index - len(positions)


def in_file_terms(text: str, positions: Sequence[int | None]) -> str:
    """`text` (a problem or repair as chainsum words it: "message N" with N a canonical index) with every message
    named as the input file counts them: an Anthropic document's system prompt is not ``messages[0]``, and the two
    halves of a split user turn are one message there."""
    if all(p == i for i, p in enumerate(positions)):
        return text

    def label(match: re.Match[str]) -> str:
        wire = file_index(int(match.group(1)), positions)
        return "the system prompt" if wire is None else f"message {wire}"

    return _MESSAGE_INDEX.sub(label, text)


def _preview(m: Message | None, width: int = 60) -> str:
    if m is None:
        return "-"
    text = m.text.replace("\n", " ").strip()
    if not text:
        calls = m.tool_calls
        if calls:
            text = ", ".join(f"{c.name}()" for c in calls)
        elif m.tool_results:
            text = m.tool_results[0].text.replace("\n", " ")
    return text[:width] + ("…" if len(text) > width else "")


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB" if n < 1024**2 else f"{n / 1024**2:.1f} MB"


def chain_tree(chain: Chain, title: str, *, max_pairs: int = 12) -> Tree:
    """The tree with kinds and sizes; long bodies show their first and last pairs."""
    root = Tree(f"[bold]{title}[/] — {len(chain.sections)} sections, {chain.count} messages, {_size(chain.size)}")
    for i, section in enumerate(chain.sections):
        node = root.add(f"[cyan]section {i}[/] {_size(section.size)} ({len(section.body)} pairs)")
        h = section.header
        node.add(
            f"header {_size(h.size)}: system={_preview(h.system, 30)!r} human={_preview(h.human)!r}"
            + (f" (+{len(h.human_tool_messages)} tool results)" if h.human_tool_messages else "")
        )
        body = list(enumerate(section.body))
        if len(body) > max_pairs:
            half = max_pairs // 2
            shown = [*body[:half], (-1, None), *body[-half:]]
        else:
            shown = body
        for j, pair in shown:
            if pair is None:
                node.add(f"[dim]… {len(body) - max_pairs} more pairs …[/]")
                continue
            calls = len(pair.ai.tool_calls)
            extra = f", {calls} calls" if calls else ""
            node.add(f"pair {j} [magenta]{pair.kind.value}[/] {_size(pair.size)}{extra}: {_preview(pair.ai)!r}")
    return root


def _section_dict(section: Section) -> dict[str, Any]:
    h = section.header
    return {
        "size": section.size,
        "header": {
            "size": h.size,
            "system": h.system is not None,
            "human": h.human is not None,
            "human_tool_messages": len(h.human_tool_messages),
        },
        "body": [
            {
                "kind": p.kind.value,
                "size": p.size,
                "tool_calls": len(p.ai.tool_calls),
                "tool_messages": len(p.tool_messages),
            }
            for p in section.body
        ],
    }


def chain_dict(chain: Chain) -> dict[str, Any]:
    return {
        "size": chain.size,
        "messages": chain.count,
        "sections": [_section_dict(s) for s in chain.sections],
        "repairs": [{"rule": r.rule, "index": r.index, "detail": r.detail} for r in chain.repairs],
    }


def _coverage(share: float | None) -> str:
    """The model coverage row: what a summarizer cost is worth is what the model read of what it summarized
    (issue 32: a cost figure from a model that read 6 % of it is no figure); red under 95 %."""
    if share is None:
        return "- (no model summarizer configured)"
    text = f"{100 * share:.1f} % of the summarized text read by the model"
    return text if share >= 0.95 else f"[red]{text}[/]"


def replay_table(report: ReplayReport) -> list[str]:
    """What a replay came to, in the few figures a reader compares between runs: requests, compactions, the peak
    context against the window, the estimated cost (and the summarizer's part of it, shown at $0 too: the extractive
    summarizer calls no model), the model coverage (of what the compactions summarized, the share the configured
    model read: the cost is the cost of that reading) and the cache hit share (cached input tokens over input tokens:
    how much of what was sent the provider's prompt cache could serve, which a compaction resets). Rows for invalid
    requests, requests over the window and prefix breaks (requests that rewrote what was sent without compacting)
    only when there are any: they are problems, not figures. One line (rich markup) a row, names padded to one
    column: a rich table pads its last column too, and a pipe got the spaces."""
    t = report.totals()
    compactions = f"{t['compactions']}, {t['summarizer_calls']} summarizer call(s)"
    if t["failures"]:
        compactions += f", {t['failures']} failed"
    share = "-" if t["cache_hit_share"] is None else f"{100 * t['cache_hit_share']:.1f} %"
    rows = [
        ("requests", f"{t['requests']:,}"),
        ("compactions", compactions),
        ("peak context tokens", f"{t['max_context_tokens']:,} of {report.window:,}"),
        ("estimated cost", f"${t['cost_usd']:.4f}"),
        (
            "of which summarizer",
            f"${t['summarizer_cost_usd']:.4f} ({t['summarizer_input_tokens']:,} tokens in, "
            f"{t['summarizer_output_tokens']:,} out)",
        ),
        ("model coverage", _coverage(t["model_coverage"])),
        ("cache hit share", share),
    ]
    if t["invalid"]:
        rows.append(("invalid requests", f"[red]{t['invalid']:,}[/]"))
    if t["over_window"]:
        rows.append(("over the window", f"[red]{t['over_window']:,}[/]"))
    if t["prefix_breaks"]:
        rows.append(("prefix breaks", f"[red]{t['prefix_breaks']:,}[/]"))
    width = max(len(name) for name, _ in rows)
    return [f"[bold]{name.ljust(width)}[/]  {value}" for name, value in rows]
