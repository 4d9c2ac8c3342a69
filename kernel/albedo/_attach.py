"""`%load_ext albedo` in a kernel albedo did not start: join a running daemon's session for the working directory's project.

The steps the kernelspec's launcher (launch.py) takes before ipykernel starts, taken from inside a
running kernel: find the daemon, open a session whose kernel is this process, and put the
session's bridge variables into the environment. Unlike the launcher it starts no daemon: a kernel
the user started themselves should not leave a server behind without being asked.
"""

from __future__ import annotations

import os
from typing import Tuple



def attach() -> Tuple[bool, str]:
    """Connects this process to a running daemon's session through the environment; returns (True, "<session id> on <workspace> (<why>)")
    or (False, why it could not). The workspace is found as the launcher finds a notebook's (find_workspace)."""
    from .launch import SESSION_ID_ENV, find_workspace, open_session, state_dir

    try:
        workspace = find_workspace(os.getcwd())
        env = open_session(state_dir(), workspace.path, start=False)
    except Exception as error:  # the kernel must keep working whatever went wrong
        return False, str(error)
    os.environ.update(env)
    return True, f"{env[SESSION_ID_ENV]} on {workspace.path} ({workspace.why})"
