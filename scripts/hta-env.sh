#!/usr/bin/env bash
# Creates a virtual environment (once) with Holistic Trace Analysis from PyPI and pytest, for
# tests/interop_hta (HTA reads a tfprof GPU trace). tfprof itself is not installed: the tests run
# the synthetic_gpu_trace program of a CMake build. Prints the environment's python.
# HTA is installed without its declared requirements, which pull in JupyterLab for its notebooks
# (a fresh install took 5 minutes instead of 1.5): its analyses import only the packages of the
# first line (psutil and PyYAML, which it does not declare, included). Pinned: the HTA the tests
# were written against, and the pandas they ran with (HTA leans on pandas behaviour that pandas
# has deprecated).
# Made once per machine and linked into build/ (scripts/cached-venv.sh).
# Usage: scripts/hta-env.sh [VENV]   (default VENV: build/venv-hta)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-build/venv-hta}
install_hta() {
  echo "hta-env: pip install HolisticTraceAnalysis into $venv" >&2
  "$1" -m pip install -q pandas==3.1.1 numpy plotly networkx psutil pyyaml pytest >&2
  "$1" -m pip install -q --no-deps HolisticTraceAnalysis==0.5.0 >&2
}
# shellcheck source=cached-venv.sh
source scripts/cached-venv.sh
cached_venv "$venv" install_hta 1
echo "$venv/bin/python"
