#!/usr/bin/env bash
# Builds the GPU kit: build/gpu-kit/, everything tfprof's GPU proof needs, built here (release with
# debug info) and only run on the GPU machine, which may have no Abseil, no protoc of our version, no
# doctest and no network. `build/gpu-kit/run.sh` there runs the whole proof (docs/gpu.md).
#
#   bin/      tfprof, gpu_training_loop (the CUDA example), bench_gpu_launch, gpu_soak,
#             tfprof_dump_step_stats; RUNPATH $ORIGIN/../lib
#   lib/      libtfprof.so (Abseil and protobuf linked in, hidden), libtfprof_preload.so, and
#             the CMake package the Python extension is built against there (fallback, below)
#   include/  tfprof/tfprof.h
#   wheels/   tfprof's cp312 manylinux wheel, for the GPU machines' Python 3.12: the proof
#             installs it there (pip --no-index --target), nothing to build
#   python/   the Python package and its extension's sources: the fallback for another Python
#   checks/   the checkers and the proof's driver (gpu_proof.py); run.sh; kit.json (what, from where)
# ELF files need only glibc, the C/C++ runtime, zlib and the CUDA driver/runtime/CUPTI; their
# debug information is kept apart, in build/gpu-kit-debug/. tests/gpu/check_kit.py checks that,
# the wheel's ELF files too, and the size (<= 24 MiB, so that the kit and the source tree travel
# together).
#
# Usage: scripts/gpu-kit.sh [BUILD_DIR]   (default build/gpu-kit-build)
#   BUILD_DIR may be a tree configured before (CI passes its release tree): it must be built with
#   CUDA programs, without sanitizers, with the bundled Abseil; it is built again incrementally.
#   TFPROF_KIT_DIR: where the kit goes (default build/gpu-kit; replaced).
#   TFPROF_KIT_WHEEL_DIR: take the cp312 wheel from this folder (CI passes build/dist, where
#   scripts/build-wheels.sh has just put it). Without it the wheel is built (again) into
#   build/gpu-kit-wheels: incremental in build-wheels.sh's own tree, seconds when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build/gpu-kit-build}
kit=${TFPROF_KIT_DIR:-build/gpu-kit}
jobs=$(nproc)
say() { echo "=== gpu-kit: $*"; }
die() { echo "gpu-kit: $*" >&2; exit 1; }

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
nvcc=${CUDACXX:-$(command -v nvcc || true)}
[ -n "$nvcc" ] || die "nvcc not found (PATH, /usr/local/cuda/bin): the kit's CUDA programs need the CUDA toolkit"

# A configure that failed leaves a cache but no build files: configure again then.
if [ ! -f "$build_dir/CMakeCache.txt" ] ||
  { [ ! -f "$build_dir/Makefile" ] && [ ! -f "$build_dir/build.ninja" ]; }; then
  say "configure $build_dir"
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTFPROF_BUILD_PYTHON=OFF >/dev/null
fi
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build_dir/CMakeCache.txt"; }
[ "$(cache_value TFPROF_BUILD_CUDA_TESTS)" = ON ] ||
  die "$build_dir builds no CUDA programs (no CUDA compiler found, or TFPROF_BUILD_CUDA_TESTS=OFF)"
[ -z "$(cache_value TFPROF_SANITIZE)" ] || die "$build_dir is a sanitizer build"
[ "$(cache_value TFPROF_ABSEIL)" = bundled ] ||
  die "$build_dir links the system's Abseil (TFPROF_ABSEIL=bundled links it in)"
build_type=$(cache_value CMAKE_BUILD_TYPE)
# From the header, the version's one source: a tree built before a version bump still caches the
# old one until its next build reconfigures it.
version=$(sed -n 's/^#define TFPROF_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' \
  include/tfprof/tfprof.h | paste -sd.)

# The wheel for the GPU machines' Python (3.12, glibc >= 2.35): with it the proof builds nothing
# there. A wheel of another commit of the same version cannot be told apart by its name, so it is
# always built unless the caller names a folder of wheels it has just built.
wheel_python=3.12
wheel_tag=cp${wheel_python/./}
wheel_dir=${TFPROF_KIT_WHEEL_DIR:-build/gpu-kit-wheels}
find_wheel() {
  local found
  for found in "$wheel_dir"/tfprof-"$version"-"$wheel_tag"-"$wheel_tag"-manylinux_*_x86_64.whl; do
    if [ -f "$found" ]; then echo "$found"; fi
  done | sort -V | tail -n1
}
wheel=
[ -z "${TFPROF_KIT_WHEEL_DIR:-}" ] || wheel=$(find_wheel)
if [ -z "$wheel" ]; then
  say "the $wheel_tag wheel of tfprof $version: scripts/build-wheels.sh -o $wheel_dir --python $wheel_python"
  scripts/build-wheels.sh -o "$wheel_dir" --python "$wheel_python" --no-sdist ||
    die "scripts/build-wheels.sh could not build the $wheel_tag wheel (it needs CPython $wheel_python:" \
      "python$wheel_python on PATH or pyenv's); or set TFPROF_KIT_WHEEL_DIR to a folder holding it"
  wheel=$(find_wheel)
  [ -n "$wheel" ] || die "scripts/build-wheels.sh made no $wheel_tag wheel of tfprof $version in $wheel_dir"
