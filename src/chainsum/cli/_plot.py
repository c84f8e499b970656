"""The replay plot: context tokens per request, compactions marked, the window and the trigger drawn as lines.

``.png`` needs matplotlib (``pip install "chainsum[plot]"``), imported only here and only when asked for;
``.html`` is one self-contained page with an inline SVG (no script, no external asset).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from ..errors import MissingDependencyError
from ..manager import ReplayReport

__all__ = ["PLOT_SUFFIXES", "write_plot"]

PLOT_SUFFIXES = (".png", ".html")


def write_plot(report: ReplayReport, path: str) -> None:
    """Write the plot to `path`; its suffix picks the kind (`PLOT_SUFFIXES`). Raises ValueError for another."""
    suffix = Path(path).suffix.lower()
    if suffix == ".png":
        _png(report, path)
    elif suffix in (".html", ".htm"):
        Path(path).write_text(html_page(report), encoding="utf-8")
    else:
        raise ValueError(f"{path}: the plot must end in .png or .html")


def _title(report: ReplayReport) -> str:
    t = report.totals()
    return (
        f"{report.session}: {t['requests']} requests, {t['compactions']} compactions, "
        f"window {report.window}, strategy {report.strategy}"
    )


def _png(report: ReplayReport, path: str) -> None:
    try:
        import matplotlib
    except ImportError as exc:
        raise MissingDependencyError("matplotlib", "plot") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [t.request for t in report.turns]
    ys = [t.context_tokens for t in report.turns]
    fig: Any
    ax: Any
    fig, ax = plt.subplots(figsize=(10, 4.5), dpi=100)  # pyright: ignore[reportUnknownMemberType]
    try:
        ax.plot(xs, ys, color="#1f77b4", linewidth=1.4, label="context tokens")
        ax.plot(xs, [t.cached_input_tokens for t in report.turns], color="#9ecae1", linewidth=1, label="cached prefix")
        cx = [t.request for t in report.turns if t.compacted]
        cy = [t.context_tokens for t in report.turns if t.compacted]
        ax.scatter(cx, cy, color="#d62728", marker="v", s=40, zorder=3, label="compaction")
        ax.axhline(report.window, color="#555555", linestyle="--", linewidth=1, label="context window")
        ax.axhline(report.trigger_tokens, color="#ff7f0e", linestyle=":", linewidth=1, label="trigger")
        ax.set_xlabel("model request")
        ax.set_ylabel("tokens sent")
        ax.set_ylim(bottom=0)
        ax.set_title(_title(report), fontsize=10)
        ax.legend(loc="upper left", fontsize=8)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)


def html_page(report: ReplayReport) -> str:
    """A standalone HTML page with the plot as inline SVG and the totals as a table."""
    w, h, left, right, top, bottom = 900, 380, 70, 20, 20, 40
    turns = report.turns
    n = max(len(turns) - 1, 1)
    y_max = max([report.window, *(t.context_tokens for t in turns)]) * 1.05 or 1

    def x(i: int) -> float:
        return left + (w - left - right) * i / n

    def y(v: float) -> float:
        return top + (h - top - bottom) * (1 - v / y_max)

    parts: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect x="{left}" y="{top}" width="{w - left - right}" height="{h - top - bottom}" fill="#fafafa" '
        'stroke="#ccc"/>',
    ]
    for k in range(6):
        v = y_max * k / 5
        parts.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{int(v)}</text>')
    for i in range(0, len(turns), max(1, len(turns) // 10)):
        parts.append(f'<text x="{x(i):.1f}" y="{h - bottom + 16}" text-anchor="middle">{i}</text>')
    for value, color, dash, label in (
        (report.window, "#555", "6,4", "context window"),
        (report.trigger_tokens, "#ff7f0e", "2,3", "trigger"),
    ):
        parts.append(
            f'<line x1="{left}" x2="{w - right}" y1="{y(value):.1f}" y2="{y(value):.1f}" stroke="{color}" '
            f'stroke-dasharray="{dash}"><title>{label}: {value}</title></line>'
        )
    for attr, color in (("cached_input_tokens", "#9ecae1"), ("context_tokens", "#1f77b4")):
        points = " ".join(f"{x(t.request):.1f},{y(getattr(t, attr)):.1f}" for t in turns)
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{points}"/>')
    for t in turns:
        if t.compacted:
            tip = html.escape(f"request {t.request}: compacted ({t.reason}), {t.context_tokens} tokens after")
            parts.append(
                f'<circle cx="{x(t.request):.1f}" cy="{y(t.context_tokens):.1f}" r="4" fill="#d62728">'
                f"<title>{tip}</title></circle>"
            )
    parts.append(f'<text x="{(left + w - right) / 2}" y="{h - 6}" text-anchor="middle">model request</text>')
    parts.append("</svg>")
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in report.totals().items()
    )
    legend = (
        '<p><span style="color:#1f77b4">&#9632; context tokens</span> &nbsp; '
        '<span style="color:#9ecae1">&#9632; cached prefix</span> &nbsp; '
        '<span style="color:#d62728">&#9679; compaction</span> &nbsp; '
        '<span style="color:#555">- - context window</span> &nbsp; '
        '<span style="color:#ff7f0e">&middot;&middot; trigger</span></p>'
    )
    title = html.escape(_title(report))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title>"
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "th,td{border:1px solid #ddd;padding:2px 8px;text-align:left}</style></head><body>"
        f"<h1 style='font-size:1.1em'>{title}</h1>{''.join(parts)}{legend}<table>{rows}</table></body></html>\n"
    )
