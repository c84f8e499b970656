"""`ManagerConfig` and `ManagerConfig.from_env`: the spec's "SummarizationConfig - environment variable parsing"
tests, then the range checks, booleans and the ``.env`` reader."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from chainsum.errors import ChainsumError
from chainsum.manager._config import ENV_VARS, ConfigError, ManagerConfig, parse_bool, read_dotenv


# the spec's defaults and variables -----------------------------------------------------------------------------------
def test_defaults() -> None:
    c = ManagerConfig.from_env({}, dotenv_path=None)
    assert c == ManagerConfig()
    assert c.enabled is True
    assert c.model_id is None
    assert c.summary_ratio == 0.3
    assert c.preserve_recent == 10
    assert (c.trigger_token_ratio, c.reset_token_ratio, c.emergency_token_ratio) == (0.8, 0.7, 1.0)
    assert (c.cooldown_messages, c.min_messages, c.max_summary_chain_depth) == (4, 12, 3)
    assert c.force_refresh_after_messages is None
    assert c.abort_on_failure is False
    assert c.summarizer_input_cap_tokens == 8000
    assert c.strategy == "auto"
    assert c.context_window is None


def test_the_spec_variables() -> None:
    c = ManagerConfig.from_env(
        {
            "SUMMARIZATION_ENABLED": "false",
            "SUMMARIZATION_MODEL_ID": "us.amazon.nova-micro-v1:0",
            "SUMMARIZATION_SUMMARY_RATIO": "0.5",
            "SUMMARIZATION_PRESERVE_RECENT": "6",
        },
        dotenv_path=None,
    )
    assert c.enabled is False
    assert c.model_id == "us.amazon.nova-micro-v1:0"
    assert c.summary_ratio == 0.5
    assert c.preserve_recent == 6


def test_every_threshold_has_a_variable() -> None:
    env = {
        "SUMMARIZATION_TRIGGER_TOKEN_RATIO": "0.9",
        "SUMMARIZATION_RESET_TOKEN_RATIO": "0.6",
        "SUMMARIZATION_EMERGENCY_TOKEN_RATIO": "1.1",
        "SUMMARIZATION_COOLDOWN_MESSAGES": "2",
        "SUMMARIZATION_MIN_MESSAGES": "20",
        "SUMMARIZATION_MAX_SUMMARY_CHAIN_DEPTH": "5",
        "SUMMARIZATION_FORCE_REFRESH_AFTER_MESSAGES": "50",
        "SUMMARIZATION_ABORT_ON_FAILURE": "yes",
        "SUMMARIZATION_SUMMARIZER_INPUT_CAP_TOKENS": "4000",
        "SUMMARIZATION_STRATEGY": "safe-split",
        "SUMMARIZATION_CONTEXT_WINDOW": "32768",
    }
    c = ManagerConfig.from_env(env, dotenv_path=None)
    assert (c.trigger_token_ratio, c.reset_token_ratio, c.emergency_token_ratio) == (0.9, 0.6, 1.1)
    assert (c.cooldown_messages, c.min_messages, c.max_summary_chain_depth) == (2, 20, 5)
    assert c.force_refresh_after_messages == 50
    assert c.abort_on_failure is True
    assert c.summarizer_input_cap_tokens == 4000
    assert c.strategy == "safe-split"
    assert c.context_window == 32768


def test_to_env_round_trips() -> None:
    c = ManagerConfig(model_id="gpt-4o-mini", force_refresh_after_messages=30, abort_on_failure=True)
    env = c.to_env()
    assert "SUMMARIZATION_CONTEXT_WINDOW" not in env
    assert env["SUMMARIZATION_ABORT_ON_FAILURE"] == "true"
    assert ManagerConfig.from_env(env, dotenv_path=None) == c


def test_env_var_table_is_consistent() -> None:
    names = [v.name for v in ENV_VARS]
    assert len(set(names)) == len(names)
    assert {v.field for v in ENV_VARS} == {f.name for f in dataclasses.fields(ManagerConfig)}
    defaults = {v.field: v.default for v in ENV_VARS}
    for f in dataclasses.fields(ManagerConfig):
        var = next(v for v in ENV_VARS if v.field == f.name)
        assert var.name == "SUMMARIZATION_" + f.name.upper()
        assert var.description
        assert var.allowed
    # the documented defaults are the real ones
    assert ManagerConfig.from_env({v.name: v.default for v in ENV_VARS}, dotenv_path=None) == ManagerConfig()
    assert defaults["summary_ratio"] == "0.3"


def test_empty_values_count_as_unset() -> None:
    c = ManagerConfig.from_env({"SUMMARIZATION_MODEL_ID": "", "SUMMARIZATION_PRESERVE_RECENT": "  "}, dotenv_path=None)
    assert c.model_id is None
    assert c.preserve_recent == 10


# booleans --------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["true", "TRUE", "True", "1", "yes", "YES", "on", " On "])
def test_true_spellings(text: str) -> None:
    assert parse_bool(text) is True
    assert ManagerConfig.from_env({"SUMMARIZATION_ABORT_ON_FAILURE": text}, dotenv_path=None).abort_on_failure


@pytest.mark.parametrize("text", ["false", "FALSE", "0", "no", "No", "off", "OFF"])
def test_false_spellings(text: str) -> None:
    assert parse_bool(text) is False
    assert not ManagerConfig.from_env({"SUMMARIZATION_ENABLED": text}, dotenv_path=None).enabled


@pytest.mark.parametrize("text", ["maybe", "2", "t", "enabled", "-1"])
def test_bad_boolean_names_the_variable(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        ManagerConfig.from_env({"SUMMARIZATION_ENABLED": text}, dotenv_path=None)
    assert info.value.name == "SUMMARIZATION_ENABLED"
    assert info.value.value == text
    assert "true/false" in str(info.value)


# ranges and types ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("var", "value", "allowed"),
    [
        ("SUMMARIZATION_SUMMARY_RATIO", "0.05", "0.1 to 0.8"),
        ("SUMMARIZATION_SUMMARY_RATIO", "0.81", "0.1 to 0.8"),
        ("SUMMARIZATION_SUMMARY_RATIO", "nan", "0.1 to 0.8"),
        ("SUMMARIZATION_SUMMARY_RATIO", "abc", "a number"),
        ("SUMMARIZATION_PRESERVE_RECENT", "1", ">= 2"),
        ("SUMMARIZATION_PRESERVE_RECENT", "3.5", "an integer"),
        ("SUMMARIZATION_TRIGGER_TOKEN_RATIO", "0", "> 0 and <= 1"),
        ("SUMMARIZATION_TRIGGER_TOKEN_RATIO", "1.5", "> 0 and <= 1"),
        ("SUMMARIZATION_COOLDOWN_MESSAGES", "-1", ">= 0"),
        ("SUMMARIZATION_MAX_SUMMARY_CHAIN_DEPTH", "0", ">= 1"),
        ("SUMMARIZATION_FORCE_REFRESH_AFTER_MESSAGES", "0", ">= 1"),
        ("SUMMARIZATION_SUMMARIZER_INPUT_CAP_TOKENS", "10", ">= 100"),
        ("SUMMARIZATION_STRATEGY", "fancy", "auto, sections, safe-split, ratio, mask"),
        ("SUMMARIZATION_CONTEXT_WINDOW", "128k", "an integer"),
    ],
)
def test_bad_values_name_variable_value_and_range(var: str, value: str, allowed: str) -> None:
    with pytest.raises(ConfigError) as info:
        ManagerConfig.from_env({var: value}, dotenv_path=None)
    err = info.value
    assert err.name == var
    assert err.value == value
    assert allowed in err.allowed
    message = str(err)
    assert var in message
    assert repr(value) in message
    assert allowed in message


def test_config_error_is_a_chainsum_value_error() -> None:
    with pytest.raises(ConfigError) as info:
        ManagerConfig(summary_ratio=0.9)
    assert isinstance(info.value, ChainsumError)
    assert isinstance(info.value, ValueError)
    assert info.value.name == "summary_ratio"


def test_reset_must_be_below_trigger() -> None:
    with pytest.raises(ConfigError, match="reset_token_ratio"):
        ManagerConfig(trigger_token_ratio=0.7, reset_token_ratio=0.7)
    with pytest.raises(ConfigError) as info:
        ManagerConfig.from_env({"SUMMARIZATION_TRIGGER_TOKEN_RATIO": "0.6"}, dotenv_path=None)
    assert info.value.name == "SUMMARIZATION_RESET_TOKEN_RATIO"
    assert "SUMMARIZATION_TRIGGER_TOKEN_RATIO" in str(info.value)
    ok = ManagerConfig.from_env(
        {"SUMMARIZATION_TRIGGER_TOKEN_RATIO": "0.6", "SUMMARIZATION_RESET_TOKEN_RATIO": "0.5"}, dotenv_path=None
    )
    assert (ok.trigger_token_ratio, ok.reset_token_ratio) == (0.6, 0.5)


def test_emergency_must_not_be_below_trigger() -> None:
    with pytest.raises(ConfigError, match="emergency_token_ratio"):
        ManagerConfig(emergency_token_ratio=0.75)


def test_python_types_are_checked() -> None:
    with pytest.raises(ConfigError):
        ManagerConfig(preserve_recent=True)
    with pytest.raises(ConfigError):
        ManagerConfig(enabled=1)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        ManagerConfig(model_id=3)  # type: ignore[arg-type]
    assert ManagerConfig(summary_ratio=0.5).summary_ratio == 0.5
    assert ManagerConfig(trigger_token_ratio=1).trigger_token_ratio == 1


def test_config_is_frozen() -> None:
    c = ManagerConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.enabled = False  # type: ignore[misc]
    assert dataclasses.replace(c, enabled=False).enabled is False


# .env ------------------------------------------------------------------------------------------------------------
def test_dotenv_is_read_and_environment_overrides_it(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        "# chainsum settings\n"
        "SUMMARIZATION_MODEL_ID=gpt-4o-mini\n"
        "export SUMMARIZATION_PRESERVE_RECENT=8\n"
        "SUMMARIZATION_SUMMARY_RATIO='0.4'\n"
        'SUMMARIZATION_ENABLED="off"\n',
        encoding="utf-8",
    )
    c = ManagerConfig.from_env({"SUMMARIZATION_PRESERVE_RECENT": "12"}, dotenv_path=env_file)
    assert c.model_id == "gpt-4o-mini"
    assert c.preserve_recent == 12  # environment wins
    assert c.summary_ratio == 0.4
    assert c.enabled is False


def test_dotenv_bad_value_names_the_variable(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("SUMMARIZATION_SUMMARY_RATIO=2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="SUMMARIZATION_SUMMARY_RATIO"):
        ManagerConfig.from_env({}, dotenv_path=env_file)


def test_missing_dotenv_is_fine(tmp_path: Path) -> None:
    assert read_dotenv(tmp_path / "nope.env") == {}
    assert ManagerConfig.from_env({}, dotenv_path=tmp_path / "nope.env") == ManagerConfig()


def test_default_reads_os_environ(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SUMMARIZATION_MIN_MESSAGES", "30")
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("SUMMARIZATION_COOLDOWN_MESSAGES=7\n", encoding="utf-8")
    c = ManagerConfig.from_env()
    assert c.min_messages == 30
    assert c.cooldown_messages == 7


def test_dotenv_syntax(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        "\n"
        "   # indented comment\n"
        "A=plain value  # trailing comment\n"
        "B = spaced \n"
        "C='single # not a comment'\n"
        'D="double \\"quoted\\" \\n newline"\n'
        "E=\n"
        "export F=exported\n"
        "G=a=b\n"
        "H=#hash\n"
        "not a pair\n"
        "1BAD=x\n"
        "I='unterminated\n"
        "A=second wins\n",
        encoding="utf-8",
    )
    with caplog.at_level("WARNING", logger="chainsum.manager._config"):
        values = read_dotenv(env_file)
    assert values == {
        "A": "second wins",
        "B": "spaced",
        "C": "single # not a comment",
        "D": 'double "quoted" \n newline',
        "E": "",
        "F": "exported",
        "G": "a=b",
        "H": "#hash",
    }
    assert len([r for r in caplog.records if "malformed" in r.getMessage()]) == 3
