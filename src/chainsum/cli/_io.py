"""Reading inputs and writing outputs for the CLI, and turning errors into one line and an exit code."""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, cast

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from ..errors import ChainsumError, FormatError
from ..formats import Conversation, load

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_PROBLEMS",
    "OneLineUsageGroup",
    "console",
    "fail",
    "read_conversation",
    "user_errors",
    "write_json",
]

EXIT_PROBLEMS = 1
EXIT_BAD_INPUT = 2
_MAX_INPUT = 2 * 1024**3


_PIPE_WIDTH = 10_000


def console(*, stderr: bool = False) -> Console:
    """A console that wraps only on a terminal.

    Rich wraps at 80 columns when the output is a pipe, which splits tree labels and paths across lines
    and breaks ``grep``; piped output keeps each line whole instead.
    """
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else _PIPE_WIDTH
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=width)


def fail(message: str) -> NoReturn:
    """Print one line to stderr and exit 2: bad input or usage."""
    print(f"chainsum: error: {message}", file=sys.stderr)
    raise SystemExit(EXIT_BAD_INPUT)


@contextmanager
def user_errors(source: str | None = None) -> Generator[None]:
    """Errors caused by the input become one line and exit 2, never a traceback; `source` (the input file, ``-``
    for standard input) is named where the error does not say it already."""
    where = "" if source is None else f"{'standard input' if source == '-' else source}: "
    try:
        yield
    except ChainsumError as exc:
        fail(str(exc))
    except RecursionError:
        fail(f"{where}input nested too deeply to process")
    except MemoryError:
        fail(f"{where}input too large to process in memory")


_USAGE_ERROR = cast("type[Exception]", typer.BadParameter.__mro__[1])
"""click's ``UsageError`` (a bad option value, a missing argument, an unknown command): the base of the public
``typer.BadParameter``, whichever click typer uses (recent typers carry their own copy)."""


@contextmanager
def _one_line_usage() -> Generator[None]:
    try:
        yield
    except _USAGE_ERROR as exc:
        error = cast(Any, exc)
        command: str = error.ctx.command_path if error.ctx is not None else "chainsum"
        sub = command.partition(" ")[2]
        message = " ".join(str(error.format_message()).split()).rstrip(".")
        fail(f"{sub + ': ' if sub else ''}{message} (see {command} --help)")


def _plain(text: str) -> str:
    """`text` (a docstring or an option's help) as typer's rich help should print it: each paragraph one line, for
    rich to wrap at the terminal's width (typer keeps the source's line breaks, so a docstring wrapped at 120
    columns came out ragged at 80), and brackets shown as written (typer reads help as rich markup, in which
    ``"chainsum[server]"`` loses its ``[server]``)."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return escape("\n\n".join(" ".join(p.split()) for p in paragraphs))


class OneLineUsageGroup(TyperGroup):
    """The command group: a usage error is one line and exit 2, like every other error, instead of click's usage
    block in a rich panel; every command's help and its options' help are plain text (`_plain`), in the command
    list and in the command's own ``--help`` alike. Running with no arguments still shows the help."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # typer's own arguments, passed through
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            plain = cast(Any, command)  # a click Command (typer may carry its own click)
            if plain.help:
                plain.help = _plain(plain.help)
            for param in plain.params:
                if getattr(param, "help", None):
                    param.help = _plain(param.help)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # a click Context (typer may carry its own click)
        if not args:
            return super().parse_args(ctx, args)
        with _one_line_usage():
            return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        with _one_line_usage():
            return super().invoke(ctx)


def read_conversation(path: str, format: str | None) -> Conversation:
    """Read FILE (or standard input for ``-``) in `format`, detected when not given."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
            source = "standard input"
        else:
            p = Path(path)
            if p.is_dir():
                fail(f"{path}: is a directory")
            if p.stat().st_size > _MAX_INPUT:
                fail(f"{path}: larger than {_MAX_INPUT // 1024**3} GiB")
            data = p.read_bytes()
            source = path
    except FileNotFoundError:
        fail(f"{path}: no such file")
    except PermissionError:
        fail(f"{path}: permission denied")
    except OSError as exc:
        fail(f"{path}: {exc.strerror or exc}")
    try:
        return load(data, format)
    except FormatError as exc:
        fail(f"{source}: {exc}")


def write_json(data: Any, output: str | None, *, echo: Callable[[str], None] | None = None) -> None:
    """Write `data` as JSON to `output`, or standard output when None or ``-``."""
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if output is None or output == "-":
        (echo or sys.stdout.write)(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"{output}: cannot write: {exc.strerror or exc}")
