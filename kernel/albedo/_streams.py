"""Flushes of ipykernel's stdout and stderr that cost nothing when there is nothing to send.

ipykernel flushes both streams six times per execute (after the display hook, before the reply,
before `idle`), and each flush hands two callbacks to the iopub thread and waits for it to run
them, even when the cell printed nothing. Those thread round trips were a third of a trivial
execute. A quiet flush returns at once when the stream holds no text, and does ipykernel's own
flush otherwise.

What is given up is only a wait, never an output or its order. Every iopub message (streams,
results, `idle`) leaves from the iopub thread's one queue, so a flush that the thread is already
running still sends its text before the `idle` queued after it. What is no longer waited for is
that text reaching the iopub socket before the `execute_reply` leaves on the shell socket; no
client can rely on that order across two sockets, and albedo, JupyterLab, nbclient and
jupyter_client all take `idle` as the end of a cell's outputs.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

_STREAM_NAMES = ("stdout", "stderr")


class QuietFlush:
    """A stream's `flush` that skips ipykernel's thread round trip when no text is buffered."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._stock: Callable[[], None] = type(stream).flush.__get__(stream)

    def __call__(self) -> None:
        stream = self._stream
        # `_buffers` gains an entry on the first write after each send; `echo` mirrors to a terminal.
        if stream.echo is None and not stream._buffers:
            return
        self._stock()


def _quietable(stream: Any) -> bool:
    """An ipykernel OutStream with the attributes a quiet flush reads (and not quiet yet)."""
    return (stream is not None and hasattr(stream, "_buffers") and hasattr(stream, "echo")
            and hasattr(stream, "pub_thread") and not isinstance(stream.__dict__.get("flush"), QuietFlush))


def quiet_flushes() -> None:
    """Makes sys.stdout's and sys.stderr's flush quiet when they are ipykernel streams; others are left alone."""
    for name in _STREAM_NAMES:
        stream = getattr(sys, name, None)
        if _quietable(stream):
            stream.flush = QuietFlush(stream)


def stock_flushes() -> None:
    """Undoes quiet_flushes()."""
    for name in _STREAM_NAMES:
        stream: Optional[Any] = getattr(sys, name, None)
        if stream is not None and isinstance(getattr(stream, "__dict__", {}).get("flush"), QuietFlush):
            del stream.flush
