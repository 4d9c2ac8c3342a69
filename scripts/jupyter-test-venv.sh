#!/usr/bin/env bash
# Makes the venv the tests run real Python peers from: a Jupyter Server with ipykernel >= 7.4 for the
# remote-kernel tests (K-12), the official MCP SDK for MCP servers and clients written in Python, and
# matplotlib for the tests of a sandboxed kernel's plots, and nbclient to run notebooks on the albedo kernelspec.
# Kept apart from the managed .venv, so the kernels albedo starts itself stay as users get them.
# Usage: scripts/jupyter-test-venv.sh [DIR]   (default .venv-jupyter; the tests read ALBEDO_TEST_JUPYTER_VENV)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-.venv-jupyter}"
python="${PYTHON:-python3}"
[ -x "$dir/bin/python" ] || "$python" -m venv "$dir"
# Installs only when a package is missing, so a venv made by an older version of this script gains the new ones.
if ! "$dir/bin/python" -c 'import jupyter_server, ipykernel, mcp, matplotlib, nbclient' 2>/dev/null; then
  "$dir/bin/pip" install --quiet --disable-pip-version-check "jupyter-server>=2,<3" "ipykernel>=7.4" "mcp>=2,<3" "matplotlib>=3.8" "nbclient>=0.10"
fi
"$dir/bin/python" -c 'import ipykernel, jupyter_server, importlib.metadata as m; print("test venv:", "jupyter-server", jupyter_server.__version__, "ipykernel", ipykernel.__version__, "mcp", m.version("mcp"), "matplotlib", m.version("matplotlib"))'
