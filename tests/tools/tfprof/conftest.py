"""Tests of the `tfprof` command's file commands (summary, report, convert, merge), run as a
user runs them: the executable from a build tree on files in a temporary directory.

TFPROF_BUILD_DIR names the build tree (default build/test-release); its `tfprof` executable is
the one tested.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from typing import List, Optional

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(pathlib.Path(__file__).parent))


def build_dir() -> pathlib.Path:
    return (ROOT / os.environ.get("TFPROF_BUILD_DIR", "build/test-release")).resolve()


@pytest.fixture(scope="session")
def tfprof_exe() -> pathlib.Path:
    exe = build_dir() / "tfprof"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: build the tree first (cmake --build {build_dir()})")
    return exe


def run_tfprof(exe: pathlib.Path, *args: str, env: Optional[dict] = None,
               check: Optional[int] = 0) -> subprocess.CompletedProcess:
    """Runs `tfprof ARGS`; with `check` set, asserts that exit code and shows stderr if not."""
    full_env = dict(os.environ)
    full_env.pop("TFPROF_PROGRESS", None)
    if env:
        full_env.update(env)
    result = subprocess.run([str(exe), *args], capture_output=True, text=True, env=full_env,
                            timeout=300)
    if check is not None:
        assert result.returncode == check, (
            f"tfprof {' '.join(args)} exited {result.returncode}, expected {check}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result


def words(*args: object) -> List[str]:
    return [str(arg) for arg in args]
