"""Summarize through Amazon Bedrock's Converse API with ``boto3``, imported only when a summary runs.

boto3 is synchronous, so each call runs in a daemon thread (`in_daemon_thread`) under an ``asyncio`` deadline: the
event loop stays free for the requests a summary makes room for, and a hung call costs its timeout, not the
process. Region and credentials come the standard AWS way (environment, shared config and credentials files, SSO,
an instance or task role), as do endpoint overrides such as ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, cast

from ...errors import MissingDependencyError, SummarizerError
from ._blocking import in_daemon_thread
from ._common import LLMSummarizerBase, bedrock_text, logger, parse_retry_after, require, status_error

if TYPE_CHECKING:
    from botocore.exceptions import ClientError  # pyright: ignore[reportMissingTypeStubs]

__all__ = ["BedrockRuntimeClient", "BedrockSummarizer"]


class BedrockRuntimeClient(Protocol):
    """The one method of a boto3 ``bedrock-runtime`` client that chainsum calls (its reply is checked field by
    field, so it is typed as a plain mapping rather than through stub packages)."""

    def converse(
        self,
        *,
        modelId: str,  # boto3 spells its parameters in camelCase
        messages: Sequence[Mapping[str, object]],
        system: Sequence[Mapping[str, object]],
        inferenceConfig: Mapping[str, object],
    ) -> Mapping[str, object]: ...


_RATE_LIMITED = frozenset({"ThrottlingException", "TooManyRequestsException", "ServiceQuotaExceededException"})
"""Too many requests or tokens for the account's quota: another try after a wait can pass."""
_TRANSIENT = frozenset(
    {
        "ModelTimeoutException",
        "ModelNotReadyException",
        "ModelErrorException",
        "InternalServerException",
        "ServiceUnavailableException",
    }
)
"""The model or the service failed this time (a timeout, a cold model, a 5xx): another try can pass."""
_AUTH = frozenset(
    {
        "AccessDeniedException",
        "UnrecognizedClientException",
        "ExpiredTokenException",
        "InvalidSignatureException",
        "IncompleteSignature",
        "MissingAuthenticationTokenException",
        "SignatureDoesNotMatch",
    }
)
"""Credentials missing, wrong or expired, or no access to the model: fix the configuration; retrying cannot."""
_BAD_REQUEST = frozenset({"ValidationException", "ResourceNotFoundException", "ConflictException"})
"""The request itself is wrong (an unknown model id, a transcript over the model's window)."""


