"""The upstream leg: which headers go there and back, and relaying a response as it arrives.

The client's credentials (``Authorization``, ``x-api-key``) and provider headers (``anthropic-version``,
``OpenAI-Organization``, ...) go upstream as they came; hop-by-hop headers, ``Host``, ``Content-Length`` (the body
may have changed) and chainsum's own ``X-Chainsum-*`` do not. ``Accept-Encoding`` is not forwarded either, so the
upstream answers uncompressed and an announcement can be put in front of a stream without breaking its encoding.

Nothing here logs a header value: credentials are forwarded, never stored or logged.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping

import httpx

__all__ = ["client_headers", "relay", "upstream_headers"]

_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)
_NOT_BACK = frozenset({*_HOP, "content-encoding", "date", "server"})


def upstream_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The client's request headers to send upstream, asking for an uncompressed answer (httpx would otherwise
    ask for gzip of its own accord, and the raw bytes relayed would not match the headers sent back)."""
    out = {k: v for k, v in headers.items() if k.lower() not in _HOP and not k.lower().startswith("x-chainsum-")}
    out["accept-encoding"] = "identity"
    return out


def client_headers(headers: httpx.Headers) -> dict[str, str]:
    """The upstream's response headers to send back to the client."""
    return {k: v for k, v in headers.items() if k.lower() not in _NOT_BACK}


async def relay(response: httpx.Response, prefix: bytes = b"") -> AsyncIterator[bytes]:
    """`prefix`, then the upstream body chunk by chunk as it arrives. Closing the generator (the client went away:
    Starlette cancels the response) closes the upstream response, which ends the upstream request."""
    try:
        if prefix:
            yield prefix
        async for chunk in response.aiter_raw():
            yield chunk
    finally:
        with contextlib.suppress(Exception):
            await response.aclose()
