"""Drives one real ipykernel for the RPC tests: JSON commands on stdin, one JSON answer per line on stdout.

argv[1]: "ext" to start the kernel with `--ext albedo`, "plain" without it. The kernel inherits this
process's environment (the test sets ALBEDO_RPC_*, PYTHONPATH and a private IPYTHONDIR).
Commands: {"op": "run", "code"} -> {msg_id, status, ename, stdout, stderr}; {"op": "start", "code", "marker"}
-> {msg_id} once stdout shows the marker; {"op": "interrupt"}; {"op": "wait", "msg_id", "timeout"}
-> {status, ename, finished}; {"op": "quit"}.
"""

import json
import sys
import time
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

    reply = client.execute_interactive(code, timeout=CELL_TIMEOUT_S, output_hook=hook)
    content = reply["content"]
    msg_id = reply["parent_header"]["msg_id"]
    return {"msg_id": msg_id, "status": content["status"], "ename": content.get("ename"), **streams}


def start(client, code, marker):
    msg_id = client.execute(code)
    end = time.monotonic() + CELL_TIMEOUT_S
    while time.monotonic() < end:
        msg = client.get_iopub_msg(timeout=CELL_TIMEOUT_S)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream" and marker in msg["content"]["text"]:
            return {"msg_id": msg_id}
        if msg["msg_type"] == "error":
            return {"msg_id": msg_id, "error": msg["content"]["ename"]}
    return {"msg_id": msg_id, "error": "marker not seen"}


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
            if op == "run":
                answer(run(client, command["code"]))
            elif op == "start":
                answer(start(client, command["code"], command["marker"]))
            elif op == "interrupt":
                manager.interrupt_kernel()
                answer({"interrupted": True})
            elif op == "wait":
                answer(wait(client, command["msg_id"], command["timeout"]))
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
