"""The shared pieces of the LLM summarizers: retry-after parsing, the retry loop, and reply checking."""

from __future__ import annotations

import asyncio
import email.utils

import pytest

from chainsum.errors import SummarizerError
from chainsum.summarize.llm import parse_retry_after
from chainsum.summarize.llm._common import (
    anthropic_text,
    bedrock_text,
    decode_json,
    gemini_text,
    openai_text,
    status_error,
    with_retries,
)

NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": " 1.5 "}, 1.5),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": email.utils.formatdate(NOW + 30, usegmt=True)}, 30.0),
        ({"retry-after": email.utils.formatdate(NOW - 30, usegmt=True)}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "nan"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str] | None, expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == expected


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, "rate_limit"),
        (408, "transport"),
        (500, "transport"),
        (529, "transport"),
        (401, "invalid"),
        (404, "invalid"),
    ],
)
def test_status_classes(status: int, kind: str) -> None:
    assert status_error(status, "x", {"retry-after": "2"}).kind == kind


def test_status_error_keeps_a_short_one_line_preview() -> None:
    error = status_error(500, "line\n" * 500, None)
    assert "\n" not in error.detail
    assert len(error.detail) < 250


class Script:
    """An attempt function failing with the given errors, then succeeding; sleeps are recorded, not slept."""

    def __init__(self, *errors: SummarizerError) -> None:
        self.errors = list(errors)
        self.calls = 0
        self.sleeps: list[float] = []

    async def attempt(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "done"

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def run_script(script: Script, retries: int, max_wait: float = 60.0) -> str:
    return asyncio.run(with_retries(script.attempt, retries=retries, max_wait=max_wait, sleep=script.sleep))


def test_backoff_doubles_from_250_ms() -> None:
    script = Script(*(SummarizerError("down", kind="transport") for _ in range(3)))
    assert run_script(script, retries=3) == "done"
    assert script.sleeps == [0.25, 0.5, 1.0]


def test_retry_after_replaces_the_backoff() -> None:
    script = Script(SummarizerError("slow down", kind="rate_limit", retry_after=3.0))
    assert run_script(script, retries=1) == "done"
    assert script.sleeps == [3.0]


def test_a_wait_longer_than_max_wait_is_not_slept() -> None:
    script = Script(SummarizerError("slow down", kind="rate_limit", retry_after=600.0))
    with pytest.raises(SummarizerError):
        run_script(script, retries=3, max_wait=60.0)
    assert (script.calls, script.sleeps) == (1, [])


@pytest.mark.parametrize("kind", ["empty", "invalid", "refused"])
def test_non_retryable_kinds_are_raised_at_once(kind: str) -> None:
    script = Script(SummarizerError("no", kind=kind))
    with pytest.raises(SummarizerError):
        run_script(script, retries=3)
    assert script.calls == 1


def test_no_retries_means_one_attempt() -> None:
    script = Script(SummarizerError("down", kind="transport"))
    with pytest.raises(SummarizerError):
        run_script(script, retries=0)
    assert script.calls == 1


def kind_of(extract: object, payload: object) -> str:
    assert callable(extract)
    with pytest.raises(SummarizerError) as caught:
        extract(payload)
    return caught.value.kind


def test_openai_text_variants() -> None:
    def completion(message: object, finish: str = "stop") -> object:
        return {"choices": [{"message": message, "finish_reason": finish}]}

    assert openai_text(completion({"content": " hi "})) == "hi"
    assert openai_text(completion({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]})) == "ab"
    assert kind_of(openai_text, completion({"content": None})) == "empty"
    assert kind_of(openai_text, completion({"content": 3})) == "invalid"
    assert kind_of(openai_text, completion("text")) == "invalid"
    assert kind_of(openai_text, completion({"content": "partial"}, finish="content_filter")) == "refused"
    assert kind_of(openai_text, []) == "invalid"


def test_anthropic_text_variants() -> None:
    def message(*blocks: object, stop: str = "end_turn") -> object:
        return {"content": list(blocks), "stop_reason": stop}

    thinking = {"type": "thinking", "thinking": "hmm", "signature": "s"}
    assert anthropic_text(message(thinking, {"type": "text", "text": "sum"}, {"type": "text", "text": "mary"})) == (
        "summary"
    )
    assert kind_of(anthropic_text, message(thinking)) == "empty"
    assert kind_of(anthropic_text, message({"type": "text", "text": 5})) == "invalid"
    assert kind_of(anthropic_text, message("text")) == "invalid"
    assert kind_of(anthropic_text, message({"type": "text", "text": "x"}, stop="refusal")) == "refused"


def test_bedrock_text_variants() -> None:
    def reply(*blocks: object, stop: str = "end_turn") -> object:
        return {"output": {"message": {"role": "assistant", "content": list(blocks)}}, "stopReason": stop}

    reasoning = {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "s"}}}
    assert bedrock_text(reply(reasoning, {"text": " sum"}, {"text": "mary "})) == "summary"
    assert kind_of(bedrock_text, reply(reasoning)) == "empty"
    assert kind_of(bedrock_text, reply({"text": " "})) == "empty"
    assert kind_of(bedrock_text, reply({"text": 5})) == "invalid"
    assert kind_of(bedrock_text, reply("text")) == "invalid"
    # a guardrail's canned answer is text, but not a summary
    assert kind_of(bedrock_text, reply({"text": "Sorry."}, stop="guardrail_intervened")) == "refused"
    assert kind_of(bedrock_text, reply({"text": "x"}, stop="content_filtered")) == "refused"
    assert kind_of(bedrock_text, {}) == "invalid"  # what botocore returns for a body that is not JSON
    assert kind_of(bedrock_text, {"output": {"message": {"content": "not a list"}}}) == "invalid"


def test_gemini_text_variants() -> None:
    def reply(*parts: object, finish: str = "STOP") -> object:
        return {"candidates": [{"content": {"role": "model", "parts": list(parts)}, "finishReason": finish}]}

    thought = {"text": "thinking it over", "thought": True}
    assert gemini_text(reply(thought, {"text": "sum"}, {"text": "mary\n"})) == "summary"
    assert kind_of(gemini_text, reply(thought)) == "empty"
    assert kind_of(gemini_text, reply({"text": 3})) == "invalid"
    assert kind_of(gemini_text, reply({"text": "partial"}, finish="SAFETY")) == "refused"
    assert kind_of(gemini_text, reply(finish="RECITATION")) == "refused"
    assert kind_of(gemini_text, {"candidates": [{"finishReason": "MAX_TOKENS"}]}) == "empty"
    assert kind_of(gemini_text, {"candidates": []}) == "empty"
    assert kind_of(gemini_text, {"candidates": "x"}) == "invalid"
    assert kind_of(gemini_text, {"promptFeedback": {"blockReason": "OTHER"}}) == "refused"
    assert kind_of(gemini_text, {"candidates": [{"content": {"parts": "x"}}]}) == "invalid"
    assert kind_of(gemini_text, []) == "invalid"


def test_decode_json_rejects_bad_bytes() -> None:
    assert decode_json(b'{"a": 1}') == {"a": 1}
    with pytest.raises(SummarizerError) as caught:
        decode_json(b"\xff\xfe not json")
    assert caught.value.kind == "invalid"
