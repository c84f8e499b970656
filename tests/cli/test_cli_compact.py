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
    assert code == 1  # the output is written, and the failure is said, once, with a non-zero exit
    assert err.count("summarizer failed") == 1 and "HTTP 500" in err
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
    from chainsum.testing.corpora import corpora_root

    root = corpora_root()
    logs = sorted((root / "claude-code").glob("*.jsonl")) if root is not None else []
    if not logs:
        pytest.skip("the shared Claude Code corpus is not here (../shared/corpora)")
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


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_on_a_terminal_the_bar_counts_calls_against_the_planned_total(tmp_path: Path) -> None:
    """Run as a user would at a terminal (standard error on a pseudo-terminal): the bar shows the phase and
    ``N/M summarizer calls`` with M the planned total, never ``0/?``; it is cleared, and the summary line takes its
    place with no blank line around it."""
    import os
    import pty
    import subprocess

    primary, secondary = pty.openpty()
    env = {**os.environ, "COLUMNS": "160", "TERM": "xterm"}
    env.pop("FORCE_COLOR", None)
    args = ["compact", EXAMPLE, "--budget", "950", "--strategy", "ratio", "-o", str(tmp_path / "o.json")]
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
    assert proc.wait(timeout=60) == 0
    raw = b"".join(chunks).decode("utf-8", errors="replace")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    counts = re.findall(r"(\d+)/(\d+) summarizer calls", text)
    assert counts, raw
    assert "/?" not in text
    calls = re.search(r"(\d+) summarizer call\(s\)", text)
    assert calls is not None and int(calls[1]) >= 2
    assert counts[-1] == (calls[1], calls[1])  # the last frame: every planned call done
    assert all(int(done) <= int(total) for done, total in counts)
    assert "oldest" in text  # the phase: the round's plan note
    screen = _screen(raw)
    assert screen[0].startswith("tokens 2801 -> ") and screen[1:] == [""], screen  # bar gone, no blank line
