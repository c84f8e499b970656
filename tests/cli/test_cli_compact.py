"""``chainsum compact`` as a user runs it: the extractive default, every strategy, the report, dry runs, provider
output, an OpenAI-compatible endpoint on loopback, and bad options."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chainsum.cli._app import app
from chainsum.formats import load
from chainsum.rules import validate
from chainsum.testing import FakeLLMServer
from chainsum.testing.fake_llm import FakeStatus, FakeText
from corpora_support import data_root

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "support-session.json")
REPORT_KEYS = {
    "tokens_before",
    "tokens_after",
    "budget",
    "fits",
    "provider",
    "problems",
    "errors",
    "changes",
    "messages_before",
    "messages_after",
    "messages_summarized",
    "summarizer_calls",
    "summarizer_input_tokens",
    "model_coverage",
    "seconds",
    "strategy",
    "valid",
}
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("strategy", ["auto", "sections", "safe-split", "ratio", "mask"])
def test_every_strategy_shrinks_the_example_and_stays_valid(tmp_path: Path, strategy: str) -> None:
    out, report = tmp_path / "out.json", tmp_path / "report.json"
    code, _, err = run(
        "compact", EXAMPLE, "--budget", "900", "--strategy", strategy, "-o", str(out), "--report", str(report)
    )
    data = json.loads(report.read_text())
    assert code == (0 if data["fits"] else 1), err  # a strategy that cannot reach the budget says so and exits 1
    assert data["fits"] or "the budget was not reached" in err
    if strategy == "auto":
        assert data["fits"] and data["tokens_after"] >= 0.8 * 900  # lands just under the budget
    assert set(data) == REPORT_KEYS
    assert data["strategy"] == strategy and data["valid"] is True
    assert data["tokens_after"] < data["tokens_before"]
    conv = load(json.loads(out.read_text()))
    assert conv.format == "openai"  # written in the input's format
    assert conv.messages[0] == load(json.loads(Path(EXAMPLE).read_text())).messages[0]  # system prompt verbatim
    assert validate(conv.messages, "openai") == []


def test_provider_writes_its_format_and_validates(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    code, _, err = run("compact", EXAMPLE, "--budget", "800", "--provider", "anthropic", "-o", str(out))
    assert code == 0, err
    doc = json.loads(out.read_text())
    system = doc["system"]  # a string, or text blocks when a merged summary joins the system prompt
    assert (system if isinstance(system, str) else system[0]["text"]).startswith("You are a careful")
    assert validate(load(doc, "anthropic").messages, "anthropic") == []


def test_dry_run_prints_the_plan_and_calls_no_model(tmp_path: Path) -> None:
    with FakeLLMServer(default=FakeText(text="should not be called")) as server:
        code, out, err = run(
            "compact",
            EXAMPLE,
            "--budget",
            "700",
            "--dry-run",
            "--summarizer",
            "openai:gpt-x",
            "--base-url",
            server.openai_base_url,
        )
        requests = list(server.requests)
    assert code == 0, err
    assert "round 1" in out and "summarize messages 1.." in out
    assert requests == []


@pytest.mark.parametrize("strategy", ["auto", "sections", "safe-split", "ratio", "mask"])
def test_dry_run_says_each_thing_once(strategy: str) -> None:
    """A step's line names its span once (it read "summarize messages 1..18: messages 1..18: ..."), does not end
    by naming it again (safe-split's "...; summarize messages 1..16"), and does not repeat the round's note printed
    just above it (ratio's reason is its note)."""
    code, out, err = run("compact", EXAMPLE, "--budget", "700", "--dry-run", "--strategy", strategy)
    assert code == 0, err
    note = ""
    steps = 0
    for line in out.splitlines():
        if line.startswith("round "):
            note = line.partition(" — ")[2]
        elif line.startswith("  "):
            steps += 1
            what, _, why = line.strip().partition(": ")
            span = re.search(r"messages? \d+(\.\.\d+)?", what)
            assert span is not None, line
            assert line.count(span[0]) == 1, line
            assert not note or note not in why, line
            assert why == "" or not why.startswith(("message", what.split()[0])), line
    assert steps > 0


def test_dry_run_of_auto_reads_as_a_sentence() -> None:
    code, out, _ = run("compact", EXAMPLE, "--budget", "700", "--dry-run")
    assert code == 0
    assert re.search(
        r"^  summarize messages 1\.\.\d+: the oldest not yet summarized, into one record block$", out, re.M
    )


def test_budget_0_is_as_small_as_the_strategy_can_make_it(tmp_path: Path) -> None:
    """``--budget 0`` means what its help says: as small as can be. Reaching that is success (exit 0, said on
    the summary line), while a budget of 1 token, which no strategy reaches, stays a shortfall (exit 1). Both runs
    make the same history: 0 is the smallest, not another target."""
    small, tiny, report = tmp_path / "zero.json", tmp_path / "one.json", tmp_path / "r.json"
    code, out, err = run("compact", EXAMPLE, "--budget", "0", "-o", str(small), "--report", str(report))
    assert code == 0, err
    assert out == "" and "as small as the strategy can make it" in err and "not reached" not in err
    data = json.loads(report.read_text())
    assert data["budget"] == 0 and data["valid"] and data["errors"] == []
    assert data["tokens_after"] < data["tokens_before"] / 4
    assert validate(load(small.read_text()).messages, "openai") == []
    code, _, err = run("compact", EXAMPLE, "--budget", "1", "-o", str(tiny))
    assert code == 1 and "the budget was not reached" in err
    assert json.loads(tiny.read_text()) == json.loads(small.read_text())
    code, out, err = run("compact", EXAMPLE, "--budget", "0", "--dry-run")
    assert code == 0 and f"-> {data['tokens_after']}," in out, err


def test_dry_run_with_the_extractive_summarizer_is_exactly_the_run(tmp_path: Path) -> None:
    planned, done = tmp_path / "plan.json", tmp_path / "done.json"
    for budget in ("500", "800", "1200"):
        code, _, err = run("compact", EXAMPLE, "--budget", budget, "--dry-run", "--report", str(planned))
        assert code == 0, err
        code, _, err = run("compact", EXAMPLE, "--budget", budget, "--report", str(done), "-o", str(tmp_path / "o"))
        assert code == 0, err
        a, b = json.loads(planned.read_text()), json.loads(done.read_text())
        for key in ("tokens_after", "messages_after", "summarizer_calls", "messages_summarized"):
            assert a[key] == b[key], (budget, key)


def test_openai_compatible_endpoint_on_loopback(tmp_path: Path) -> None:
    out, report = tmp_path / "out.json", tmp_path / "r.json"
    with FakeLLMServer(default=FakeText(text="The agent fixed orders/service.py (KeyError 'total').")) as server:
        code, _, err = run(
            "compact",
            EXAMPLE,
            "--budget",
            "700",
            "--strategy",
            "ratio",
            "--summarizer",
            "openai:gpt-x",
            "--base-url",
            server.openai_base_url,
            "-o",
            str(out),
            "--report",
            str(report),
        )
        requests = list(server.requests)
    data = json.loads(report.read_text())
    assert code == (0 if data["fits"] else 1), err
    assert requests and all(r.json["model"] == "gpt-x" for r in requests)
    assert json.loads(report.read_text())["summarizer_calls"] == len(requests)
    assert "orders/service.py (KeyError 'total')" in out.read_text()


def test_failing_endpoint_keeps_the_originals(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    with FakeLLMServer(default=FakeStatus(status=500)) as server:
        code, _, err = run(
            "compact",
            EXAMPLE,
            "--budget",
            "700",
            "--strategy",
            "ratio",
            "--summarizer",
            "openai:gpt-x",
            "--base-url",
            server.openai_base_url,
            "-o",
            str(out),
        )
    # the output is written, and the failure is said once among the final lines, with a non-zero exit (the live
    # log line the failure also made, when it happened, is a warning line of its own)
    assert code == 1
    final = [line for line in err.splitlines() if line.startswith("chainsum: ")]
    assert sum("summarizer failed" in line for line in final) == 1 and "HTTP 500" in err
    assert all(line.startswith(("warning ", "tokens ", "chainsum: ")) for line in err.splitlines()), err
    assert json.loads(out.read_text()) == json.loads(Path(EXAMPLE).read_text())  # fails open: nothing lost


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--strategy", "magic"], "unknown strategy"),
        (["--summarizer", "foo:bar"], "--summarizer"),
        (["--budget", "-5"], "--budget"),
        (["--budget", "abc"], "--budget"),
        (["--budget", "12.5"], "--budget"),
        (["--provider", "mistral"], "unknown provider"),
    ],
)
def test_bad_options_are_one_line_exit_2(args: list[str], needle: str) -> None:
    code, out, err = run("compact", EXAMPLE, *args)
    assert code == 2 and needle in err and "Traceback" not in err and out == ""


def test_hard_limit_clips_a_current_tool_output_larger_than_the_window(tmp_path: Path) -> None:
    """Without --hard-limit the current turn is never touched; with it, a tool output that alone is over the
    window is clipped to head and tail, and the request fits."""
    doc = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Show me the log."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "cat", "arguments": "{}"}}],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "BEGIN " + " ".join(f"line{k}" for k in range(6000)) + " END",
        },
    ]
    path, out = tmp_path / "big.json", tmp_path / "out.json"
    path.write_text(json.dumps(doc))
    code, _, err = run("compact", str(path), "--budget", "2000", "-o", str(out))
    assert code == 1 and "the budget was not reached" in err  # said, and exit 1
    assert json.loads(out.read_text())[-1] == doc[-1]  # no hard limit: the current turn is left whole
    code, _, err = run("compact", str(path), "--budget", "2000", "--hard-limit", "4000", "-o", str(out))
    assert code == 0, err
    clipped = json.loads(out.read_text())[-1]["content"]
    assert clipped.startswith("BEGIN ") and clipped.endswith(" END") and "[chainsum: clipped" in clipped
    assert "valid for openai: True" in err


