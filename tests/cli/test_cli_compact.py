"""``chainsum compact`` as a user runs it: the extractive default, every strategy, the report, dry runs, provider
output, an OpenAI-compatible endpoint on loopback, and bad options."""

from __future__ import annotations

import json
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
