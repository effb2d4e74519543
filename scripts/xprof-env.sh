#!/usr/bin/env bash
# Creates a virtual environment (once) with XProf from PyPI (`xprof`: TensorBoard's Profile tab,
# its converters and its server) and pytest, for tests/interop_xprof (XProf reads the XPlane
# profiles tfprof writes). tfprof itself is not installed: the tests run the tfprof command and
# the synthetic_gpu_trace program of a CMake build. Pinned: the XProf the tests were written
# against. Prints the environment's python.
# Made once per machine and linked into build/ (scripts/cached-venv.sh).
# Usage: scripts/xprof-env.sh [VENV]   (default VENV: build/venv-xprof)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-build/venv-xprof}
install_xprof() {
  echo "xprof-env: pip install xprof into $venv" >&2
  "$1" -m pip install -q xprof==2.24.2 pytest >&2
}
# shellcheck source=cached-venv.sh
source scripts/cached-venv.sh
cached_venv "$venv" install_xprof 1
echo "$venv/bin/python"
