"""Kernel entry point of the "albedo (Python)" kernelspec (K-13): `python -m albedo.launch -f FILE`.

Finds (or starts) the albedo daemon for the state dir, opens a session for the kernel's working
directory whose kernel is this process, puts the session's RPC access into the environment and
runs ipykernel with the albedo extension. When any of that fails the kernel still starts, as
plain Python, after one line on stderr saying why.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

from ._contract import (
    BRIDGE_ENV,
    DAEMON_INFO_FILE,
    DAEMON_LOG_FILE,
    DAEMON_START_DEADLINE_S,
    DAEMON_TOKEN_FILE,
    EXTENSIONS_SEPARATOR,
    HEALTH_PATH,
    HEALTH_TIMEOUT_S,
    INSTALL_ENV,
    MAX_STATE_FILE_BYTES,
    NODE_ENV,
    SESSIONS_PATH,
    STATE_DIR_ENV,
    STATE_DIR_NAME,
)

# The variable a joined kernel learns its session id from (the launcher and `%load_ext albedo` alike).
SESSION_ID_ENV = "ALBEDO_SESSION_ID"
# The launcher's own waits: how often it looks for a daemon it started, and how long a session's open may take.
DAEMON_POLL_S = 0.1
SESSION_OPEN_TIMEOUT_S = 60.0


class LaunchError(Exception):
    """Why the kernel starts without albedo; the message says what to do."""


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def state_dir() -> str:
    """$ALBEDO_HOME, else ~/.albedo (as the runtime resolves it)."""
    configured = os.environ.get(STATE_DIR_ENV)
    return os.path.abspath(configured if configured else os.path.join(os.path.expanduser("~"), STATE_DIR_NAME))


def _read_small(path: str) -> Optional[str]:
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read(MAX_STATE_FILE_BYTES + 1)
    except OSError:
        return None
    return None if len(text) > MAX_STATE_FILE_BYTES else text


def _daemon(state: str) -> Optional[Tuple[Dict[str, Any], str]]:
    """daemon.json and the token, or None when either is missing or malformed."""
    info_text, token = _read_small(os.path.join(state, DAEMON_INFO_FILE)), _read_small(os.path.join(state, DAEMON_TOKEN_FILE))
    if info_text is None or token is None or not token.strip():
        return None
    try:
        info = json.loads(info_text)
    except ValueError:
        return None
    return (info, token.strip()) if isinstance(info, dict) and isinstance(info.get("url"), str) else None


def request(info: Dict[str, Any], token: str, method: str, path: str, body: Any, timeout: float) -> Tuple[int, Any]:
    """One JSON request to the daemon (TCP or Unix socket); raises OSError or ValueError on failure."""
    if isinstance(info.get("socket"), str):
        conn: http.client.HTTPConnection = _UnixConnection(info["socket"], timeout)
    else:
        url = urlsplit(info["url"])
        conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=timeout)
    headers = {"Authorization": f"Bearer {token}"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    return response.status, (json.loads(raw) if raw else None)


def _healthy(found: Tuple[Dict[str, Any], str]) -> bool:
    pid = found[0].get("pid")
    if isinstance(pid, int) and not _alive(pid):
        return False
    try:
        return request(found[0], found[1], "GET", HEALTH_PATH, None, HEALTH_TIMEOUT_S)[0] == 200
    except (OSError, ValueError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _start_daemon(state: str) -> Tuple[Dict[str, Any], str]:
    install = os.environ.get(INSTALL_ENV)
    if not install:
        raise LaunchError(f"no daemon runs and {INSTALL_ENV} is not set, so none can be started; run `albedo serve`")
    node = os.environ.get(NODE_ENV) or "node"
    os.makedirs(state, mode=0o700, exist_ok=True)
    log = os.path.join(state, DAEMON_LOG_FILE)
    # The daemon writes (and rotates) its own log; its stdout and stderr would be a second, unbounded one.
    # Its own session: the daemon outlives this kernel and must not get the notebook's signals.
    # --on-demand: it exits by itself once no notebook has used it for a while (the period is the CLI's ON_DEMAND_IDLE_EXIT_MS).
    child = subprocess.Popen([node, os.path.join(install, "bin", "albedo"), "serve", "--on-demand", "--log-file", log],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.monotonic() + DAEMON_START_DEADLINE_S
    while time.monotonic() < deadline:
        found = _daemon(state)
        # Another launcher may have won the race; its daemon serves this kernel just as well.
        if found is not None and _healthy(found):
            return found
        if child.poll() is not None:
            raise LaunchError(f"`albedo serve` exited with code {child.returncode}{_last_line(log)}; see {log}")
        time.sleep(DAEMON_POLL_S)
    raise LaunchError(f"`albedo serve` did not answer within {DAEMON_START_DEADLINE_S:g} s (DAEMON_START_DEADLINE_S)")


def _last_line(path: str) -> str:
    """': <the log's last line>' (what a daemon that could not start said), or '' when there is none."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.path.getsize(path) - MAX_STATE_FILE_BYTES))
            lines = handle.read(MAX_STATE_FILE_BYTES).decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return f": {lines[-1]}" if lines else ""


def open_session(state: str, workspace: str, start: bool = True) -> Dict[str, str]:
    """The environment that connects this kernel to a new daemon session for `workspace`; raises LaunchError.

    With `start` false a daemon must already run: LaunchError says so otherwise.
    """
    found = _daemon(state)
    if found is None or not _healthy(found):
        if not start:
            raise LaunchError(f"no albedo daemon runs for {state}; start one with `albedo serve`")
        found = _start_daemon(state)
    body = {"workspace": workspace, "kernel": "external", "kernel_pid": os.getpid()}
    try:
        status, answer = request(found[0], found[1], "POST", SESSIONS_PATH, body, SESSION_OPEN_TIMEOUT_S)
    except (OSError, ValueError) as error:
        raise LaunchError(f"the daemon at {found[0]['url']} did not open a session: {error}") from error
    if status != 201 or not isinstance(answer, dict) or not isinstance(answer.get("rpc"), dict):
        # A refusal is a problem document: `code` is stable, `detail` says what to do.
        problem = answer if isinstance(answer, dict) else {}
        raise LaunchError(f"the daemon refused a session for {workspace} ({status} {problem.get('code') or 'without a code'}: {problem.get('detail') or 'no detail'})")
    return {**bridge_env(answer["rpc"]), SESSION_ID_ENV: str(answer["id"])}


def bridge_env(rpc: Dict[str, Any]) -> Dict[str, str]:
    """The kernel bridge's variables from the daemon's `rpc` member, written as the runtime writes them."""
    return {name: _env_text(rpc[member]) for member, name in BRIDGE_ENV.items()}


def _env_text(value: Any) -> str:
    return EXTENSIONS_SEPARATOR.join(value) if isinstance(value, list) else str(value)


def kernel_argv(argv: List[str]) -> List[str]:
    """ipykernel's arguments: ours (`-f FILE`) plus the albedo extension when a session is open."""
    try:
        os.environ.update(open_session(state_dir(), os.getcwd()))
    except Exception as error:  # any failure leaves a working plain-Python kernel
        print(f"albedo: starting without `skills` and `commands`: {error}. "
              "Run `albedo serve` (or `albedo doctor`) and restart the kernel.", file=sys.stderr)
        return argv
    return [*argv, "--ext", "albedo"]


def main() -> None:
    from ipykernel.kernelapp import IPKernelApp

    IPKernelApp.launch_instance(argv=kernel_argv(sys.argv[1:]))


if __name__ == "__main__":
    main()
