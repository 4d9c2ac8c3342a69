"""Durable kernel state: after each cell, the names it created or rebound are written to the session's
checkpoint directory, each on its own with dill; a kernel started to restore loads them back before its
first cell and writes a report of what came back and what did not.

Everything here runs inside the kernel (in its sandbox). The runtime never loads these files: it reads
only the report, as JSON.

The directory holds `manifest.json` (every name the checkpoint has, with how to bring it back, and the
names left out with the reason), `values/` (one dill file per name) and, after a restore, the report.

What a cell changed is found without pickling anything: before the cell the namespace is copied (the
copy holds every value, so no freed object's address is reused for a new one during the cell), after it
each name whose value is not the same object is written, and so is each name the cell's code stores
into or calls a method on (`d[k] = v`, `df.x = 1`, `items.append(v)`), since those change a value in
place. A mutation made elsewhere (by a function the cell calls) is caught only when the name is
rebound or touched that way later.

Classes and functions defined in cells that another value refers to are written as a reference to the
name (a pickle persistent id), so an instance comes back as an instance of the restored class, not of
a private copy of it.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import io
import json
import os
import re
import socket
import sys
import threading
import time
import types
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from ._contract import (
    CHECKPOINT_DIR_ENV,
    CHECKPOINT_MANIFEST_FILE,
    CHECKPOINT_REPORT_FILE,
    CHECKPOINT_RESTORE_ENV,
    CHECKPOINT_VALUES_DIR,
    MAX_CHECKPOINT_BYTES,
    MAX_CHECKPOINT_MANIFEST_BYTES,
    MAX_CHECKPOINT_NAME_BYTES,
    MAX_CHECKPOINT_NAMES,
    MAX_CHECKPOINT_REASON_CHARS,
)

MANIFEST_VERSION = 1
# IPython's own names for the output cache and input history (`_`, `__`, `_3`, `_i`, `_i3`, `_ih`...).
_IPYTHON_CACHE = re.compile(r"^_+$|^_\d+$|^_i+$|^_i\d+$|^_ih$|^_oh$|^_dh$")
# Kinds written in the manifest.
MODULE, VALUE = "module", "value"


class _TooLarge(Exception):
    pass


class _BoundedFile:
    """A file that refuses to grow past `limit` bytes (so a value over the bound stops being pickled early)."""

    def __init__(self, file: Any, limit: int) -> None:
        self._file = file
        self._limit = limit
        self.written = 0

    def write(self, data: Any) -> int:
        size = memoryview(data).nbytes
        self.written += size
        if self.written > self._limit:
            raise _TooLarge()
        return self._file.write(data)


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _reason(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_CHECKPOINT_REASON_CHARS else text[: MAX_CHECKPOINT_REASON_CHARS - 1] + "…"


def _resource_kind(value: Any) -> Optional[str]:
    """What cannot come back however it pickles: a live handle on something outside the process."""
    if isinstance(value, socket.socket):
        return "socket"
    if isinstance(value, io.IOBase):
        return "open file"
    if isinstance(value, threading.Thread):
        return "thread"
    if isinstance(value, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        return "generator or coroutine"
    return None


def _touched_names(code: str) -> Set[str]:
    """Names the cell stores into (`x[k] = v`, `x.a = v`, `x += v`, `del x[k]`) or calls a method on (`x.m()`)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    found: Set[str] = set()

    def base(node: Any) -> Optional[str]:
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    for node in ast.walk(tree):
        targets: Iterable[Any] = ()
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = (node.target,)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            targets = (node.func,)
        for target in targets:
            for part in ast.walk(target) if isinstance(target, (ast.Tuple, ast.List)) else (target,):
                if isinstance(part, (ast.Attribute, ast.Subscript)):
                    name = base(part)
                    if name is not None:
                        found.add(name)
    return found


