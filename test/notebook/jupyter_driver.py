"""Drives the installed "albedo" kernelspec the way Jupyter does, for test/notebook/relay.test.ts.

  notebook CELLS.json   nbclient runs a notebook of these cells in the working directory; prints
                        each cell's outputs as text (stream text, error name and value, text/plain)
  lifecycle             jupyter_client's KernelManager: a cell, an interrupt by signal, one by
                        message, a bad signature, a restart, a shutdown; prints what each did
  ipc DIR               a kernel whose connection file says transport ipc (sockets under DIR): one cell

Run with the Jupyter test venv's python; JUPYTER_PATH, HOME and ALBEDO_HOME come from the test.
Every answer is one JSON object on stdout.
"""

import json
import os
import sys
import time

# The longest one step of the driver waits for the kernel.
STEP_TIMEOUT_S = 60


def notebook(cells_file):
    import nbformat
    from nbclient import NotebookClient

    with open(cells_file, encoding="utf-8") as handle:
        cells = json.load(handle)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    client = NotebookClient(nb, kernel_name="albedo", timeout=STEP_TIMEOUT_S, allow_errors=True, resources={"metadata": {"path": os.getcwd()}})
    client.execute()
    shown = []
    for cell in nb.cells:
        text = ""
        for output in cell.outputs:
            if output.output_type == "stream":
                text += output.text
            elif output.output_type == "error":
                text += f"{output.ename}: {output.evalue}\n"
            elif "data" in output:
                text += output.data.get("text/plain", "") + "\n"
        shown.append(text)
    print(json.dumps({"cells": shown}))


def _run(client, code, timeout=STEP_TIMEOUT_S):
    """Executes `code`; the reply's status and error name, and the text it showed (streams, then text/plain of values)."""
    msg_id = client.execute(code)
    text = ""
    deadline = time.monotonic() + timeout
    while True:
        message = client.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        if message["msg_type"] == "stream":
            text += message["content"]["text"]
        if message["msg_type"] in ("execute_result", "display_data"):
            text += message["content"]["data"].get("text/plain", "") + "\n"
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            break
    reply = client.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = client.get_shell_msg(timeout=timeout)
    return {"status": reply["content"]["status"], "ename": reply["content"].get("ename"), "text": text}


def _interrupted(client, interrupt):
    """Starts a long cell, interrupts it once it runs, and returns how the cell ended."""
    msg_id = client.execute("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")
    deadline = time.monotonic() + STEP_TIMEOUT_S
    seen = []
    while True:
        try:
            message = client.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        except Exception:
            # What the cell did instead of starting, for the test's message.
            return {"status": "never started", "seen": seen}
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(message["msg_type"] if message["msg_type"] != "status" else message["content"]["execution_state"])
        if message["msg_type"] == "stream":
            break
    began = time.monotonic()
    interrupt()
    reply = client.get_shell_msg(timeout=STEP_TIMEOUT_S)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = client.get_shell_msg(timeout=STEP_TIMEOUT_S)
    return {"status": reply["content"]["status"], "ename": reply["content"].get("ename"), "seconds": round(time.monotonic() - began, 2)}


def lifecycle():
    from jupyter_client import KernelManager
    from jupyter_client.session import Session

    report = {}
    manager = KernelManager(kernel_name="albedo")
    manager.start_kernel(cwd=os.getcwd())
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=STEP_TIMEOUT_S)
    report["launcher_pid"] = manager.provisioner.pid
    report["first"] = _run(client, "import os\nmarker = 'before restart'\nprint(os.getcwd(), 'skills' in dir(), 'commands' in dir())")
    report["slash"] = _run(client, "/help")
    # Signal mode: jupyter_client sends SIGINT to the launcher (the kernelspec's interrupt_mode).
    report["interrupt_signal"] = _interrupted(client, manager.interrupt_kernel)

    def by_message():
        message = client.session.msg("interrupt_request", {})
        client.control_channel.send(message)

    report["interrupt_message"] = _interrupted(client, by_message)
    # A message signed with another key: the relay passes it on untouched and the kernel drops it.
    forged = Session(key=b"not-the-notebook-key", username="forger")
    forged.send(client.shell_channel.socket, forged.msg("execute_request", {
        "code": "open('forged.txt', 'w').write('ran')", "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": False, "stop_on_error": True,
    }))
    time.sleep(2)
    report["forged_ran"] = os.path.exists("forged.txt")
    report["after_forged"] = _run(client, "print('still here', marker)")
    manager.restart_kernel(now=False)
    client.wait_for_ready(timeout=STEP_TIMEOUT_S)
    report["restarted_launcher_pid"] = manager.provisioner.pid
    report["after_restart"] = _run(client, "print('marker' in dir(), 'skills' in dir())")
    client.stop_channels()
    began = time.monotonic()
    manager.shutdown_kernel(now=False)
    report["shutdown_seconds"] = round(time.monotonic() - began, 2)
    report["alive_after_shutdown"] = manager.is_alive()
    print(json.dumps(report))


def ipc(directory):
    from jupyter_client import KernelManager

    manager = KernelManager(kernel_name="albedo", transport="ipc", ip=os.path.join(directory, "kernel"))
    manager.start_kernel(cwd=os.getcwd())
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=STEP_TIMEOUT_S)
    ran = _run(client, "print('over ipc', 'skills' in dir())")
    client.stop_channels()
    manager.shutdown_kernel(now=False)
    print(json.dumps({"cell": ran, "alive_after_shutdown": manager.is_alive()}))


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "notebook":
        notebook(sys.argv[2])
    elif command == "lifecycle":
        lifecycle()
    elif command == "ipc":
        ipc(sys.argv[2])
    else:
        sys.exit(__doc__)
