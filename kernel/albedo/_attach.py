"""`%load_ext albedo` in a kernel albedo did not start: join a running daemon's session for the working directory.

The steps the kernelspec's launcher (launch.py) takes before ipykernel starts, taken from inside a
running kernel: find the daemon, open a session whose kernel is this process, and put the
session's bridge variables into the environment. Unlike the launcher it starts no daemon: a kernel
the user started themselves should not leave a server behind without being asked.
"""

from __future__ import annotations

import os
from typing import Tuple



def attach() -> Tuple[bool, str]:
    """Connects this process to a running daemon's session through the environment; returns (True, the session's id) or (False, why it could not)."""
    from .launch import SESSION_ID_ENV, open_session, state_dir

    try:
        env = open_session(state_dir(), os.getcwd(), start=False)
    except Exception as error:  # the kernel must keep working whatever went wrong
        return False, str(error)
    os.environ.update(env)
    return True, env[SESSION_ID_ENV]
