"""The kernel end of the RPC channel for a kernel on a Jupyter server (K-12): JSON-RPC over the comm
`albedo.rpc` that the runtime opens on the kernel's own connection. Requests go out as comm messages
(iopub); the runtime sends each reply to the main shell for an awaited call, which ipykernel >= 7.4
serves while a cell awaits, or to the comm's subshell for a blocking call, which is served while the
main thread blocks."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import sys
import threading
import time
from typing import Any, Callable, Dict, Optional, Tuple, Union

from ._callback import CallbackLink

from ._contract import COMM_TARGET, HELLO_METHOD, REPLY_MEMBER, REPLY_SUBSHELL
from ._transport import RpcChannel, encode_within, new_request, result_of, timeout_error

class Pacer:
    """A token bucket shared by every sender: Jupyter Server drops iopub messages beyond its rate limit
    without telling anyone, so calls wait their turn here instead. Each reservation returns how long
    the caller must wait before sending; the debt carries over, so sends go out at `rate` per second."""

    def __init__(self, rate: float, burst: float):
        self._rate = rate
        self._burst = burst
        self._tokens = burst
        self._stamp = time.monotonic()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
            self._stamp = now
            self._tokens -= 1
            return 0.0 if self._tokens >= 0 else -self._tokens / self._rate


class _LoopWaiter:
    __slots__ = ("loop", "future", "thread")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: "asyncio.Future[Optional[Dict[str, Any]]]"):
        self.loop = loop
        self.future = future
        self.thread = threading.get_ident()

    def settle(self, reply: Optional[Dict[str, Any]]) -> None:
        if threading.get_ident() == self.thread:
            _set(self.future, reply)
        else:
            self.loop.call_soon_threadsafe(_set, self.future, reply)


class _SyncWaiter:
    __slots__ = ("event", "reply")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reply: Optional[Dict[str, Any]] = None

    def settle(self, reply: Optional[Dict[str, Any]]) -> None:
        self.reply = reply
        self.event.set()


def _set(future: "asyncio.Future[Optional[Dict[str, Any]]]", reply: Optional[Dict[str, Any]]) -> None:
    if not future.done():
        future.set_result(reply)


class CommChannel(RpcChannel):
    """Calls the runtime over one comm: awaitable inside a running event loop, blocking otherwise."""

    def __init__(self, comm: Any, deadline_ms: int, max_bytes: int, pace_per_s: float, pace_burst: float):
        self._comm = comm
        self.deadline = deadline_ms / 1000
        self.max_bytes = max_bytes
        self._pacer = Pacer(pace_per_s, pace_burst)
        self._lock = threading.Lock()
        self._pending: Dict[int, Union[_LoopWaiter, _SyncWaiter]] = {}
        self._link: Optional[CallbackLink] = None
        self.on_notification = lambda method, params: None

    @property
    def transport(self) -> str:
        """"callback" while the fast path is up, else "comm"."""
        return "callback" if self._link is not None and self._link.connected.is_set() else "comm"

    def dial(self, callback: Dict[str, Any]) -> None:
        """Starts the fast path to the runtime; calls use the comm until (and unless) it is up."""
        self._link = CallbackLink(
            str(callback["url"]), str(callback["token"]), float(callback.get("connect_timeout_ms") or 5000) / 1000,
            self.max_bytes * 8, self._on_frame, lambda: self._link_send({"jsonrpc": "2.0", "method": HELLO_METHOD}),
        )
        self._link.start()

    def listen(self, loop: asyncio.AbstractEventLoop) -> None:
        """Nothing to do: replies and cancels arrive through the comm, whatever the loop."""

    def call_sync(self, method: str, params: Dict[str, Any], cell: Optional[str] = None, deadline: Optional[float] = None) -> Any:
        """Blocks this thread until the reply (delivered on the comm's subshell) or the deadline."""
        limit = deadline if deadline is not None else self.deadline
        end = time.monotonic() + limit
        call_id, request = self._request(method, params, cell, blocking=True)
        waiter = _SyncWaiter()
        with self._lock:
            self._pending[call_id] = waiter
        try:
            delay = 0.0 if self.transport == "callback" else self._pacer.reserve()
            if delay > 0:
                time.sleep(min(delay, max(0.0, end - time.monotonic())))
            if time.monotonic() < end:
                self._send(request)
                if waiter.event.wait(max(0.0, end - time.monotonic())) and waiter.reply is not None:
                    return result_of(waiter.reply)
            raise timeout_error(method, limit)
        finally:
            with self._lock:
                self._pending.pop(call_id, None)

    async def call_async(self, loop: asyncio.AbstractEventLoop, method: str, params: Dict[str, Any], cell: Optional[str]) -> Any:
        call_id, request = self._request(method, params, cell, blocking=False)
        future: "asyncio.Future[Optional[Dict[str, Any]]]" = loop.create_future()
        with self._lock:
            self._pending[call_id] = _LoopWaiter(loop, future)
        # The deadline runs from the call, so time spent waiting for the pacer counts against it.
        timer = loop.call_later(self.deadline, _set, future, None)
        delay = 0.0 if self.transport == "callback" else self._pacer.reserve()
        send = loop.call_later(delay, self._send, request) if delay > 0 else None
        try:
            if send is None:
                self._send(request)
            reply = await future
        finally:
            timer.cancel()
            if send is not None:
                send.cancel()
            with self._lock:
                self._pending.pop(call_id, None)
        if reply is None:
            raise timeout_error(method, self.deadline)
        return result_of(reply)

    def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification (no reply)."""
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def on_msg(self, msg: Dict[str, Any]) -> None:
        """The comm's message handler: settles the waiting call, or passes a notification on. Never raises."""
        self._receive((msg.get("content") or {}).get("data"))

    def _on_frame(self, text: str) -> None:
        try:
            self._receive(json.loads(text))
        except ValueError:
            pass

    def _receive(self, data: Any) -> None:
        if not isinstance(data, dict):
            return
        if "method" in data and "id" not in data:
            try:
                self.on_notification(str(data["method"]), data.get("params"))
            except Exception as error:  # a notification handler must never break the comm
                print(f"albedo: notification {data['method']} failed: {error}", file=sys.__stderr__)
            return
        call_id = data.get("id")
        with self._lock:
            waiter = self._pending.get(call_id) if call_id is not None else None
            if waiter is None and call_id is None and "error" in data and len(self._pending) == 1:
                # Refused before parsing (no id): with one call in flight it can only be that call's answer.
                waiter = next(iter(self._pending.values()))
        if waiter is not None:
            waiter.settle(data)

    def _send(self, message: Dict[str, Any]) -> None:
        if not self._link_send(message):
            self._comm.send(message)

    def _link_send(self, message: Dict[str, Any]) -> bool:
        link = self._link
        return link is not None and link.send(json.dumps(message, ensure_ascii=False, allow_nan=False))

    def _request(self, method: str, params: Dict[str, Any], cell: Optional[str], blocking: bool) -> Tuple[int, Dict[str, Any]]:
        call_id, request = new_request(method, params, cell)
        if blocking:
            # The main thread may be the one blocked waiting: the reply must come on the comm's subshell.
            request[REPLY_MEMBER] = REPLY_SUBSHELL
        encode_within(request, self.max_bytes)
        return call_id, request


def prepare(ip: Any, secret_sha256: str, on_accept: Callable[[Any, Dict[str, Any]], None]) -> None:
    """Registers the `albedo.rpc` target: the first comm whose open data carries the session secret is
    handed to `on_accept`; any other is closed at once (another client of the same kernel, or a second
    open, cannot take the channel over)."""
    state = {"accepted": False}

    def open_comm(comm: Any, open_msg: Dict[str, Any]) -> None:
        data = (open_msg.get("content") or {}).get("data") or {}
        secret = data.get("secret") if isinstance(data, dict) else None
        given = hashlib.sha256(secret.encode()).hexdigest() if isinstance(secret, str) else ""
        if state["accepted"] or not hmac.compare_digest(given, secret_sha256):
            why = "a channel is already open" if state["accepted"] else "it did not present the session secret"
            print(f"albedo: refused an {COMM_TARGET} comm: {why}", file=sys.__stderr__, flush=True)
            comm.close()
            return
        state["accepted"] = True
        # Reply routing is the runtime's choice, made per reply in the message header.
        comm._reply_subshell_for = lambda data, default: default
        _quiet_status(ip.kernel, comm.comm_id)
        on_accept(comm, data)

    ip.kernel.comm_manager.register_target(COMM_TARGET, open_comm)


def _quiet_status(kernel: Any, comm_id: str) -> None:
    """Publishes no busy/idle status for this comm's messages. Jupyter Server records the kernel's
    execution_state from every status whose parent is a comm_msg, so each reply handled on a subshell
    (or while no cell runs) would show the kernel idle in the middle of a calling cell, and the RPC
    traffic would double the iopub messages the server rate-limits."""
    original = kernel._publish_status

    def publish_status(status: str, channel: str, parent: Any = None) -> None:
        source = parent or kernel.get_parent(channel) or {}
        header = source.get("header") or {}
        if header.get("msg_type") == "comm_msg" and (source.get("content") or {}).get("comm_id") == comm_id:
            return
        original(status, channel, parent)

    kernel._publish_status = publish_status


def hello(channel: CommChannel) -> None:
    """Tells the runtime the channel is up; it also makes the comm the address of albedo/cancel."""
    channel.notify(HELLO_METHOD)
