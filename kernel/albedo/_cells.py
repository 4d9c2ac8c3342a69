"""Maps a running cell (its parent msg_id) to the asyncio task executing it, so the runtime can cancel it."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Optional, Tuple

from ._transport import current_cell


class CellTasks:
    """Recorded from IPython's pre_run_cell/post_run_cell hooks, which run inside the cell's task."""

    def __init__(self) -> None:
        self._tasks: Dict[str, Tuple[asyncio.AbstractEventLoop, "asyncio.Task[Any]"]] = {}

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
