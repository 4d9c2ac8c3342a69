#!/usr/bin/env bash
# Makes the venv the tests run real Python peers from: a Jupyter Server with ipykernel >= 7.4 for the
# remote-kernel tests (K-12), the official MCP SDK for MCP servers and clients written in Python, and
# matplotlib for the tests of a sandboxed kernel's plots, and nbclient to run notebooks on the albedo kernelspec.
# Kept apart from the managed .venv, so the kernels albedo starts itself stay as users get them.
# `npm test` runs this itself (test/support/testVenv.ts); there is no need to run it by hand.
# Usage: scripts/jupyter-test-venv.sh [DIR] [--check]
#   DIR      default .venv-jupyter (the tests read ALBEDO_TEST_JUPYTER_VENV)
#   --check  make nothing: exit 0 when DIR has every package, 1 when it does not
# A venv that has them all holds READY_STAMP, naming the requirements it was checked against; the
# tests read that file instead of importing the packages in every test file.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
dir=".venv-jupyter"
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    *) dir="$arg" ;;
  esac
done
python="${PYTHON:-python3}"
requirements=("jupyter-server>=2,<3" "ipykernel>=7.4" "mcp>=2,<3" "matplotlib>=3.8" "nbclient>=0.10")
stamp="$dir/albedo-test-venv-ready"
has_all() { "$dir/bin/python" -c 'import jupyter_server, ipykernel, mcp, matplotlib, nbclient' 2>/dev/null; }

# Ready when the stamp names today's requirements; else the imports decide, and the stamp is redone or removed.
if [ -x "$dir/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "${requirements[*]}" ]; then
  [ "$check" = 1 ] && exit 0
elif [ -x "$dir/bin/python" ] && has_all; then
  printf '%s' "${requirements[*]}" >"$stamp"
  [ "$check" = 1 ] && exit 0
else
  rm -f "$stamp"
  [ "$check" = 1 ] && exit 1
  [ -x "$dir/bin/python" ] || "$python" -m venv "$dir"
  # Installs only when a package is missing, so a venv made by an older version of this script gains the new ones.
  "$dir/bin/pip" install --quiet --disable-pip-version-check "${requirements[@]}"
  has_all
  printf '%s' "${requirements[*]}" >"$stamp"
fi
"$dir/bin/python" -c 'import ipykernel, jupyter_server, importlib.metadata as m; print("test venv:", "jupyter-server", jupyter_server.__version__, "ipykernel", ipykernel.__version__, "mcp", m.version("mcp"), "matplotlib", m.version("matplotlib"))'
