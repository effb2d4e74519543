"""scripts/ctest_lsan_retry.py on a real ctest project: only LeakSanitizer's tracer crash is retried."""
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
RETRY = REPO / "scripts" / "ctest_lsan_retry.py"

# As CI printed it for a doctest case that passed.
TRACER_CRASH_OUTPUT = (
    "[doctest] test cases:  1 |  1 passed | 0 failed | 46 skipped\n"
    "[doctest] assertions: 15 | 15 passed | 0 failed |\n"
    "[doctest] Status: SUCCESS!\n"
    "Tracer caught signal 11: addr=0x238 pc=0x7f1ecf8e80f0 sp=0x7f1eca0fad10\n"
    "==2672==LeakSanitizer has encountered a fatal error.\n"
)

# Each test is a shell command: it prints `first` and fails on its first run, then prints `later`
# and exits with `later_status` (a marker file in the build directory counts the runs).
CASES = {
    "flaky tracer": (TRACER_CRASH_OUTPUT, "[doctest] Status: SUCCESS!", 0),
    "always tracer": (TRACER_CRASH_OUTPUT, TRACER_CRASH_OUTPUT, 1),
    "assertion": ("[doctest] Status: FAILURE!\n" + TRACER_CRASH_OUTPUT, "", 0),
    "failed count": ("[doctest] test cases:  2 |  1 passed | 1 failed |\n" + TRACER_CRASH_OUTPUT,
                     "", 0),
    "leak report": ("==1==ERROR: LeakSanitizer: detected memory leaks\n", "", 0),
    "real then tracer": (TRACER_CRASH_OUTPUT, "x.cc:3: runtime error: signed overflow", 1),
}


def make_project(tmp_path: pathlib.Path, names: list[str]) -> pathlib.Path:
    source = tmp_path / "src"
    source.mkdir()
    lines = ["cmake_minimum_required(VERSION 3.20)", "project(retry_check NONE)", "enable_testing()"]
    for index, name in enumerate(names):
        first, later, later_status = CASES[name]
        script = source / f"case{index}.sh"
        marker = tmp_path / f"ran{index}"
        script.write_text(
            "#!/bin/sh\n"
            f"if [ ! -e {marker} ]; then touch {marker}; printf '%s\\n' '{first}'; exit 1; fi\n"
            f"printf '%s\\n' '{later}'; exit {later_status}\n")
        script.chmod(0o755)
        lines.append(f'add_test(NAME "{name}: a case" COMMAND {script})')
    (source / "CMakeLists.txt").write_text("\n".join(lines) + "\n")
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", source, "-B", build], check=True, capture_output=True)
    first_run = subprocess.run(["ctest"], cwd=build, capture_output=True)
    assert first_run.returncode != 0
    return build


def retry(build: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, RETRY, build], capture_output=True, text=True)


def test_a_tracer_crash_that_passes_when_run_again_is_forgiven(tmp_path):
    result = retry(make_project(tmp_path, ["flaky tracer"]))
    assert result.returncode == 0, result.stderr
    assert "'flaky tracer: a case' passed but LeakSanitizer's tracer crashed" in result.stdout
    assert "(1/2)" in result.stdout and "(2/2)" not in result.stdout


def test_a_tracer_crash_every_time_fails_after_two_retries(tmp_path):
    result = retry(make_project(tmp_path, ["always tracer"]))
    assert result.returncode == 1
    assert "(2/2)" in result.stdout


@pytest.mark.parametrize("name", ["assertion", "failed count", "leak report"])
def test_a_real_failure_is_not_retried(tmp_path, name):
    result = retry(make_project(tmp_path, [name]))
    assert result.returncode == 1
    assert f"'{name}: a case' failed for a real reason" in result.stderr
    assert "running it again" not in result.stdout


def test_a_real_failure_on_the_retry_stands(tmp_path):
    result = retry(make_project(tmp_path, ["real then tracer"]))
    assert result.returncode == 1
    assert "failed for a real reason when run again" in result.stderr


def test_one_real_failure_among_tracer_crashes_fails_the_run(tmp_path):
    result = retry(make_project(tmp_path, ["flaky tracer", "assertion"]))
    assert result.returncode == 1
    assert "running it again" not in result.stdout
