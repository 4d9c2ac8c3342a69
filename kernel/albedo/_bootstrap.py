"""Run by the runtime's one silent execute on a remote kernel (K-12): serves the albedo package from the
source the runtime sent (SOURCES, a dict of module name -> text) so the kernel host needs no install,
checks that ipykernel can serve the comm channel, and registers the `albedo.rpc` comm target.
Executed in a fresh globals dict, so nothing lands in the user's namespace or history."""

import importlib.abc
import importlib.util
import sys

class IpykernelTooOld(RuntimeError):
    pass


class _SourceFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, sources):
        self._sources = sources

    def find_spec(self, name, path=None, target=None):
        if name not in self._sources:
            return None
        package = name == "albedo"
        spec = importlib.util.spec_from_loader(name, self, is_package=package)
        spec.origin = f"<albedo runtime>/{name.replace('.', '/')}{'/__init__' if package else ''}.py"
        if package:
            spec.submodule_search_locations = []
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        origin = module.__spec__.origin
        # Modules read __file__ (to tell their own frames apart); a served one names its origin.
        module.__file__ = origin
        code = compile(self._sources[module.__name__], origin, "exec")
        exec(code, module.__dict__)


def _version(text):
    parts = []
    for part in text.split(".")[:2]:
        digits = "".join(ch for ch in part if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _main():
    import ipykernel
    from IPython import get_ipython

    for name in [name for name in sys.modules if name == "albedo" or name.startswith("albedo.")]:
        del sys.modules[name]
    sys.meta_path[:] = [finder for finder in sys.meta_path if type(finder).__name__ != "_SourceFinder"]
    sys.meta_path.insert(0, _SourceFinder(SOURCES))  # noqa: F821 (given by the runtime)
    from albedo._contract import MIN_IPYKERNEL_VERSION

    found = getattr(ipykernel, "__version__", "0")
    if _version(found) < _version(MIN_IPYKERNEL_VERSION):
        raise IpykernelTooOld(
            f"albedo needs ipykernel >= {MIN_IPYKERNEL_VERSION} on the remote kernel (it serves comm messages "
            f"while a cell awaits); this kernel has ipykernel {found}. Install a newer one in the kernel's "
            f"image or environment (pip install 'ipykernel>={MIN_IPYKERNEL_VERSION}')."
        )
    import albedo

    albedo._prepare_remote(get_ipython(), SECRET_SHA256)  # noqa: F821


_main()
