"""`BedrockSummarizer` beyond the cases every provider shares (tests/summarize/llm/test_providers.py): Bedrock's
error names, AWS's own configuration (region, credentials, endpoint variables), a caller's client, and the event
loop staying free while boto3 blocks. boto3 talks real HTTP to the loopback `FakeLLMServer`."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator

import boto3
import pytest
from botocore.config import Config

from chainsum.errors import MissingDependencyError, SummarizerError
from chainsum.summarize.llm import BedrockSummarizer, make_summarizer
from chainsum.testing.fake_llm import FakeLLMServer, FakeStall, FakeStatus, FakeText

MODEL = "us.amazon.nova-micro-v1:0"


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dummy credentials and a region, and nothing from this machine's AWS configuration."""
    for name in (
        "AWS_PROFILE",
        "AWS_DEFAULT_REGION",
        "AWS_REGION",
        "AWS_SESSION_TOKEN",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def failure(summarizer: BedrockSummarizer) -> SummarizerError:
    with pytest.raises(SummarizerError) as caught:
        asyncio.run(summarizer("transcript"))
    return caught.value


@pytest.mark.parametrize(
    ("status", "code", "kind", "words"),
    [
        (429, "ThrottlingException", "rate_limit", "rate limited"),
        (400, "ServiceQuotaExceededException", "rate_limit", "rate limited"),
        (408, "ModelTimeoutException", "transport", "ModelTimeoutException"),
        (429, "ModelNotReadyException", "transport", "ModelNotReadyException"),
        (424, "ModelErrorException", "transport", "ModelErrorException"),
        (503, "ServiceUnavailableException", "transport", "ServiceUnavailableException"),
        (403, "AccessDeniedException", "invalid", "auth"),
        (403, "UnrecognizedClientException", "invalid", "auth"),
        (403, "ExpiredTokenException", "invalid", "auth"),
        (400, "ValidationException", "invalid", "bad request"),
        (404, "ResourceNotFoundException", "invalid", "bad request"),
        (502, "SomeNewException", "transport", "HTTP 502"),  # an unknown name: the status decides
        (418, "SomeNewException", "invalid", "HTTP 418"),
    ],
)
def test_bedrock_errors_map_onto_the_failure_classes(
    server: FakeLLMServer, status: int, code: str, kind: str, words: str
) -> None:
    server.script(FakeStatus(status=status, code=code, message="the service said no"))
    error = failure(BedrockSummarizer(MODEL, base_url=server.base_url))
    assert error.kind == kind
    assert words in str(error) and "the service said no" in str(error)
    assert len(server.requests) == 1  # boto3's own retries are off


def test_the_endpoint_comes_from_aws_endpoint_url_bedrock_runtime(
    server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.base_url)
    server.script(FakeText(text="from the env endpoint"))
    assert asyncio.run(BedrockSummarizer(MODEL)("t")) == "from the env endpoint"
    [request] = server.requests
    assert request.model == MODEL
    assert "us-east-1/bedrock/aws4_request" in request.headers["authorization"]  # signed for the region


def test_aws_region_is_read_when_boto3_finds_no_region(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    asyncio.run(BedrockSummarizer(MODEL, base_url=server.base_url)("t"))
    assert "eu-west-3/bedrock/aws4_request" in server.requests[0].headers["authorization"]
    asyncio.run(BedrockSummarizer(MODEL, base_url=server.base_url, region="ap-south-1")("t"))
    assert "ap-south-1/bedrock/aws4_request" in server.requests[1].headers["authorization"]


def test_no_region_is_a_configuration_failure(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    error = failure(BedrockSummarizer(MODEL, base_url=server.base_url))
    assert error.kind == "invalid"
    assert "region" in str(error)
    assert server.requests == []


def test_no_credentials_is_an_auth_failure(server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    error = failure(BedrockSummarizer(MODEL, base_url=server.base_url))
    assert error.kind == "invalid"
    assert "auth" in str(error) and "credentials" in str(error)
    assert server.requests == []


def test_api_key_is_refused_with_the_aws_way() -> None:
    with pytest.raises(ValueError, match="AWS_BEARER_TOKEN_BEDROCK"):
        BedrockSummarizer(MODEL, api_key="sk-anything")


def test_the_client_is_built_once_and_reused(server: FakeLLMServer) -> None:
    summarizer = BedrockSummarizer(MODEL, base_url=server.base_url)

    async def twice() -> list[str]:
        return [await summarizer("a"), await summarizer("b")]

    assert asyncio.run(twice()) == ["A fake summary.", "A fake summary."]
    assert asyncio.run(summarizer("c")) == "A fake summary."  # another event loop: the client does not care
    assert len(server.requests) == 3
    assert summarizer == BedrockSummarizer(MODEL, base_url=server.base_url)  # the kept client is no part of equality


def test_a_callers_client_is_used_and_still_bounded_by_the_timeout(server: FakeLLMServer) -> None:
    client = boto3.client(
        "bedrock-runtime",
        endpoint_url=server.base_url,
        config=Config(retries={"total_max_attempts": 1}, read_timeout=30),
    )
    server.script(FakeText(text="through your client"), FakeStall(seconds=30))
    summarizer = BedrockSummarizer(MODEL, client=client, timeout=0.3)
    assert asyncio.run(summarizer("t")) == "through your client"
    started = time.monotonic()
    error = failure(summarizer)  # the client would wait 30 s; the summarizer's timeout does not
    assert error.kind == "transport" and "timed out" in str(error)
    assert time.monotonic() - started < 5


@pytest.mark.slow
def test_the_event_loop_runs_while_boto3_waits(server: FakeLLMServer) -> None:
    server.script(FakeStall(seconds=0.4), FakeText(text="late"))

    async def scenario() -> tuple[int, str]:
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        task = asyncio.create_task(ticker())
        try:
            await BedrockSummarizer(MODEL, base_url=server.base_url, timeout=2)("t")
        except SummarizerError:
            pass  # the stall ends with a closed connection; what matters is the loop meanwhile
        done.set()
        await task
        return ticks, await BedrockSummarizer(MODEL, base_url=server.base_url)("t")

    ticks, text = asyncio.run(scenario())
    assert ticks >= 10  # 0.4 s of stall at one tick per 10 ms: the loop was never blocked
    assert text == "late"


def test_make_summarizer_builds_bedrock_from_the_prefix_or_the_bare_id() -> None:
    assert make_summarizer(f"bedrock:{MODEL}") == BedrockSummarizer(MODEL)
    assert make_summarizer(MODEL) == BedrockSummarizer(MODEL)
    assert make_summarizer("anthropic.claude-3-5-haiku-20241022-v1:0", base_url="http://127.0.0.1:1") == (
        BedrockSummarizer("anthropic.claude-3-5-haiku-20241022-v1:0", base_url="http://127.0.0.1:1")
    )


def test_missing_boto3_is_reported_when_built_and_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    summarizer = BedrockSummarizer(MODEL, base_url="http://127.0.0.1:9")
    monkeypatch.setitem(sys.modules, "boto3", None)  # makes `import boto3` fail as if not installed
    with pytest.raises(MissingDependencyError, match=r'pip install "chainsum\[bedrock\]"'):
        BedrockSummarizer(MODEL)
    with pytest.raises(MissingDependencyError, match=r"chainsum\[bedrock\]"):
        asyncio.run(summarizer("t"))
