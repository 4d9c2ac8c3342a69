"""One event loop's own DEALER: sends from the loop's thread, receives through loop.add_reader."""

from __future__ import annotations

import asyncio
import collections
import json
import sys
from typing import Any, Callable, Deque, Dict, List, Optional, Set, Tuple

import zmq

from ._contract import HELLO_METHOD, MAX_PENDING_CALLS
# Plain ints: pyzmq's enum members make every `&` and flag argument go through Python-level code.
_EVENTS = int(zmq.EVENTS)
_POLLIN = int(zmq.POLLIN)
_POLLOUT = int(zmq.POLLOUT)
_NOBLOCK = int(zmq.NOBLOCK)
_SNDMORE = int(zmq.SNDMORE)


# The runtime sends UTF-8 only. json.loads of bytes would first guess among UTF-8, 16 and 32 and then
# decode with the slow 'surrogatepass' handler, a third of the parse for a read's reply.
_DECODER = json.JSONDecoder()


def decode(frame: bytes) -> Optional[Dict[str, Any]]:
    """The JSON object in `frame` (UTF-8), or None when it is not one."""
    try:
        message = _DECODER.decode(frame.decode())
    except ValueError:  # UnicodeDecodeError is one too
        return None
    return message if isinstance(message, dict) else None


def recv_last(socket: zmq.Socket, flags: int = 0) -> bytes:
    """The last frame of the next message (the runtime replies with one frame); raises zmq.Again when none waits."""
    frame = socket.recv(flags, copy=False)
    while frame.more:
        frame = socket.recv(flags, copy=False)
    return frame.bytes


