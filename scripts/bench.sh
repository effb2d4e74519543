#!/usr/bin/env bash
# Builds a release tfprof and runs the benchmarks recorded in benchmarks/RESULTS.md: the C
# overhead and export benchmark, the Python span benchmark (in build/venv), then the hot paths'
# instructions and times over several processes (prof_span, NVTX under the preload, Python).
# Usage: scripts/bench.sh [SPANS_FOR_OVERHEAD [SPANS_FOR_EXPORT]]   (defaults: 1000000 10000000)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DTFPROF_BUILD_TESTS=OFF >/dev/null
cmake --build build/release -j"$(nproc)" --target bench_overhead bench_hot_paths tfprof_preload
status=0
./build/release/benchmarks/bench_overhead "${1:-1000000}" "${2:-10000000}" || status=$?
echo
python=$(scripts/python-env.sh)
"$python" benchmarks/bench_python.py || status=$?
echo
"$python" benchmarks/bench_hot_paths.py --build-dir build/release --python "$python" || status=$?
exit "$status"
