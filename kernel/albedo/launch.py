"""Kernel entry point of the "albedo (Python)" kernelspec (K-13, K-14): `python -m albedo.launch -f FILE`.

The launcher is not the kernel. It finds (or starts) the albedo daemon for the state dir, asks it
for a session on the notebook's project (find_workspace) whose kernel, started in the notebook's directory, (sandboxed as the `sandbox` setting says)
signs with the key of Jupyter's connection file, and relays Jupyter's five channels to that
kernel's own sockets until the kernel ends (see _relay.py). Jupyter's SIGINT interrupts the
kernel through the daemon; SIGTERM, or the kernel's end, ends the relay and closes the session.

When the daemon refuses the session, the notebook gets a kernel that runs no code and answers
each cell with the reason (_refusal.py). When no daemon can be reached the kernel starts as
plain Python in this process, after one line on stderr saying why, unless the global `sandbox`
setting is `required`: then it is the refusing kernel too.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any, Dict, List, NamedTuple, Optional, Tuple
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
    MAX_SETTINGS_BYTES,
    MAX_STATE_FILE_BYTES,
    MAX_WORKSPACE_WALK,
    NODE_ENV,
    NOTEBOOK_CLIENT,
    SESSIONS_PATH,
    SETTINGS_FILE,
    STATE_DIR_ENV,
    STATE_DIR_NAME,
    WORKSPACE_ENV,
    WORKSPACE_MARKERS,
)

# The variable a joined kernel learns its session id from (the launcher and `%load_ext albedo` alike).
SESSION_ID_ENV = "ALBEDO_SESSION_ID"
# The launcher's own waits: how often it looks for a daemon it started, and how long a session's open may take.
DAEMON_POLL_S = 0.1
SESSION_OPEN_TIMEOUT_S = 60.0
# How often the relaying launcher looks at its relay and its parent between its kernel's events.
WATCH_INTERVAL_S = 0.5
# The longest the launcher's requests to the daemon while it relays (an interrupt, the close) may take.
CONTROL_TIMEOUT_S = 10.0


class LaunchError(Exception):
    """Why the kernel starts without albedo; the message says what to do."""


class Refused(LaunchError):
    """The daemon answered, and would not open the session: no kernel may run in its place."""


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


class Workspace(NamedTuple):
    """The session's workspace for a notebook, what decided it, and the kernel's working directory (None: the workspace)."""

    path: str
    why: str
    cwd: Optional[str]


def find_workspace(notebook_dir: str) -> Workspace:
    """The project a notebook in `notebook_dir` belongs to: WORKSPACE_ENV when set, else the nearest directory
    from `notebook_dir` up holding one of WORKSPACE_MARKERS (never the home directory, the filesystem root or the
    state dir's own `.albedo`; an empty directory is no marker), else `notebook_dir` itself. The kernel keeps `notebook_dir` as its working directory
    when it lies inside the workspace."""
    here = os.path.realpath(notebook_dir)
    pinned = os.environ.get(WORKSPACE_ENV)
    if pinned:
        workspace = os.path.realpath(pinned)
        inside = _inside(here, workspace)
        return Workspace(workspace, WORKSPACE_ENV if inside else f"{WORKSPACE_ENV}; the notebook's directory lies outside it, so the kernel starts there",
                         here if inside and here != workspace else None)
    stops = {os.path.realpath(os.path.expanduser("~"))}
    state = os.path.realpath(state_dir())
    candidate = here
    for _ in range(MAX_WORKSPACE_WALK):
        if candidate in stops or os.path.dirname(candidate) == candidate:
            break
        for marker in WORKSPACE_MARKERS:
            path = os.path.join(candidate, marker)
            if _marks(path) and os.path.realpath(path) != state:
                return Workspace(candidate, f"it holds {marker}", here if candidate != here else None)
        candidate = os.path.dirname(candidate)
    names = ", ".join(WORKSPACE_MARKERS[:-1]) + f" or {WORKSPACE_MARKERS[-1]}"
    return Workspace(here, f"the notebook's directory: no {names} in it or above it", None)


def _marks(path: str) -> bool:
    """Whether `path` exists and is not an empty directory: an empty `.agents` holds no project (older albedo versions left them behind)."""
    if not os.path.isdir(path):
        return os.path.lexists(path)
    try:
        with os.scandir(path) as entries:
            return next(entries, None) is not None
    except OSError:
        return True


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


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
    answer = _post_session(found, {"workspace": workspace, "kernel": "external", "kernel_pid": os.getpid(), "client": NOTEBOOK_CLIENT}, "rpc")
    return {**bridge_env(answer["rpc"]), SESSION_ID_ENV: str(answer["id"])}


def _post_session(found: Tuple[Dict[str, Any], str], body: Dict[str, Any], member: str) -> Dict[str, Any]:
    """The daemon's answer to POST /sessions with `body`, which must carry `member`; raises LaunchError, or Refused when the daemon said no."""
    try:
        status, answer = request(found[0], found[1], "POST", SESSIONS_PATH, body, SESSION_OPEN_TIMEOUT_S)
    except (OSError, ValueError) as error:
        raise LaunchError(f"the daemon at {found[0]['url']} did not open a session: {error}") from error
    if status != 201 or not isinstance(answer, dict) or not isinstance(answer.get(member), dict):
        # A refusal is a problem document: `code` is stable, `detail` says what to do.
        problem = answer if isinstance(answer, dict) else {}
        raise Refused(f"the albedo daemon refused a session for {body['workspace']} ({status} {problem.get('code') or 'without a code'}: {problem.get('detail') or 'no detail'})")
    return answer


def bridge_env(rpc: Dict[str, Any]) -> Dict[str, str]:
    """The kernel bridge's variables from the daemon's `rpc` member, written as the runtime writes them."""
    return {name: _env_text(rpc[member]) for member, name in BRIDGE_ENV.items()}


def _env_text(value: Any) -> str:
    return EXTENSIONS_SEPARATOR.join(value) if isinstance(value, list) else str(value)


def open_relayed_session(state: str, workspace: Workspace, key: str) -> Tuple[Tuple[Dict[str, Any], str], Dict[str, Any]]:
    """The daemon and its new session for `workspace`, whose kernel signs with `key` (K-14) and starts in its `cwd`; raises Refused or LaunchError."""
    found = _daemon(state)
    if found is None or not _healthy(found):
        found = _start_daemon(state)
    relay: Dict[str, Any] = {"key": key, "signature_scheme": "hmac-sha256", "launcher_pid": os.getpid()}
    if workspace.cwd is not None:
        relay["cwd"] = workspace.cwd
    return found, _post_session(found, {"workspace": workspace.path, "kernel": "relay", "relay": relay, "client": NOTEBOOK_CLIENT}, "relay")


def sandbox_line(answer: Dict[str, Any], why: str) -> str:
    """The one line the launcher writes about what it started: sandboxed or not, where, and what made that the workspace."""
    kernel = answer.get("kernel") if isinstance(answer.get("kernel"), dict) else {}
    where = f"session {answer.get('id')} on {answer.get('workspace')} ({why})"
    if kernel.get("sandbox") == "bwrap":
        return f"albedo: kernel sandboxed (bubblewrap), {where}"
    return f"albedo: kernel NOT sandboxed (the sandbox setting is off, or auto found no working bubblewrap: `albedo doctor` says which), {where}"


def global_sandbox_mode(state: str) -> str:
    """The global settings' `sandbox` mode, "auto" when unset; "required" when the file cannot be read (the safe reading)."""
    path = os.path.join(state, SETTINGS_FILE)
    try:
        with open(path, "r", encoding="utf-8") as handle:
            text = handle.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return "auto"
    except OSError:
        return "required"
    try:
        settings = json.loads(text) if len(text) <= MAX_SETTINGS_BYTES else None
    except ValueError:
        settings = None
    if not isinstance(settings, dict):
        return "required"
    mode = settings.get("sandbox", "auto")
    return mode if mode in ("auto", "required", "off") else "required"


def relay_until_done(found: Tuple[Dict[str, Any], str], answer: Dict[str, Any], connection: Dict[str, Any], why: str) -> int:
    """Relays Jupyter's channels to the session's kernel until the kernel ends, the relay fails, Jupyter goes or SIGTERM comes; then closes the session."""
    from ._relay import CHANNELS, Relay, RelayError

    info, token = found
    session = str(answer["id"])
    target = answer["relay"]
    relay = Relay(connection, {channel: str(target[channel]) for channel in CHANNELS})
    try:
        relay.start()
    except RelayError as error:
        print(f"albedo: {error}", file=sys.stderr)
        _close_session(info, token, session)
        return 1
    stop = threading.Event()

    def interrupt() -> None:
        try:
            request(info, token, "POST", f"{SESSIONS_PATH}/{session}/interrupt", None, CONTROL_TIMEOUT_S)
        except (OSError, ValueError) as error:
            print(f"albedo: the interrupt did not reach the daemon: {error}", file=sys.stderr)

    # Jupyter interrupts a "signal" kernel with SIGINT to this process; the kernel is the daemon's child, so the daemon passes it on.
    signal.signal(signal.SIGINT, lambda *_: threading.Thread(target=interrupt, name="albedo-interrupt", daemon=True).start())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    parent = os.getppid()
    try:
        kernel = os.pidfd_open(int(target["kernel_pid"]))
    except OSError:
        kernel = None
    print(sandbox_line(answer, why), file=sys.stderr)
    why = "the kernel ended"
    try:
        while kernel is not None:
            if stop.is_set():
                why = "asked to stop"
                break
            ready, _, _ = select.select([kernel], [], [], WATCH_INTERVAL_S)
            if ready:
                break
            if not relay.alive():
                why = "the relay stopped"
                break
            if os.getppid() != parent:
                why = "Jupyter went away"
                break
    finally:
        relay.stop()
        if kernel is not None:
            os.close(kernel)
        _close_session(info, token, session)
    # A kernel that ends because a client asked it to (jupyter console's exit, a notebook's shutdown) is no news.
    if not relay.shutdown_asked():
        print(f"albedo: relay ended: {why}", file=sys.stderr)
    return 0


def _close_session(info: Dict[str, Any], token: str, session: str) -> None:
    """Closes the session (its kernel's shutdown ladder runs in the daemon); the daemon also does so once this process is gone."""
    try:
        request(info, token, "DELETE", f"{SESSIONS_PATH}/{session}", None, CONTROL_TIMEOUT_S)
    except (OSError, ValueError):
        pass


def _connection_file(argv: List[str]) -> Optional[str]:
    """The FILE of `-f FILE` (or `--f=FILE`), as Jupyter passes it."""
    for index, arg in enumerate(argv):
        if arg == "-f" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--f="):
            return arg[len("--f="):]
    return None


def main() -> None:
    from ._refusal import run_refusal_kernel
    from ._relay import RelayError, read_connection_file

    argv = sys.argv[1:]
    path = _connection_file(argv)
    if path is None:
        print("albedo: usage: python -m albedo.launch -f CONNECTION_FILE (Jupyter runs it so)", file=sys.stderr)
        sys.exit(2)
    try:
        connection = read_connection_file(path)
    except RelayError as error:
        print(f"albedo: {error}", file=sys.stderr)
        sys.exit(1)
    state = state_dir()
    workspace = find_workspace(os.getcwd())
    try:
        found, answer = open_relayed_session(state, workspace, str(connection["key"]))
    except Refused as refused:
        run_refusal_kernel(argv, str(refused))
        return
    except LaunchError as error:
        if global_sandbox_mode(state) == "required":
            run_refusal_kernel(argv, f"{error}; the sandbox setting is required, so no kernel runs outside the sandbox")
            return
        from ipykernel.kernelapp import IPKernelApp

        print(f"albedo: starting without a sandbox, `skills` and `commands`: {error}. "
              "Run `albedo serve` (or `albedo doctor`) and restart the kernel.", file=sys.stderr)
        IPKernelApp.launch_instance(argv=argv)
        return
    sys.exit(relay_until_done(found, answer, connection, workspace.why))


if __name__ == "__main__":
    main()
