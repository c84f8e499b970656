"""OpenAI Codex CLI (``@openai/codex``, pinned in package.json) through ``chainsum serve`` to the scripted upstream,
over the Responses API with streaming.

Pointing it at the proxy needs no login: a custom model provider whose ``base_url`` is the proxy's ``/v1``, whose
``env_key`` names the variable holding any key, with ``wire_api = "responses"``. Codex sends ``store: false``,
``include: ["reasoning.encrypted_content"]`` and a ``session-id`` header (the proxy's session), and hands every
reasoning item back with its ``encrypted_content``: the checks make sure they come back as the upstream wrote them.

Measured with 0.171.0, two ways of calling tools, both tested: a model its catalog does not know (``-m gpt-e2e``)
gets plain function tools, among them ``exec_command``; its default model (``gpt-6.2-sol``, as any catalog model)
runs in code mode: the tool definitions come as the first input item (``type: "additional_tools"``), and the model
calls one custom tool, ``exec``, whose JavaScript calls ``tools.exec_command(...)`` (``custom_tool_call`` items).
The first request is about 10,000 tokens (function tools) or 15,000 (code mode) by chainsum's count, so a
40,000-token window forces a compaction every few steps. Its own output cap is raised (``tool_output_token_limit``,
and ``max_output_tokens`` in each call) so that the outputs reach the proxy whole. Codex compacts its own history
past ``model_auto_compact_token_limit``: the upstream reports 190,000 input tokens once, near the end, and Codex
sends its compaction prompt, then starts over from the summary the upstream wrote.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e.agent_script import FINAL_ANSWER, Step
from e2e.conversation import RESPONSES, check_conversation
from e2e.fake_upstream import FakeUpstream, Persona
from e2e.harness import base_env, client, run_client, serve

pytestmark = pytest.mark.e2e

WINDOW = 40_000
TASK = "Run the scripted shell commands the model gives you, one per turn, then report what it says."


def _exec_command(the_step: Step) -> dict[str, object]:
    return {"cmd": the_step.command, "max_output_tokens": 40_000}


def _exec(the_step: Step) -> str:
    """Code mode: the ``exec`` tool's JavaScript, calling the nested ``exec_command`` and returning its output."""
    args = json.dumps({"cmd": the_step.command, "max_output_tokens": 40_000})
    return f"const r = await tools.exec_command({args});\ntext(r.output);"


def _persona(tool: str) -> Persona:
    return Persona(
        route="responses",
        tool_name=tool,
        arguments=_exec if tool == "exec" else _exec_command,
        id_prefix="call_",
        compact_prompt="CONTEXT CHECKPOINT COMPACTION",
        high_usage_at=20,
        high_usage=190_000,
    )


@pytest.mark.parametrize(
    ("model", "tool"),
    [pytest.param(None, "exec", id="default-model"), pytest.param("gpt-e2e", "exec_command", id="function-tools")],
)
def test_codex_through_the_proxy(tmp_path: Path, model: str | None, tool: str) -> None:
    codex = client("codex")
    with FakeUpstream(_persona(tool)) as fake, serve(tmp_path, upstream=fake.base_url, context_window=WINDOW) as proxy:
        env = base_env(tmp_path / "home")
        codex_home = tmp_path / "home" / ".codex"
        codex_home.mkdir()
        env.update(CODEX_HOME=str(codex_home), CHAINSUM_E2E_KEY="sk-e2e")
        work = tmp_path / "work"
        work.mkdir()
        settings = {
            "model_provider": "chainsum",
            "model_providers.chainsum.name": "chainsum",
            "model_providers.chainsum.base_url": f'"{proxy.base_url}/v1"',
            "model_providers.chainsum.env_key": "CHAINSUM_E2E_KEY",
            "model_providers.chainsum.wire_api": "responses",
            "model_auto_compact_token_limit": "100000",
            "tool_output_token_limit": "40000",
            "check_for_update_on_startup": "false",
        }
        options = [part for key, value in settings.items() for part in ("-c", f"{key}={value}")]
        command = [
            codex,
            "exec",
            *(["-m", model] if model else []),
            "--skip-git-repo-check",
            "--ephemeral",
            "--dangerously-bypass-approvals-and-sandbox",
            *options,
            TASK,
        ]
        run = run_client(command, cwd=work, env=env)
        assert run.returncode == 0, run.describe()
        assert FINAL_ANSWER in run.stdout, run.describe()
        fake.save(tmp_path / "received.json")
        stats = check_conversation(fake, proxy, RESPONSES, WINDOW)
        for request in fake.of_kind("main", "compact"):
            assert request.body.get("store") is False
            assert "reasoning.encrypted_content" in request.body.get("include", [])
            assert request.headers.get("session-id"), "Codex's session-id header did not reach the upstream"
    assert stats.client_compactions == 1, f"Codex did not compact its own history: {stats.line()}"
    print(f"codex {model or 'default model'}: {run.seconds:.1f} s, {stats.line()}")
