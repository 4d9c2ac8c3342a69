"""Runs a command in a pseudo-terminal and follows a script of steps, for tests of interactive CLIs.

usage: python3 pty_driver.py SCRIPT_JSON -- COMMAND...
SCRIPT_JSON: [{"expect": "regex"} | {"send": "text"} | {"wait_exit": true}], each expect bounded by
"timeout" seconds (default 30). Prints one JSON object: {"ok", "failed_step", "exit", "output"}.
"""
import json, os, pty, re, select, signal, sys, time

def main():
    script = json.loads(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    output = b""
    def read_for(seconds):
        nonlocal output
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], max(0, end - time.monotonic()))
            if not ready:
                return
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return
            if not chunk:
                return
            output += chunk
            yield
    failed = None
    seen = 0
    for index, step in enumerate(script):
        if "send" in step:
            os.write(fd, step["send"].encode())
        elif "expect" in step:
            pattern = re.compile(step["expect"].encode(), re.S)
            match = pattern.search(output, seen)
            if match is None:
                for _ in read_for(step.get("timeout", 30)):
                    match = pattern.search(output, seen)
                    if match:
                        break
            if match is None:
                failed = index
                break
            seen = match.end()
        elif step.get("wait_exit"):
            for _ in read_for(step.get("timeout", 30)):
                pass
    code = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            break
        list(read_for(0.1))
    if code is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    print(json.dumps({"ok": failed is None, "failed_step": failed, "exit": code, "output": output.decode("utf-8", "replace")}))

main()
