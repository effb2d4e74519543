#!/usr/bin/env bash
# Builds the GPU kit: build/gpu-kit/, everything tfprof's GPU proof needs, built here (release with
# debug info) and only run on the GPU machine, which may have no Abseil, no protoc of our version, no
# doctest and no network. `build/gpu-kit/run.sh` there runs the whole proof (docs/gpu.md).
#
#   bin/      tfprof, gpu_training_loop (the CUDA example), bench_gpu_launch, gpu_soak,
#             tfprof_dump_step_stats; RUNPATH $ORIGIN/../lib
#   lib/      libtfprof.so (Abseil and protobuf linked in, hidden), libtfprof_preload.so, and
#             the CMake package the Python extension is built against there
#   include/  tfprof/tfprof.h
#   python/   the Python package and its extension's sources (built on the GPU machine)
#   checks/   the checkers and the proof's driver (gpu_proof.py); run.sh; kit.json (what, from where)
# ELF files need only glibc, the C/C++ runtime, zlib and the CUDA driver/runtime/CUPTI; their
# debug information is kept apart, in build/gpu-kit-debug/. tests/gpu/check_kit.py checks that,
# and the size (<= 24 MiB, so that the kit and the source tree travel together).
#
# Usage: scripts/gpu-kit.sh [BUILD_DIR]   (default build/gpu-kit-build)
#   BUILD_DIR may be a tree configured before (CI passes its release tree): it must be built with
#   CUDA programs, without sanitizers, with the bundled Abseil; it is built again incrementally.
#   TFPROF_KIT_DIR: where the kit goes (default build/gpu-kit; replaced).
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
mkdir -p "$kit/python" "$kit/checks"
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
version=$(cache_value CMAKE_PROJECT_VERSION)
cuda_arch=$(cache_value CMAKE_CUDA_ARCHITECTURES)
cat >"$kit/kit.json" <<EOF
{"version": "$version", "commit": "$commit", "built": "$(date -u '+%Y-%m-%d %H:%M UTC')",
 "build_type": "$build_type", "compiler": "$(c++ --version | head -n1)",
 "cuda_compiler": "nvcc $("$nvcc" --version | grep -o 'release [0-9.]*' | cut -d' ' -f2)",
 "cuda_architectures": "$cuda_arch", "built_on": "$(. /etc/os-release && echo "$PRETTY_NAME")"}
EOF

say "check"
python3 tests/gpu/check_kit.py "$kit" --max-mib 24
echo "gpu-kit: $kit ($(du -sh "$kit" | cut -f1); debug information in $debug_dir); on a GPU machine: bash $kit/run.sh (docs/gpu.md)"