def test_hard_limit_below_the_budget_is_a_usage_error() -> None:
    code, _, err = run("compact", EXAMPLE, "--budget", "800", "--hard-limit", "500")
    assert code == 2 and "--hard-limit" in err and "Traceback" not in err


def test_a_claude_code_log_is_compacted_into_anthropic_json(tmp_path: Path) -> None:
    """A Claude Code session (read only) follows Anthropic's rules and is written as Anthropic JSON, as
    `chainsum.formats.output_target` decides: the summary line and the output agree."""
    logs = sorted((data_root() / "claude-code").glob("*.jsonl"))
    src, out = tmp_path / "session.jsonl", tmp_path / "out.json"
    src.write_text("".join(logs[0].read_text(encoding="utf-8").splitlines(keepends=True)[:60]), encoding="utf-8")
    assert load(src.read_text(encoding="utf-8")).format == "claude-code"
    code, _, err = run("compact", str(src), "--budget", "2000", "-o", str(out))
    assert code == 0, err
    assert "valid for anthropic: True" in err
    doc = json.loads(out.read_text())
    conv = load(doc)
    assert conv.format == "anthropic"
    assert validate(conv.messages, "anthropic") == []


def test_no_progress_bar_when_standard_error_is_not_a_terminal(tmp_path: Path) -> None:
    """Piped or captured, standard error holds the one summary line: no bar, no escape codes, no blank lines."""
    code, out, err = run("compact", EXAMPLE, "--budget", "950", "--strategy", "ratio", "-o", str(tmp_path / "o.json"))
    assert code == 0 and out == ""
    assert err.splitlines() == [err.strip()]
    assert err.startswith("tokens 2801 -> ") and "3 summarizer call(s)" in err
    assert "\x1b" not in err and "summarizer calls" not in err


