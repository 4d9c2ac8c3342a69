"""The kernel end of the runtime's JSON-RPC channel: one DEALER per use, frames [token, json]."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import threading
import time
from typing import Any, Callable, Dict, Optional, Tuple

import zmq

from ._errors import LimitExceeded, ProtocolError, RpcTimeout, error_from_wire

DEFAULT_DEADLINE_MS = 35_000  # server default RPC_CALL_TIMEOUT_MS plus a margin
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024  # RPC_MAX_MESSAGE_BYTES
HELLO = "albedo/hello"
CANCEL = "albedo/cancel"

_ids = itertools.count(1)


def current_cell() -> Optional[str]:
    """The msg_id of the Jupyter request being executed, or None outside a kernel."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    try:
        parent = kernel.get_parent("shell")
    except Exception:
        return None
    msg_id = (parent or {}).get("header", {}).get("msg_id")
    return msg_id if isinstance(msg_id, str) and msg_id else None


class Channel:
    """Calls the runtime: awaitable inside a running event loop, blocking otherwise."""

    def __init__(self, endpoint: str, token: str, deadline_ms: int, max_bytes: int):
        self.endpoint = endpoint
        self._token = token.encode()
        self.deadline = deadline_ms / 1000
        self.max_bytes = max_bytes
        self._context = zmq.Context()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._pending: Dict[int, Tuple[asyncio.AbstractEventLoop, asyncio.Future]] = {}
        self._outbox: Optional[zmq.Socket] = None
        self._reader: Optional[threading.Thread] = None
        self.on_notification: Callable[[str, Any], None] = lambda method, params: None

    @classmethod
    def from_env(cls) -> Optional["Channel"]:
        """A channel from ALBEDO_RPC_* variables, or None when the endpoint or token is unset."""
        endpoint = os.environ.get("ALBEDO_RPC_ENDPOINT")
        token = os.environ.get("ALBEDO_RPC_TOKEN")
        if not endpoint or not token:
            return None
        deadline = int(os.environ.get("ALBEDO_RPC_DEADLINE_MS") or DEFAULT_DEADLINE_MS)
        max_bytes = int(os.environ.get("ALBEDO_RPC_MAX_MESSAGE_BYTES") or DEFAULT_MAX_MESSAGE_BYTES)
        return cls(endpoint, token, deadline, max_bytes)

    def call(self, method: str, params: Dict[str, Any]) -> Any:
        """Returns an awaitable when an event loop runs in this thread, else the result (raises AlbedoError)."""
        cell = current_cell()
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self.call_sync(method, params, cell)
        return self.call_async(method, params, cell)

    def _encode(self, method: str, params: Dict[str, Any], cell: Optional[str]) -> Tuple[int, bytes]:
        call_id = next(_ids)
        request: Dict[str, Any] = {"jsonrpc": "2.0", "id": call_id, "method": method, "params": params}
        if cell is not None:
            request["cell"] = cell
        body = json.dumps(request, ensure_ascii=False, allow_nan=False).encode()
        if len(body) > self.max_bytes:
            raise LimitExceeded(
                "limit_exceeded",
                f"message of {len(body)} bytes exceeds RPC_MAX_MESSAGE_BYTES ({self.max_bytes})",
                {"limit": "RPC_MAX_MESSAGE_BYTES", "max": self.max_bytes, "size": len(body)},
            )
        return call_id, body

    def call_sync(self, method: str, params: Dict[str, Any], cell: Optional[str] = None, deadline: Optional[float] = None) -> Any:
        """Blocks on this thread's own socket until the reply or the deadline (raises RpcTimeout)."""
        call_id, body = self._encode(method, params, cell)
        socket = self._thread_socket()
        socket.send_multipart([self._token, body])
        limit = deadline if deadline is not None else self.deadline
        remaining_ms = int(limit * 1000)
        end = time.monotonic() + limit
        while remaining_ms > 0 and socket.poll(remaining_ms):
            reply = _decode(socket.recv_multipart()[-1])
            # This socket has one call in flight, so an id-less error (refused before parsing) is its answer.
            if reply is not None and (reply.get("id") == call_id or (reply.get("id") is None and "error" in reply)):
                return _result(reply)
            remaining_ms = int((end - time.monotonic()) * 1000)
        raise RpcTimeout("timeout", f"{method}: no answer from the runtime within {limit:g} s", {"deadline_s": limit})

    async def call_async(self, method: str, params: Dict[str, Any], cell: Optional[str] = None) -> Any:
        """Sends through the reader thread and awaits the reply (raises AlbedoError, RpcTimeout)."""
        call_id, body = self._encode(method, params, cell)
        self.listen()
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            self._pending[call_id] = (loop, future)
            self._outbox.send(body)  # type: ignore[union-attr]
        try:
            reply = await asyncio.wait_for(future, self.deadline)
        except asyncio.TimeoutError:
            raise RpcTimeout("timeout", f"{method}: no answer from the runtime within {self.deadline:g} s", {"deadline_s": self.deadline}) from None
        finally:
            with self._lock:
                self._pending.pop(call_id, None)
        return _result(reply)

    def listen(self) -> None:
        """Starts the reader thread (idempotent); it says hello so the runtime can send notifications."""
        with self._lock:
            if self._reader is not None:
                return
            inbox = self._context.socket(zmq.PULL)
            inbox.bind(f"inproc://albedo-outbox-{id(self)}")
            self._outbox = self._context.socket(zmq.PUSH)
            self._outbox.connect(f"inproc://albedo-outbox-{id(self)}")
            self._reader = threading.Thread(target=self._read, args=(inbox,), name="albedo-rpc", daemon=True)
            self._reader.start()

    def _thread_socket(self) -> zmq.Socket:
        socket = getattr(self._local, "socket", None)
        if socket is None:
            socket = self._context.socket(zmq.DEALER)
            socket.linger = 0
            socket.connect(self.endpoint)
            self._local.socket = socket
        return socket

    def _read(self, inbox: zmq.Socket) -> None:
        dealer = self._context.socket(zmq.DEALER)
        dealer.linger = 0
        dealer.connect(self.endpoint)
        dealer.send_multipart([self._token, json.dumps({"jsonrpc": "2.0", "method": HELLO}).encode()])
        poller = zmq.Poller()
        poller.register(inbox, zmq.POLLIN)
        poller.register(dealer, zmq.POLLIN)
        try:
            while True:
                events = dict(poller.poll())
                if inbox in events:
                    dealer.send_multipart([self._token, inbox.recv()])
                if dealer in events:
                    self._dispatch(dealer.recv_multipart()[-1])
        except zmq.ContextTerminated:
            return
        finally:
            dealer.close(linger=0)
            inbox.close(linger=0)

    def _dispatch(self, frame: bytes) -> None:
        message = _decode(frame)
        if message is None:
            return
        if "method" in message and "id" not in message:
            try:
                self.on_notification(message["method"], message.get("params"))
            except Exception as error:  # a notification handler must never stop the reader
                print(f"albedo: notification {message['method']} failed: {error}", file=sys.stderr)
            return
        with self._lock:
            entry = self._pending.get(message.get("id"))  # type: ignore[arg-type]
        if entry is not None:
            loop, future = entry
            try:
                loop.call_soon_threadsafe(_settle, future, message)
            except RuntimeError:  # the loop closed while the call was pending
                pass


def _settle(future: asyncio.Future, message: Dict[str, Any]) -> None:
    if not future.done():
        future.set_result(message)


def _decode(frame: bytes) -> Optional[Dict[str, Any]]:
    try:
        message = json.loads(frame)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _result(reply: Dict[str, Any]) -> Any:
    if "error" in reply:
        raise error_from_wire(reply["error"])
    if "result" not in reply:
        raise ProtocolError("invalid_response", "the runtime's reply has neither result nor error")
    return reply["result"]