class Checkpoints:
    """The checkpoint of one kernel's user namespace, in `directory`."""

    def __init__(self, shell: Any, directory: str) -> None:
        self.shell = shell
        self.directory = directory
        self.values = os.path.join(directory, CHECKPOINT_VALUES_DIR)
        self.manifest: Dict[str, Any] = {"version": MANIFEST_VERSION, "seq": 0, "names": {}, "skipped": {}}
        self._before: Optional[Dict[str, Any]] = None
        self._pending: Optional[Tuple[Set[str], Set[str]]] = None
        # Time the last checkpoint took, in ms, and the bytes it wrote (the benchmark reads them).
        self.last_ms = 0.0
        self.last_bytes = 0

    # -- the cell's changes ------------------------------------------------------------------------

    def pre_run_cell(self, info: Any = None) -> None:
        self.flush()
        self._before = dict(self.shell.user_ns)

    def post_run_cell(self, result: Any = None) -> None:
        before, self._before = self._before, None
        if before is None:
            return
        ns = self.shell.user_ns
        changed = {name for name, value in ns.items() if before.get(name, _MISSING) is not value}
        code = getattr(getattr(result, "info", None), "raw_cell", None)
        if isinstance(code, str):
            changed |= {name for name in _touched_names(code) if name in ns}
        deleted = {name for name in before if name not in ns}
        # IPython's own caches (`_`, `_i3`, `Out`...) change with every cell: alone, they schedule no write.
        changed = {name for name in changed if not (name in ns and self._silent(name, ns[name]))}
        deleted = {name for name in deleted if not _IPYTHON_CACHE.match(name)}
        del before
        if not changed and not deleted:
            return
        if self._pending is None:
            self._pending = (changed, deleted)
        else:
            self._pending[0].update(changed)
            self._pending[1].update(deleted)

    def after_reply(self) -> None:
        """Called once the request's reply went out: the write runs once the loop is free (after `idle`)."""
        if self._pending is None:
            return
        try:
            asyncio.get_running_loop().call_soon(self.flush)
        except RuntimeError:
            self.flush()

    def flush(self) -> None:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        started = time.perf_counter()
        try:
            self.last_bytes = self._write(*pending)
        except Exception as error:  # a checkpoint must never break the kernel
            print(f"albedo: checkpoint failed: {type(error).__name__}: {error}", file=sys.__stderr__, flush=True)
        self.last_ms = (time.perf_counter() - started) * 1000

    # -- writing -----------------------------------------------------------------------------------

    def _silent(self, name: str, value: Any) -> bool:
        """Names that are not the user's: IPython's caches and what IPython or albedo put in (`In`, `skills`...)."""
        if _IPYTHON_CACHE.match(name):
            return True
        hidden = getattr(self.shell, "user_ns_hidden", {})
        return name in hidden and hidden[name] is value

    def _skip_reason(self, name: str, value: Any) -> Optional[str]:
        if not name.isidentifier():
            return "not an identifier"
        if name.startswith("_"):
            return "private name (starts with _)"
        return _resource_kind(value)

    def _write(self, changed: Set[str], deleted: Set[str]) -> int:
        os.makedirs(self.values, mode=0o700, exist_ok=True)
        names: Dict[str, Any] = self.manifest["names"]
        skipped: Dict[str, str] = self.manifest["skipped"]
        ns = self.shell.user_ns
        self.manifest["seq"] += 1
        seq = self.manifest["seq"]
        written = 0
        for name in deleted:
            self._forget(name)
        refs = self._refs()
        for name in sorted(changed):
            if name not in ns:
                self._forget(name)
                continue
            value = ns[name]
            if self._silent(name, value):
                self._forget(name)
                continue
            reason = self._skip_reason(name, value)
            if reason is None and isinstance(value, types.ModuleType):
                self._forget(name)
                names[name] = {"kind": MODULE, "module": value.__name__, "seq": seq}
                continue
            if reason is None and name not in names and len(names) >= MAX_CHECKPOINT_NAMES:
                reason = f"over the bound: the checkpoint holds {MAX_CHECKPOINT_NAMES} names (MAX_CHECKPOINT_NAMES)"
            if reason is None:
                size, reason = self._dump(name, value, refs)
                if reason is None:
                    names[name] = {"kind": VALUE, "file": self._file_of(name), "bytes": size, "seq": seq}
                    skipped.pop(name, None)
                    written += size
                    continue
            self._forget(name)
            skipped[name] = _reason(reason)
        self._bound_total()
        self._save_manifest()
        return written

    def _refs(self) -> Dict[int, str]:
        """Classes and functions defined in cells, by id: another value refers to them by name."""
        return {
            id(value): name
            for name, value in self.shell.user_ns.items()
            if isinstance(value, (type, types.FunctionType))
            and getattr(value, "__module__", None) == "__main__"
            and not name.startswith("_")
        }

    def _file_of(self, name: str) -> str:
        return f"{CHECKPOINT_VALUES_DIR}/{name}.pkl"

    def _dump(self, name: str, value: Any, refs: Dict[int, str]) -> Tuple[int, Optional[str]]:
        import dill

        class Pickler(dill.Pickler):  # type: ignore[misc]
            def persistent_id(self, obj: Any) -> Optional[str]:
                if obj is not value and isinstance(obj, (type, types.FunctionType)):
                    return refs.get(id(obj))
                return None

        path = os.path.join(self.directory, self._file_of(name))
        temporary = f"{path}.tmp"
        try:
            with os.fdopen(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as file:
                bounded = _BoundedFile(file, MAX_CHECKPOINT_NAME_BYTES)
                Pickler(bounded, protocol=dill.HIGHEST_PROTOCOL).dump(value)
                size = bounded.written
            os.replace(temporary, path)
            return size, None
        except _TooLarge:
            return 0, f"over the bound: more than {_mib(MAX_CHECKPOINT_NAME_BYTES)} per name (MAX_CHECKPOINT_NAME_BYTES)"
        except RecursionError:
            return 0, "not picklable: nested too deeply"
        except Exception as error:
            return 0, f"not picklable: {type(error).__name__}: {error}"
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)

    def _forget(self, name: str) -> None:
        entry = self.manifest["names"].pop(name, None)
        self.manifest["skipped"].pop(name, None)
        if entry is not None and entry.get("kind") == VALUE:
            try:
                os.unlink(os.path.join(self.directory, self._file_of(name)))
            except OSError:
                pass

    def _bound_total(self) -> None:
        """Past MAX_CHECKPOINT_BYTES, the names written longest ago leave the checkpoint first."""
        names = self.manifest["names"]
        total = sum(int(entry.get("bytes", 0)) for entry in names.values())
        if total <= MAX_CHECKPOINT_BYTES:
            return
        for name, entry in sorted(names.items(), key=lambda item: (item[1]["seq"], item[0])):
            if total <= MAX_CHECKPOINT_BYTES:
                break
            if entry.get("kind") != VALUE:
                continue
            total -= int(entry.get("bytes", 0))
            self._forget(name)
            self.manifest["skipped"][name] = (
                f"over the bound: the checkpoint passed {_mib(MAX_CHECKPOINT_BYTES)} (MAX_CHECKPOINT_BYTES), oldest names left first"
            )

    def _save_manifest(self) -> None:
        _write_json(os.path.join(self.directory, CHECKPOINT_MANIFEST_FILE), self.manifest)

    # -- starting ----------------------------------------------------------------------------------

    def clear(self) -> None:
        """A kernel started empty: whatever an earlier kernel left is gone, so a later crash cannot bring it back."""
        for name in (CHECKPOINT_MANIFEST_FILE, CHECKPOINT_REPORT_FILE):
            try:
                os.unlink(os.path.join(self.directory, name))
            except OSError:
                pass
        try:
            entries = os.listdir(self.values)
        except OSError:
            entries = []
        for entry in entries:
            try:
                os.unlink(os.path.join(self.values, entry))
            except OSError:
                pass

    def restore(self) -> Dict[str, Any]:
        """Loads the checkpoint into the namespace; writes and returns the report. Never raises."""
        started = time.perf_counter()
        report: Dict[str, Any] = {"restored": [], "lost": {}, "error": None}
        try:
            manifest = _read_manifest(os.path.join(self.directory, CHECKPOINT_MANIFEST_FILE))
        except FileNotFoundError:
            manifest = None
        except Exception as error:
            report["error"] = _reason(f"the checkpoint's manifest could not be read: {type(error).__name__}: {error}")
            manifest = None
        if manifest is not None:
            self.manifest = manifest
            loaded = _Loader(self, manifest).load_all()
            report["restored"] = loaded.restored
            report["lost"] = {**{str(k): str(v) for k, v in manifest["skipped"].items()}, **loaded.lost}
            for name in loaded.lost:
                self._forget(name)
            self._save_manifest()
        report["ms"] = round((time.perf_counter() - started) * 1000, 1)
        try:
            _write_json(os.path.join(self.directory, CHECKPOINT_REPORT_FILE), report)
        except OSError as error:
            print(f"albedo: could not write the restore report: {error}", file=sys.__stderr__, flush=True)
        return report


