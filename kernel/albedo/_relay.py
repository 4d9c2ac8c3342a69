"""The notebook relay (K-14): Jupyter's five channels, bound where Jupyter's connection file says,
forwarded to and from the sandboxed kernel's own sockets, every frame untouched.

Frames are forwarded untouched, so the notebook's key signs and checks every message end to end:
the kernel was started with that key and drops what does not verify. A copy of what Jupyter
sends on shell and control is looked at for one thing only, a `shutdown_request` header, so that
the kernel's end after it is known to be the one asked for (and the launcher says nothing of it). One ZeroMQ proxy per channel,
each in its own thread and in libzmq's C loop (the GIL is not held while it forwards):

- shell, control, stdin: ROUTER (Jupyter's clients) to DEALER (the kernel's ROUTER). The three
  DEALERs share one routing id, so an `input_request` the kernel addresses to the identity a
  shell request came from reaches this relay's stdin socket, and from it the same client.
- hb: ROUTER to DEALER; the kernel echoes each ping with its envelope.
- iopub: XPUB (verbose: every client's subscription goes through, so each one gets the kernel's
  welcome) to XSUB.

The kernel's IPC socket files sit in a directory the kernel can write. Each is opened once with
O_PATH | O_NOFOLLOW, checked to be a socket, and reached through /proc/self/fd: a link the kernel
plants later, or in place of a socket, never sends the relay anywhere else.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from typing import Dict, List, Optional, Tuple

import zmq

CHANNELS = ("shell", "iopub", "stdin", "control", "hb")
# The longest a stopping proxy thread is waited for.
RELAY_STOP_TIMEOUT_S = 2.0
# The longest a connection file may be.
MAX_CONNECTION_FILE_BYTES = 64 * 1024
# The longest header frame looked at for its msg_type (ipykernel's headers are a few hundred bytes).
MAX_WATCHED_HEADER_BYTES = 4096
# How often the shutdown watcher looks whether the relay is stopping.
WATCH_POLL_MS = 200
# The channels on which Jupyter asks a kernel to shut down (control; shell for old clients).
SHUTDOWN_CHANNELS = ("shell", "control")
# Where the shell and control proxies copy their frames for the watcher.
WATCH_ADDRESS = "inproc://albedo-relay-watch"
# Jupyter's delimiter between a message's routing ids and its signed parts.
DELIMITER = b"<IDS|MSG>"


class RelayError(Exception):
    """Why the relay cannot start; the message says what is wrong."""


def read_connection_file(path: str) -> Dict[str, object]:
    """Jupyter's connection file, checked for what the relay needs; raises RelayError."""
    import json

    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read(MAX_CONNECTION_FILE_BYTES + 1)
    except OSError as error:
        raise RelayError(f"cannot read the connection file {path}: {error.strerror}") from error
    if len(text) > MAX_CONNECTION_FILE_BYTES:
        raise RelayError(f"the connection file {path} is over MAX_CONNECTION_FILE_BYTES ({MAX_CONNECTION_FILE_BYTES})")
    try:
        info = json.loads(text)
    except ValueError as error:
        raise RelayError(f"the connection file {path} is not JSON: {error}") from error
    if not isinstance(info, dict):
        raise RelayError(f"the connection file {path} is not a JSON object")
    if info.get("transport", "tcp") not in ("tcp", "ipc"):
        raise RelayError(f"transport {info.get('transport')!r} is not tcp or ipc")
    if not isinstance(info.get("ip"), str) or not info["ip"]:
        raise RelayError("the connection file names no ip")
    for channel in CHANNELS:
        port = info.get(f"{channel}_port")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise RelayError(f"{channel}_port is {port!r}, not a port from 1 to 65535")
    key = info.get("key")
    if not isinstance(key, str) or not key:
        # Without a key nothing is signed, and the kernel could not tell Jupyter's messages from anyone's.
        raise RelayError("the connection file has no key: albedo relays signed messages only")
    if info.get("signature_scheme", "hmac-sha256") != "hmac-sha256":
        raise RelayError(f"signature_scheme {info.get('signature_scheme')!r} is not hmac-sha256")
    return info


def jupyter_address(info: Dict[str, object], channel: str) -> str:
    """The address Jupyter expects `channel` at, as ipykernel binds it."""
    port = info[f"{channel}_port"]
    if info.get("transport", "tcp") == "ipc":
        return f"ipc://{info['ip']}-{port}"
    return f"tcp://{info['ip']}:{port}"


def _pinned(address: str) -> Tuple[int, str]:
    """An O_PATH descriptor of the socket at `address` (ipc://PATH) and the address that reaches that very socket."""
    if not address.startswith("ipc://"):
        raise RelayError(f"the kernel's channel {address!r} is not an ipc:// address")
    path = address[len("ipc://"):]
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        raise RelayError(f"the kernel's socket {path} cannot be opened: {error.strerror}") from error
    if not stat.S_ISSOCK(os.fstat(fd).st_mode):
        os.close(fd)
        raise RelayError(f"{path} is not a socket (a link, or a file the kernel put there): not relayed")
    return fd, f"ipc:///proc/self/fd/{fd}"


