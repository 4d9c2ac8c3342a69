"""The egress relay (N-2): the sandboxed kernel's way out to its session's proxy.

Inside the sandbox the kernel's network has loopback only. The runtime's proxy listens on a Unix
socket bound into the sandbox; this relay listens on 127.0.0.1 at an ephemeral port and carries
each TCP connection to that socket, byte for byte, so tools that know proxies only as
`http://host:port` (pip, requests, httpx, urllib, curl, git) find it. The proxy decides and
records everything; the relay only carries bytes, and holds at most MAX_RELAY_CONNECTIONS.

One asyncio loop on a daemon thread of its own: the kernel's loop never waits on the relay, and a
cell that opens connections by the thousand meets the bound, not a pile of threads.
Standard library only.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import Callable, Dict, Optional, Set

# Connections the relay carries at once; one more is answered with a 503 line and closed.
MAX_RELAY_CONNECTIONS = 256
# Bytes a side may have waiting to be written before its peer stops reading (a quarter of the high mark).
RELAY_CHUNK_BYTES = 64 * 1024
# How long reaching the proxy's socket may take, retries of a full listen queue included.
RELAY_CONNECT_TIMEOUT_S = 5.0
# Pause between two tries when the proxy's listen queue is full (EAGAIN on a Unix socket).
RELAY_RETRY_PAUSE_S = 0.02
# How long a refused client's connection stays open after its answer, for the client to read it.
RELAY_REFUSED_LINGER_S = 1.0
# How long starting or stopping the relay's loop may take.
RELAY_START_TIMEOUT_S = 5.0
# What NO_PROXY names: the kernel's own loopback (its RPC and the relay itself) never goes out.
NO_PROXY = "localhost,127.0.0.1,::1"
# The variables that name a CA bundle for the tools that read one (pip, requests, curl, Node, git).
CA_BUNDLE_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO")
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
# Set by the runtime for a sandboxed kernel (src/network/egress.ts): the proxy's socket, and the CA bundle when the policy has secrets.
EGRESS_SOCKET_ENV = "ALBEDO_EGRESS_SOCKET"
EGRESS_CA_ENV = "ALBEDO_EGRESS_CA"


def proxy_env(port: int, ca_bundle: Optional[str] = None) -> Dict[str, str]:
    """The variables that send the kernel's tools (and every child they start) through the relay on `port`,
    trusting `ca_bundle` (the system's CAs plus the local CA) when given."""
    url = f"http://127.0.0.1:{port}"
    env: Dict[str, str] = {}
    for name in PROXY_VARIABLES:
        env[name] = url
        env[name.lower()] = url
    env["NO_PROXY"] = env["no_proxy"] = NO_PROXY
    if ca_bundle:
        for name in CA_BUNDLE_VARIABLES:
            env[name] = ca_bundle
    return env


class _Side(asyncio.Protocol):
    """One end of a carried connection: what it receives is written to its peer, and a peer whose
    buffer is full stops it reading (flow control both ways, no copy into a stream's buffer)."""

    def __init__(self, relay: "EgressRelay") -> None:
        self.relay = relay
        self.transport: Optional[asyncio.Transport] = None
        self.peer: Optional["_Side"] = None
        self.ended = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.transport.set_write_buffer_limits(high=RELAY_CHUNK_BYTES * 4)

    def data_received(self, data: bytes) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.write(data)

    def eof_received(self) -> bool:
        self.ended = True
        peer = self.peer.transport if self.peer is not None else None
        if peer is not None and peer.can_write_eof() and not peer.is_closing():
            peer.write_eof()
        if self.peer is not None and self.peer.ended:
            # Both ways are done: close both (close() sends what is still buffered first).
            self.transport.close()
            if peer is not None:
                peer.close()
            return False
        # Keep this side open to write the peer's last bytes; it closes when the peer's side ends or is lost.
        return True

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.relay._carried.discard(self)
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()

    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()


class _Client(_Side):
    """The kernel's side: accepted, refused past MAX_RELAY_CONNECTIONS, else joined to a new connection to the proxy."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        if len(self.relay._carried) >= MAX_RELAY_CONNECTIONS:
            _answer(self.transport, f"503 albedo: the egress relay carries {MAX_RELAY_CONNECTIONS} connections already (MAX_RELAY_CONNECTIONS)")
            return
        self.relay._carried.add(self)
        self.transport.pause_reading()
        asyncio.ensure_future(self._join())

    async def _join(self) -> None:
        proxy = _Side(self.relay)
        why = await self.relay._reach_proxy(lambda: proxy)
        if self.transport.is_closing():
            if proxy.transport is not None:
                proxy.transport.close()
            return
        if why is not None:
            _answer(self.transport, f"502 albedo: the egress proxy cannot be reached ({why})")
            return
        self.peer, proxy.peer = proxy, self
        self.transport.resume_reading()


class EgressRelay:
    """A relay listening on 127.0.0.1:`port`, carrying connections to `socket_path`. Start with start_relay()."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="albedo-egress", daemon=True)
        self._server: Optional[asyncio.AbstractServer] = None
        self._carried: Set[_Side] = set()

    def connections(self) -> int:
        """Client connections carried now."""
        return len(self._carried)

    def close(self) -> None:
        """Stops listening, closes every carried connection and ends the loop's thread."""
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(RELAY_START_TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(RELAY_START_TIMEOUT_S)

    def _start(self) -> None:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            self._loop.create_server(lambda: _Client(self), "127.0.0.1", 0), self._loop
        ).result(RELAY_START_TIMEOUT_S)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for side in list(self._carried):
            for transport in (side.transport, side.peer.transport if side.peer else None):
                if transport is not None:
                    transport.abort()

    async def _reach_proxy(self, protocol: Callable[[], _Side]) -> Optional[str]:
        """Connects `protocol` to the proxy's socket; None, or why it could not within RELAY_CONNECT_TIMEOUT_S."""
        deadline = self._loop.time() + RELAY_CONNECT_TIMEOUT_S
        while True:
            try:
                left = max(deadline - self._loop.time(), 0.001)
                await asyncio.wait_for(self._loop.create_unix_connection(protocol, self.socket_path), left)
                return None
            except BlockingIOError:
                # The proxy's listen queue is full: it is busy, not gone.
                if self._loop.time() + RELAY_RETRY_PAUSE_S >= deadline:
                    return f"its queue stayed full for {RELAY_CONNECT_TIMEOUT_S:g} s (RELAY_CONNECT_TIMEOUT_S)"
                await asyncio.sleep(RELAY_RETRY_PAUSE_S)
            except asyncio.TimeoutError:
                return f"no answer within {RELAY_CONNECT_TIMEOUT_S:g} s (RELAY_CONNECT_TIMEOUT_S)"
            except OSError as error:
                return error.strerror or str(error)


def _answer(transport: asyncio.Transport, status_and_line: str) -> None:
    """Answers a client the relay cannot carry with a status whose reason and body are one line.

    The write side is shut and the socket closed RELAY_REFUSED_LINGER_S later, reading meanwhile:
    closing at once with the client's request unread would reset the connection, and a reset may
    take the answer with it."""
    line = status_and_line.split(" ", 1)[1]
    body = (line + "\n").encode()
    head = f"HTTP/1.1 {status_and_line}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
    transport.write(head.encode() + body)
    if transport.can_write_eof():
        transport.write_eof()
    asyncio.get_running_loop().call_later(RELAY_REFUSED_LINGER_S, transport.close)


def start_relay(socket_path: str) -> EgressRelay:
    """A relay carrying connections on 127.0.0.1 (its `port`) to the proxy at `socket_path`, listening when this returns."""
    relay = EgressRelay(socket_path)
    relay._start()
    return relay


_started: Optional[EgressRelay] = None


def start_from_environment() -> Optional[EgressRelay]:
    """Starts the relay when the runtime named a proxy socket (EGRESS_SOCKET_ENV), and sets the proxy
    variables in this process's environment, so the kernel and every process it starts go through it.
    A relay that cannot start is said on stderr and leaves the kernel without a way out, as before."""
    global _started
    socket_path = os.environ.get(EGRESS_SOCKET_ENV)
    if not socket_path or _started is not None:
        return _started
    try:
        _started = start_relay(socket_path)
    except Exception as error:  # noqa: BLE001 (the kernel must start all the same)
        print(f"albedo: the egress relay did not start ({error}); the kernel has no network", file=sys.stderr)
        return None
    os.environ.update(proxy_env(_started.port, os.environ.get(EGRESS_CA_ENV) or None))
    return _started
