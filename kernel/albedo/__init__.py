"""albedo's kernel package: `skills`, `commands` and `mcp` backed by the runtime over JSON-RPC.

Load it as an IPython extension (`--ext albedo`, `%load_ext albedo`) or import it from a plain
script; both read the kernel bridge's variables (ALBEDO_RPC_ENDPOINT, ALBEDO_RPC_TOKEN, ...) from
the environment.
"""

from __future__ import annotations

import asyncio
import os
import sys
import warnings
from typing import Any, Dict, NamedTuple, Optional, Tuple

from . import _streams
from ._cells import CellTasks
from ._contract import (
    CANCEL_METHOD,
    COMMANDS_CATALOG,
    DEFAULT_DEADLINE_MS,
    MAX_MESSAGE_BYTES,
    ENDPOINT_ENV,
    EXTENSION_NAMES,
    EXTENSIONS_ENV,
    EXTENSIONS_SEPARATOR,
    TOKEN_ENV,
    Cancelled,
    Conflict,
    Forbidden,
    InvalidParams,
    KernelDied,
    LimitExceeded,
    NotFound,
    ReloadRequired,
    RpcTimeout,
    SKILLS_LIST,
)
from ._errors import AlbedoError, ProtocolError
from ._namespaces import Commands, Skills, mint
from ._mcp import Mcp, McpImage, McpToolError, mint as mint_mcp, progress_line as mcp_progress_line, reloaded as mcp_reloaded
from ._contract import MCP_CATALOG, MCP_CATALOG_AT_LOAD_DEADLINE_S, MCP_PROGRESS_METHOD, MCP_RELOADED_METHOD
from ._transport import Channel, RpcChannel

CATALOG_AT_LOAD_DEADLINE_S = 10.0
NOT_CONFIGURED = (
    f"albedo: {ENDPOINT_ENV} and {TOKEN_ENV} are not set; start this kernel from albedo "
    "(or the 'albedo (Python)' kernelspec) so it can reach a session"
)
NOT_ATTACHED = (
    "albedo: could not join a session ({}). Start the daemon (`albedo serve`) and run "
    "%load_ext albedo again, or start this kernel from the 'albedo (Python)' kernelspec. "
    f"(This kernel was not started by albedo: it has no {ENDPOINT_ENV}, so it looked for a running daemon.)"
)
SKILLS_AT_LOAD_DEADLINE_S = 10.0

__all__ = [
    "AlbedoError", "Cancelled", "Conflict", "Forbidden", "InvalidParams", "KernelDied", "LimitExceeded",
    "McpImage", "McpToolError", "NotFound", "ProtocolError", "ReloadRequired", "RpcTimeout", "skills", "commands", "mcp",
    "load_ipython_extension",
]

SKILLS_OFF = "albedo: the skills extension is off for this session, so there is no `skills` namespace"
MCP_OFF = (
    "albedo: this session has no MCP servers, so there is no `mcp` namespace; configure one in the settings "
    "(`albedo mcp add NAME -- COMMAND ARGS...`), then `/reload session`"
)

class SessionObjects(NamedTuple):
    """What a loaded extension holds: the channel to the runtime and the two namespaces over it."""

    channel: RpcChannel
    skills: Skills
    commands: Commands
    # None when the session configures no MCP server: the namespace is absent, not empty.
    mcp: Optional[Mcp]


_session: Optional[SessionObjects] = None
# A remote kernel's extensions come in the comm's open data instead of the environment.
_extensions: Optional[Tuple[str, ...]] = None
# The shell the extension was loaded into: a namespace a reload adds is pushed there.
_shell: Any = None
_cells = CellTasks()
# The namespace's checkpoint (K-15), when the session gave the kernel a directory for it.
_checkpoints: Any = None


def _connect() -> SessionObjects:
    global _session
    if _session is None:
        channel = Channel.from_env()
        if channel is None:
            raise ImportError(NOT_CONFIGURED)
        commands = Commands(channel)
        try:
            mint(commands, channel.call_sync(COMMANDS_CATALOG, {}, deadline=CATALOG_AT_LOAD_DEADLINE_S))
        except AlbedoError as error:
            print(f"albedo: no typed command methods ({error}); use commands.invoke()", file=sys.stderr)
        _session = SessionObjects(channel, Skills(channel), commands, _mcp_for(channel, None))
    return _session


