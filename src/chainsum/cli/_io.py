"""Reading inputs and writing outputs for the CLI, and turning errors into one line and an exit code."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

from ..errors import ChainsumError, FormatError
from ..formats import Conversation, load

__all__ = ["EXIT_BAD_INPUT", "EXIT_PROBLEMS", "console", "fail", "read_conversation", "user_errors", "write_json"]

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
def user_errors() -> Generator[None]:
    """Errors caused by the input become one line and exit 2, never a traceback."""
    try:
        yield
    except ChainsumError as exc:
        fail(str(exc))
    except RecursionError:
        fail("input nested too deeply to process")
    except MemoryError:
        fail("input too large to process in memory")


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
