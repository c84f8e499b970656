"""The commands. Each parses its options, calls the layers, renders: no logic of its own beyond that."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Annotated

import typer
from rich.markup import escape

from ..chain import Chain
from ..formats import DUMPABLE, FORMATS, Conversation, Dropped, dump, output_target, wire_indexes
from ..messages import Message
from ..rules import PROVIDERS, repair, validate
from ._compact import compact_cmd
from ._io import EXIT_PROBLEMS, OneLineUsageGroup, console, fail, read_conversation, user_errors, write_json
from ._mcp import mcp_cmd
from ._options import FileArg, FormatOpt, JsonOpt, OutOpt
from ._render import chain_dict, chain_tree, file_index, in_file_terms
from ._replay import expand_cmd, replay_cmd, search_cmd
from ._serve import serve_cmd

app = typer.Typer(
    name="chainsum",
    # Names no commands: the list below does, each with its line (this one named four of nine).
    help="Keep LLM conversations inside their context window.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=OneLineUsageGroup,
)


def package_version() -> str:
    """The installed distribution's version, which is what a bug report needs (an editable install or a wheel
    built from another commit says so there); ``chainsum.__version__`` when the package runs uninstalled."""
    try:
        return version("chainsum")
    except PackageNotFoundError:
        from .. import __version__

        return __version__


def _print_version(value: bool) -> None:
    if value:
        print(f"chainsum {package_version()}")
        raise typer.Exit()


@app.callback()
def _options(
    show_version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_print_version),
    ] = False,
) -> None:
    """The options before the command (only --version: it runs before any command and exits)."""


def _provider(value: str) -> str:
    if value not in PROVIDERS:
        fail(f"unknown provider {value!r}; choose one of {', '.join(PROVIDERS)}")
    return value


def _format(value: str | None) -> str | None:
    if value is not None and value not in FORMATS:
        fail(f"unknown format {value!r}; choose one of {', '.join(FORMATS)}")
    return value


def _report_dropped(dropped: list[Dropped]) -> None:
    for d in dropped:
        console(stderr=True).print(f"[yellow]dropped[/] {d}")


@app.command()
def inspect(file: FileArg, format: FormatOpt = None, json: JsonOpt = False) -> None:
    """Show the chain tree: sections, headers and pairs with sizes."""
    with user_errors(file):
        conv = read_conversation(file, _format(format))
        chain = Chain.build(conv.messages, repair=True)
    if json:
        write_json({"format": conv.format, **chain_dict(chain)}, None)
        return
    console().print(chain_tree(chain, f"{file} ({conv.format})"))
    positions = wire_indexes(conv)
    for r in chain.repairs:
        console(stderr=True).print(f"[yellow]note[/] {escape(in_file_terms(str(r), positions))}")


@app.command("validate")
def validate_cmd(
    file: FileArg,
    provider: Annotated[str, typer.Option("--provider", "-p", help=f"One of {', '.join(PROVIDERS)}.")],
    format: FormatOpt = None,
    json: JsonOpt = False,
) -> None:
    # The docstrings of the commands are their help: plain text, the first paragraph the line in chainsum --help.
    """Check a conversation against a provider's rules.

    Exit 0 when it is valid, 1 when problems are found, 2 when the input cannot be read. Messages are counted as
    the file counts them (an Anthropic system prompt is not message 0).
    """
    with user_errors(file):
        conv = read_conversation(file, _format(format))
        problems = validate(conv.messages, _provider(provider))
    positions = wire_indexes(conv)
    if json:
        write_json(
            {
                "valid": not problems,
                "problems": [
                    {
                        "rule": p.rule,
                        "index": file_index(p.index, positions),
                        "detail": in_file_terms(p.detail, positions),
                    }
                    for p in problems
                ],
            },
            None,
        )
    else:
        out = console()
        if not problems:
            out.print(f"[green]valid[/] for {provider}: {len(conv.messages)} messages")
        for p in problems:
            text = in_file_terms(f"message {p.index}: {p.detail}", positions)
            out.print(f"[red]{p.rule}[/] {escape(text)}")
    if problems:
        raise typer.Exit(EXIT_PROBLEMS)


@app.command("repair")
def repair_cmd(
    file: FileArg,
    provider: Annotated[
        str | None, typer.Option("--provider", "-p", help="Repair for this provider's rules (else: chain rules only).")
    ] = None,
    format: FormatOpt = None,
    output: OutOpt = None,
) -> None:
    """Repair a conversation for a provider's rules.

    Without --provider, for the chain's own rules only. What was repaired goes to standard error, the result (in
    the input's format) to standard output.
    """
    with user_errors(file):
        conv = read_conversation(file, _format(format))
        positions = wire_indexes(conv)
        messages: tuple[Message, ...]
        if provider is not None:
            repaired = repair(conv.messages, _provider(provider))
            messages = repaired.messages
            for a in repaired.actions:
                console(stderr=True).print(f"[yellow]repaired[/] {escape(in_file_terms(str(a), positions))}")
        else:
            chain = Chain.build(conv.messages, repair=True)
            messages = tuple(chain.messages())
            for r in chain.repairs:
                console(stderr=True).print(f"[yellow]repaired[/] {escape(in_file_terms(str(r), positions))}")
        _, target = output_target(conv.format, provider, keep_format=True)
        dropped: list[Dropped] = []
        doc = dump(Conversation(messages, conv.format, conv.envelope), to=target, dropped=dropped)
    _report_dropped(dropped)
    write_json(doc, output)


@app.command()
def convert(
    file: FileArg,
    to: Annotated[str, typer.Option("--to", "-t", help=f"Target format: {', '.join(DUMPABLE)}.")],
    format: FormatOpt = None,
    tool_id_template: Annotated[
        str | None, typer.Option("--tool-id-template", help="Rewrite call ids not matching e.g. 'toolu_{r:24:b}'.")
    ] = None,
    clear_reasoning: Annotated[
        bool, typer.Option("--clear-reasoning", help="Drop provider-signed reasoning (needed across providers).")
    ] = False,
    output: OutOpt = None,
) -> None:
    """Convert a conversation to another format.

    What the target cannot express is listed on standard error.
    """
    if to not in DUMPABLE:
        fail(f"cannot write format {to!r}; choose one of {', '.join(DUMPABLE)}")
    with user_errors(file):
        conv = read_conversation(file, _format(format))
        messages: tuple[Message, ...] = conv.messages
        if tool_id_template is not None or clear_reasoning:
            chain = Chain.build(messages, repair=True, allow_pending_tail=True)
            for r in chain.repairs:
                console(stderr=True).print(f"[yellow]repaired[/] {escape(in_file_terms(str(r), wire_indexes(conv)))}")
            if tool_id_template is not None:
                chain = chain.normalize_tool_call_ids(tool_id_template)
            if clear_reasoning:
                chain = chain.clear_reasoning()
            messages = tuple(chain.messages())
        dropped: list[Dropped] = []
        doc = dump(Conversation(messages, conv.format, conv.envelope), to=to, dropped=dropped)
        problems = validate(messages, to) if to in PROVIDERS else []
    _report_dropped(dropped)
    if problems:
        console(stderr=True).print(
            f"[yellow]warning[/] the result breaks {len(problems)} {to} rule(s), first: message "
            f"{problems[0].index}: {problems[0].detail}; run `chainsum repair --provider {to}` on it"
        )
    write_json(doc, output)


app.command("compact")(compact_cmd)
app.command("replay")(replay_cmd)
app.command("expand")(expand_cmd)
app.command("search")(search_cmd)
app.command("serve")(serve_cmd)
app.command("mcp")(mcp_cmd)
