#!/usr/bin/env bash
# Creates a virtual environment (once) and installs tfprof into it from this checkout: builds the
# wheel with `pip wheel .` (scikit-build-core builds libtfprof.so and the extension) into
# build/wheelhouse/<venv's name>/, then installs that wheel with its test extra (pip fetches the
# build and test dependencies from PyPI). The wheel stays there, so what was tested is what can be
# inspected (tests/packaging/test_wheel.py does). Prints the environment's python.
# Usage: scripts/python-env.sh [VENV [ARGUMENTS...]]   (default VENV: build/venv)
#   TFPROF_WHEELHOUSE=DIR installs the interpreter's wheel in DIR (built by an earlier call or by
#   scripts/build-wheels.sh, from this tree) instead of building one, when no -C argument asks for
#   another build.
#   -C KEY=VALUE arguments go to the wheel's build, the others (package names) to the install, e.g.
#   scripts/python-env.sh build/venv-asan -C cmake.define.TFPROF_SANITIZE="address;undefined"
#   scripts/python-env.sh build/venv-tf tensorflow-cpu==2.21.0
#   An environment with packages is made once per machine and linked into build/
#   (scripts/cached-venv.sh; TFPROF_ENV_CACHE=0 makes it in build/ as before).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-build/venv}
shift || true
build_args=()
install_args=()
while [ "$#" -gt 0 ]; do
  if [ "$1" = -C ] && [ "$#" -ge 2 ]; then
    build_args+=("$1" "$2")
    shift 2
  else
    install_args+=("$1")
    shift
  fi
done
# An environment of tfprof alone is made here, in build/; one with packages, below.
if [ "${#install_args[@]}" -eq 0 ] && [ ! -x "$venv/bin/python" ]; then
  echo "python-env: creating $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
fi
# The interpreter's wheel tag (cp311...): a wheelhouse may hold one wheel per Python.
interpreter=python3
[ -x "$venv/bin/python" ] && interpreter=$venv/bin/python
tag=$("$interpreter" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
if [ -n "${TFPROF_WHEELHOUSE:-}" ] && [ "${#build_args[@]}" -eq 0 ] &&
   ls "$TFPROF_WHEELHOUSE"/tfprof-*-"$tag"-"$tag"-*.whl >/dev/null 2>&1; then
  # The wheel built from this tree with the same (default) build, by another environment or by
  # scripts/build-wheels.sh: building it again would cost minutes and give the same files.
  wheel=$(ls "$TFPROF_WHEELHOUSE"/tfprof-*-"$tag"-"$tag"-*.whl)
  echo "python-env: reusing $wheel" >&2
else
  wheelhouse=build/wheelhouse/$(basename "$venv")
  rm -rf "$wheelhouse"
  echo "python-env: pip wheel . into $wheelhouse ${build_args[*]}" >&2
  # (pip builds in an isolated environment: any interpreter of this version will do)
  "$interpreter" -m pip wheel -q --no-deps -w "$wheelhouse" ${build_args[@]+"${build_args[@]}"} . >&2
  wheel=$(ls "$wheelhouse"/tfprof-*.whl)
fi
# tfprof, its test extra and the packages asked for, resolved together.
install_with_packages() {
  echo "python-env: pip install $(basename "$wheel")[test] ${install_args[*]} into $venv" >&2
  "$1" -m pip install -q "${wheel}[test]" ${install_args[@]+"${install_args[@]}"} >&2
}
if [ "${#install_args[@]}" -gt 0 ]; then
  # Framework packages (TensorFlow, PyTorch...): made once per machine (scripts/cached-venv.sh),
  # keyed by the packages and the test extra; about 10 GB while pip installs TensorFlow and torch.
  # shellcheck source=cached-venv.sh
  source scripts/cached-venv.sh
  cached_venv "$venv" install_with_packages 10 "${install_args[@]}" \
    "$(grep '^test = ' pyproject.toml)"
else
  install_with_packages "$venv/bin/python"
fi
# This tree's tfprof, whatever version the environment held.
"$venv/bin/python" -m pip install -q --force-reinstall --no-deps "$wheel" >&2
echo "$venv/bin/python"
