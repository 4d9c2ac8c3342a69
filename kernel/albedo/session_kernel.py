"""The app of a session's local kernel, started by `kernel/albedo_session_kernel.py -f FILE [options]`.

ipykernel 7 receives every shell message on a "shell channel" thread, reads its header there and
passes it to the main thread over an in-process socket, so that subshells can run beside the main
shell. A session kernel has one client, the runtime, which never asks for a subshell; for it the
thread is a second hand-off and GIL switch on every request (about a sixth of a trivial execute,
see docs/kernel.md "One shell thread"). This app runs ipykernel's single-thread shell instead: the
main thread's loop reads the shell socket itself, and `kernel_info` no longer lists "kernel
subshells", so a client that checks before it asks is told the truth.

Its logger is no more verbose than its handlers: traitlets leaves an app's logger at DEBUG and
filters at the handler, so each of ipykernel's several debug lines per request built a record only
to drop it (docs/kernel.md "Quiet logger").

Its kernel also answers an interrupt that lands in ipykernel's own code just before a cell's first
line as that cell's KeyboardInterrupt, where ipykernel alone would send no reply (docs/kernel.md
"Interrupt"): one that lands before `do_execute` is held until it begins, one that lands in it is
caught there.

The threads it starts (iopub, heartbeat, control, parent poller) block SIGINT. Linux gives a
process-wide signal to any thread that does not block it, and one that lands on another thread only
sets Python's flag: the main thread, asleep in a cell's blocking call, would sleep on. With the
other threads blocking it, the interrupt always wakes the cell.

Everything else is ipykernel's own app (options, config files, signals, the control thread). When
the installed ipykernel has no shell channel thread, or a config file picks another kernel class,
the app runs unchanged.
"""

from __future__ import annotations

import logging
import signal
import threading
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List

from ipykernel.ipkernel import IPythonKernel
from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel
from traitlets import Type

HAS_SHELL_CHANNEL_THREAD = hasattr(Kernel, "_supports_kernel_subshells")


class NoShellChannel:
    """Stands where ipykernel keeps its shell channel thread.

    False in every `if kernel.shell_channel_thread:` test (so the shell stream lives on the main
    loop and no thread is started or joined); `parent_thread` is the thread that runs cells, which
    ipykernel reads to decide that a cell's SIGINT handling is the main thread's.
    """

    def __init__(self) -> None:
        self.parent_thread = threading.current_thread()

    def __bool__(self) -> bool:
        return False


class SessionKernel(IPythonKernel):
    """IPython's kernel, saying it has no subshells (so it never reaches for the thread's manager),
    and answering a cell interrupted before its first line."""

    _interrupt_held = False

    @property
    def _supports_kernel_subshells(self) -> bool:
        return False

    def pre_handler_hook(self) -> None:
        """ipykernel's, except that for an execute_request a SIGINT is held until `do_execute` begins.

        ipykernel puts in the handler that raises KeyboardInterrupt before it publishes
        `execute_input`, and the runtime signals once it has seen that message. Raised in
        `execute_request` (while it publishes, or before it calls `do_execute`), the interrupt would
        escape every cell's handling and cost the reply; held, `do_execute` raises it where it is
        answered.
        """
        super().pre_handler_hook()
        self._interrupt_held = False
        if self._parent_type() == "execute_request":
            signal.signal(signal.SIGINT, self._hold_interrupt)

    async def do_execute(self, code: str, silent: bool, *args: Any, **kwargs: Any) -> Any:
        """ipykernel's execute, with an interrupt that lands in its own code answered as one.

        ipykernel takes SIGINT as KeyboardInterrupt from just before it publishes `execute_input`
        until after the reply. Inside the cell IPython turns it into the cell's error; before the
        cell's first line (input transformers, parsing) it escapes, ipykernel logs it and sends no
        `execute_reply` at all. The runtime interrupts once it has seen `execute_input`, so on a
        busy machine that gap is real: here it becomes the cell's KeyboardInterrupt, as the person
        who pressed Ctrl-C expects, and so does one held since the request began.
        """
        try:
            self._take_interrupts()
            return await super().do_execute(code, silent, *args, **kwargs)
        except KeyboardInterrupt:
            return self._interrupted_reply(silent)

    def _parent_type(self) -> Any:
        return (self.get_parent("shell") or {}).get("header", {}).get("msg_type")

    def _hold_interrupt(self, signum: int, frame: Any) -> None:
        self._interrupt_held = True

    def _take_interrupts(self) -> None:
        # From here on SIGINT raises again, as ipykernel set it up; one that came meanwhile is raised now.
        if signal.getsignal(signal.SIGINT) == self._hold_interrupt:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if self._interrupt_held:
            self._interrupt_held = False
            raise KeyboardInterrupt

    def _interrupted_reply(self, silent: bool) -> Dict[str, Any]:
        shell = self.shell
        traceback: List[str] = []
        if not silent:
            shell.showtraceback((KeyboardInterrupt, KeyboardInterrupt(), None))
            traceback = list(getattr(shell, "_last_traceback", None) or [])
        shell.payload_manager.clear_payload()
        return {
            "status": "error",
            "ename": "KeyboardInterrupt",
            "evalue": "",
            "traceback": traceback,
            "execution_count": shell.execution_count - 1,
            "user_expressions": {},
            "payload": [],
        }


