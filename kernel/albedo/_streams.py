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
from typing import Any, Callable, Dict, Optional

from ._contract import DROPPED_BYTES_METADATA, STREAM_TEXT_BYTES

_STREAM_NAMES = ("stdout", "stderr")
# Text this short fits STREAM_TEXT_BYTES whatever its characters (UTF-8 takes at most 4 bytes each).
_SURELY_FITS = STREAM_TEXT_BYTES // 4


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


def cap_stream(msg: Dict[str, Any]) -> Dict[str, Any]:
    """An OutStream hook: keeps the first STREAM_TEXT_BYTES of a stream message's text and counts the
    UTF-8 bytes of the rest in its metadata (DROPPED_BYTES_METADATA), for the runtime to mark.

    ipykernel sends whatever a stream buffered between two flushes as one message, so a cell that
    prints 400 MB in a loop sends one 400 MB message, and the runtime has to take it in whole before
    it can cut it. Cut here, what crosses the socket stays within what the runtime keeps anyway.
    """
    content = msg.get("content") or {}
    text = content.get("text")
    if not isinstance(text, str) or len(text) <= _SURELY_FITS:
        return msg
    head = text[:STREAM_TEXT_BYTES].encode("utf-8", "surrogatepass")
    if len(head) <= STREAM_TEXT_BYTES and len(text) <= STREAM_TEXT_BYTES:
        return msg
    end = min(len(head), STREAM_TEXT_BYTES)
    while end < len(head) and end > 0 and head[end] & 0xC0 == 0x80:
        end -= 1  # head[end] continues a character: keep none of it
    kept = head[:end].decode("utf-8", "surrogatepass")
    rest = text[len(kept):]
    content["text"] = kept
    msg.setdefault("metadata", {})[DROPPED_BYTES_METADATA] = len(rest) if rest.isascii() else len(rest.encode("utf-8", "surrogatepass"))
    return msg


def _on_both_threads(stream: Any, change: Callable[[], None]) -> None:
    # OutStream's hooks are thread-local, and its flushes run on the iopub thread (the calling
    # thread's only when that one is gone, as in a forked child).
    change()
    schedule = getattr(getattr(stream, "pub_thread", None), "schedule", None)
    if schedule is not None:
        schedule(change)


def cap_streams() -> None:
    """Registers cap_stream on sys.stdout and sys.stderr when they are ipykernel streams (once per thread)."""
    for name in _STREAM_NAMES:
        stream = getattr(sys, name, None)
        if stream is not None and hasattr(stream, "register_hook"):
            _on_both_threads(stream, lambda stream=stream: None if cap_stream in stream._hooks else stream.register_hook(cap_stream))


def uncap_streams() -> None:
    """Undoes cap_streams()."""
    for name in _STREAM_NAMES:
        stream = getattr(sys, name, None)
        if stream is not None and hasattr(stream, "unregister_hook"):
            _on_both_threads(stream, lambda stream=stream: stream.unregister_hook(cap_stream))
