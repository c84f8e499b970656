"""Errors in the shape each client expects: an OpenAI SDK reads ``{"error": {"message", "type", "param",
"code"}}``, an Anthropic SDK ``{"type": "error", "error": {"type", "message"}}``, and the session API a plain
``{"error": {"message", "field"}}``. A client then raises its own typed exception with our message in it, rather
than failing to parse the body."""

from __future__ import annotations

from typing import Literal, TypeAlias

from fastapi.responses import JSONResponse

__all__ = ["Dialect", "ProxyError", "api_error", "provider_error"]

Dialect: TypeAlias = Literal["openai", "anthropic"]

_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    413: "request_too_large",
    502: "api_error",
    504: "timeout_error",
}
_OPENAI_TYPES = {400: "invalid_request_error", 401: "authentication_error", 413: "invalid_request_error"}


class ProxyError(Exception):
    """A request the proxy answers itself: `status`, a message, and the request field at fault (if any)."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field


def provider_error(dialect: Dialect, status: int, message: str, field: str | None = None) -> JSONResponse:
    """`message` as the provider's own error body, with `status`."""
    if dialect == "anthropic":
        kind = _ANTHROPIC_TYPES.get(status, "api_error")
        return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status_code=status)
    kind = _OPENAI_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return JSONResponse({"error": {"message": message, "type": kind, "param": field, "code": None}}, status_code=status)


def api_error(status: int, message: str, field: str | None = None) -> JSONResponse:
    """The session API's error body."""
    return JSONResponse({"error": {"message": message, "field": field}}, status_code=status)
