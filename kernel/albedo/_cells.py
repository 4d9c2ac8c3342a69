"""Maps a running cell (its parent msg_id) to the asyncio task executing it, so the runtime can cancel it,
and keeps an interrupt that arrives after its cell ended from breaking the kernel's reply."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Optional, Tuple

from ._transport import current_cell

# ipykernel's context manager that, while a cell runs as a coroutine, swaps in a SIGINT handler cancelling it.
_AWAITING_CELL_SIGINT = "_cancel_on_sigint"


class CellTasks:
    """Recorded from IPython's pre_run_cell/post_run_cell hooks, which run inside the cell's task."""

    def __init__(self) -> None:
        self._tasks: Dict[str, Tuple[asyncio.AbstractEventLoop, "asyncio.Task[Any]"]] = {}
        self._guarding = False

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
        if self._guarding:
            _ignore_late_interrupts()

    def guard_replies(self, kernel: Any) -> None:
        """From the end of each cell until `kernel` (an ipykernel Kernel) has replied, ignore SIGINT.

        The runtime cancels an awaiting cell over RPC as well as by signal, and the signal may be
        delivered after the cancel has ended the cell. ipykernel serves a request with Python's
        default handler, which would then raise KeyboardInterrupt inside its reply code, and the
        execute_reply would never be sent. While the cell runs the handler stays ipykernel's: the
        default one (C code, so a user's KeyboardInterrupt traceback shows their code and nothing of
        albedo's), or, for a cell with a top-level await, one that cancels the cell and that ipykernel
        takes down only after post_run_cell (see GuardedCancelOnSigint). ipykernel's
        post_handler_hook puts the previous handler back after the reply.
        """
        self._guarding = True
        stock = getattr(kernel, _AWAITING_CELL_SIGINT, None)
        if callable(stock) and not isinstance(stock, GuardedCancelOnSigint):
            setattr(kernel, _AWAITING_CELL_SIGINT, GuardedCancelOnSigint(stock))

    def unguard_replies(self, kernel: Any) -> None:
        """Stops ignoring late interrupts."""
        self._guarding = False
        if isinstance(getattr(kernel, "__dict__", {}).get(_AWAITING_CELL_SIGINT), GuardedCancelOnSigint):
            delattr(kernel, _AWAITING_CELL_SIGINT)

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


class GuardedCancelOnSigint:
    """ipykernel's `_cancel_on_sigint(future)`, entered with the late-interrupt guard already installed.

    ipykernel runs a cell that has a top-level await inside this context manager: it swaps in a handler
    that cancels the cell and, on exit (after post_run_cell), puts back the handler it found. Left
    alone that is the default handler, and a SIGINT from then until the reply raises KeyboardInterrupt
    in ipykernel's reply code; wrapped, it is the guard, put back in the same step. While the cell
    runs nothing changes.
    """

    def __init__(self, stock: Any) -> None:
        self._stock = stock

    @contextmanager
    def __call__(self, future: Any) -> Iterator[None]:
        _ignore_late_interrupts()
        with self._stock(future):
            yield


def _late_interrupt(signum: int, frame: Any) -> None:
    print("albedo: ignored an interrupt that arrived after its cell had ended", file=sys.__stderr__, flush=True)


def _ignore_late_interrupts() -> None:
    # Only while a request is served (ipykernel's default_int_handler is in place), and only the main thread may set handlers.
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _late_interrupt)


def _running_loop() -> Optional[asyncio.AbstractEventLoop]:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
