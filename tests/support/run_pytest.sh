#!/bin/sh
# Runs one pytest suite for ctest (tests/pytest_suites.cmake). The interpreter is the one the
# environment variable VARIABLE names when the test runs (scripts/test.sh builds the virtual
# environments after configuring), else the value CMake was configured with. Where neither names
# one, the suite is skipped (exit 77, the tests' SKIP_RETURN_CODE), unless
# TFPROF_TEST_REQUIRE_PYTHON is 1 (scripts/test.sh: no suite is skipped silently in CI).
# TFPROF_TEST_LD_PRELOAD goes to the interpreter alone as LD_PRELOAD (a sanitizer's runtime), never
# to ctest.
# Usage: run_pytest.sh VARIABLE CONFIGURED_PYTHON PYTEST_ARGUMENT...
variable=$1
configured=$2
shift 2
python=$(printenv "$variable" || true)
[ -n "$python" ] || python=$configured
if [ -z "$python" ]; then
  echo "run_pytest.sh: no interpreter: set $variable (environment or CMake cache)" \
    "to a Python with pytest"
  [ "${TFPROF_TEST_REQUIRE_PYTHON:-0}" = 1 ] && exit 1
  exit 77
fi
if [ -n "${TFPROF_TEST_LD_PRELOAD:-}" ]; then
  LD_PRELOAD=$TFPROF_TEST_LD_PRELOAD exec "$python" -m pytest "$@"
fi
exec "$python" -m pytest "$@"