class Relay:
    """The five proxies between Jupyter's addresses and the kernel's sockets; start() binds and connects, stop() ends them."""

    def __init__(self, jupyter: Dict[str, object], kernel: Dict[str, str]):
        self._jupyter = jupyter
        self._kernel = kernel
        self._context: Optional[zmq.Context] = None
        self._threads: List[threading.Thread] = []
        self._controls: List[zmq.Socket] = []
        self._fds: List[int] = []
        self._stopping = False
        self._shutdown_asked = threading.Event()
        self._watcher: Optional[threading.Thread] = None

    def start(self) -> None:
        """Binds Jupyter's five addresses and connects the kernel's; raises RelayError (after cleaning up) when one fails."""
        self._context = zmq.Context()
        # One routing id for shell, control and stdin (see the module's comment); no NUL first byte (libzmq reserves those).
        identity = b"albedo-relay-" + os.urandom(8).hex().encode()
        try:
            self._start_watcher()
            for channel in CHANNELS:
                self._start_channel(channel, identity)
        except (zmq.ZMQError, RelayError) as error:
            self.stop()
            raise error if isinstance(error, RelayError) else RelayError(f"cannot relay: {error}") from error

    def _start_channel(self, channel: str, identity: bytes) -> None:
        assert self._context is not None
        kinds = {"iopub": (zmq.XPUB, zmq.XSUB), "hb": (zmq.ROUTER, zmq.DEALER)}
        front_kind, back_kind = kinds.get(channel, (zmq.ROUTER, zmq.DEALER))
        front = self._context.socket(front_kind)
        back = self._context.socket(back_kind)
        for sock in (front, back):
            sock.linger = 0
        if channel == "iopub":
            front.setsockopt(zmq.XPUB_VERBOSE, 1)
        elif channel != "hb":
            # A client that reconnects with its identity takes its place back, as with ipykernel's own sockets.
            front.setsockopt(zmq.ROUTER_HANDOVER, 1)
            back.setsockopt(zmq.ROUTING_ID, identity)
        address = jupyter_address(self._jupyter, channel)
        try:
            front.bind(address)
        except zmq.ZMQError as error:
            front.close()
            back.close()
            raise RelayError(f"cannot bind {channel} at {address}: {error}") from error
        fd, reach = _pinned(self._kernel[channel])
        self._fds.append(fd)
        back.connect(reach)
        control_address = f"inproc://albedo-relay-{channel}"
        control = self._context.socket(zmq.PAIR)
        control.linger = 0
        control.bind(control_address)
        steer = self._context.socket(zmq.PAIR)
        steer.linger = 0
        steer.connect(control_address)
        self._controls.append(control)
        capture = None
        if channel in SHUTDOWN_CHANNELS:
            # PUB drops a copy the watcher has no room for, so the proxy never waits for it.
            capture = self._context.socket(zmq.PUB)
            capture.linger = 0
            capture.connect(WATCH_ADDRESS)
        thread = threading.Thread(target=_proxy, args=(front, back, steer, capture), name=f"albedo-relay-{channel}", daemon=True)
        thread.start()
        self._threads.append(thread)

    def _start_watcher(self) -> None:
        """Binds the inproc socket the shell and control proxies copy their frames to, and the thread that reads their headers."""
        assert self._context is not None
        pull = self._context.socket(zmq.SUB)
        pull.linger = 0
        pull.setsockopt(zmq.SUBSCRIBE, b"")
        pull.bind(WATCH_ADDRESS)
        thread = threading.Thread(target=self._watch, args=(pull,), name="albedo-relay-watch", daemon=True)
        thread.start()
        self._watcher = thread

    def _watch(self, pull: zmq.Socket) -> None:
        try:
            # Until the relay stops, and then what is left to read.
            while True:
                if not pull.poll(WATCH_POLL_MS):
                    if self._stopping:
                        break
                    continue
                if _is_shutdown_request(pull.recv_multipart(copy=True)):
                    self._shutdown_asked.set()
        except zmq.ZMQError:
            pass
        finally:
            pull.close()

    def shutdown_asked(self) -> bool:
        """Whether a Jupyter client sent the kernel a shutdown_request: its end is then the one asked for."""
        return self._shutdown_asked.is_set()

    def alive(self) -> bool:
        """Whether every proxy still runs."""
        return bool(self._threads) and all(thread.is_alive() for thread in self._threads)

    def stop(self) -> None:
        """Ends the proxies, closes every socket and descriptor; idempotent."""
        if self._stopping:
            return
        self._stopping = True
        for control in self._controls:
            try:
                control.send(b"TERMINATE", zmq.NOBLOCK)
            except zmq.ZMQError:
                pass
        for thread in self._threads:
            thread.join(RELAY_STOP_TIMEOUT_S)
        if self._watcher is not None:
            self._watcher.join(RELAY_STOP_TIMEOUT_S)
        for control in self._controls:
            control.close()
        if self._context is not None:
            self._context.destroy(linger=0)
        for fd in self._fds:
            os.close(fd)
        self._fds = []


def _proxy(front: zmq.Socket, back: zmq.Socket, steer: zmq.Socket, capture: Optional[zmq.Socket]) -> None:
    try:
        zmq.proxy_steerable(front, back, capture, steer)
    except zmq.ZMQError:
        pass
    finally:
        for sock in (front, back, steer, capture):
            if sock is not None:
                sock.close()


def _is_shutdown_request(frames: List[bytes]) -> bool:
    """Whether a Jupyter message's header (the frame after the delimiter and the signature) says shutdown_request."""
    try:
        header = frames[frames.index(DELIMITER) + 2]
    except (ValueError, IndexError):
        return False
    if len(header) > MAX_WATCHED_HEADER_BYTES:
        return False
    try:
        value = json.loads(header)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("msg_type") == "shutdown_request"
