"""``chainsum compact --summarizer`` with Bedrock and Gemini: the prefixed and the bare forms reach each provider's
API (the loopback `FakeLLMServer`, through the SDKs' own endpoint variables or ``--base-url``), and the usage errors
and help name the new forms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chainsum.cli._app import app
from chainsum.testing import FakeLLMServer
from chainsum.testing.fake_llm import FakeText

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "support-session.json")
SUMMARY = "The agent fixed orders/service.py (KeyError 'total')."
runner = CliRunner()


@pytest.fixture(autouse=True)
def cloud_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": "/nonexistent/config",
        "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
        "AWS_EC2_METADATA_DISABLED": "true",
        "GEMINI_API_KEY": "test-key",
    }.items():
        monkeypatch.setenv(name, value)


def compact(tmp_path: Path, *options: str) -> tuple[int, str, dict[str, object]]:
    out, report = tmp_path / "out.json", tmp_path / "r.json"
    args = ["compact", EXAMPLE, "--budget", "700", "--strategy", "ratio", *options, "-o", str(out)]
    result = runner.invoke(app, [*args, "--report", str(report)])
    assert result.exit_code in (0, 1), result.stderr
    assert SUMMARY in out.read_text()
    return result.exit_code, result.stderr, json.loads(report.read_text())


def test_bedrock_prefix_through_aws_endpoint_url_bedrock_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLMServer(default=FakeText(text=SUMMARY)) as server:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.base_url)
        _, _, report = compact(tmp_path, "--summarizer", "bedrock:us.amazon.nova-micro-v1:0")
    assert server.requests and {r.path for r in server.requests} == {"/model/us.amazon.nova-micro-v1%3A0/converse"}
    assert report["summarizer_calls"] == len(server.requests)


def test_a_model_summarizer_reports_what_it_read(tmp_path: Path) -> None:
    """The report and the summary line say what share of the summarized conversation the model read (issue 32)."""
    with FakeLLMServer(default=FakeText(text=SUMMARY)) as server:
        _, err, report = compact(tmp_path, "--summarizer", "gemini:gemini-2.5-flash", "--base-url", server.base_url)
    assert report["model_coverage"] == 1.0
    assert "summarizer call(s) (the model read 100.0 % of what it summarized)" in err


def test_a_bare_bedrock_id_with_base_url(tmp_path: Path) -> None:
    with FakeLLMServer(default=FakeText(text=SUMMARY)) as server:
        compact(tmp_path, "--summarizer", "us.amazon.nova-micro-v1:0", "--base-url", server.base_url)
    assert server.requests and {r.model for r in server.requests} == {"us.amazon.nova-micro-v1:0"}


@pytest.mark.parametrize("spec", ["gemini-2.5-flash", "gemini:gemini-2.5-flash"])
def test_gemini_with_base_url(tmp_path: Path, spec: str) -> None:
    with FakeLLMServer(default=FakeText(text=SUMMARY)) as server:
        compact(tmp_path, "--summarizer", spec, "--base-url", server.base_url)
    assert server.requests and {r.path for r in server.requests} == {"/v1/models/gemini-2.5-flash:generateContent"}
    assert server.requests[0].headers["x-goog-api-key"] == "test-key"


def test_an_unknown_provider_lists_the_new_forms() -> None:
    result = runner.invoke(app, ["compact", EXAMPLE, "--summarizer", "vertex:gemini-x"])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "bedrock:MODEL" in result.stderr and "gemini:MODEL" in result.stderr
    assert "us.amazon.nova-micro-v1:0" in result.stderr


def test_help_lists_the_new_forms() -> None:
    result = runner.invoke(app, ["compact", "--help"], env={"COLUMNS": "300", "TERMINAL_WIDTH": "300"})
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "bedrock:MODEL" in text and "gemini:MODEL" in text and "us.amazon.nova-micro-v1:0" in text
