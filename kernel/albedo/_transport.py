"""The kernel end of the runtime's JSON-RPC channel: frames [token, json] on one DEALER per thread
(blocking calls) and one per running event loop (awaited calls).

Every socket connects to the endpoint, where the runtime holds a bounded number of connections,
except in a session's kernel: there the main thread's loop, the one cells run on, binds
KERNEL_SOCKET_NAME beside the endpoint and the runtime dials it (docs/rpc.md)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import threading
import time
from typing import Any, Awaitable, Callable, Dict, Optional, Tuple

import zmq

from ._contract import (
    DEADLINE_MS_ENV, DEFAULT_DEADLINE_MS, ENDPOINT_ENV, ERRORS, KERNEL_SOCKET_NAME, MAX_MESSAGE_BYTES,
    MAX_MESSAGE_BYTES_ENV, TOKEN_ENV, Cancelled, LimitExceeded, RpcTimeout,
)
from ._display import WithoutAlbedoFrames
from ._endpoint import LoopEndpoint, decode, recv_last
from ._errors import AlbedoError, ProtocolError

_ids = itertools.count(1)
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
_IPC = "ipc://"

# Set by the session kernel's app: this process is the one the runtime dials (see the module doc).
_dialled = False


def expect_dial() -> None:
    """Marks this process as a session's kernel, whose main loop binds the socket the runtime dials."""
    global _dialled
    _dialled = True


def kernel_socket(endpoint: str) -> Optional[str]:
    """The address beside an `ipc://` endpoint that a session's kernel binds, or None for another transport."""
    if not endpoint.startswith(_IPC):
        return None
    return _IPC + os.path.join(os.path.dirname(endpoint[len(_IPC):]), KERNEL_SOCKET_NAME)


# The kernel this process serves, once found: a process has one for its whole life, and looking it up
# through IPython costs more than the rest of tagging a call with its cell.
_kernel: Any = None


def _find_kernel() -> Any:
    global _kernel
    if _kernel is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        _kernel = getattr(shell, "kernel", None)
    return _kernel


def current_parent() -> Optional[Dict[str, Any]]:
    """The Jupyter request being executed (the cell's message), or None outside a kernel."""
    kernel = _kernel if _kernel is not None else _find_kernel()
    if kernel is None:
        return None
    try:
        parent = kernel.get_parent("shell")
    except Exception:
        return None
    return parent if isinstance(parent, dict) else None


def current_cell() -> Optional[str]:
    """The msg_id of the Jupyter request being executed, or None outside a kernel."""
    msg_id = (current_parent() or {}).get("header", {}).get("msg_id")
    return msg_id if isinstance(msg_id, str) and msg_id else None


class _CellInterrupted(WithoutAlbedoFrames, KeyboardInterrupt):
    """An interrupt that ended a cell while it awaited a call to the runtime: it reads as the KeyboardInterrupt a
    synchronous cell gets, and its traceback shows the user's code without albedo's frames."""


# The name a person (and the execute reply's `ename`) sees.
_CellInterrupted.__name__ = _CellInterrupted.__qualname__ = "KeyboardInterrupt"