_MISSING = object()


class _Loader:
    """Loads each name once, on demand: a value that refers to a class or function by name loads that name first."""

    def __init__(self, owner: Checkpoints, manifest: Dict[str, Any]) -> None:
        self.owner = owner
        self.entries: Dict[str, Any] = manifest["names"]
        self.restored: List[str] = []
        self.lost: Dict[str, str] = {}
        self._loading: Set[str] = set()
        self._done: Dict[str, Any] = {}

    def load_all(self) -> "_Loader":
        for name in sorted(self.entries, key=lambda n: (self.entries[n].get("kind") != MODULE, self.entries[n].get("seq", 0), n)):
            try:
                self.load(name)
            except _Lost:
                pass
        return self

    def load(self, name: str) -> Any:
        if name in self._done:
            return self._done[name]
        if name in self.lost:
            raise _Lost(name)
        if name in self._loading:
            self.lost[name] = "failed to load: it refers to itself through other names"
            raise _Lost(name)
        entry = self.entries.get(name)
        if not isinstance(entry, dict):
            raise _Lost(name)
        self._loading.add(name)
        try:
            value = self._load_entry(name, entry)
        except _Lost as missing:
            self.lost.setdefault(name, f"failed to load: it needs {missing.name}, which did not come back")
            raise _Lost(name)
        except BaseException as error:  # a hostile or truncated file may raise anything, SystemExit included
            if isinstance(error, KeyboardInterrupt):
                raise
            self.lost[name] = _reason(f"failed to load: {type(error).__name__}: {error}")
            raise _Lost(name)
        finally:
            self._loading.discard(name)
        self._done[name] = value
        self.owner.shell.user_ns[name] = value
        self.restored.append(name)
        return value

    def _load_entry(self, name: str, entry: Dict[str, Any]) -> Any:
        if entry.get("kind") == MODULE:
            return importlib.import_module(str(entry["module"]))
        import dill

        path = os.path.join(self.owner.directory, self.owner._file_of(name))
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > MAX_CHECKPOINT_NAME_BYTES:
                raise ValueError(f"the file is {_mib(size)}, over {_mib(MAX_CHECKPOINT_NAME_BYTES)} (MAX_CHECKPOINT_NAME_BYTES)")
            loader = self

            class Unpickler(dill.Unpickler):  # type: ignore[misc]
                def persistent_load(self, pid: Any) -> Any:
                    if not isinstance(pid, str):
                        raise ValueError(f"unknown reference {pid!r}")
                    return loader.load(pid)

            return Unpickler(file).load()


