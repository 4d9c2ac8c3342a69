"""The relay's hold on the kernel's sockets (K-14), with real ZeroMQ sockets; for relay.test.ts.

A kernel can write the directory its IPC sockets are in. This plays such a kernel: it offers a
link and a plain file where a socket should be (the relay must refuse both), then, once relayed,
closes its shell socket and plants a link to another socket in its place (the relay must never
reach that one). Prints one JSON object.
"""

import json
import os
import shutil
import tempfile
import time

import zmq

from albedo._relay import CHANNELS, Relay, RelayError

# How long a message is waited for, or waited for not to come.
WAIT_MS = 1500


def main():
    root = tempfile.mkdtemp(prefix="alb-pin-")
    context = zmq.Context()
    sockets = []
    try:
        kinds = {"iopub": zmq.XPUB}
        kernel = {}
        for channel in CHANNELS:
            sock = context.socket(kinds.get(channel, zmq.ROUTER))
            sock.linger = 0
            path = os.path.join(root, f"k-{channel}")
            sock.bind(f"ipc://{path}")
            sockets.append(sock)
            kernel[channel] = f"ipc://{path}"
        shell = sockets[CHANNELS.index("shell")]
        jupyter = {"transport": "ipc", "ip": os.path.join(root, "j"), "key": "k", "signature_scheme": "hmac-sha256",
                   **{f"{channel}_port": index + 1 for index, channel in enumerate(CHANNELS)}}
        report = {}

        link = os.path.join(root, "link")
        os.symlink(kernel["shell"][len("ipc://"):], link)
        report["link_refused"] = _refused(jupyter, {**kernel, "shell": f"ipc://{link}"})
        plain = os.path.join(root, "plain")
        open(plain, "w").close()
        report["file_refused"] = _refused(jupyter, {**kernel, "shell": f"ipc://{plain}"})

        relay = Relay(jupyter, kernel)
        relay.start()
        try:
            client = context.socket(zmq.DEALER)
            client.linger = 0
            client.connect(f"ipc://{jupyter['ip']}-{jupyter['shell_port']}")
            sockets.append(client)
            client.send(b"ping")
            report["relayed_before"] = shell.poll(WAIT_MS) != 0 and shell.recv_multipart()[-1] == b"ping"

            # The kernel swaps its socket for a link to another one (here, a socket only it should reach).
            attacker = context.socket(zmq.ROUTER)
            attacker.linger = 0
            target = os.path.join(root, "attacker")
            attacker.bind(f"ipc://{target}")
            sockets.append(attacker)
            shell.close()
            os.unlink(kernel["shell"][len("ipc://"):])
            os.symlink(target, kernel["shell"][len("ipc://"):])
            # Long enough for the relay's socket to see the close and try again.
            time.sleep(0.5)
            client.send(b"after")
            report["attacker_reached"] = attacker.poll(WAIT_MS) != 0
        finally:
            relay.stop()
        print(json.dumps(report))
    finally:
        for sock in sockets:
            sock.close()
        context.term()
        shutil.rmtree(root, ignore_errors=True)


def _refused(jupyter, kernel):
    relay = Relay(jupyter, kernel)
    try:
        relay.start()
    except RelayError:
        return True
    relay.stop()
    return False


if __name__ == "__main__":
    main()
