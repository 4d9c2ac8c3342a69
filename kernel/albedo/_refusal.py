"""The kernel a notebook gets when albedo will not start its sandboxed kernel (K-14).

It runs no code: every cell answers with the reason as an error, so the notebook shows it where
its user looks, instead of a kernel that dies and restarts in a loop, or one that runs unsandboxed
against the `sandbox` setting. Completion, inspection and history answer empty.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, Optional

from ipykernel.kernelbase import Kernel

# What the kernel calls itself in kernel_info (and the error name cells show).
REFUSED_ENAME = "AlbedoKernelRefused"


class RefusalKernel(Kernel):
    implementation = "albedo-refusal"
    implementation_version = "1"
    language_info = {"name": "python", "mimetype": "text/x-python", "file_extension": ".py", "version": sys.version.split()[0]}
    # Set before launch_instance: the reason, with what to do.
    reason = "albedo did not start a kernel"

    @property
    def banner(self) -> str:  # type: ignore[override]
        return f"albedo: {self.reason}"

    def do_execute(self, code: str, silent: bool, store_history: bool = True, user_expressions: Optional[Dict[str, Any]] = None,
                   allow_stdin: bool = False, **_: Any) -> Dict[str, Any]:
        text = f"albedo: this kernel runs no code: {self.reason}"
        if not silent:
            self.send_response(self.iopub_socket, "error", {"ename": REFUSED_ENAME, "evalue": text, "traceback": [text]})
        return {"status": "error", "ename": REFUSED_ENAME, "evalue": text, "traceback": [text], "execution_count": self.execution_count}


def run_refusal_kernel(argv: list, reason: str) -> None:
    """Serves `argv`'s connection file with a kernel that answers every cell with `reason`."""
    from ipykernel.kernelapp import IPKernelApp

    print(f"albedo: {reason}", file=sys.stderr)
    RefusalKernel.reason = reason
    IPKernelApp.launch_instance(argv=argv, kernel_class=RefusalKernel)
