"""Exceptions raised from JSON-RPC errors; numbers match src/rpc/codes.ts."""

from __future__ import annotations

from typing import Any, Dict, Optional


class AlbedoError(Exception):
    """An error the runtime answered with: `code` (e.g. "not_found"), `rpc_code`, `message`, `data`."""

    def __init__(self, code: str, message: str, data: Optional[Dict[str, Any]] = None, rpc_code: int = 0):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.rpc_code = rpc_code

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class ReloadRequired(AlbedoError):
    pass


class NotFound(AlbedoError):
    pass


class InvalidParams(AlbedoError):
    pass


class LimitExceeded(AlbedoError):
    pass


class Forbidden(AlbedoError):
    pass


class Cancelled(AlbedoError):
    pass


class RpcTimeout(AlbedoError):
    pass


class KernelDied(AlbedoError):
    pass


class Conflict(AlbedoError):
    pass


class ProtocolError(AlbedoError):
    """A JSON-RPC standard error (-32700..-32603): a malformed call or a runtime bug."""


_BY_NUMBER = {
    -32001: ("reload_required", ReloadRequired),
    -32002: ("not_found", NotFound),
    -32003: ("invalid_params", InvalidParams),
    -32004: ("limit_exceeded", LimitExceeded),
    -32005: ("forbidden", Forbidden),
    -32006: ("cancelled", Cancelled),
    -32007: ("timeout", RpcTimeout),
    -32008: ("kernel_died", KernelDied),
    -32009: ("conflict", Conflict),
    -32700: ("parse_error", ProtocolError),
    -32600: ("invalid_request", ProtocolError),
    -32601: ("method_not_found", NotFound),
    -32602: ("invalid_params", InvalidParams),
    -32603: ("internal_error", ProtocolError),
}


def error_from_wire(error: Any) -> AlbedoError:
    """The exception for a JSON-RPC `error` member (unknown numbers give a plain AlbedoError)."""
    if not isinstance(error, dict):
        return ProtocolError("invalid_response", f"malformed error member: {error!r}")
    number = error.get("code")
    message = str(error.get("message", ""))
    data = error.get("data")
    code, cls = _BY_NUMBER.get(number, ("error", AlbedoError)) if isinstance(number, int) else ("error", AlbedoError)
    return cls(code, message, data if isinstance(data, dict) else None, number if isinstance(number, int) else 0)