def _mcp_for(channel: RpcChannel, catalog: Any) -> Optional[Mcp]:
    """The `mcp` namespace with its server objects, from `catalog` or (None) a call made now; None when the session has no servers."""
    if not _enabled("mcp"):
        return None
    if catalog is None:
        try:
            catalog = channel.call_sync(MCP_CATALOG, {}, deadline=MCP_CATALOG_AT_LOAD_DEADLINE_S)
        except NotFound:
            return None  # a runtime without MCP methods (the variable was unset and all were assumed)
        except AlbedoError as error:
            print(f"albedo: no typed MCP methods ({error}); use mcp.call()", file=sys.stderr)
    mcp = Mcp(channel)
    mint_mcp(mcp, catalog)
    return mcp


def _enabled(extension: str) -> bool:
    # The session lists its extensions (K-8); without the variable (a plain %load_ext) assume all.
    if _extensions is not None:
        return extension in _extensions
    listed = os.environ.get(EXTENSIONS_ENV)
    return extension in (EXTENSION_NAMES if listed is None else listed.split(EXTENSIONS_SEPARATOR))


def _skills_enabled() -> bool:
    return _enabled("skills")


def __getattr__(name: str) -> Any:
    if name == "skills" and not _skills_enabled():
        raise ImportError(SKILLS_OFF)
    if name in ("skills", "commands"):
        session = _connect()
        return session.skills if name == "skills" else session.commands
    if name == "mcp":
        found = _connect().mcp
        if found is None:
            raise ImportError(MCP_OFF)
        return found
    raise AttributeError(f"module 'albedo' has no attribute {name!r}")


def _on_notification(method: str, params: Any) -> None:
    if method == CANCEL_METHOD and isinstance(params, dict):
        _cells.cancel(params.get("cell"))
    elif method == MCP_RELOADED_METHOD and isinstance(params, dict):
        _mcp_added(params)
    elif method == MCP_PROGRESS_METHOD and isinstance(params, dict):
        line = mcp_progress_line(params)
        if line is not None:
            _cells.write_stderr(params.get("cell") if isinstance(params.get("cell"), str) else None, line)


def _mcp_added(params: Dict[str, Any]) -> None:
    """A reload gave the session MCP servers: the first ones bring the `mcp` namespace; none gets typed methods (made at kernel start only)."""
    global _session
    if _session is None:
        return
    deadline = params.get("deadline_ms")
    if isinstance(deadline, (int, float)) and deadline > 0:
        # mcp.call may now wait as long as a server's call_timeout_ms allows.
        _session.channel.deadline = max(_session.channel.deadline, deadline / 1000)
    mcp = _session.mcp
    if mcp is None:
        mcp = Mcp(_session.channel)
        _session = _session._replace(mcp=mcp)
        if _shell is not None:
            _shell.push({"mcp": mcp}, interactive=False)
    mcp_reloaded(mcp, [str(name) for name in params.get("servers") or [] if isinstance(name, str)])


def load_ipython_extension(ip: Any) -> None:
    """Puts `skills` and `commands` into the user namespace (no history entry), listens for cancels, and makes `/name args` lines work."""
    if not (os.environ.get(ENDPOINT_ENV) and os.environ.get(TOKEN_ENV)) and getattr(ip, "kernel", None) is not None:
        # `%load_ext albedo` in a kernel albedo did not start: join a daemon session now.
        from ._attach import attach

        joined, detail = attach()
        if not joined:
            print(NOT_ATTACHED.format(detail), file=sys.stderr)
            _retry_next_load(ip)
            return
    else:
        joined, detail = False, ""
    try:
        session = _connect()
    except ImportError as error:
        print(str(error), file=sys.stderr)
        _retry_next_load(ip)
        return
    _install(ip, session)
    if joined:
        print(_joined_line(session.channel, detail))


def _retry_next_load(ip: Any) -> None:
    """IPython marks the extension loaded when this function returns, failed or not; after the cell it is
    unmarked again, so that the `%load_ext albedo` the message advises retries instead of saying "already loaded"."""
    manager = getattr(ip, "extension_manager", None)
    events = getattr(ip, "events", None)
    if manager is None or events is None:
        return

    def forget(*_: Any) -> None:
        getattr(manager, "loaded", set()).discard(__name__)
        events.unregister("post_execute", forget)

    events.register("post_execute", forget)