@dataclass(slots=True, eq=False)
class _ClientSlot:
    """The client a summarizer builds on its first call and keeps: building one parses the service model (about
    0.3 s), and boto3 clients may be shared between threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    client: BedrockRuntimeClient | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BedrockSummarizer(LLMSummarizerBase):
    """An async summarizer calling Bedrock Runtime's ``Converse`` (``POST /model/{modelId}/converse``).

    `model` is a Bedrock model id, inference profile id or ARN (``us.amazon.nova-micro-v1:0``,
    ``anthropic.claude-...``). The transcript is the one user message and `system_prompt` the ``system`` block;
    `max_tokens` and `temperature` go in ``inferenceConfig``. `base_url` is boto3's ``endpoint_url`` (a VPC
    endpoint, a test server). `region` and `profile` pick the region and the shared-config profile; None leaves
    them to the standard chain (``AWS_DEFAULT_REGION`` or ``AWS_REGION``, ``AWS_PROFILE``, ...). `api_key` is not
    used: Bedrock takes AWS credentials (and its API keys through ``AWS_BEARER_TOKEN_BEDROCK``, which boto3 reads
    itself).

    boto3's retries are off (one attempt) for the reason given in `LLMSummarizerBase`; its connect and read
    timeouts are `timeout`, and the whole call is also bounded by it. A `client` you pass is used as it is, with
    its own retry and timeout settings (build it with ``Config(retries={"total_max_attempts": 1})`` under a
    manager); the call is still bounded by `timeout`.
    """

    region: str | None = None
    """The AWS region (``us-east-1``); None: ``AWS_DEFAULT_REGION``, the profile's region, then ``AWS_REGION``."""
    profile: str | None = None
    """A profile of the shared AWS config files; None: ``AWS_PROFILE`` or the default."""
    client: BedrockRuntimeClient | None = None
    """A boto3 ``bedrock-runtime`` client to use; None builds one on the first call and keeps it."""
    _slot: _ClientSlot = field(default_factory=_ClientSlot, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        LLMSummarizerBase.__post_init__(self)
        if self.api_key is not None:
            raise ValueError(
                "BedrockSummarizer takes AWS credentials (environment, profile, role), not api_key; "
                "a Bedrock API key goes in AWS_BEARER_TOKEN_BEDROCK"
            )
        if self.client is None:
            require("boto3", "bedrock")

    async def _complete(self, transcript: str) -> str:
        logger.debug("model=<%s>, chars=<%d> | bedrock summarizer request", self.model, len(transcript))
        # built outside the deadline: the first call parses boto3's service model, which is no time the model took
        client = self.client or await in_daemon_thread(self._built_client, name="chainsum-bedrock")
        try:
            reply = await asyncio.wait_for(
                in_daemon_thread(lambda: self._converse(client, transcript), name="chainsum-bedrock"), self.timeout
            )
        except TimeoutError:
            raise SummarizerError(f"timed out after {self.timeout}s", kind="transport") from None
        return bedrock_text(reply)

    def _converse(self, client: BedrockRuntimeClient, transcript: str) -> object:
        """The blocking call, run in a worker thread; its failures classified."""
        inference: dict[str, object] = {"maxTokens": self.max_tokens}
        if self.temperature is not None:
            inference["temperature"] = self.temperature
        try:
            reply = client.converse(
                modelId=self.model,
                system=[{"text": self.system_prompt}],
                messages=[{"role": "user", "content": [{"text": transcript}]}],
                inferenceConfig=inference,
            )
        except Exception as exc:  # botocore's errors, or whatever its parser raised on an odd reply
            raise _classify(exc) from exc
        return dict(reply)

    def _built_client(self) -> BedrockRuntimeClient:
        with self._slot.lock:
            if self._slot.client is None:
                self._slot.client = _build_client(self)
            return self._slot.client


def _build_client(summarizer: BedrockSummarizer) -> BedrockRuntimeClient:
    try:
        # boto3 ships no type information; the client is used through the `BedrockRuntimeClient` protocol
        import boto3.session  # pyright: ignore[reportMissingTypeStubs]
        from botocore.config import Config  # pyright: ignore[reportMissingTypeStubs]
        from botocore.exceptions import BotoCoreError  # pyright: ignore[reportMissingTypeStubs]
    except ImportError as exc:
        raise MissingDependencyError("boto3", "bedrock") from exc

    config = Config(
        retries={"total_max_attempts": 1},
        connect_timeout=summarizer.timeout,
        read_timeout=summarizer.timeout,
    )
    try:
        session = boto3.session.Session(profile_name=summarizer.profile, region_name=summarizer.region)
        found = cast(object, session.region_name)  # pyright: ignore[reportUnknownMemberType]
        if found is None and os.environ.get("AWS_REGION"):
            # boto3 reads AWS_DEFAULT_REGION only; AWS_REGION is what Lambda, ECS and the other AWS SDKs set
            session = boto3.session.Session(profile_name=summarizer.profile, region_name=os.environ["AWS_REGION"])
        client = cast(
            BedrockRuntimeClient,
            session.client(  # pyright: ignore[reportUnknownMemberType]
                "bedrock-runtime", endpoint_url=summarizer.base_url, config=config
            ),
        )
    except (BotoCoreError, ValueError) as exc:  # NoRegionError, ProfileNotFound, an unparsable endpoint URL
        raise SummarizerError(f"cannot build the Bedrock client: {exc}", kind="invalid") from exc
    return client


def _classify(exc: Exception) -> SummarizerError:
    """The failure class of what boto3 raised.

    A service error is read by its name (botocore's ``Error.Code``, from the ``x-amzn-ErrorType`` header), which
    says more than the status: ``ModelTimeoutException`` (408) is worth another try, ``AccessDeniedException`` is
    not. A name chainsum does not know falls back to the status, as for the other providers. Client-side failures
    are classed by botocore's exception type; anything else came from parsing an answer botocore could not read.
    """
    from botocore.exceptions import (  # pyright: ignore[reportMissingTypeStubs]
        BotoCoreError,
        ClientError,
        ConnectTimeoutError,
        HTTPClientError,
        NoCredentialsError,
        ParamValidationError,
        PartialCredentialsError,
        ReadTimeoutError,
    )
    from botocore.exceptions import (  # pyright: ignore[reportMissingTypeStubs]
        ConnectionError as BotoConnectionError,
    )

    if isinstance(exc, ClientError):
        return _service_error(exc)
    if isinstance(exc, ReadTimeoutError | ConnectTimeoutError):
        return SummarizerError(f"timed out: {exc}", kind="transport")
    if isinstance(exc, HTTPClientError | BotoConnectionError):  # EndpointConnectionError, ConnectionClosedError
        return SummarizerError(f"connection failed: {exc}", kind="transport")
    if isinstance(exc, NoCredentialsError | PartialCredentialsError):
        return SummarizerError(f"auth: no usable AWS credentials ({exc})", kind="invalid")
    if isinstance(exc, ParamValidationError):
        return SummarizerError(f"bad request: {exc}", kind="invalid")
    if isinstance(exc, BotoCoreError):  # credential providers failing, token refresh, ...
        return SummarizerError(f"{type(exc).__name__}: {exc}", kind="invalid")
    return SummarizerError(f"reply could not be read ({type(exc).__name__}: {exc})", kind="invalid")


def _service_error(exc: ClientError) -> SummarizerError:
    response = cast(Mapping[str, object], exc.response)
    error = cast(Mapping[str, object], response.get("Error") or {})
    meta = cast(Mapping[str, object], response.get("ResponseMetadata") or {})
    code = str(error.get("Code") or "")
    message = str(error.get("Message") or exc)
    status = meta.get("HTTPStatusCode")
    headers = cast(Mapping[str, str] | None, meta.get("HTTPHeaders"))
    detail = f"{code} (HTTP {status}): {message}"
    if code in _RATE_LIMITED:
        return SummarizerError(f"rate limited: {detail}", kind="rate_limit", retry_after=parse_retry_after(headers))
    if code in _TRANSIENT:
        return SummarizerError(detail, kind="transport")
    if code in _AUTH:
        return SummarizerError(f"auth: {detail}", kind="invalid")
    if code in _BAD_REQUEST:
        return SummarizerError(f"bad request: {detail}", kind="invalid")
    if isinstance(status, int):
        return status_error(status, f"{code}: {message}", headers)
    return SummarizerError(detail, kind="transport")
