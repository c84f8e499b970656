"""What a long command shows while it works, on standard error: a progress bar, and the library's log lines printed
through the same console so that rich draws them above the bar instead of through it."""

from __future__ import annotations

import logging
import sys
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleRenderable, RenderableType
from rich.highlighter import NullHighlighter
from rich.logging import RichHandler
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

if TYPE_CHECKING:
    from rich.traceback import Traceback

__all__ = ["logs_to", "progress_bar"]


class _LabelAbove(Progress):
    """The label on a line of its own above the bar: ``compact``'s label is the round's plan note, which runs to
    a hundred characters, and beside the bar it got about 40 columns and an ellipsis. Above it, it has the whole
    width of the terminal (cut there, never wrapped: a wrapped line would leave the bar's redraw a line off)."""

    def get_renderables(self) -> Iterable[RenderableType]:
        for task in self.tasks:
            if task.visible:
                yield Text(task.description, no_wrap=True, overflow="ellipsis")
        yield self.make_tasks_table(self.tasks)


def progress_bar(err: Console, unit: str, *, enabled: bool = True) -> Progress:
    """A progress bar on standard error, shown only when standard error is a terminal (and `enabled`): a pipe or a
    file gets nothing, whatever ``FORCE_COLOR`` says. Two lines, the label (``task.description``) and
    ``━━━━ N/M UNIT 0:00:05``, cleared when done so that the summary that follows stands alone. Add its task hidden
    with its total and show it on the first report, so that no ``0/?`` stands there while the work is planned; keep
    the total fixed, so that the bar never runs backwards."""
    return _LabelAbove(
        BarColumn(bar_width=None),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        expand=True,
        disable=not (enabled and sys.stderr.isatty()),
    )


class _OneLine(logging.Formatter):
    """A record as one line: the message, and an exception's type and text where one is attached. The CLI never
    prints a traceback (a library warning with ``exc_info`` would otherwise bring one)."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info is not None and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f" ({type(exc).__name__}: {exc})"
        return " ".join(text.split())


class _LogLine(RichHandler):
    """``warning MESSAGE`` on one line, as the CLI's own warnings read. RichHandler's own layout is a table as wide
    as the console, which on a pipe (where `chainsum.cli._io.console` is 10,000 columns wide so that lines stay
    whole) pads every record with thousands of spaces."""

    def render(
        self, *, record: logging.LogRecord, traceback: Traceback | None, message_renderable: ConsoleRenderable
    ) -> ConsoleRenderable:
        if not isinstance(message_renderable, Text):  # `render_message` makes Text; another renderable as it is
            return message_renderable
        level = record.levelname.lower()
        return Text.assemble((level, f"logging.level.{level}"), " ", message_renderable)


@contextmanager
def logs_to(err: Console) -> Generator[None]:
    """For the duration of a command, warnings and errors (from chainsum and the libraries it calls)
    are printed by `err`, the console its progress bar draws on. Printed by that console, a line lands above the
    bar; written to standard error by logging's own handler, it cut through the bar's line. The handler is removed
    afterwards: tests run many commands in one process."""
    handler = _LogLine(
        console=err,
        show_time=False,
        show_level=True,
        show_path=False,
        markup=False,
        highlighter=NullHighlighter(),
    )
    handler.setFormatter(_OneLine())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
