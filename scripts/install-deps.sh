#!/usr/bin/env bash
# Installs what building and testing tfprof needs, from Debian's packages. Idempotent: installs
# only what is missing, and runs apt-get update only when something is. chromium, chromium-driver
# and a font are for tests/tools/tfprof/test_report.py, which opens `tfprof report`'s page in the
# browser; debootstrap for tests/gpu/test_gpu_kit.py, which runs the GPU kit in a minimal Debian
# root. Builds that ship (the release tree, the wheel, the GPU kit) link their own Abseil built from
# source; libabsl-dev is for the sanitizer trees (TFPROF_ABSEIL=system), protobuf-compiler saves
# building protoc (cmake/Protobuf.cmake), valgrind counts the hot paths' instructions
# (benchmarks/bench_hot_paths.py), ccache keeps compiled objects between CI runs (scripts/test.sh).
set -euo pipefail

packages=(cmake g++ clang libclang-rt-14-dev make pkg-config binutils zlib1g-dev libabsl-dev protobuf-compiler doctest-dev nlohmann-json3-dev python3 python3-venv python3-dev chromium chromium-driver fonts-dejavu-core debootstrap valgrind ccache)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all present (${packages[*]})"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_if_needed=()
[ "$(id -u)" -eq 0 ] || sudo_if_needed=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_if_needed[@]}" apt-get update -qq
"${sudo_if_needed[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
