#!/usr/bin/env bash
# Runs every test: installs what is missing, then
#   1. a release build (with debug information) with warnings as errors, and the whole suite
#      (unit, C ABI, integration, exported symbols, the installed package used from a separate
#      project, the example's trace); the GPU kit is made from that build (scripts/gpu-kit.sh);
#   2. what a release ships (scripts/build-wheels.sh -o build/dist): a manylinux wheel for each
#      CPython 3.9-3.13 and the sdist; the Python package: the cp311 wheel with its test extra
#      into build/venv, then pytest
#      tests/bindings/python (which also checks the type stubs against the module with mypy's
#      stubtest, and runs `tfprof run`); tests/tools/tfprof (the tfprof command's summary,
#      report, convert and merge on trace files, the report opened in headless Chromium);
#      tests/bindings/preload (programs that know nothing of tfprof, run under the preload
#      library from step 1's build, their traces parsed); the hot paths' instruction counts
#      (benchmarks/bench_hot_paths.py --instructions-only: a prof_span pair within 80
#      instructions); then the interop tests (tests/interop) in build/venv-tf, which also has
#      tensorflow-cpu, tensorboard, jax[cpu] and torch from PyPI: TensorFlow and TensorBoard
#      read tfprof's files, tfprof reads TensorFlow's (and TensorFlow's and JAX's XPlane
#      profiles), and unmodified PyTorch programs run under `tfprof run` on the CPU; then
#      Holistic Trace Analysis (build/venv-hta) computes its breakdowns of a GPU trace that
#      step 1's synthetic_gpu_trace writes from CUPTI records (tests/interop_hta); XProf
#      (build/venv-xprof: TensorBoard's Profile tab from PyPI) reads tfprof's XPlane profiles
#      with its own converters and server (tests/interop_xprof);
#      the GPU kit as a bare GPU machine meets it, in a fresh folder with an empty environment and
#      in a minimal Debian root (tests/gpu/test_gpu_kit.py); the wheels' self-containedness and
#      auditwheel's policy, each wheel passing the Python suite in a clean venv of its Python, the
#      sdist built from source in a Debian root with only cmake, a compiler, zlib's headers and
#      Python, and protoc built from source where the installed one is another version
#      (tests/packaging);
#   3. the C suite again under AddressSanitizer + UndefinedBehaviorSanitizer, and the Python
#      suite with the library and extension built the same way (build/venv-asan);
#   4. the concurrent tests (integration, C ABI, the readers' threads) under ThreadSanitizer;
#   5. each file reader's libFuzzer target for a bounded time (scripts/fuzz.sh, clang).
# Where the CUDA toolkit is installed, step 1 also builds the CUDA example and benchmark and runs
# the `gpu` tests, which skip (and say why) without a GPU; the GPU kit runs them on one.
# Steps 3-5 link the system's Abseil (TFPROF_ABSEIL=system): they test our code, and building
# Abseil in each of those trees would cost minutes; what ships (steps 1 and 2) links its own.
# Each pytest suite is a ctest (pytest/<suite>, tests/pytest_suites.cmake), run in its stage with
# the interpreter of the environment built for it.
# Usage: scripts/test.sh   Environment: TFPROF_SKIP_SANITIZERS=1 runs step 1 only; TFPROF_CCACHE=0
# builds without the compiler cache.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# CMake looks for nvcc on PATH only; the toolkit's default place is not always there.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi

# Each stage's start says how long the run has taken so far and how much disk is left, to see
# where CI's time goes (and, when a disk fills, what filled it).
stage() { echo "=== test.sh [${SECONDS}s, $(df -Ph . | awk 'NR == 2 { print $4 }') free]: $*"; }

scripts/install-deps.sh

# Compiler cache: CI builds five trees (release, wheel, ASan, ASan wheel, TSan) from a fresh clone,
# and between two runs most sources are unchanged. ccache hashes the preprocessed source, flags and
# compiler, so a hit is the object the compiler would make. Paths are taken relative to the
# checkout, so a clone elsewhere hits the same entries (debug information then names the first
# clone's directory). Every CMake configure below (the wheels' too) reads these variables.
if command -v ccache >/dev/null && [ "${TFPROF_CCACHE:-1}" != 0 ]; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-12G}
  ccache --zero-stats >/dev/null
  trap 'ccache --show-stats 2>/dev/null | sed "s/^/ccache: /" || true' EXIT
fi

run_suite() {  # build_dir, ctest label regex (empty: all), extra cmake args...
  local build_dir=$1 labels=$2
  shift 2
  stage "configure and build $build_dir $*"
  cmake -S . -B "$build_dir" -DTFPROF_WERROR=ON "$@" >/dev/null
  cmake --build "$build_dir" -j"$jobs"
  stage "ctest in $build_dir ${labels:+(labels: $labels)}"
  # The pytest suites need the Python environments built below: each runs in its own stage.
  (cd "$build_dir" && ctest --output-on-failure -j"$jobs" -LE pytest ${labels:+-L "$labels"})
}

