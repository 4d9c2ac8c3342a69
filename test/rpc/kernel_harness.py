"""Drives one real ipykernel for the RPC tests: JSON commands on stdin, one JSON answer per line on stdout.

argv[1]: "ext" to start the kernel with `--ext albedo`, "plain" without it. The kernel inherits this
process's environment (the test sets ALBEDO_RPC_*, PYTHONPATH and a private IPYTHONDIR).
Commands: {"op": "run", "code"} -> {msg_id, status, ename, stdout, stderr}; {"op": "start", "code", "marker"}
-> {msg_id} once stdout shows the marker; {"op": "interrupt"}; {"op": "wait", "msg_id", "timeout"}
-> {status, ename, finished}; {"op": "signals"} -> each kernel thread's name, state and SIGINT bits
(pending, blocked) from /proc; {"op": "quit"}. A command that fails answers {"failed": traceback, "kernel_alive"}
instead of ending the harness, so one stuck cell cannot take every later test down with it.
"""

import json
import os
import signal
import sys
import time
import traceback
from queue import Empty

from jupyter_client.manager import KernelManager

KERNEL_READY_TIMEOUT_S = 60
CELL_TIMEOUT_S = 30


def answer(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def run(client, code):
    streams = {"stdout": "", "stderr": ""}

    def hook(msg):
        if msg["msg_type"] == "stream":
            streams[msg["content"]["name"]] += msg["content"]["text"]

    reply = client.execute_interactive(code, timeout=CELL_TIMEOUT_S, output_hook=hook, stop_on_error=False)
    content = reply["content"]
    msg_id = reply["parent_header"]["msg_id"]
    return {"msg_id": msg_id, "status": content["status"], "ename": content.get("ename"), **streams}


def start(client, code, marker):
    msg_id = client.execute(code, stop_on_error=False)
    end = time.monotonic() + CELL_TIMEOUT_S
    while time.monotonic() < end:
        try:
            msg = client.get_iopub_msg(timeout=max(0.01, end - time.monotonic()))
        except Empty:
            break
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream" and marker in msg["content"]["text"]:
            return {"msg_id": msg_id}
        if msg["msg_type"] == "error":
            return {"msg_id": msg_id, "error": msg["content"]["ename"]}
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return {"msg_id": msg_id, "error": "the cell ended before printing the marker"}
    return {"msg_id": msg_id, "error": f"marker not seen within {CELL_TIMEOUT_S} s"}


def wait(client, msg_id, timeout):
    end = time.monotonic() + timeout
    while True:
        try:
            msg = client.get_shell_msg(timeout=max(0.01, end - time.monotonic()))
        except Empty:
            return {"finished": False}
        if msg["parent_header"].get("msg_id") == msg_id:
            content = msg["content"]
            return {"finished": True, "status": content["status"], "ename": content.get("ename")}


def signals(manager):
    """Which kernel threads have SIGINT pending or blocked: a signal Linux gave a thread other than the
    main one sets Python's flag but does not wake the main thread from a blocking call."""
    pid = manager.provisioner.process.pid
    bit = 1 << (signal.SIGINT - 1)
    threads = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as status:
                fields = dict(line.rstrip("\n").split(":\t", 1) for line in status if ":\t" in line)
        except OSError:
            continue
        threads.append({
            "tid": int(tid),
            "name": fields.get("Name"),
            "state": fields.get("State"),
            "sigint_pending": bool(int(fields.get("SigPnd", "0"), 16) & bit),
            "sigint_blocked": bool(int(fields.get("SigBlk", "0"), 16) & bit),
        })
    return {"main": pid, "threads": threads}


def perform(manager, client, command):
    op = command["op"]
    if op == "run":
        return run(client, command["code"])
    if op == "start":
        return start(client, command["code"], command["marker"])
    if op == "interrupt":
        manager.interrupt_kernel()
        return {"interrupted": True}
    if op == "wait":
        return wait(client, command["msg_id"], command["timeout"])
    if op == "signals":
        return signals(manager)
    raise ValueError(f"unknown op {op!r}")


def main():
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(extra_arguments=["--ext", "albedo"] if sys.argv[1] == "ext" else [])
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=KERNEL_READY_TIMEOUT_S)
        answer({"ready": True})
        for line in sys.stdin:
            command = json.loads(line)
            op = command["op"]
            if op == "quit":
                break
            try:
                answer(perform(manager, client, command))
            except Exception:
                answer({"failed": traceback.format_exc(), "kernel_alive": manager.is_alive()})
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
