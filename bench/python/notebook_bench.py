"""The notebook relay's costs (K-14), driven as Jupyter drives a kernel; for bench/notebook.ts.

  execute N     a relayed session opened as the launcher opens one, the launcher's relay in a child
                process on TCP ports (as JupyterLab writes them), and N trivial executes through it
                and N straight to the kernel's own sockets, in alternating batches
  open N        kernel start to ready with jupyter_client, N times each, alternating: the "albedo"
                kernelspec (launcher, daemon, sandboxed kernel) and "plain" (ipykernel, unsandboxed)
  relay CONN ADDRS  (internal) runs the relay until stdin closes

Run with the Jupyter test venv's python, ALBEDO_HOME naming the daemon's state dir and the
albedo kernel package on PYTHONPATH. One JSON object on stdout.
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

# Batches of each kind, alternating; the first of each is a warm-up.
BATCHES = 6
# The longest one step waits for the kernel.
STEP_TIMEOUT_S = 60


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


def _executes(client, count):
    """Per-execute milliseconds of `count` trivial executes, each waited for to its reply."""
    times = []
    for _ in range(count):
        began = time.perf_counter()
        client.execute_interactive("pass", timeout=STEP_TIMEOUT_S, output_hook=lambda _message: None)
        times.append((time.perf_counter() - began) * 1000)
    return times


def execute(count):
    from jupyter_client import BlockingKernelClient
    from albedo.launch import open_relayed_session, state_dir, _close_session

    key = os.urandom(16).hex()
    began = time.perf_counter()
    found, answer = open_relayed_session(state_dir(), os.getcwd(), key)
    session_open_ms = (time.perf_counter() - began) * 1000
    target = answer["relay"]
    ports = _free_ports(5)
    names = ("shell", "iopub", "stdin", "control", "hb")
    jupyter = {"transport": "tcp", "ip": "127.0.0.1", "key": key, "signature_scheme": "hmac-sha256", **{f"{name}_port": port for name, port in zip(names, ports)}}
    directory = tempfile.mkdtemp(prefix="alb-nbb-")
    connection = os.path.join(directory, "connection.json")
    with open(connection, "w") as handle:
        json.dump(jupyter, handle)
    relay = subprocess.Popen([sys.executable, __file__, "relay", connection, json.dumps({name: target[name] for name in names})], stdin=subprocess.PIPE)
    try:
        relayed = BlockingKernelClient(connection_file=connection)
        relayed.load_connection_file()
        relayed.start_channels()
        relayed.wait_for_ready(timeout=STEP_TIMEOUT_S)
        direct = BlockingKernelClient()
        info = {"transport": "ipc", "key": key, "signature_scheme": "hmac-sha256"}
        for name in names:
            prefix, port = target[name][len("ipc://"):].rsplit("-", 1)
            info.update({"ip": prefix, f"{name}_port": int(port)})
        direct.load_connection_info(info)
        direct.start_channels()
        direct.wait_for_ready(timeout=STEP_TIMEOUT_S)
        through, straight = [], []
        per_batch = max(1, count // (BATCHES - 1))
        for batch in range(BATCHES):
            a = _executes(relayed, per_batch)
            b = _executes(direct, per_batch)
            if batch > 0:
                through += a
                straight += b
        relayed.stop_channels()
        direct.stop_channels()
    finally:
        relay.stdin.close()
        relay.wait(10)
        _close_session(found[0], found[1], str(answer["id"]))
    print(json.dumps({"session_open_ms": session_open_ms, "relayed_ms": statistics.median(through), "direct_ms": statistics.median(straight), "executes": len(through),
                      "relayed_p95_ms": sorted(through)[int(len(through) * 0.95) - 1], "direct_p95_ms": sorted(straight)[int(len(straight) * 0.95) - 1]}))


def _open_ms(kernel_name):
    from jupyter_client import KernelManager

    began = time.perf_counter()
    manager = KernelManager(kernel_name=kernel_name)
    manager.start_kernel(cwd=os.getcwd())
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=STEP_TIMEOUT_S)
    took = (time.perf_counter() - began) * 1000
    client.stop_channels()
    manager.shutdown_kernel(now=False)
    return took


def open_runs(count):
    albedo, plain = [], []
    # What starting the launcher costs before it asks the daemon: the interpreter and its imports.
    began = time.perf_counter()
    subprocess.run([sys.executable.replace(".venv-jupyter", ".venv"), "-c", "import albedo.launch, albedo._relay, zmq"], check=True)
    launcher_start_ms = (time.perf_counter() - began) * 1000
    for run in range(count + 1):
        a = _open_ms("albedo")
        b = _open_ms("plain")
        if run > 0:
            albedo.append(a)
            plain.append(b)
    print(json.dumps({"albedo_ms": statistics.median(albedo), "plain_ms": statistics.median(plain), "runs": count, "launcher_start_ms": launcher_start_ms}))


def relay_child(connection, addresses):
    from albedo._relay import Relay, read_connection_file

    relay = Relay(read_connection_file(connection), json.loads(addresses))
    relay.start()
    sys.stdin.read()
    relay.stop()


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "execute":
        execute(int(sys.argv[2]))
    elif command == "open":
        open_runs(int(sys.argv[2]))
    elif command == "relay":
        relay_child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
