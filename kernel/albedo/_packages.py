"""The workspace's package layer (N-5), as the kernel sees it around a cell that runs pip.

A sandboxed kernel runs from its workspace's layer (a venv in the runtime's state dir, bound into
the sandbox), so `%pip install` and `!pip install` put packages there and later sessions of the
workspace see them. The runtime measures the layer when a session starts and binds it read-only
once it is over its quota; here, around each cell that mentions pip:

- two kernels of one workspace take turns: the cell waits (at most PIP_LOCK_TIMEOUT_S) for a lock
  on a file in the layer, so their pip runs never write the layer at once;
- after the cell, the layer is measured (the same way as the runtime does: lstat sizes, links not
  followed, at most MAX_LAYER_ENTRIES entries), and when it is over its quota what the cell added at
  the top of site-packages and bin is removed again, with one line on stderr naming the bound.

This is the kernel's own bookkeeping, for a clear message at once; what binds is the runtime's
measure at the next start. Standard library only.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import sys
import time
from typing import Any, Optional, Set, Tuple

# Set by the runtime (src/sandbox/profile.ts): the layer's path, its quota in bytes, "0" when bound read-only.
PACKAGES_DIR_ENV = "ALBEDO_PACKAGES_DIR"
PACKAGES_QUOTA_ENV = "ALBEDO_PACKAGES_QUOTA"
PACKAGES_WRITABLE_ENV = "ALBEDO_PACKAGES_WRITABLE"
# The setting that sets the quota, as messages name it.
QUOTA_SETTING = "limits.packagesMB"
# How long a pip cell waits for another kernel's pip cell in the same layer.
PIP_LOCK_TIMEOUT_S = 300.0
PIP_LOCK_POLL_S = 0.1
LOCK_FILE = ".albedo-pip.lock"
# Entries one measure walks (the runtime's MAX_PACKAGE_LAYER_ENTRIES); past it the layer counts as over.
MAX_LAYER_ENTRIES = 200_000
MIB = 1024 * 1024
_PIP = re.compile(r"\bpip\d*(\.\d+)?\b")


def measure(directory: str) -> Tuple[int, bool]:
    """The lstat sizes of everything under `directory` (links not followed), and whether the walk stopped at MAX_LAYER_ENTRIES."""
    total, entries, pending = 0, 0, [directory]
    while pending:
        current = pending.pop()
        try:
            names = os.listdir(current)
        except OSError:
            continue
        for name in names:
            entries += 1
            if entries > MAX_LAYER_ENTRIES:
                return total, True
            path = os.path.join(current, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            total += info.st_size
            if os.path.isdir(path) and not os.path.islink(path):
                pending.append(path)
    return total, False


def _mib(count: int) -> str:
    return f"{count / MIB:.1f} MiB"


class Layer:
    def __init__(self, directory: str, quota: int, writable: bool) -> None:
        self.directory = directory
        self.quota = quota
        self.writable = writable
        self._lock: Optional[int] = None
        self._before: Optional[Set[str]] = None
        self._installs = False

    def _tops(self) -> Set[str]:
        """The top entries of the layer's site-packages and bin, as 'dir/name' paths."""
        found: Set[str] = set()
        lib = os.path.join(self.directory, "lib")
        sites = [os.path.join(lib, name, "site-packages") for name in _listdir(lib)]
        for parent in [*sites, os.path.join(self.directory, "bin")]:
            found.update(os.path.join(parent, name) for name in _listdir(parent))
        return found

    def pre_run_cell(self, info: Any = None) -> None:
        code = getattr(info, "raw_cell", None) or ""
        self._installs = bool(_PIP.search(code)) and "install" in code
        if not self._installs or not self.writable:
            return
        self._lock = _take_lock(os.path.join(self.directory, LOCK_FILE))
        self._before = self._tops()

    def post_run_cell(self, result: Any = None) -> None:
        if not self._installs:
            return
        self._installs = False
        try:
            if not self.writable:
                print(
                    f"albedo: this workspace's package layer is over its quota ({QUOTA_SETTING}) and read-only in this session; "
                    "`albedo packages clear` empties it, or raise the setting",
                    file=sys.stderr,
                )
                return
            size, truncated = measure(self.directory)
            if size <= self.quota and not truncated:
                return
            added = sorted(self._tops() - (self._before or set()))
            for path in added:
                _remove(path)
            held = "more than %d entries" % MAX_LAYER_ENTRIES if truncated else _mib(size)
            names = ", ".join(os.path.basename(path) for path in added) or "nothing new at its top"
            print(
                f"albedo: the package layer holds {held}, over its quota of {_mib(self.quota)} ({QUOTA_SETTING}); "
                f"removed what this cell installed: {names}",
                file=sys.stderr,
            )
        finally:
            self._before = None
            if self._lock is not None:
                os.close(self._lock)
                self._lock = None


def _listdir(path: str) -> list:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass


def _take_lock(path: str) -> Optional[int]:
    """An exclusive lock on `path`, waiting at most PIP_LOCK_TIMEOUT_S; None (and a line on stderr) when it is not had."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as error:
        print(f"albedo: cannot lock the package layer ({error}); pip runs without waiting for other sessions", file=sys.stderr)
        return None
    deadline = time.monotonic() + PIP_LOCK_TIMEOUT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                print(f"albedo: another session held the package layer's lock for {PIP_LOCK_TIMEOUT_S:.0f} s; pip runs without it", file=sys.stderr)
                return None
            time.sleep(PIP_LOCK_POLL_S)


def install(ip: Any) -> Optional[Layer]:
    """Registers the layer's hooks when the runtime gave this kernel a layer; None otherwise."""
    directory = os.environ.get(PACKAGES_DIR_ENV)
    if not directory:
        return None
    try:
        quota = int(os.environ.get(PACKAGES_QUOTA_ENV) or "0")
    except ValueError:
        return None
    layer = Layer(directory, quota, os.environ.get(PACKAGES_WRITABLE_ENV) == "1")
    ip.events.register("pre_run_cell", layer.pre_run_cell)
    ip.events.register("post_run_cell", layer.post_run_cell)
    return layer
