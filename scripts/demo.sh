#!/usr/bin/env bash
# The main job: installs what is missing, builds tfprof (the C library, and the Python package
# into build/venv), profiles the example training loops in C and in Python and writes their
# traces (Chrome trace JSON) plus a short summary of each.
# Usage: scripts/demo.sh [OUTPUT_DIR]   (default: out/)   Environment: STEPS (default 50)
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir=${1:-out}
steps=${STEPS:-50}

scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DTFPROF_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)"

mkdir -p "$out_dir"
trace="$out_dir/training_loop.json"
./build/release/examples/training_loop "$trace" "$steps"
python3 scripts/summarize_trace.py "$trace" | tee "$out_dir/summary.txt"

python=$(scripts/python-env.sh)
python_trace="$out_dir/train_loop_python.json"
"$python" examples/python/train_loop.py "$python_trace" --steps "$steps"
echo
python3 scripts/summarize_trace.py "$python_trace" | tee -a "$out_dir/summary.txt"
echo
echo "demo: open $trace and $python_trace in https://ui.perfetto.dev or chrome://tracing"
