"""The upstream leg: one pooled client for every upstream call, which headers go there and back, and relaying a
response as it arrives.

The client is aiohttp's: its C HTTP parser costs about 1 ms less per request than httpx on a 40 KB chat body
(``bench/bench_server.py`` measures both the proxy and a bare pass-through), and that difference is most of what a
proxy with nothing to do adds to a request. Connections are kept alive and pooled; a connect timeout, and a read
timeout (between two chunks of the answer) long enough for slow generations.

The client's credentials (``Authorization``, ``x-api-key``) and provider headers (``anthropic-version``,
``OpenAI-Organization``, ...) go upstream as they came; hop-by-hop headers, ``Host``, ``Content-Length`` (the body
may have changed) and chainsum's own ``X-Chainsum-*`` do not. ``Accept-Encoding`` is not forwarded either, so the
upstream answers uncompressed and an announcement can be put in front of a stream without breaking its encoding.

Nothing here logs a header value: credentials are forwarded, never stored or logged.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping

import aiohttp
from yarl import URL

__all__ = ["Upstream", "UpstreamError", "UpstreamResponse", "client_headers", "upstream_headers"]

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


class UpstreamError(Exception):
    """The upstream could not be reached or broke off (`timeout` tells a slow upstream from a missing one)."""

    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


def upstream_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The client's request headers to send upstream, asking for an uncompressed answer (the raw bytes relayed
    must match the headers sent back)."""
    out = {k: v for k, v in headers.items() if k.lower() not in _HOP and not k.lower().startswith("x-chainsum-")}
    out["accept-encoding"] = "identity"
    return out


def client_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The upstream's response headers to send back to the client."""
    return {k: v for k, v in headers.items() if k.lower() not in _NOT_BACK}


class UpstreamResponse:
    """An upstream answer whose headers have arrived: its status and headers, then its body whole (`read`) or
    chunk by chunk as it arrives (`relay`)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status
        self.headers: Mapping[str, str] = response.headers

    @property
    def length_known(self) -> bool:
        return "content-length" in self.headers

    @property
    def streaming(self) -> bool:
        return self.headers.get("content-type", "").startswith("text/event-stream")

    async def read(self) -> bytes:
        """The whole body; the connection goes back to the pool."""
        try:
            return await self._response.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            self._response.close()
            raise UpstreamError(f"broke off its answer: {type(exc).__name__}") from None
        finally:
            self._response.release()

    async def relay(self, prefix: bytes = b"") -> AsyncIterator[bytes]:
        """`prefix`, then the body chunk by chunk as it arrives. Closing the generator early (the client went
        away: Starlette cancels the response) closes the upstream connection, which ends the upstream request; a
        body read to its end gives the connection back to the pool."""
        finished = False
        try:
            if prefix:
                yield prefix
            async for chunk in self._response.content.iter_any():
                yield chunk
            finished = True
        except (aiohttp.ClientError, TimeoutError):
            return  # the upstream broke off mid-stream: the client sees the stream end where it ended
        finally:
            if finished:
                self._response.release()
            else:
                self._response.close()


class Upstream:
    """The pooled client. Opened inside the server's event loop (the lifespan), closed with it."""

    def __init__(self, *, connect_timeout_s: float, read_timeout_s: float, max_connections: int = 512) -> None:
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=max_connections, limit_per_host=0, keepalive_timeout=60),
            timeout=aiohttp.ClientTimeout(total=None, connect=connect_timeout_s, sock_read=read_timeout_s),
            auto_decompress=False,
            skip_auto_headers=("User-Agent",),
        )

    async def send(self, method: str, url: str, headers: Mapping[str, str], content: bytes) -> UpstreamResponse:
        """Send the request; return once the answer's headers are in. `url` is used as given (already encoded)."""
        try:
            response = await self._session.request(
                method,
                URL(url, encoded=True),
                headers=dict(headers),
                data=content if content or method != "GET" else None,
                allow_redirects=False,
            )
        except TimeoutError:  # aiohttp's connect and read timeouts are TimeoutErrors
            raise UpstreamError("did not answer in time", timeout=True) from None
        except aiohttp.ClientError as exc:
            raise UpstreamError(f"unreachable: {type(exc).__name__}") from None
        return UpstreamResponse(response)

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self._session.close()
        await asyncio.sleep(0)  # let the connector's transports finish closing