class RpcChannel:
    """What every transport to the runtime offers (a local socket, a remote kernel's comm): `call` is
    awaitable inside a running event loop and blocking otherwise; the transport supplies the blocking
    and the awaited call, and `listen` for the loop its cells run on."""

    deadline: float
    max_bytes: int
    on_notification: Callable[[str, Any], None]

    def interrupted(self, cancelled_cell: Optional[str]) -> bool:
        """Whether the running task is a cell that an interrupt is ending (the extension sets this; see CellTasks.interrupted)."""
        return False

    def call(self, method: str, params: Dict[str, Any]) -> Any:
        """Returns an awaitable when an event loop runs in this thread, else the result (raises AlbedoError).

        An interrupt that ends the awaiting cell raises KeyboardInterrupt there, as in a synchronous cell, not the
        asyncio cancellation it is made of."""
        cell = current_cell()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return self.call_sync(method, params, cell)
        return self._interruptible(self.call_async(loop, method, params, cell))

    async def _interruptible(self, call: Awaitable[Any]) -> Any:
        __tracebackhide__ = True  # noqa: F841 (IPython hides frames that set it)
        try:
            return await call
        except asyncio.CancelledError:
            if self.interrupted(None):
                raise _CellInterrupted() from None
            raise
        except Cancelled as error:
            # The runtime fails an interrupted cell's calls before the cancel reaches its task.
            if self.interrupted((error.data or {}).get("cell")):
                raise _CellInterrupted() from None
            raise

    def call_sync(self, method: str, params: Dict[str, Any], cell: Optional[str] = None, deadline: Optional[float] = None) -> Any:
        """Blocks until the reply or the deadline (raises RpcTimeout)."""
        raise NotImplementedError

    async def call_async(self, loop: asyncio.AbstractEventLoop, method: str, params: Dict[str, Any], cell: Optional[str]) -> Any:
        """The call awaited on `loop`, the running loop of this thread."""
        raise NotImplementedError

    def listen(self, loop: asyncio.AbstractEventLoop) -> Any:
        """Gets ready for calls and cancels on `loop`; call it from the loop's thread."""
        raise NotImplementedError

    def drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """Handles, now, the messages already waiting for `loop` (a transport whose messages come another way has none)."""


class Channel(RpcChannel):
    """Calls the runtime over its ZeroMQ socket: one DEALER per thread (blocking), one per event loop (awaited)."""

    def __init__(self, endpoint: str, token: str, deadline_ms: int, max_bytes: int, kernel_endpoint: Optional[str] = None):
        self.endpoint = endpoint
        # Bound by the first loop made on the main thread, once (the runtime dials one per process).
        self._kernel_endpoint = kernel_endpoint
        self._token = token.encode()
        self.deadline = deadline_ms / 1000
        self.max_bytes = max_bytes
        self._context = zmq.Context()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._endpoints: Dict[asyncio.AbstractEventLoop, LoopEndpoint] = {}
        self.on_notification = lambda method, params: None

    @classmethod
    def from_env(cls) -> Optional["Channel"]:
        """A channel from the bridge's variables, or None when the endpoint or token is unset."""
        endpoint = os.environ.get(ENDPOINT_ENV)
        token = os.environ.get(TOKEN_ENV)
        if not endpoint or not token:
            return None
        deadline = int(os.environ.get(DEADLINE_MS_ENV) or DEFAULT_DEADLINE_MS)
        max_bytes = int(os.environ.get(MAX_MESSAGE_BYTES_ENV) or MAX_MESSAGE_BYTES)
        return cls(endpoint, token, deadline, max_bytes, kernel_socket(endpoint) if _dialled else None)

    def _encode(self, method: str, params: Dict[str, Any], cell: Optional[str]) -> Tuple[int, bytes]:
        call_id, request = new_request(method, params, cell)
        return call_id, encode_within(request, self.max_bytes)

    def call_sync(self, method: str, params: Dict[str, Any], cell: Optional[str] = None, deadline: Optional[float] = None) -> Any:
        """Blocks on this thread's own socket until the reply or the deadline (raises RpcTimeout)."""
        call_id, body = self._encode(method, params, cell)
        socket = self._thread_socket()
        socket.send(self._token, zmq.SNDMORE)
        socket.send(body)
        limit = deadline if deadline is not None else self.deadline
        end = time.monotonic() + limit
        wait_ms = int(limit * 1000)
        while wait_ms > 0:
            # Written only when it changes: a socket option write costs as much as a call's JSON work.
            if self._local.rcvtimeo != wait_ms:
                socket.rcvtimeo = self._local.rcvtimeo = wait_ms
            try:
                reply = decode(recv_last(socket))
            except zmq.Again:
                break
            # This socket has one call in flight, so an id-less error (refused before parsing) is its answer.
            if reply is not None and (reply.get("id") == call_id or (reply.get("id") is None and "error" in reply)):
                return result_of(reply)
            wait_ms = int((end - time.monotonic()) * 1000)
        raise timeout_error(method, limit)

    async def call_async(self, loop: asyncio.AbstractEventLoop, method: str, params: Dict[str, Any], cell: Optional[str]) -> Any:
        call_id, body = self._encode(method, params, cell)
        endpoint = self._endpoints.get(loop) or self.listen(loop)
        try:
            reply = await endpoint.request(call_id, body, self.deadline)
        finally:
            endpoint.forget(call_id)
        if reply is None:
            raise timeout_error(method, self.deadline)
        return result_of(reply)

    def listen(self, loop: asyncio.AbstractEventLoop) -> LoopEndpoint:
        """The endpoint owned by `loop`, made (and its hello sent) on first use; call it from the loop's thread."""
        endpoint = self._endpoints.get(loop)
        if endpoint is None:
            with self._lock:
                for stale in [other for other in self._endpoints if other.is_closed()]:
                    self._endpoints.pop(stale).close()
                endpoint = self._bound(loop) or LoopEndpoint(self._context, self.endpoint, self._token, loop, self._notify)
                self._endpoints[loop] = endpoint
        return endpoint

    def drain(self, loop: asyncio.AbstractEventLoop) -> None:
        endpoint = self._endpoints.get(loop)
        if endpoint is not None:
            endpoint.drain()

    def _bound(self, loop: asyncio.AbstractEventLoop) -> Optional[LoopEndpoint]:
        if self._kernel_endpoint is None or threading.current_thread() is not threading.main_thread():
            return None
        address, self._kernel_endpoint = self._kernel_endpoint, None
        try:
            return LoopEndpoint(self._context, address, self._token, loop, self._notify, bind=True)
        except zmq.ZMQError as error:
            print(f"albedo: cannot bind {address} ({error}); calls go through {self.endpoint}", file=sys.stderr)
            return None

    def _notify(self, method: str, params: Any) -> None:
        self.on_notification(method, params)

    def _thread_socket(self) -> zmq.Socket:
        socket = getattr(self._local, "socket", None)
        if socket is None:
            socket = self._context.socket(zmq.DEALER)
            socket.linger = 0
            socket.connect(self.endpoint)
            self._local.socket = socket
            self._local.rcvtimeo = -1
        return socket


