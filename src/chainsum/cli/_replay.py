"""``chainsum replay`` (feed a recorded conversation to the context manager request by request), and
``chainsum expand`` / ``chainsum search`` over the archive a replay kept with ``--db``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ..formats import output_target, wire_indexes
from ..messages import Message, Text, ToolCall, ToolResult, message_to_dict
from ..rules import PROVIDERS, repair, validate
from ._io import console, fail, read_conversation, user_errors, write_json
from ._options import BaseUrlOpt, FileArg, FormatOpt, StrategyOpt, SummarizerOpt, config_from_env
from ._progress import logs_to, progress_bar
from ._render import in_file_terms, replay_table

if TYPE_CHECKING:
    from ..store import SQLiteStore

__all__ = ["expand_cmd", "replay_cmd", "search_cmd"]

DbOpt = Annotated[str, typer.Option("--db", help="SQLite file written by chainsum replay --db.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on standard output.")]


def _open_store(path: str, *, must_exist: bool) -> SQLiteStore:
    from ..store import SQLiteStore, StoreError

    if must_exist and not Path(path).is_file():
        fail(f"{path}: no such database")
    try:
        return SQLiteStore(path)
    except StoreError as exc:  # a directory, a missing directory, not a database: names the path
        fail(str(exc))


def replay_cmd(
    file: FileArg,
    context_window: Annotated[
        int | None,
        typer.Option("--context-window", "-w", metavar="TOKENS", help="Window in tokens (else from --model)."),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Look the window up by model name.")] = None,
    strategy: StrategyOpt = None,
    summarizer: SummarizerOpt = None,
    base_url: BaseUrlOpt = None,
    provider: Annotated[
        str | None,
        typer.Option("--provider", "-p", help="Rules each request must satisfy (default: the input's, else openai)."),
    ] = None,
    format: FormatOpt = None,
    session: Annotated[
        str | None, typer.Option("--session", help="Session name (default: the file name without suffix).")
    ] = None,
    db: Annotated[
        str | None, typer.Option("--db", help="Keep the archive and summary records in this SQLite file.")
    ] = None,
    price_input: Annotated[
        float, typer.Option("--price-input", help="USD per million fresh input tokens (an example default).")
    ] = 3.00,
    price_cached: Annotated[
        float, typer.Option("--price-cached", help="USD per million cached input tokens (an example default).")
    ] = 0.30,
    price_summarizer: Annotated[
        float | None,
        typer.Option(
            "--price-summarizer",
            help="USD per million summarizer input tokens (default: 0 for extractive, else --price-input).",
        ),
    ] = None,
    price_summarizer_output: Annotated[
        float | None,
        typer.Option(
            "--price-summarizer-output",
            help="USD per million tokens the summarizer writes (default: 0 for extractive, else 5x --price-input).",
        ),
    ] = None,
    repair_input: Annotated[
        bool, typer.Option("--repair", help="Repair the recording for the provider's rules before replaying it.")
    ] = False,
    report: Annotated[str | None, typer.Option("--report", help="Write the JSON report here (- for stdout).")] = None,
    plot: Annotated[str | None, typer.Option("--plot", help="Write the plot here: OUT.png or OUT.html.")] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also print a line per compaction (request, reason, records).")
    ] = False,
) -> None:
    # The docstring is the command's help: plain text, its first paragraph the line in chainsum --help.
    """Replay a recorded conversation through the context manager.

    The manager is called before each assistant message, as an agent calls it before each request. At the end, a
    short table on standard error: requests, compactions, peak context tokens, the estimated cost with prompt
    caching (the summarizer's input and output included, and shown apart), and the cache hit share (cached input
    tokens over input tokens). --report writes every request.
    """
    from ..manager import (
        ContextManager,
        CountingSummarizer,
        Prices,
        UnknownModelError,
        replay_sync,
        request_indices,
        summarizers_from_config,
    )
    from ..summarize import ExtractiveSummarizer
    from ..tokens import get_counter
    from ._plot import PLOT_SUFFIXES

    if context_window is not None and context_window <= 0:
        fail(f"--context-window must be a positive number of tokens, got {context_window}")
    if provider is not None and provider not in PROVIDERS:
        fail(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    if plot is not None and Path(plot).suffix.lower() not in (*PLOT_SUFFIXES, ".htm"):
        fail(f"{plot}: --plot must end in .png or .html")
    for name, value in (("--price-input", price_input), ("--price-cached", price_cached)):
        if value < 0:
            fail(f"{name} must not be negative, got {value}")
    for name, optional in (
        ("--price-summarizer", price_summarizer),
        ("--price-summarizer-output", price_summarizer_output),
    ):
        if optional is not None and optional < 0:
            fail(f"{name} must not be negative, got {optional}")
    err = console(stderr=True)
    with logs_to(err), user_errors(file):
        config = config_from_env(strategy=strategy, summarizer=summarizer, base_url=base_url)
        if context_window is None and model is None and config.context_window is None:
            fail("give --context-window N or --model NAME (or set SUMMARIZATION_CONTEXT_WINDOW)")
        conv = read_conversation(file, format)
        if not conv.messages:
            fail(f"{file}: the conversation is empty")
        try:
            inner = summarizers_from_config(config)[0]
        except ValueError as exc:
            fail(f"--summarizer {summarizer!r}: {exc}" if summarizer is not None else str(exc))
        target, _ = output_target(conv.format, provider)
        messages = conv.messages
        if repair_input:
            messages = repair(messages, target).messages
        else:
            problems = validate(messages, target)
            if problems:
                first = in_file_terms(f"message {problems[0].index}", wire_indexes(conv))
                err.print(
                    f"[yellow]warning[/] the recording itself breaks {len(problems)} {target} rule(s) (first: "
                    f"{problems[0].rule} at {first}), so requests may be invalid whatever the manager does; "
                    "--repair repairs it first"
                )
        name = session or (Path(file).stem if file != "-" else "stdin")
        store = _open_store(db, must_exist=False) if db is not None else None
        if store is not None and store.get_state(name).version > 0:
            fail(f"{db}: session {name!r} was already replayed there; pass another --session or another --db")
        counter = get_counter("heuristic")
        counting = CountingSummarizer(inner, counter)
        try:
            manager = ContextManager(
                config,
                model=model,
                context_window=context_window,
                counter=counter,
                summarizers=[counting],
                provider=target,
                session=name,
                archive=store,
            )
        except UnknownModelError as exc:
            close = f" (close names: {', '.join(exc.close)})" if exc.close else ""
            fail(f"--model {exc.model_id!r}: no context window known for it{close}; give it with --context-window N")
        is_extractive = isinstance(inner, ExtractiveSummarizer)
        prices = Prices(
            input=price_input,
            cached=price_cached,
            summarizer_input=price_summarizer
            if price_summarizer is not None
            else (0.0 if is_extractive else price_input),
            summarizer_output=price_summarizer_output
            if price_summarizer_output is not None
            else (0.0 if is_extractive else 5 * price_input),
        )
        try:
            with progress_bar(err, "requests") as bar:
                label = f"replaying {name} in a {manager.window:,}-token window"
                task = bar.add_task(label, total=len(request_indices(messages)) or 1, visible=False)

                def progress(done: int, total: int) -> None:
                    bar.update(task, completed=done, total=total, visible=True)

                result = replay_sync(messages, manager, counting=counting, prices=prices, progress=progress)
        finally:
            if store is not None:
                store.close()
        if report is not None:
            write_json(result.to_dict(), report)
        if plot is not None:
            from ._plot import write_plot

            try:
                write_plot(result, plot)
            except OSError as exc:
                fail(f"{plot}: cannot write: {exc.strerror or exc}")
    if verbose:
        for turn in result.turns:
            if turn.compacted:
                err.print(
                    f"request {turn.request} (message {turn.message_index}): compacted ({escape(turn.reason or '')}) "
                    f"-> {turn.context_tokens} tokens; records {', '.join(turn.record_ids)}"
                )
    for line in replay_table(result):
        err.print(line)


def expand_cmd(
    summary_id: Annotated[
        str, typer.Argument(metavar="SUMMARY_ID", help="A summary record id (from a replay report or the store).")
    ],
    db: DbOpt,
    json: JsonOpt = False,
) -> None:
    """Print the original messages a summary replaced.

    They are checked against the SHA-256 recorded when they were archived.
    """
    store = _open_store(db, must_exist=True)
    try:
        with user_errors():
            originals = store.expand(summary_id)
    finally:
        store.close()
    if json:
        write_json([message_to_dict(m) for m in originals], None)
        return
    out = console()
    for i, m in enumerate(originals):
        out.print(f"[bold]--- {i} {m.role}[/]", markup=True)
        for line in _part_lines(m):
            out.print(line, markup=False)


def _part_lines(message: Message) -> list[str]:
    """A readable line (or block) per part; what has no text is named by its kind."""
    lines: list[str] = []
    for part in message.parts:
        match part:
            case Text(text=text):
                lines.append(text)
            case ToolCall(name=name, arguments=arguments, id=call_id):
                lines.append(f"[tool call {name} {call_id}] {arguments}")
            case ToolResult(call_id=call_id):
                lines.append(f"[tool result {call_id}{' error' if part.is_error else ''}] {part.text}")
            case _:
                lines.append(f"[{part.kind}]")
    return lines


def search_cmd(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Words to find in archived messages.")],
    db: DbOpt,
    session: Annotated[str | None, typer.Option("--session", help="Only this session.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many hits.")] = 20,
    json: JsonOpt = False,
) -> None:
    """Search the messages a replay archived, best match first."""
    if limit <= 0:
        fail(f"--limit must be positive, got {limit}")
    store = _open_store(db, must_exist=True)
    try:
        with user_errors():
            hits = store.search(session, query, limit)
    finally:
        store.close()
    if json:
        write_json(
            [
                {
                    "session": h.session,
                    "message_id": h.message_id,
                    "position": h.position,
                    "role": h.role,
                    "snippet": h.snippet,
                    "rank": h.rank,
                }
                for h in hits
            ],
            None,
        )
        return
    out = console()
    if not hits:
        console(stderr=True).print("no match")
    for h in hits:
        out.print(f"{h.session} #{h.position} {h.role} {h.message_id}: {h.snippet}", markup=False)
