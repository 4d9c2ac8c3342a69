"""Runs a command on a pseudo-terminal and plays a script against it, as a person at a keyboard would.

Usage: python pty_run.py STEPS_JSON [--columns N] -- COMMAND...
STEPS_JSON is a list of {"expect": REGEX, "timeout": SECONDS} and {"send": TEXT} steps. Prints a
JSON object: {"transcript": everything the terminal showed, "exit": the command's exit status,
"failed": the step that timed out or null}. The command gets 80 columns (or N) and its own session;
whatever happens, it is killed before this script exits.
"""

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time

COLUMNS, ROWS = 80, 24
EXIT_DEADLINE_S = 30.0


def main() -> None:
    steps = json.loads(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1:]
    options = sys.argv[2:sys.argv.index("--")]
    columns = int(options[options.index("--columns") + 1]) if "--columns" in options else COLUMNS
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, columns, 0, 0))
    transcript = b""
    failed = None

    def read_for(seconds: float) -> str:
        """"data", "quiet" (nothing within `seconds`) or "closed"."""
        nonlocal transcript
        ready, _, _ = select.select([fd], [], [], seconds)
        if not ready:
            return "quiet"
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return "closed"
        if not chunk:
            return "closed"
        transcript += chunk
        return "data"

    # Where "new" output starts: the end of the last match, or what the terminal had shown when the
    # last keys were sent. Not the end of what was read: one read can hold both the last match and
    # this step's text.
    mark = 0
    try:
        for step in steps:
            if "send" in step:
                os.write(fd, step["send"].encode())
                mark = len(transcript)
                continue
            pattern = re.compile(step["expect"].encode(), re.S)
            deadline = time.monotonic() + float(step.get("timeout", 30))
            start = mark if step.get("new") else 0
            while not pattern.search(transcript, start) and time.monotonic() < deadline:
                if read_for(min(0.2, max(0.0, deadline - time.monotonic()))) == "closed":
                    break
            found = pattern.search(transcript, start)
            if not found:
                failed = step
                break
            mark = max(mark, found.end())
        deadline = time.monotonic() + EXIT_DEADLINE_S
        status = None
        while time.monotonic() < deadline:
            read_for(0.1)
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
                break
        while read_for(0.05) == "data":
            pass
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    print(json.dumps({"transcript": transcript.decode("utf-8", "replace"), "exit": status, "failed": failed}))


if __name__ == "__main__":
    main()
