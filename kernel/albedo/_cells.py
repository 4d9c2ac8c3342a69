"""Maps a running cell (its parent msg_id) to the asyncio task executing it, so the runtime can cancel it,
and keeps an interrupt that arrives after its cell ended from breaking the kernel's reply."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from typing import Any, Callable, Dict, Optional, Tuple

from ._transport import current_cell


class CellTasks:
    """Recorded from IPython's pre_run_cell/post_run_cell hooks, which run inside the cell's task."""

    def __init__(self) -> None:
        self._tasks: Dict[str, Tuple[asyncio.AbstractEventLoop, "asyncio.Task[Any]"]] = {}
        self._ended: Optional[str] = None

    def pre_run_cell(self, info: Any = None) -> None:
        cell = current_cell()
        try:
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        if cell is not None and task is not None:
            self._tasks[cell] = (task.get_loop(), task)

    def post_run_cell(self, result: Any = None) -> None:
        cell = current_cell()
        if cell is not None:
            self._tasks.pop(cell, None)
        self._ended = cell

    def sigint(self, signum: int, frame: Any) -> None:
        """SIGINT while ipykernel handles a request: KeyboardInterrupt, unless this request's cell already ended.

        The runtime cancels an awaiting cell over RPC as well as by signal, and the signal may be
        delivered after the cancel has ended the cell. ipykernel's own handler would then raise
        KeyboardInterrupt inside its reply code, and the execute_reply would never be sent.
        """
        if self._ended is not None and self._ended == current_cell():
            print("albedo: ignored an interrupt that arrived after its cell had ended", file=sys.__stderr__, flush=True)
            return
        raise KeyboardInterrupt

    def guard_replies(self, kernel: Any) -> None:
        """Makes `kernel` (an ipykernel Kernel) use `sigint` instead of the default handler while it serves a request."""
        original: Optional[Callable[[], None]] = getattr(kernel, "pre_handler_hook", None)
        if original is None or getattr(original, "_albedo_guard", False):
            return

        def pre_handler_hook() -> None:
            original()
            # ipykernel installs default_int_handler here; signal handlers can only be set from the main thread.
            if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                signal.signal(signal.SIGINT, self.sigint)

        pre_handler_hook._albedo_guard = True  # type: ignore[attr-defined]
        kernel.pre_handler_hook = pre_handler_hook

    @staticmethod
    def unguard_replies(kernel: Any) -> None:
        """Gives `kernel` back its class's pre_handler_hook."""
        if getattr(kernel.__dict__.get("pre_handler_hook"), "_albedo_guard", False):
            del kernel.pre_handler_hook

    def cancel(self, cell: Optional[str]) -> bool:
        """Cancels the cell's task, now when called on its loop, else scheduled there; False when the cell is not running."""
        entry = self._tasks.get(cell) if isinstance(cell, str) else None
        if entry is None:
            return False
        loop, task = entry

        def cancel_if_still_running() -> None:
            # A synchronous cell blocks the loop; by the time this runs it has ended and left the map.
            if self._tasks.get(cell) is entry and not task.done():
                task.cancel(f"albedo: cell {cell} was interrupted")

        try:
            if _running_loop() is loop:
                cancel_if_still_running()
            else:
                loop.call_soon_threadsafe(cancel_if_still_running)
        except RuntimeError:
            return False
        return True


def _running_loop() -> Optional[asyncio.AbstractEventLoop]:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