@contextmanager
def threads_without_sigint() -> Iterator[None]:
    """Threads started inside inherit a signal mask blocking SIGINT; the main thread's mask is put back after."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class SessionKernelApp(IPKernelApp):
    """ipykernel's app whose kernel reads the shell socket on the main thread, with a logger no more
    verbose than its handlers."""

    kernel_class = Type(
        SessionKernel,
        klass=Kernel,
        help="The kernel class; only a SessionKernel (or subclass) runs without the shell channel thread.",
    ).tag(config=True)

    def get_default_logging_config(self) -> Dict[str, Any]:
        """traitlets' logging config, with the app's logger at `log_level` rather than DEBUG.

        Its one handler filters at `log_level`, so nothing it would print is lost, and every
        `log.debug` call returns before building a record. traitlets reapplies this whenever
        `log_level` changes, so setting it to DEBUG later still shows the debug lines. A
        `logging_config` of the user's own may add handlers at any level: then the logger stays as
        traitlets sets it.
        """
        config = super().get_default_logging_config()
        logger = config.get("loggers", {}).get(self.__class__.__name__)
        if logger is not None and not self.logging_config:
            logger["level"] = logging.getLevelName(self.log_level)
        return config

    def initialize(self, argv: Any = None) -> None:
        with threads_without_sigint():
            super().initialize(argv)

    def init_poller(self) -> None:
        super().init_poller()
        poller = self.poller
        if poller is not None:
            # Started by `start`, after `initialize` has put the main thread's mask back.
            start = poller.start

            def start_without_sigint() -> None:
                with threads_without_sigint():
                    start()

            poller.start = start_without_sigint

    def init_sockets(self, *args: Any, **kwargs: Any) -> None:
        super().init_sockets(*args, **kwargs)
        if HAS_SHELL_CHANNEL_THREAD and issubclass(self.kernel_class, SessionKernel):
            unused, self.shell_channel_thread = self.shell_channel_thread, NoShellChannel()
            # Never started; only its event loop (a selector and a wake-up pipe) holds anything.
            loop = getattr(unused, "io_loop", None)
            if loop is not None:
                loop.close()


def main() -> None:
    from ._egress import start_from_environment
    from ._transport import expect_dial

    # Before the app starts: the proxy variables are then the kernel's, and every child's it starts.
    # Its thread blocks SIGINT like the app's own, so an interrupt reaches the cell's thread.
    with threads_without_sigint():
        start_from_environment()
    expect_dial()
    SessionKernelApp.launch_instance()
