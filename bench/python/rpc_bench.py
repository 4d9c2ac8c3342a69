"""`await skills.read` beside the transport floor, for `npm run bench`; exec'd into a session cell,
so both run in the kernel's own process, on its own event loop.

The floor is a bare pyzmq DEALER round trip (blocking send and receive, no JSON work) to an echo
ROUTER in the runtime: what the transport itself costs. Batches of the two alternate so both see
the same machine load.
"""
import time

import zmq

ECHO_PAYLOAD = b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}'
READ = {"name": "skill-000", "limit": 256}


async def versus_floor(skills, endpoint, rounds, batch, warmup):
    """Per-call ms of `await skills.read` and of the echo, `rounds` alternating batches of `batch` each."""
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.linger = 0
    sock.connect(endpoint)
    rpc, floor = [], []
    try:
        for index in range(warmup + rounds):
            reads, echoes = [], []
            for _ in range(batch):
                began = time.perf_counter()
                await skills.read(**READ)
                reads.append((time.perf_counter() - began) * 1000)
            for _ in range(batch):
                began = time.perf_counter()
                sock.send_multipart([b"token", ECHO_PAYLOAD])
                sock.recv_multipart()
                echoes.append((time.perf_counter() - began) * 1000)
            if index >= warmup:
                rpc += reads
                floor += echoes
    finally:
        sock.close(linger=0)
    return {"rpc": rpc, "floor": floor}


async def timeline(skills, runs):
    """Per call, time.time() stamps of its steps in the kernel: call, encoded, sent, read, resolved, resumed.

    Wraps the kernel package's own functions for the run (each wrapper adds about a microsecond)
    and puts them back after; the runtime's steps come from its own trace channel.
    """
    from albedo import _endpoint, _transport

    marks = []
    originals = (_transport.encode_within, _endpoint.LoopEndpoint._send, _endpoint.recv_last, _endpoint.LoopEndpoint._dispatch)

    def encode_within(*args):
        body = originals[0](*args)
        marks.append(("encoded", time.time()))
        return body

    def send(self, frames):
        originals[1](self, frames)
        marks.append(("sent", time.time()))

    def recv_last(*args):
        marks.append(("read", time.time()))
        return originals[2](*args)

    def dispatch(self, frame):
        originals[3](self, frame)
        marks.append(("resolved", time.time()))

    _transport.encode_within, _endpoint.LoopEndpoint._send, _endpoint.recv_last, _endpoint.LoopEndpoint._dispatch = encode_within, send, recv_last, dispatch
    calls = []
    try:
        for _ in range(runs):
            marks.clear()
            began = time.time()
            await skills.read(**READ)
            done = time.time()
            first = {}
            for name, at in marks:
                first.setdefault(name, at)
            calls.append({"call": began, **first, "resumed": done})
    finally:
        _transport.encode_within, _endpoint.LoopEndpoint._send, _endpoint.recv_last, _endpoint.LoopEndpoint._dispatch = originals
    return calls
