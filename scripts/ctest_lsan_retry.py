#!/usr/bin/env python3
"""Re-runs the tests of a failed ctest run whose only failure is LeakSanitizer's own crash.

LeakSanitizer checks for leaks at exit by stopping the process's threads with a ptrace "tracer";
on some virtual machines that tracer intermittently dies ("Tracer caught signal 11 ... LeakSanitizer
has encountered a fatal error") after the test itself has passed (google/sanitizers#1353). That is
not a finding about our code, so such a test is run again, up to twice. Any other failure (a failed
assertion, an ASan/UBSan report, a leak report, a crash of the test) stays a failure.

Usage: ctest_lsan_retry.py BUILD_DIR   (after `ctest` failed in BUILD_DIR)
Exit status: 0 when every failed test was a tracer crash and passed when run again, 1 otherwise.
"""
import pathlib
import re
import subprocess
import sys

TRACER_CRASH = "LeakSanitizer has encountered a fatal error"
# Output that means the test found something, whatever LeakSanitizer did afterwards.
REAL_FAILURE = re.compile(
    r"ERROR: (AddressSanitizer|LeakSanitizer: detected)|runtime error:|Status: FAILURE|"
    r"\[doctest\] test cases:.*\b[1-9]\d* failed"
)
RETRIES = 2


def failed_tests(temporary: pathlib.Path) -> dict[int, str]:
    """Test number -> name, from ctest's list of the last run's failures."""
    failed = {}
    for line in (temporary / "LastTestsFailed.log").read_text().splitlines():
        number, _, name = line.partition(":")
        if number.strip().isdigit():
            failed[int(number)] = name
    return failed


def outputs_by_name(temporary: pathlib.Path) -> dict[str, str]:
    """Each test's output in the last run's log (sections: 'Testing: NAME' ... 'Test Passed/Failed')."""
    outputs = {}
    name = None
    lines: list[str] = []
    for line in (temporary / "LastTest.log").read_text(errors="replace").splitlines():
        header = re.match(r"\d+/\d+ Testing: (.*)$", line)
        if header:
            name, lines = header.group(1), []
        elif name is not None:
            lines.append(line)
            if line.startswith(("Test Passed.", "Test Failed.")) or line.startswith("Test Not Run"):
                outputs[name] = "\n".join(lines)
                name = None
    return outputs


def main() -> int:
    build_dir = pathlib.Path(sys.argv[1])
    temporary = build_dir / "Testing" / "Temporary"
    failed = failed_tests(temporary)
    outputs = outputs_by_name(temporary)
    if not failed:
        print("ctest_lsan_retry: ctest failed but listed no failed test", file=sys.stderr)
        return 1
    for number, name in failed.items():
        output = outputs.get(name, "")
        if TRACER_CRASH not in output or REAL_FAILURE.search(output):
            print(f"ctest_lsan_retry: test #{number} '{name}' failed for a real reason",
                  file=sys.stderr)
            return 1
    for number, name in failed.items():
        for attempt in range(1, RETRIES + 1):
            print(f"ctest_lsan_retry: test #{number} '{name}' passed but LeakSanitizer's tracer "
                  f"crashed at exit; running it again ({attempt}/{RETRIES})", flush=True)
            rerun = subprocess.run(["ctest", "--output-on-failure", "-I", f"0,0,0,{number}"],
                                   cwd=build_dir)
            if rerun.returncode == 0:
                break
            output = outputs_by_name(temporary).get(name, "")
            if TRACER_CRASH not in output or REAL_FAILURE.search(output):
                print(f"ctest_lsan_retry: test #{number} '{name}' failed for a real reason when "
                      "run again", file=sys.stderr)
                return 1
        else:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
