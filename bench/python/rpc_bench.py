"""`await skills.read` beside the transport floor, for `npm run bench`; exec'd into a session cell,
so both run in the kernel's own process, on its own event loop.

The floor is a bare pyzmq DEALER round trip (blocking send and receive, no JSON work) to an echo
ROUTER in the runtime: what the transport itself costs. The awaited echo is the same round trip
awaited on the kernel's event loop, with nothing else: what an awaitable call costs before any of
albedo's work. The page route is albedo's own channel (a second server in the runtime) with one
route that answers the read's page at once: every part of a call but the read's handler. Batches
of the four alternate so all see the same machine load. Then each kind runs alone, many calls in a
row, while the runtime counts the context switches of both processes' threads.
"""
import asyncio
import time

import zmq

ECHO_PAYLOAD = b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}'
READ = {"name": "skill-000", "limit": 256}


class Calls:
    """One call of each kind the bench compares, on sockets kept for the bench's cells: `read` (an
    `await skills.read`), `floor` (the blocking echo), `awaited_echo`, and `page_route`
    (`[endpoint, token, deadline_ms, max_bytes, kernel_endpoint, method]` of the second server, whose
    kernel endpoint this process's main loop binds and the server dials, as a session kernel's)."""

    def __init__(self, skills, endpoint, page_route):
        from albedo._transport import Channel

        *access, self.page_method = page_route
        self.skills = skills
        self.channel = Channel(*access)
        context = zmq.Context.instance()
        self.blocking = context.socket(zmq.DEALER)
        self.blocking.linger = 0
        self.blocking.connect(endpoint)
        self.awaited_echo = AwaitedEcho(context.socket(zmq.DEALER), endpoint)
        # Each kind by the name the runtime reads the results under.
        self.kinds = {"read": self.read, "floor": self.floor, "awaited_echo": self.awaited, "page_route": self.page_route}

    async def read(self):
        await self.skills.read(**READ)

    def floor(self):
        self.blocking.send_multipart([b"token", ECHO_PAYLOAD])
        self.blocking.recv_multipart()

    async def awaited(self):
        await self.awaited_echo.round_trip()

    async def page_route(self):
        await self.channel.call(self.page_method, READ)

    async def run(self, kind, n):
        """`n` calls of `kind` in a row, untimed: the runtime counts what they cost each thread."""
        call = self.kinds[kind]
        for _ in range(n):
            pending = call()  # None from the floor, which returns with its reply in
            if pending is not None:
                await pending

    async def close(self):
        self.blocking.close(linger=0)
        self.awaited_echo.close()
        await close_channel(self.channel)


async def versus_floor(calls, rounds, batch, warmup):
    """Per-call ms of each of `calls.kinds`, by its name, in `rounds` alternating batches of `batch`
    each, the first `warmup` rounds dropped."""
    times = {name: [] for name in calls.kinds}
    for index in range(warmup + rounds):
        for name, call in calls.kinds.items():
            batch_ms = []
            for _ in range(batch):
                began = time.perf_counter()
                pending = call()  # None from the floor, which returns with its reply in
                if pending is not None:
                    await pending
                batch_ms.append((time.perf_counter() - began) * 1000)
            if index >= warmup:
                times[name] += batch_ms
    return times


async def close_channel(channel):
    """A kernel's Channel lives as long as the kernel and has no close of its own; the bench's second one ends here,
    once the look at its socket that its last reply scheduled has run."""
    await asyncio.sleep(0)
    for loop_endpoint in channel._endpoints.values():
        loop_endpoint.close()
    channel._context.destroy(linger=0)


class AwaitedEcho:
    """The least an awaited round trip on the kernel's event loop can do: send, sleep in the loop until
    the socket's descriptor fires, read, resume. What `await skills.read` costs beyond this is albedo's."""

    def __init__(self, socket, endpoint):
        self.loop = asyncio.get_running_loop()
        self.socket = socket
        self.waiter = None
        socket.linger = 0
        socket.connect(endpoint)
        self.fd = socket.getsockopt(zmq.FD)
        self.loop.add_reader(self.fd, self._readable)

    async def round_trip(self):
        self.waiter = self.loop.create_future()
        self.socket.send_multipart([b"token", ECHO_PAYLOAD])
        self._readable()  # the send may have consumed the descriptor's edge
        await self.waiter

    def _readable(self):
        while self.socket.getsockopt(zmq.EVENTS) & zmq.POLLIN:
            self.socket.recv_multipart(zmq.NOBLOCK)
            if self.waiter is not None and not self.waiter.done():
                self.waiter.set_result(None)

    def close(self):
        self.loop.remove_reader(self.fd)
        self.socket.close(linger=0)


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