def _screen(raw: str) -> list[str]:
    """What a terminal shows after `raw`: printable text, ``\\r``, ``\\n``, cursor up (``ESC[nA``) and erase line
    (``ESC[2K``); other escape codes (colours, cursor visibility) change nothing visible here."""
    rows: list[list[str]] = [[]]
    row = col = 0
    for token in re.findall(r"\x1b\[[0-9;?]*[A-Za-z]|.", raw, flags=re.DOTALL):
        if token == "\r":
            col = 0
        elif token == "\n":
            row += 1
            rows += [[] for _ in range(row + 1 - len(rows))]
        elif token.startswith("\x1b"):
            if token.endswith("A"):
                row = max(0, row - int(token[2:-1] or 1))
            elif token == "\x1b[2K":
                rows[row] = []
        else:
            line = rows[row]
            line += [" "] * (col + 1 - len(line))
            line[col] = token
            col += 1
    return ["".join(r).rstrip() for r in rows]


def _on_terminal(args: list[str], *, columns: int = 160) -> tuple[int, str]:
    """Run ``chainsum ARGS`` as a user would at a terminal: standard error on a pseudo-terminal `columns` wide
    (standard output discarded). The exit code and everything written to the terminal."""
    import os
    import pty
    import subprocess

    primary, secondary = pty.openpty()
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm"}
    env.pop("FORCE_COLOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "chainsum", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=secondary,
        env=env,
    )
    os.close(secondary)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal (EIO on Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", errors="replace")


def _frames(raw: str) -> list[tuple[int, int]]:
    """Every ``N/M summarizer calls`` the bar showed, in order."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    assert "/?" not in text
    return [(int(done), int(total)) for done, total in re.findall(r"(\d+)/(\d+) summarizer calls", text)]


needs_a_terminal = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")


@needs_a_terminal
def test_on_a_terminal_the_bar_counts_calls_against_the_planned_total(tmp_path: Path) -> None:
    """Run as a user would at a terminal (standard error on a pseudo-terminal): the bar shows the phase and
    ``N/M summarizer calls`` with M the planned total, never ``0/?``; it is cleared, and the summary line takes its
    place with nothing after it."""
    args = ["compact", EXAMPLE, "--budget", "950", "--strategy", "ratio", "-o", str(tmp_path / "o.json")]
    code, raw = _on_terminal(args)
    assert code == 0
    counts = _frames(raw)
    assert counts, raw
    calls = re.search(r"(\d+) summarizer call\(s\)", raw)
    assert calls is not None and int(calls[1]) >= 2
    assert counts[-1] == (int(calls[1]), int(calls[1]))  # the last frame: every planned call done
    assert all(total == int(calls[1]) for _, total in counts)
    assert "oldest" in raw  # the phase: the round's plan note
    screen = _screen(raw)
    assert screen[0].startswith("tokens 2801 -> ") and not any(screen[1:]), screen  # the bar gone, no blank line


@needs_a_terminal
@pytest.mark.parametrize(("strategy", "budget"), [("safe-split", "500"), ("ratio", "950")])
@pytest.mark.slow
def test_the_bar_total_stays_put(tmp_path: Path, strategy: str, budget: str) -> None:
    """The total is the planned number of calls from the first frame on: the executor's own total grows round by
    round (safe-split at 500: 1 call in round 1, 2 more in round 2), and the bar showed 1/1, then 1/3. A model that
    takes 0.3 s a call, so that the bar is drawn between calls (rich draws ten times a second)."""
    summary = FakeText(text="The agent fixed orders/service.py (KeyError 'total').", delay_s=0.3)
    with FakeLLMServer(default=summary) as server:
        args = ["compact", EXAMPLE, "--budget", budget, "--strategy", strategy, "--summarizer", "openai:gpt-x"]
        code, raw = _on_terminal([*args, "--base-url", server.openai_base_url, "-o", str(tmp_path / "o.json")])
        calls = len(server.requests)
    assert code in (0, 1)  # 1: the budget was not reached (said after the bar); the bar is what is tested
    counts = _frames(raw)
    assert len(counts) >= calls >= 2, counts  # drawn between calls
    assert len({total for _, total in counts}) == 1 and counts[0][1] >= calls, counts
    assert [done for done, _ in counts] == sorted(done for done, _ in counts)


@needs_a_terminal
def test_the_bar_label_is_not_cut_at_40_columns(tmp_path: Path) -> None:
    """The label (the round's plan note, 95 characters for ratio here) is shown whole on a 120-column terminal: every
    label the bar drew is a whole note (rich redraws ten times a second, so not every round's note is drawn)."""
    code, plan, _ = run("compact", EXAMPLE, "--budget", "950", "--strategy", "ratio", "--dry-run")
    assert code == 0
    notes = [line.partition(" — ")[2] for line in plan.splitlines() if line.startswith("round ")]
    assert notes and max(len(n) for n in notes) > 80
    args = ["compact", EXAMPLE, "--budget", "950", "--strategy", "ratio", "-o", str(tmp_path / "o")]
    code, raw = _on_terminal(args, columns=120)
    assert code == 0
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    labels = {line.strip() for line in re.split(r"[\r\n]", text) if line.strip().startswith("oldest")}
    assert labels and labels <= set(notes), (labels, notes)
    assert "…" not in text


@needs_a_terminal
@pytest.mark.slow
def test_a_log_line_is_printed_above_the_bar_not_through_it(tmp_path: Path) -> None:
    """A summarizer that fails logs a warning while the bar is shown: printed by the bar's console, it is a whole
    line above the bar, and the bar is still cleared at the end."""
    with FakeLLMServer(default=FakeStatus(status=500)) as server:
        args = ["compact", EXAMPLE, "--budget", "950", "--strategy", "ratio", "--summarizer", "openai:gpt-x"]
        code, raw = _on_terminal([*args, "--base-url", server.openai_base_url, "-o", str(tmp_path / "o.json")])
    assert code == 1
    screen = [line for line in _screen(raw) if line]
    warning = [line for line in screen if "summary failed" in line]
    assert len(warning) == 1 and warning[0].startswith("warning round=<0>"), screen
    assert warning[0].endswith("| summary failed; originals kept"), warning  # whole: nothing drawn over it
    assert not any("━" in line or "summarizer calls" in line for line in screen), screen  # the bar cleared
    assert screen.index(warning[0]) < next(i for i, line in enumerate(screen) if line.startswith("tokens 2801"))


def test_a_reachable_budget_is_reached_and_an_unreachable_one_says_which_part_is_over(tmp_path: Path) -> None:
    """Issue 32: a short user message right after a five-way tool step, at 3,000 tokens, exited 1 at 3,325 with the
    step whole; the step is not the current turn once the user has spoken, so the budget is reached (exit 0). A
    budget that cannot be reached still exits 1, naming the part that alone is over it."""
    from corpora_support import parallel_step_history

    path, out = tmp_path / "parallel.json", tmp_path / "out.json"
    path.write_text(json.dumps(parallel_step_history()))
    code, _, err = run("compact", str(path), "--budget", "3000", "-o", str(out))
    assert code == 0, err
    assert "tokens 8157 -> " in err and validate(load(out.read_text()).messages, "openai") == []
    code, _, err = run("compact", str(path), "--budget", "1000", "-o", str(out))
    assert code == 1 and re.search(r"the system prompt alone is 12\d\d tokens, over the budget of 1000", err)
    code, _, err = run("compact", str(path), "--budget", "1300", "-o", str(out))
    assert code == 1 and "less than the smallest summary record needs" in err
    code, _, err = run("compact", EXAMPLE, "--budget", "100", "-o", str(out))
    assert code == 1 and "the current turn alone (the newest user message and what follows it) is" in err
