"""The transport floor for `npm run bench`: a bare pyzmq DEALER round trip to an echo ROUTER.

Run inside the session kernel (exec'd into a cell), so it measures the same process and socket
kind as `await skills.read`. Reads ECHO_ENDPOINT and ROUNDS from the cell's globals.
"""
import time
import zmq

_ctx = zmq.Context.instance()
_sock = _ctx.socket(zmq.DEALER)
_sock.connect(ECHO_ENDPOINT)  # noqa: F821 - set by the bench before this runs
_payload = b'{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}'
echo_ms = []
for _ in range(ROUNDS):  # noqa: F821
    began = time.perf_counter()
    _sock.send_multipart([b"token", _payload])
    _sock.recv_multipart()
    echo_ms.append((time.perf_counter() - began) * 1000)
_sock.close(linger=0)
