"""Maps a running cell (its parent msg_id) to the asyncio task executing it, so the runtime can cancel it,
knows which tasks an interrupt is ending, writes a running cell's output from outside its task, and keeps
an interrupt that arrives after its cell ended from breaking the kernel's reply."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

from ._transport import current_cell, current_parent

# ipykernel's context manager that, while a cell runs as a coroutine, swaps in a SIGINT handler cancelling it.
_AWAITING_CELL_SIGINT = "_cancel_on_sigint"


class CellTasks:
    """Recorded from IPython's pre_run_cell/post_run_cell hooks, which run inside the cell's task."""

    def __init__(self) -> None:
        self._tasks: Dict[str, Tuple[asyncio.AbstractEventLoop, "asyncio.Task[Any]"]] = {}
        # Each running cell's request message, so output sent for it from elsewhere lands in it.
        self._parents: Dict[str, Dict[str, Any]] = {}
        # Cell tasks an interrupt cancelled (the albedo/cancel notification, or ipykernel's SIGINT handler).
        self._interrupted: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._guarding = False

    def pre_run_cell(self, info: Any = None) -> None:
        parent = current_parent()
        cell = current_cell()
        try:
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        if cell is not None and parent is not None:
            self._parents[cell] = parent
        if cell is not None and task is not None:
            self._tasks[cell] = (task.get_loop(), task)

    def post_run_cell(self, result: Any = None) -> None:
        cell = current_cell()
        if cell is not None:
            self._tasks.pop(cell, None)
            self._parents.pop(cell, None)
        if self._guarding:
            _ignore_late_interrupts()

    def interrupted(self, cancelled_cell: Optional[str] = None) -> bool:
        """Whether the running task is a cell's that an interrupt is ending: cancelled by one, or (`cancelled_cell`,
        from the runtime's `cancelled` answer) the cell whose calls the runtime failed for it."""
        task = _current_task()
        cell = next((cell for cell, (_, running) in self._tasks.items() if running is task), None) if task is not None else None
        return cell is not None and (task in self._interrupted or cancelled_cell == cell)

    def write_stderr(self, cell: Optional[str], text: str) -> None:
        """Writes `text` on stderr as output of running `cell`, from any task or callback of the kernel's loop (ipykernel
        would otherwise take the request of the context the caller runs in); `cell` None: a plain script's stderr.
        Dropped for a cell that is not running."""
        stream = sys.stderr
        parent = self._parents.get(cell) if cell is not None else None
        if parent is None:
            if cell is None:
                print(text, file=stream, flush=True)
            return
        set_parent = getattr(stream, "set_thread_parent", None)
        token = set_parent(parent) if callable(set_parent) else None
        try:
            # Flushed now, so the line keeps its place among the cell's own output.
            print(text, file=stream, flush=True)
        finally:
            if token is not None:
                stream.reset_thread_parent(token)

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
            setattr(kernel, _AWAITING_CELL_SIGINT, GuardedCancelOnSigint(stock, self._interrupted.add))

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
                self._interrupted.add(task)
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

    def __init__(self, stock: Any, interrupting: Callable[[Any], None]) -> None:
        self._stock = stock
        self._interrupting = interrupting

    @contextmanager
    def __call__(self, future: Any) -> Iterator[None]:
        _ignore_late_interrupts()
        with self._stock(future):
            # The stock handler cancels `future` (the cell's task): note first that an interrupt does it. The
            # stock context puts back, on exit, the handler it found before its own.
            inner = signal.getsignal(signal.SIGINT)
            if callable(inner) and threading.current_thread() is threading.main_thread():

                def noted(signum: int, frame: Any) -> None:
                    self._interrupting(future)
                    inner(signum, frame)

                signal.signal(signal.SIGINT, noted)
            yield


def _late_interrupt(signum: int, frame: Any) -> None:
    print("albedo: ignored an interrupt that arrived after its cell had ended", file=sys.__stderr__, flush=True)


def _ignore_late_interrupts() -> None:
    # Only while a request is served (ipykernel's default_int_handler is in place), and only the main thread may set handlers.
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _late_interrupt)


def _current_task() -> Any:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def _running_loop() -> Optional[asyncio.AbstractEventLoop]:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
