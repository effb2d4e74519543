#!/usr/bin/env bash
# Creates a virtual environment (once) and installs tfprof into it from this checkout with
# `pip install ".[test]"` (scikit-build-core builds libtfprof.so and the extension; pip fetches
# the build and test dependencies from PyPI). Prints the environment's python.
# Usage: scripts/python-env.sh [VENV [EXTRA PIP ARGUMENTS...]]   (default VENV: build/venv)
#   e.g. scripts/python-env.sh build/venv-asan -C cmake.define.TFPROF_SANITIZE="address;undefined"
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-build/venv}
shift || true
if [ ! -x "$venv/bin/python" ]; then
  echo "python-env: creating $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
fi
echo "python-env: pip install .[test] into $venv $*" >&2
"$venv/bin/python" -m pip install -q ".[test]" "$@" >&2
echo "$venv/bin/python"
