"""The base of every error the runtime answers with; the subclasses per code are generated into _contract."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ._display import WithoutAlbedoFrames


class AlbedoError(WithoutAlbedoFrames, Exception):
    """An error the runtime answered with: `code` (e.g. "not_found"), `rpc_code`, `message`, `data`."""

    def __init__(self, code: str, message: str, data: Optional[Dict[str, Any]] = None, rpc_code: int = 0):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.rpc_code = rpc_code

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class ProtocolError(AlbedoError):
    """A JSON-RPC standard error (-32700..-32603): a malformed call or a runtime bug."""