# The pytest suites whose ctest names match $2 (tests/pytest_suites.cmake), one at a time, in
# build tree $1, with the interpreters in the environment (TFPROF_TEST_PYTHON...). None may skip.
run_pytest() {
  (cd "$1" && TFPROF_TEST_REQUIRE_PYTHON=1 ctest --output-on-failure -R "^pytest/($2)\$")
}

run_suite build/test-release "" -DCMAKE_BUILD_TYPE=RelWithDebInfo
stage "wheels for CPython 3.9-3.13 and the sdist (build/dist)"
# The C parts once, then each interpreter's extension; the kit and build/venv take their wheels.
scripts/build-wheels.sh -o build/dist
stage "the GPU kit, from that build"
TFPROF_KIT_WHEEL_DIR=build/dist scripts/gpu-kit.sh build/test-release
stage "Python package"
python=$(TFPROF_WHEELHOUSE=build/dist scripts/python-env.sh)
export TFPROF_TEST_PYTHON=$python
run_pytest build/test-release python
stage "the tfprof command's file commands (summary, report, convert, merge)"
run_pytest build/test-release cli
stage "unmodified programs under the preload library"
run_pytest build/test-release preload
stage "hot paths: instructions per span pair, NVTX range and Python span (callgrind)"
# Instruction counts hold on any machine, so their target is checked here; times are not
# (scripts/bench.sh runs the timed benchmark).
"$python" benchmarks/bench_hot_paths.py --build-dir build/test-release --instructions-only \
  --python "$python"
stage "the GPU kit without a GPU; the wheels and the sdist, each installed; protoc from source"
TFPROF_DIST_DIR=build/dist run_pytest build/test-release "gpu_kit|packaging"
stage "interop with TensorFlow, TensorBoard and PyTorch"
# Pinned: timeline.py's output and the tensors' text in it follow these versions.
python_tf=$(TFPROF_WHEELHOUSE=build/dist \
  scripts/python-env.sh build/venv-tf tensorflow-cpu==2.21.0 tensorboard==2.21.0 "jax[cpu]==0.10.2" \
  torch==2.15.0)
# Then TensorBoard reads what `tfprof convert` writes (the same test is skipped in build/venv).
TFPROF_TEST_PYTHON_TF=$python_tf run_pytest build/test-release "interop|interop_tensorboard"
stage "Holistic Trace Analysis reads tfprof's GPU trace"
python_hta=$(scripts/hta-env.sh)
TFPROF_TEST_PYTHON_HTA=$python_hta run_pytest build/test-release interop_hta
stage "XProf (TensorBoard's Profile tab) reads tfprof's XPlane profiles"
python_xprof=$(scripts/xprof-env.sh)
TFPROF_TEST_PYTHON_XPROF=$python_xprof run_pytest build/test-release interop_xprof
if [ "${TFPROF_SKIP_SANITIZERS:-0}" != 1 ]; then
  # intercept_tls_get_addr=0: GCC 12's libasan records the dynamic TLS blocks of dlopen()ed
  # libraries (libcupti's, loaded at every prof_start) and, for a block that happens to start 16
  # bytes into a page, reads a "glibc 2.19 header" that modern glibc no longer writes; the garbage
  # range makes LeakSanitizer's tracer crash at exit ("Tracer caught signal 11"). Which test hits
  # it depends on the allocation pattern, so on the checkout's path and the environment.
  # Our own thread_locals live in static TLS, which LeakSanitizer still scans.
  ASAN_OPTIONS="intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    run_suite build/test-asan "unit|abi|integration" -DCMAKE_BUILD_TYPE=Debug \
      -DTFPROF_SANITIZE="address;undefined" -DTFPROF_BUILD_BENCHMARKS=OFF -DTFPROF_ABSEIL=system
  stage "Python package under ASan+UBSan"
  # The same compile flags as build/test-asan (TFPROF_WERROR too), so that ccache serves the
  # library's objects compiled there a minute ago.
  python_asan=$(scripts/python-env.sh build/venv-asan -C cmake.build-type=Debug \
    -C cmake.define.TFPROF_SANITIZE="address;undefined" -C cmake.define.TFPROF_ABSEIL=system \
    -C cmake.define.TFPROF_WERROR=ON -C build-dir=build/python-asan)
  # The interpreter is not instrumented: load the ASan runtime first, and libstdc++ with it so that
  # ASan can intercept C++ exceptions; CPython's own allocations at exit are not leaks of ours.
  # (TFPROF_TEST_LD_PRELOAD: the interpreter's LD_PRELOAD, not ctest's.)
  TFPROF_TEST_LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)" \
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    TFPROF_TEST_PYTHON=$python_asan run_pytest build/test-asan python
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    run_suite build/test-tsan "abi|integration|concurrent" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTFPROF_SANITIZE=thread -DTFPROF_BUILD_BENCHMARKS=OFF -DTFPROF_ABSEIL=system
  stage "fuzzing the file readers"
  scripts/fuzz.sh "${TFPROF_FUZZ_SECONDS:-30}"
fi
echo "test.sh: all test runs passed"
