# Runs as a cell inside a session kernel. Talks to the session's own RPC endpoint with raw pyzmq
# DEALER sockets, one per probe, and prints one JSON line: probe name -> the reply (or None).
# The test fills in the placeholders below (the hard frame cap, the reply wait, a hostile nesting depth) before running it.
import json as _json
import os as _os

import zmq as _zmq


def _hostile_probes():
    endpoint = _os.environ["ALBEDO_RPC_ENDPOINT"]
    token = _os.environ["ALBEDO_RPC_TOKEN"].encode()
    limit = int(_os.environ["ALBEDO_RPC_MAX_MESSAGE_BYTES"])
    hard_cap = __HARD_CAP_BYTES__
    wait_ms = __REPLY_WAIT_MS__
    deep = __DEEP_PARAMS_LEVELS__
    context = _zmq.Context()

    def ask(parts):
        sock = context.socket(_zmq.DEALER)
        sock.setsockopt(_zmq.LINGER, 0)
        sock.connect(endpoint)
        try:
            sock.send_multipart(parts)
            if not sock.poll(wait_ms):
                return None
            return _json.loads(sock.recv_multipart()[-1])
        finally:
            sock.close()

    def request(rid, method, params=None):
        return _json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}).encode()

    padding = b"x" * (limit + 16)
    nested = b"[" * deep + b"]" * deep
    probes = {
        "oversized": [token, b'{"jsonrpc":"2.0","id":1,"method":"skills.list","params":{},"pad":"' + padding + b'"}'],
        "hard_cap": [token, b"y" * (hard_cap + 4096)],
        "malformed": [token, b'{"jsonrpc": "2.0", "id": 2, "method":'],
        "array": [token, b'[{"jsonrpc": "2.0", "id": 3, "method": "skills.list"}]'],
        "wrong_token": [b"0" * len(token), request(4, "skills.list")],
        "no_token": [request(5, "skills.list")],
        "unknown_method": [token, request(6, "skills.format_disk")],
        "extra_parts": [token, request(7, "skills.list"), b"extra"],
        "garbage": [token, b"\xff\xfe\x00\x9cgarbage\x00"],
        "bad_params": [token, request(8, "skills.read", {"name": 42})],
        "unknown_param": [token, request(9, "skills.list", {"__class__": "x"})],
        "fifo_read": [token, request(10, "skills.read", {"name": "nasty", "resource": "pipe"})],
        "zero_read": [token, request(11, "skills.read", {"name": "nasty", "resource": "zero"})],
        "climb_read": [token, request(12, "skills.read", {"name": "nasty", "resource": "../../../../etc/passwd"})],
        "deep_params": [token, b'{"jsonrpc":"2.0","id":14,"method":"skills.read","params":{"name":"demo","offset":' + nested + b"}}"],
        "after": [token, request(13, "skills.list")],
    }
    try:
        return {name: ask(parts) for name, parts in probes.items()}
    finally:
        context.term()


print(_json.dumps(_hostile_probes()))
