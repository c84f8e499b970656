"""The adapter every integration's framework-model summarizer goes through: failure classes, empty and refused
answers, usage reported even for a rejected answer, and the ``summarizer=`` rule (a string is chainsum's spec)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import cast

import httpx2 as httpx  # what the openai SDK builds its errors on
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chainsum.errors import SummarizerError
from chainsum.integrations._summarizer import ModelReply, ModelSummarizer, failure_of, take_summarizer
from chainsum.manager import (
    AnySummarizer,
    ContextManager,
    ManagerConfig,
    ManagerEvent,
    SummarizationEvent,
    SummarizationFailedEvent,
)
from chainsum.store import MemoryArchive
from chainsum.summarize import ExtractiveSummarizer, SummarizerUsage, metering
from chainsum.summarize.llm import OpenAISummarizer, SummarizerSpecError
from chainsum.summarize.llm._common import status_error
from integrations.summarizer_support import CONFIG, SUMMARY, WINDOW, assert_fell_back, assert_framed, history


def _response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers, request=httpx.Request("POST", "https://api.example/v1"))


class ThrottlingException(Exception):
    pass


class AuthenticationFailed(Exception):
    pass


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (openai.RateLimitError("slow down", response=_response(429, {"retry-after": "2"}), body=None), "rate_limit"),
        (openai.AuthenticationError("bad key", response=_response(401), body=None), "invalid"),
        (openai.BadRequestError("too long", response=_response(400), body=None), "invalid"),
        (openai.InternalServerError("oops", response=_response(500), body=None), "transport"),
        (openai.APITimeoutError(httpx.Request("POST", "https://api.example/v1")), "transport"),
        (openai.APIConnectionError(request=httpx.Request("POST", "https://api.example/v1")), "transport"),
        (TimeoutError(), "transport"),
        (ConnectionResetError(), "transport"),
        (ThrottlingException("Rate exceeded"), "rate_limit"),
        (AuthenticationFailed("no"), "invalid"),
        (ValueError("something nobody foresaw"), "transport"),
    ],
)
def test_framework_errors_map_onto_chainsums_failure_classes(exc: Exception, kind: str) -> None:
    error = failure_of(exc)
    assert error.kind == kind
    assert type(exc).__name__ in error.detail or "HTTP" in error.detail
    if isinstance(exc, openai.RateLimitError):
        assert error.retry_after == 2.0  # the server's wait, read from its headers


@given(st.integers(min_value=400, max_value=599))
def test_any_http_status_is_read_as_the_built_in_summarizers_read_it(status: int) -> None:
    class StatusError(Exception):
        status_code = status

    assert failure_of(StatusError("x")).kind == status_error(status, "x", None).kind


def test_a_frameworks_own_mapping_comes_first() -> None:
    mine = SummarizerError("mine", kind="refused")
    assert failure_of(ValueError("x"), lambda exc: mine) is mine


def _summarizer(reply: ModelReply | Exception) -> tuple[ModelSummarizer, list[tuple[str, str]]]:
    seen: list[tuple[str, str]] = []

    async def call(system: str, transcript: str) -> ModelReply:
        seen.append((system, transcript))
        if isinstance(reply, Exception):
            raise reply
        return reply

    return ModelSummarizer(name="fake", call=call), seen


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (ModelReply(None, SummarizerUsage(input_tokens=9, output_tokens=0)), "empty"),
        (ModelReply("  \n ", SummarizerUsage(input_tokens=9, output_tokens=1)), "empty"),
        (ModelReply("", SummarizerUsage(input_tokens=9, output_tokens=1), refused="content filter"), "refused"),
    ],
)
def test_an_answer_without_text_fails_and_its_usage_is_still_reported(reply: ModelReply, kind: str) -> None:
    summarizer, _ = _summarizer(reply)

    async def run() -> SummarizerUsage | None:
        with metering() as meter:
            with pytest.raises(SummarizerError) as caught:
                await summarizer("transcript")
            assert caught.value.kind == kind
            return meter.total

    assert asyncio.run(run()) == reply.usage


def test_a_raised_error_leaves_as_a_summarizer_error_with_its_cause() -> None:
    cause = openai.RateLimitError("slow down", response=_response(429), body=None)
    summarizer, _ = _summarizer(cause)
    with pytest.raises(SummarizerError) as caught:
        asyncio.run(summarizer("transcript"))
    assert caught.value.kind == "rate_limit" and caught.value.__cause__ is cause


def test_the_manager_reports_the_models_usage_and_sends_the_framed_transcript() -> None:
    usage = SummarizerUsage(input_tokens=700, output_tokens=40)
    summarizer, seen = _summarizer(ModelReply(SUMMARY, usage))
    kwargs: dict[str, object] = {"summarizer": summarizer}
    take_summarizer(kwargs, lambda model: None, "Test", fail_open=True)
    manager = ContextManager(CONFIG, context_window=WINDOW, summarizers=kwargs["summarizers"])  # type: ignore[arg-type]
    prepared = manager.prepare_sync(history())
    event = prepared.event
    assert isinstance(event, SummarizationEvent) and not event.errors
    assert SUMMARY in event.summary_text
    assert seen and all(s == seen[0][0] for s, _ in seen)
    for system, transcript in seen:
        assert_framed(system, transcript)
    assert event.summarizer_usage == SummarizerUsage(
        input_tokens=700 * len(seen), output_tokens=40 * len(seen), requests=len(seen)
    )


@pytest.mark.parametrize("failure", ["rate_limit", "hang", "empty"])
def test_a_failing_model_falls_back_to_the_extractive_summarizer(
    failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def call(system: str, transcript: str) -> ModelReply:
        if failure == "rate_limit":
            raise openai.RateLimitError("slow down", response=_response(429, {"retry-after": "0"}), body=None)
        if failure == "hang":
            await asyncio.sleep(3600)
        return ModelReply("", SummarizerUsage(input_tokens=5, output_tokens=0))

    kwargs: dict[str, object] = {"summarizer": ModelSummarizer(name="fake", call=call)}
    take_summarizer(kwargs, lambda model: None, "Test", fail_open=True)
    manager = ContextManager(CONFIG, context_window=WINDOW, summarizers=kwargs["summarizers"])  # type: ignore[arg-type]
    kind = {"rate_limit": "rate_limit", "hang": "transport", "empty": "empty"}[failure]
    event = assert_fell_back(manager, history(), kind, caplog)
    if failure == "empty":  # the rejected answers were billed: reported all the same
        assert event.summarizer_usage is not None and event.summarizer_usage.input_tokens >= 5
    else:
        assert event.summarizer_usage is None


# the summarizer= rule ------------------------------------------------------------------------------------------------
def _take(value: object, adapted: ModelSummarizer | None = None) -> list[object]:
    kwargs: dict[str, object] = {"summarizer": value}
    take_summarizer(kwargs, lambda model: adapted if model is value else None, "Test", fail_open=True)
    assert "summarizer" not in kwargs
    return list(kwargs["summarizers"])  # type: ignore[call-overload]


def test_a_string_is_chainsums_spec_not_the_frameworks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    (extractive,) = _take("extractive")
    assert isinstance(extractive, ExtractiveSummarizer)
    llm, fallback = _take("openai:gpt-4.1-mini")
    assert isinstance(llm, OpenAISummarizer) and llm.model == "gpt-4.1-mini"
    assert isinstance(fallback, ExtractiveSummarizer)
    with pytest.raises(SummarizerSpecError, match="bad summarizer 'gpt4'"):
        _take("gpt4")


def test_a_framework_model_is_adapted_and_a_callable_is_a_summarizer() -> None:
    adapted, _ = _summarizer(ModelReply("x"))
    model = object()
    first, fallback = _take(model, adapted)
    assert first is adapted and isinstance(fallback, ExtractiveSummarizer)

    def plain(transcript: str) -> str:
        return "summary"

    first, _ = _take(plain)
    assert first is plain


def test_bad_summarizer_arguments_are_one_line_errors() -> None:
    with pytest.raises(TypeError, match=r"^summarizer= takes .*, or a model from Test; got int$"):
        _take(42)
    kwargs: dict[str, object] = {"summarizer": "extractive", "summarizers": [ExtractiveSummarizer()]}
    with pytest.raises(TypeError, match="not both"):
        take_summarizer(kwargs, lambda model: None, "Test", fail_open=True)
    untouched: dict[str, object] = {"summarizer": None}
    take_summarizer(untouched, lambda model: None, "Test", fail_open=True)
    assert untouched == {}


def test_without_fail_open_the_model_is_alone_and_its_failure_raises_with_the_history_untouched() -> None:
    """The frameworks' rule (issue 33): the summarizer the user gave failing raises, nothing is compacted around it
    by the model-free path, and the failed event says it aborted."""

    async def call(system: str, transcript: str) -> ModelReply:
        raise openai.AuthenticationError("bad key", response=_response(401), body=None)

    events: list[ManagerEvent] = []
    kwargs: dict[str, object] = {"summarizer": ModelSummarizer(name="fake", call=call), "config": CONFIG}
    take_summarizer(kwargs, lambda model: None, "Test", fail_open=False)
    summarizers = cast("list[AnySummarizer]", kwargs["summarizers"])
    config = kwargs["config"]
    assert len(summarizers) == 1 and isinstance(config, ManagerConfig) and config.abort_on_failure
    assert replace(config, abort_on_failure=CONFIG.abort_on_failure) == CONFIG  # nothing else changed
    archive = MemoryArchive()
    manager = ContextManager(
        config,
        context_window=WINDOW,
        summarizers=summarizers,
        archive=archive,
        on_event=events.append,
    )
    hist = history()
    with pytest.raises(SummarizerError) as caught:
        manager.prepare_sync(hist)
    assert caught.value.kind == "invalid"
    (event,) = events
    assert isinstance(event, SummarizationFailedEvent) and event.aborted
    assert archive.records(manager.session) == [] and archive.archived(manager.session) == []


def test_without_fail_open_the_extractive_spec_stays_as_it_is() -> None:
    kwargs: dict[str, object] = {"summarizer": "extractive"}
    take_summarizer(kwargs, lambda model: None, "Test", fail_open=False)
    assert "config" not in kwargs  # nothing can fail: the configuration is the caller's
