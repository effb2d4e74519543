#!/usr/bin/env bash
# Creates a virtual environment (once) with XProf from PyPI (`xprof`: TensorBoard's Profile tab,
# its converters and its server) and pytest, for tests/interop_xprof (XProf reads the XPlane
# profiles tfprof writes). tfprof itself is not installed: the tests run the tfprof command and
# the synthetic_gpu_trace program of a CMake build. Pinned: the XProf the tests were written
# against. Prints the environment's python.
# Usage: scripts/xprof-env.sh [VENV]   (default VENV: build/venv-xprof)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-build/venv-xprof}
if [ ! -x "$venv/bin/python" ]; then
  echo "xprof-env: creating $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
fi
echo "xprof-env: pip install xprof into $venv" >&2
"$venv/bin/python" -m pip install -q xprof==2.24.2 pytest >&2
echo "$venv/bin/python"