def _joined_line(channel: Any, session: str) -> str:
    """The one line a successful `%load_ext albedo` prints: the session joined and how many skills it has."""
    if not _skills_enabled():
        return f"albedo: joined session {session}; `commands` is defined (the skills extension is off)"
    try:
        count = len(channel.call_sync(SKILLS_LIST, {}, deadline=SKILLS_AT_LOAD_DEADLINE_S).get("skills", []))
    except AlbedoError:
        return f"albedo: joined session {session}; `skills` and `commands` are defined"
    return f"albedo: joined session {session} · {count} skill{'' if count == 1 else 's'} · `skills` and `commands` are defined"


def _install(ip: Any, session: SessionObjects) -> None:
    from . import _slash

    global _shell
    _shell = ip
    channel = session.channel
    _slash.install(ip, channel)
    names: Dict[str, Any] = {"commands": session.commands}
    if _skills_enabled():
        names["skills"] = session.skills
    if session.mcp is not None:
        names["mcp"] = session.mcp
    ip.push(names, interactive=False)
    channel.on_notification = _on_notification
    channel.interrupted = _cells.interrupted  # type: ignore[method-assign]
    _listen(channel, _kernel_loop())
    ip.events.register("pre_run_cell", _pre_run_cell)
    ip.events.register("post_run_cell", _cells.post_run_cell)
    kernel = getattr(ip, "kernel", None)
    from . import _checkpoint, _packages

    _packages.install(ip)

    global _checkpoints
    _checkpoints = _checkpoint.install(ip, kernel)
    if kernel is not None:
        _cells.guard_replies(kernel)
        _streams.quiet_flushes()
        _streams.cap_streams()


def _prepare_remote(ip: Any, secret_sha256: str) -> None:
    """Bootstrap of a remote kernel (K-12): waits for the runtime's `albedo.rpc` comm, whose open data
    carries the session secret, the channel's bounds, the extensions and the command catalog."""
    from . import _comm

    def accept(comm: Any, data: Dict[str, Any]) -> None:
        global _session, _extensions
        channel = _comm.CommChannel(
            comm, int(data.get("deadline_ms") or DEFAULT_DEADLINE_MS), int(data.get("max_message_bytes") or MAX_MESSAGE_BYTES),
            float(data["pace_per_s"]), float(data["pace_burst"]),
        )
        comm.on_msg(channel.on_msg)
        listed = data.get("extensions")
        _extensions = tuple(listed) if isinstance(listed, list) else None
        commands = Commands(channel)
        mint(commands, data.get("catalog"))
        # A call made from here would wait behind this very comm message: the open data carries the MCP catalog too.
        _session = SessionObjects(channel, Skills(channel), commands, _mcp_for(channel, data.get("mcp_catalog") or {"servers": []}))
        _install(ip, _session)
        _comm.hello(channel)
        if isinstance(data.get("callback"), dict):
            channel.dial(data["callback"])

    _comm.prepare(ip, secret_sha256, accept)


def _kernel_loop() -> Optional[asyncio.AbstractEventLoop]:
    # At load the kernel's loop exists but does not run yet; it is the one every cell runs on.
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        return None


def _listen(channel: RpcChannel, loop: Optional[asyncio.AbstractEventLoop]) -> None:
    if loop is not None and not loop.is_closed():
        channel.listen(loop)


def _pre_run_cell(info: Any = None) -> None:
    _cells.pre_run_cell(info)
    if _session is not None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # a cell run without a loop cannot be awaiting anything to cancel
        _listen(_session.channel, loop)
        # A notification already here (a reload's new `mcp`) takes effect before the cell, not during it.
        _session.channel.drain(loop)


def unload_ipython_extension(ip: Any) -> None:
    """Stops listening for cancels, guarding interrupts and reading slash lines; the namespaces stay usable for calls."""
    from . import _slash

    _slash.uninstall(ip)
    kernel = getattr(ip, "kernel", None)
    if kernel is not None:
        _cells.unguard_replies(kernel)
        _streams.stock_flushes()
        _streams.uncap_streams()
    for event, callback in (("pre_run_cell", _pre_run_cell), ("post_run_cell", _cells.post_run_cell)):
        try:
            ip.events.unregister(event, callback)
        except ValueError:
            pass