fi

say "build ($build_type)"
cmake --build "$build_dir" -j"$jobs" --target tfprof tfprof_preload tfprof_cli gpu_training_loop \
  bench_gpu_launch gpu_soak tfprof_dump_step_stats

say "assemble $kit"
rm -rf "$kit"
cmake --install "$build_dir" --prefix "$kit" >/dev/null
cmake --install "$build_dir" --prefix "$kit" --component gpu_kit >/dev/null
# One lib/ whatever the install's library directory is called (lib, lib64, lib/<multiarch>).
libdir=$(cache_value CMAKE_INSTALL_LIBDIR)
[ "$libdir" = lib ] || die "$build_dir installs libraries into $libdir; the kit expects lib"
rm -rf "$kit/share" "$kit/lib/pkgconfig"

# `tfprof run` puts the _startup/ folder next to the preload library on PYTHONPATH (the PyTorch
# integration's start-up module).
cp -r bindings/python/tfprof/_startup "$kit/lib/_startup"
# The wheel is what the proof installs; the package's sources (0.25 MiB) stay as the fallback for
# a Python the wheel is not for (another version, pip refusing its tag): gpu_proof.py then builds
# the extension there, as before the wheel, and without pybind11 or CMake uses ctypes.
mkdir -p "$kit/wheels" "$kit/python" "$kit/checks"
cp "$wheel" "$kit/wheels/"
cp -r bindings/python/CMakeLists.txt bindings/python/native bindings/python/tfprof "$kit/python/"
find "$kit/python" -name __pycache__ -prune -exec rm -rf {} +
cp tests/gpu/gpu_device.py tests/gpu/check_gpu_trace.py tests/gpu/check_gpu_soak.py \
  tests/gpu/gpu_proof.py tests/gpu/torch_training_loop.py benchmarks/bench_gpu_launch.py \
  tests/gpu/check_kit.py "$kit/checks/"
cp tests/gpu/kit/run.sh "$kit/run.sh"
cp tests/gpu/kit/README.md "$kit/README.md"

# Debug information goes to $kit-debug/ here, each file linked back by a .gnu_debuglink: the
# device takes at most 64 MiB with the source tree (the kit with its debug information was 54
# MiB), and an address in a crash there still maps to a line here (gdb, addr2line -e the .debug).
debug_dir="$kit-debug"
rm -rf "$debug_dir"
mkdir -p "$debug_dir"
while IFS= read -r -d '' file; do
  if [ "$(head -c 4 "$file" | od -An -c | tr -d ' ')" = '177ELF' ]; then
    debug_file="$debug_dir/$(basename "$file").debug"
    objcopy --only-keep-debug --compress-debug-sections=zlib "$file" "$debug_file"
    objcopy --strip-debug --add-gnu-debuglink="$debug_file" "$file"
  fi
done < <(find "$kit/bin" "$kit/lib" -type f -print0)

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit+changes"; fi
cuda_arch=$(cache_value CMAKE_CUDA_ARCHITECTURES)
cat >"$kit/kit.json" <<EOF
{"version": "$version", "commit": "$commit", "built": "$(date -u '+%Y-%m-%d %H:%M UTC')",
 "build_type": "$build_type", "compiler": "$(c++ --version | head -n1)",
 "cuda_compiler": "nvcc $("$nvcc" --version | grep -o 'release [0-9.]*' | cut -d' ' -f2)",
 "cuda_architectures": "$cuda_arch", "built_on": "$(. /etc/os-release && echo "$PRETTY_NAME")",
 "wheel": "$(basename "$wheel")"}
EOF

say "check"
python3 tests/gpu/check_kit.py "$kit" --max-mib 24
echo "gpu-kit: $kit ($(du -sh "$kit" | cut -f1); debug information in $debug_dir); on a GPU machine: bash $kit/run.sh (docs/gpu.md)"
