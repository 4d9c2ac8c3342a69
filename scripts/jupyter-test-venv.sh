#!/usr/bin/env bash
# Makes the venv the remote-kernel tests run a real Jupyter Server from (K-12): jupyter-server and
# ipykernel >= 7.4, apart from the managed .venv so the kernels albedo starts itself stay as users get them.
# Usage: scripts/jupyter-test-venv.sh [DIR]   (default .venv-jupyter; the tests read ALBEDO_TEST_JUPYTER_VENV)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-.venv-jupyter}"
python="${PYTHON:-python3}"
if [ ! -x "$dir/bin/jupyter-server" ]; then
  "$python" -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "jupyter-server>=2,<3" "ipykernel>=7.4"
fi
"$dir/bin/python" -c 'import ipykernel, jupyter_server; print("jupyter test venv:", "jupyter-server", jupyter_server.__version__, "ipykernel", ipykernel.__version__)'
