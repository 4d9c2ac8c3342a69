"""The optional fast path of a remote kernel (K-12): a WebSocket from the kernel back to the runtime,
carrying the same JSON-RPC as the comm without the Jupyter server in between. It lives on a thread
of its own with its own event loop, so it answers a blocking call while the main thread waits, and
an awaited call while the cell awaits. tornado comes with every ipykernel, so nothing is installed."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from typing import Any, Callable, Optional


class CallbackLink:
    """Dials `url` with the session's bearer token; `connected` is set once frames can go."""

    def __init__(self, url: str, token: str, timeout_s: float, max_bytes: int, on_frame: Callable[[str], None], on_up: Callable[[], None]):
        self.connected = threading.Event()
        self._url = url
        self._token = token
        self._timeout = timeout_s
        self._max_bytes = max_bytes
        self._on_frame = on_frame
        self._on_up = on_up
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._conn: Any = None

    def start(self) -> None:
        """Dials on a daemon thread of its own; returns at once."""
        threading.Thread(target=self._run, name="albedo-callback", daemon=True).start()

    def send(self, text: str) -> bool:
        """Queues one frame; False when the link is not (or no longer) up, so the caller uses the comm."""
        loop = self._loop
        if not self.connected.is_set() or loop is None:
            return False
        loop.call_soon_threadsafe(self._write, text)
        return True

    def _run(self) -> None:
        # A process-wide SIGINT must wake the main thread's cell, never land here (see session_kernel.py).
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        finally:
            self.connected.clear()
            loop.close()

    async def _serve(self) -> None:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        request = HTTPRequest(self._url, headers={"Authorization": f"Bearer {self._token}"}, connect_timeout=self._timeout, request_timeout=self._timeout)
        try:
            self._conn = await websocket_connect(request, max_message_size=self._max_bytes)
        except Exception as error:
            print(f"albedo: no callback channel to the runtime ({error}); calls go over the comm", file=sys.__stderr__, flush=True)
            return
        # Several frames in a row must not wait on Nagle's algorithm (tens of ms per call otherwise).
        try:
            self._conn.protocol.stream.set_nodelay(True)
        except Exception:
            pass
        self.connected.set()
        self._on_up()
        while True:
            frame = await self._conn.read_message()
            if frame is None:
                print("albedo: the callback channel closed; calls go over the comm", file=sys.__stderr__, flush=True)
                return
            if isinstance(frame, str):
                self._on_frame(frame)

    def _write(self, text: str) -> None:
        try:
            self._conn.write_message(text)
        except Exception:
            self.connected.clear()
