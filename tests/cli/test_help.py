"""What ``chainsum --help`` and each command's ``--help`` show a user: every command on one line, plain text (no
reStructuredText from the docstrings, no brackets lost to rich markup), token counts named ``TOKENS``, and
``--version``."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from itertools import pairwise

import pytest
from typer.testing import CliRunner

from chainsum.cli._app import app

COMMANDS = ["inspect", "validate", "repair", "convert", "compact", "replay", "expand", "search", "serve", "mcp"]
runner = CliRunner()


def help_text(*args: str, columns: int = 80) -> str:
    """The help as an 80-column terminal shows it (rich reads COLUMNS)."""
    result = runner.invoke(app, [*args, "--help"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.stderr
    return result.stdout


def panel_rows(text: str, title: str) -> list[str]:
    """The rows inside the panel titled `title`, without their borders."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"╭─ {title} ─", line))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("╰"))
    return [line.strip("│ ").rstrip() for line in lines[start + 1 : end]]


def test_every_command_is_listed_with_a_one_line_description() -> None:
    """Nine commands, nine rows at 80 columns: each its name and a description that fits on the line (a wrapped
    description is a row with no name in it)."""
    registered = [c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands]
    assert registered == COMMANDS
    rows = panel_rows(help_text(), "Commands")
    assert [row.split()[0] for row in rows] == COMMANDS, rows
    for row in rows:
        name, description = row.split(maxsplit=1)
        assert len(description.split()) >= 4, (name, description)  # a description, not a stub


def test_no_arguments_shows_the_help() -> None:
    result = runner.invoke(app, [])
    assert "Usage" in result.stdout and "replay" in result.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_is_plain_text(command: str) -> None:
    """No reStructuredText (double backticks, roles such as :class:) and no Markdown backticks from docstrings;
    and each paragraph of the description wraps at the terminal's width, not at the source's line breaks (a line
    ending far short of the width before a line that continues the sentence)."""
    text = help_text(command)
    assert "`" not in text and not re.search(r":(class|func|meth|mod|attr):", text), text
    description = text.split("╭─", 1)[0].splitlines()[3:]  # after "Usage: ..." and its blank line
    for line, following in pairwise(description):
        if line.strip() and following.strip():
            room = 80 - len(line.rstrip())
            assert room <= len(following.split()[0]) + 1, (line, following)  # the next word did not fit


def test_brackets_in_help_are_shown_as_written() -> None:
    """typer reads help as rich markup, where ``[server]`` is a style tag and vanished."""
    assert 'pip install "chainsum[server]"' in help_text("serve", columns=200)


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("compact", "--budget"),
        ("compact", "--hard-limit"),
        ("replay", "--context-window"),
        ("serve", "--context-window"),
    ],
)
def test_token_options_are_named_tokens(command: str, option: str) -> None:
    row = next(r for r in panel_rows(help_text(command, columns=200), "Options") if r.startswith(option))
    assert "TOKENS" in row and "<str>" not in row and "<int>" not in row, row


def test_budget_help_says_what_0_does() -> None:
    row = next(r for r in panel_rows(help_text("compact", columns=200), "Options") if r.startswith("--budget"))
    assert "0: as small as the strategy can make it" in row


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == f"chainsum {version('chainsum')}\n"
    assert re.fullmatch(r"chainsum \d+\.\d+\.\d+\S*\n", result.stdout)


def test_version_as_a_user_runs_it() -> None:
    """The console script's path: ``python -m chainsum``, before any command, and listed in the help."""
    done = subprocess.run(
        [sys.executable, "-m", "chainsum", "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0 and done.stdout == f"chainsum {version('chainsum')}\n" and done.stderr == ""
    assert any(row.startswith("--version") for row in panel_rows(help_text(), "Options"))


def test_version_falls_back_to_the_package_attribute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a source tree without installed metadata, the version comes from ``chainsum.__version__``."""
    from importlib.metadata import PackageNotFoundError

    import chainsum
    from chainsum.cli import _app

    def missing(name: str) -> str:
        raise PackageNotFoundError(name)

    monkeypatch.setattr(_app, "version", missing)
    monkeypatch.setattr(chainsum, "__version__", "9.8.7")
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout == "chainsum 9.8.7\n"