def new_request(method: str, params: Dict[str, Any], cell: Optional[str]) -> Tuple[int, Dict[str, Any]]:
    """A JSON-RPC request with a fresh id, tagged with its cell."""
    call_id = next(_ids)
    request: Dict[str, Any] = {"jsonrpc": "2.0", "id": call_id, "method": method, "params": params}
    if cell is not None:
        request["cell"] = cell
    return call_id, request


def encode_within(request: Dict[str, Any], max_bytes: int) -> bytes:
    """The request as UTF-8 JSON; raises LimitExceeded past `max_bytes`, so it is never sent."""
    body = _ENCODER.encode(request).encode()
    if len(body) > max_bytes:
        raise LimitExceeded(
            "limit_exceeded",
            f"message of {len(body)} bytes exceeds RPC_MAX_MESSAGE_BYTES ({max_bytes})",
            {"limit": "RPC_MAX_MESSAGE_BYTES", "max": max_bytes, "size": len(body)},
        )
    return body


def timeout_error(method: str, limit: float) -> RpcTimeout:
    """The error of a call that got no answer within `limit` seconds."""
    return RpcTimeout("timeout", f"{method}: no answer from the runtime within {limit:g} s", {"deadline_s": limit})


def result_of(reply: Dict[str, Any]) -> Any:
    """The result member of a reply; raises the error it carries instead, or ProtocolError for a reply with neither."""
    if "error" in reply:
        raise error_from_wire(reply["error"])
    if "result" not in reply:
        raise ProtocolError("invalid_response", "the runtime's reply has neither result nor error")
    return reply["result"]


def error_from_wire(error: Any) -> AlbedoError:
    """The exception for a JSON-RPC `error` member (unknown numbers give a plain AlbedoError)."""
    if not isinstance(error, dict):
        return ProtocolError("invalid_response", f"malformed error member: {error!r}")
    number = error.get("code")
    message = str(error.get("message", ""))
    data = error.get("data")
    code, cls = ERRORS.get(number, ("error", AlbedoError)) if isinstance(number, int) else ("error", AlbedoError)
    return cls(code, message, data if isinstance(data, dict) else None, number if isinstance(number, int) else 0)
