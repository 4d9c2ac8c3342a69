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
import threading
from typing import Dict, Optional, Set, Tuple, Union

# Connections the relay carries at once; one more is answered with a 503 line and closed.
MAX_RELAY_CONNECTIONS = 256
# Bytes read from one side before they are written to the other.
RELAY_CHUNK_BYTES = 64 * 1024
# How long reaching the proxy's socket may take, retries of a full listen queue included.
RELAY_CONNECT_TIMEOUT_S = 5.0
# Pause between two tries when the proxy's listen queue is full (EAGAIN on a Unix socket).
RELAY_RETRY_PAUSE_S = 0.02
# How long starting or stopping the relay's loop may take.
RELAY_START_TIMEOUT_S = 5.0
# What NO_PROXY names: the kernel's own loopback (its RPC and the relay itself) never goes out.
NO_PROXY = "localhost,127.0.0.1,::1"
# The variables that name a CA bundle for the tools that read one (pip, requests, curl, Node, git).
CA_BUNDLE_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO")
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


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


class EgressRelay:
    """A relay listening on 127.0.0.1:`port`, carrying connections to `socket_path`. Start with start_relay()."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="albedo-egress", daemon=True)
        self._server: Optional[asyncio.AbstractServer] = None
        self._carried: Set[asyncio.StreamWriter] = set()

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
            asyncio.start_server(self._carry, "127.0.0.1", 0, limit=RELAY_CHUNK_BYTES), self._loop
        ).result(RELAY_START_TIMEOUT_S)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._carried):
            writer.transport.abort()

    async def _carry(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._carried) >= MAX_RELAY_CONNECTIONS:
            await _answer(writer, f"503 albedo: the egress relay carries {MAX_RELAY_CONNECTIONS} connections already (MAX_RELAY_CONNECTIONS)")
            return
        self._carried.add(writer)
        try:
            upstream = await self._reach_proxy()
            if isinstance(upstream, str):
                await _answer(writer, f"502 albedo: the egress proxy cannot be reached ({upstream})")
                return
            proxy_reader, proxy_writer = upstream
            try:
                await asyncio.gather(_pump(reader, proxy_writer), _pump(proxy_reader, writer))
            finally:
                proxy_writer.close()
        finally:
            self._carried.discard(writer)
            writer.close()

    async def _reach_proxy(self) -> Union[Tuple[asyncio.StreamReader, asyncio.StreamWriter], str]:
        """The proxy's streams, or why they could not be had within RELAY_CONNECT_TIMEOUT_S."""
        deadline = self._loop.time() + RELAY_CONNECT_TIMEOUT_S
        while True:
            try:
                left = max(deadline - self._loop.time(), 0.001)
                return await asyncio.wait_for(asyncio.open_unix_connection(self.socket_path, limit=RELAY_CHUNK_BYTES), left)
            except BlockingIOError:
                # The proxy's listen queue is full: it is busy, not gone.
                if self._loop.time() + RELAY_RETRY_PAUSE_S >= deadline:
                    return f"its queue stayed full for {RELAY_CONNECT_TIMEOUT_S:g} s (RELAY_CONNECT_TIMEOUT_S)"
                await asyncio.sleep(RELAY_RETRY_PAUSE_S)
            except asyncio.TimeoutError:
                return f"no answer within {RELAY_CONNECT_TIMEOUT_S:g} s (RELAY_CONNECT_TIMEOUT_S)"
            except OSError as error:
                return error.strerror or str(error)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copies `reader` into `writer` until its end, then half-closes `writer`; a reset ends it quietly."""
    try:
        while True:
            chunk = await reader.read(RELAY_CHUNK_BYTES)
            if not chunk:
                break
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof() and not writer.is_closing():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.transport.abort()


async def _answer(writer: asyncio.StreamWriter, status_and_line: str) -> None:
    """Answers a client the relay cannot carry with a status whose reason and body are one line, then closes it."""
    line = status_and_line.split(" ", 1)[1]
    body = (line + "\n").encode()
    head = f"HTTP/1.1 {status_and_line}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
    try:
        writer.write(head.encode() + body)
        writer.close()
        await writer.wait_closed()
    except (ConnectionError, OSError):
        writer.transport.abort()


def start_relay(socket_path: str) -> EgressRelay:
    """A relay carrying connections on 127.0.0.1 (its `port`) to the proxy at `socket_path`, listening when this returns."""
    relay = EgressRelay(socket_path)
    relay._start()
    return relay
