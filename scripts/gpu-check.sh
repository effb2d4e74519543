#!/usr/bin/env bash
# The GPU checks in one command, for a machine with an NVIDIA GPU, the CUDA toolkit and no network:
#   1. configures and builds what the GPU checks need (RelWithDebInfo, in BUILD_DIR);
#   2. names the device (nvidia-smi) and the CUDA versions;
#   3. runs every `gpu`-labelled test (the CUDA example traced and checked, as JSON and as .pb);
#   4. runs the GPU launch benchmarks: C++ (tfprof against untraced) and, where PyTorch is
#      installed, benchmarks/bench_gpu_launch.py (tfprof against torch.profiler);
#   5. prints a summary and writes it to $OUT/gpu-check-summary.txt when OUT is set, else to
#      benchmarks/results/gpu-check-<time>.txt.
# Exits 1 when a gpu test failed or none exists, 77 when every one skipped (no usable GPU: the
# summary says why), else 0; a benchmark missing its target is reported in the summary only.
#
# Usage: scripts/gpu-check.sh [BUILD_DIR]   (or TFPROF_BUILD_DIR; default build/gpu-check)
# BUILD_DIR may be a tree configured before, on this machine and from this checkout: it is built
# again incrementally. Configuring needs the packages scripts/install-deps.sh lists and protobuf's
# source tarball in third_party/downloads, which CMake downloads once: without network, bring that
# directory along (it is git-ignored). PYTHON picks the interpreter with torch (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-${TFPROF_BUILD_DIR:-build/gpu-check}}
python=${PYTHON:-python3}
jobs=$(nproc)

say() { echo "=== gpu-check: $*"; }
die() { echo "gpu-check: $*" >&2; exit 1; }

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
command -v nvcc >/dev/null || die "nvcc not found (PATH, /usr/local/cuda/bin): the GPU tests need the CUDA toolkit"
command -v cmake >/dev/null || die "cmake not found: scripts/install-deps.sh lists what a build needs"

# ---- 1. build ------------------------------------------------------------------------------------
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  if ! compgen -G 'third_party/downloads/protobuf_*.orig.tar.gz' >/dev/null; then
    echo "gpu-check: third_party/downloads has no protobuf source tarball; CMake will try to" \
      "download it. Without network, copy third_party/downloads from a machine that built tfprof." >&2
  fi
fi
say "configure $build_dir"
mkdir -p "$build_dir"
if ! cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTFPROF_BUILD_PYTHON=OFF \
    >"$build_dir/gpu-check-configure.log" 2>&1; then
  tail -n 30 "$build_dir/gpu-check-configure.log" >&2
  die "configuring failed (log: $build_dir/gpu-check-configure.log)"
fi
grep -q '^TFPROF_BUILD_CUDA_TESTS:BOOL=ON' "$build_dir/CMakeCache.txt" ||
  die "this build has no GPU tests: CMake found no CUDA compiler or TFPROF_BUILD_CUDA_TESTS is OFF" \
    "(log: $build_dir/gpu-check-configure.log)"
say "build"
cmake --build "$build_dir" -j"$jobs" --target tfprof gpu_training_loop tfprof_dump_step_stats \
  bench_gpu_launch

# ---- 2. device -----------------------------------------------------------------------------------
device="no nvidia-smi on PATH"
driver_cuda="unknown"
if command -v nvidia-smi >/dev/null; then
  device=$(nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader \
    2>&1 | sed 's/^/GPU /' | paste -sd ';' - || true)
  driver_cuda=$(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | cut -d' ' -f3 || true)
fi
toolkit=$(nvcc --version | grep -o 'release [0-9.]*' | cut -d' ' -f2)
say "device: $device"

# ---- 3. gpu tests --------------------------------------------------------------------------------
say "ctest -L gpu"
tests_status=0
(cd "$build_dir" && ctest -L gpu --output-on-failure) | tee "$build_dir/gpu-check-ctest.log" ||
  tests_status=$?
passed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed' "$build_dir/gpu-check-ctest.log" || true)
skipped=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$build_dir/gpu-check-ctest.log" || true)
total=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$build_dir/gpu-check-ctest.log" || true)
failed=$((total - passed - skipped))
# Why tests skipped or failed: their own SKIP:/FAIL: lines (CTest shows a skipped test's output
# only in its log).
reasons=$(grep -hE '^(SKIP|FAIL): ' "$build_dir/Testing/Temporary/LastTest.log" 2>/dev/null | sort -u || true)
if [ "$total" -eq 0 ]; then
  tests_status=1
  reasons="no gpu-labelled test ran"
elif [ "$failed" -gt 0 ]; then
  tests_status=1
elif [ "$passed" -eq 0 ]; then
  tests_status=77  # nothing was checked: say so rather than pass
fi

# ---- 4. benchmarks -------------------------------------------------------------------------------
say "benchmark: C++ launch loop"
bench_cpp=$("$build_dir/benchmarks/bench_gpu_launch" 50000 5 "$build_dir/bench_gpu_launch.json" 2>&1) ||
  bench_cpp="$bench_cpp"$'\n'"(exit status $?)"
echo "$bench_cpp"
say "benchmark: PyTorch launch loop, tfprof against torch.profiler"
bench_py=$(TFPROF_LIBRARY="$build_dir/libtfprof.so" "$python" benchmarks/bench_gpu_launch.py 2>&1) ||
  bench_py="$bench_py"$'\n'"(exit status $?)"
echo "$bench_py"

# ---- 5. summary ----------------------------------------------------------------------------------
if [ -n "${OUT:-}" ]; then
  summary_file=$OUT/gpu-check-summary.txt
else
  summary_file=benchmarks/results/gpu-check-$(date -u +%Y%m%dT%H%M%SZ).txt
fi
mkdir -p "$(dirname "$summary_file")"
summary="tfprof GPU check, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)
device: $device
CUDA: driver supports $driver_cuda, toolkit (nvcc) $toolkit
gpu tests: $passed passed, $failed failed, $skipped skipped (of $total)${reasons:+
$(sed 's/^/  /' <<<"$reasons")}
benchmark, C++ (bench_gpu_launch):
$(sed 's/^/  /' <<<"$bench_cpp")
benchmark, PyTorch (bench_gpu_launch.py):
$(sed 's/^/  /' <<<"$bench_py")"
echo "$summary" >"$summary_file"
echo
echo "$summary"
echo "(written to $summary_file)"
exit "$tests_status"