class LoopEndpoint:
    """Calls in flight on one event loop, settled by a reader callback on the same loop (no thread).

    Only the loop's thread touches the socket. libzmq signals its FD on an edge, and any socket
    operation may consume that edge, so every send is followed by a look at EVENTS and every read
    drains until nothing is left; otherwise a reply could sit unread until the next one arrives.

    At most MAX_PENDING_CALLS calls are out at once, the runtime's own bound per session: the rest
    wait here, in order, and go out as earlier ones end, so `asyncio.gather` of a thousand calls
    is answered rather than partly refused with limit_exceeded.
    """

    def __init__(self, context: zmq.Context, endpoint: str, token: bytes, loop: asyncio.AbstractEventLoop,
                 on_notification: Callable[[str, Any], None], bind: bool = False):
        self.loop = loop
        self._token = token
        self._on_notification = on_notification
        self._pending: Dict[Any, Tuple["asyncio.Future[Optional[Dict[str, Any]]]", float]] = {}
        # Sent and not yet ended; and the calls waiting for one of those to end (insertion-ordered).
        self._out: Set[Any] = set()
        self._held: Dict[Any, bytes] = {}
        self._sweep: Optional[asyncio.TimerHandle] = None
        self._looked = True
        self._outbox: Deque[List[bytes]] = collections.deque()
        self._socket = context.socket(zmq.DEALER)
        self._socket.linger = 0
        # Bound, the socket waits for the runtime to dial it; the hello goes out once it has.
        try:
            if bind:
                self._socket.bind(endpoint)
            else:
                self._socket.connect(endpoint)
        except zmq.ZMQError:
            self._socket.close(linger=0)
            raise
        self._fd = self._socket.getsockopt(zmq.FD)
        loop.add_reader(self._fd, self._readable)
        # The hello makes this socket the runtime's address for notifications such as albedo/cancel.
        self._send([token, json.dumps({"jsonrpc": "2.0", "method": HELLO_METHOD}).encode()])

    def request(self, call_id: int, body: bytes, deadline_s: float) -> "asyncio.Future[Optional[Dict[str, Any]]]":
        """A future for the reply to `body`; it resolves to None when `deadline_s` passes first."""
        future = self.loop.create_future()
        expires = self.loop.time() + deadline_s
        self._pending[call_id] = (future, expires)
        if self._sweep is None or expires < self._sweep.when():
            self._arm(expires)
        if len(self._out) < MAX_PENDING_CALLS:
            self._out.add(call_id)
            self._send([self._token, body])
        else:
            self._held[call_id] = body
        return future

    def forget(self, call_id: int) -> None:
        """Drops a call that ended (answered, expired or cancelled); a late reply is then ignored."""
        self._pending.pop(call_id, None)
        if self._held.pop(call_id, None) is None:
            self._out.discard(call_id)
            while self._held and len(self._out) < MAX_PENDING_CALLS:
                next_id = next(iter(self._held))
                self._out.add(next_id)
                self._send([self._token, self._held.pop(next_id)])

    def drain(self) -> None:
        """Reads and dispatches every message waiting now, and sends what waits to go; from the loop's thread."""
        self._drain()

    def close(self) -> None:
        """Stops reading and closes the socket; pending calls are left to their deadlines."""
        if not self.loop.is_closed():
            self.loop.remove_reader(self._fd)
        self._socket.close(linger=0)

    def _arm(self, when: float) -> None:
        # One timer for every deadline: it stays armed across calls instead of one timer per call.
        if self._sweep is not None:
            self._sweep.cancel()
        self._sweep = self.loop.call_at(when, self._expire)

    def _expire(self) -> None:
        self._sweep = None
        now = self.loop.time()
        for future, expires in list(self._pending.values()):
            if expires <= now and not future.done():
                future.set_result(None)
        waiting = [expires for future, expires in self._pending.values() if not future.done()]
        if waiting:
            self._arm(min(waiting))

    def _send(self, frames: List[bytes]) -> None:
        if not self._outbox:
            try:
                self._socket.send(frames[0], _SNDMORE | _NOBLOCK)
                self._socket.send(frames[1], _NOBLOCK)
                frames = []
            except zmq.Again:  # the pipe is full (nothing of this message went): send it when there is room
                pass
        if frames:
            self._outbox.append(frames)
        self._looked = True
        if self._outbox or self._socket.getsockopt(_EVENTS) & _POLLIN:
            self.loop.call_soon(self._drain)

    def _readable(self) -> None:
        # The FD fired, so a reply is most likely waiting: read it before anything else, then look for
        # more once the task it wakes has run.
        try:
            frame = recv_last(self._socket, _NOBLOCK)
        except zmq.Again:
            self._drain()
            return
        except zmq.ZMQError as error:
            self._stop(error)
            return
        self._dispatch(frame)
        self._looked = False
        self.loop.call_soon(self._look_again)

    def _look_again(self) -> None:
        # A send since the read has already looked at EVENTS, which re-arms the FD as a drain would.
        if not self._looked:
            self._drain()

    def _drain(self) -> None:
        socket = self._socket
        try:
            while True:
                events = socket.getsockopt(_EVENTS)
                if self._outbox and events & _POLLOUT:
                    socket.send(self._outbox[0][0], _SNDMORE | _NOBLOCK)
                    socket.send(self._outbox.popleft()[1], _NOBLOCK)
                elif events & _POLLIN:
                    self._dispatch(recv_last(socket, _NOBLOCK))
                else:
                    return
        except zmq.Again:  # EVENTS promised more than the socket had: the look itself re-armed the FD
            return
        except zmq.ZMQError as error:
            self._stop(error)

    def _stop(self, error: zmq.ZMQError) -> None:
        # The socket or its context closed under us: reading again would only fail again.
        if not self.loop.is_closed():
            self.loop.remove_reader(self._fd)
        print(f"albedo: RPC socket stopped: {error}", file=sys.stderr)

    def _dispatch(self, frame: bytes) -> None:
        message = decode(frame)
        if message is None:
            return
        if "method" in message and "id" not in message:
            try:
                self._on_notification(message["method"], message.get("params"))
            except Exception as error:  # a notification handler must never stop the reader
                print(f"albedo: notification {message['method']} failed: {error}", file=sys.stderr)
            return
        call_id = message.get("id")
        entry = self._pending.get(call_id)
        if entry is None and call_id is None and "error" in message and len(self._pending) == 1:
            # Refused before parsing (no id): with one call in flight it can only be that call's answer.
            entry = next(iter(self._pending.values()))
        if entry is not None and not entry[0].done():
            entry[0].set_result(message)