class _Lost(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _read_manifest(path: str) -> Dict[str, Any]:
    with open(path, "rb") as file:
        data = file.read(MAX_CHECKPOINT_MANIFEST_BYTES + 1)
    if len(data) > MAX_CHECKPOINT_MANIFEST_BYTES:
        raise ValueError(f"it is over {MAX_CHECKPOINT_MANIFEST_BYTES} bytes (MAX_CHECKPOINT_MANIFEST_BYTES)")
    manifest = json.loads(data)
    if not isinstance(manifest, dict) or not isinstance(manifest.get("names"), dict) or not isinstance(manifest.get("skipped"), dict):
        raise ValueError("it is not a checkpoint manifest")
    names = {str(k): v for k, v in manifest["names"].items() if str(k).isidentifier() and isinstance(v, dict)}
    return {"version": MANIFEST_VERSION, "seq": int(manifest.get("seq") or 0), "names": names, "skipped": dict(manifest["skipped"])}


def _write_json(path: str, value: Any) -> None:
    temporary = f"{path}.tmp"
    with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as file:
        json.dump(value, file)
    os.replace(temporary, path)


def install(ip: Any, kernel: Any) -> Optional[Checkpoints]:
    """Checkpoints `ip`'s namespace when the session gave a directory (restoring first when asked); None otherwise."""
    directory = os.environ.get(CHECKPOINT_DIR_ENV)
    if not directory or not os.path.isdir(directory):
        return None
    checkpoints = Checkpoints(ip, directory)
    if os.environ.get(CHECKPOINT_RESTORE_ENV) == "1":
        checkpoints.restore()
    else:
        checkpoints.clear()
    ip.events.register("pre_run_cell", checkpoints.pre_run_cell)
    ip.events.register("post_run_cell", checkpoints.post_run_cell)
    if kernel is not None:
        stock = kernel.post_handler_hook

        def post_handler_hook() -> None:
            stock()
            checkpoints.after_reply()

        kernel.post_handler_hook = post_handler_hook
    return checkpoints
