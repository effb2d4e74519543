"""Runs a command and measures its time and its own peak resident memory.

A child's ru_maxrss starts at its parent's resident size (Linux carries the high-water mark of the
forked copy across exec), so a command forked straight from a test process of 100 MB would seem
to use 100 MB. The command is therefore started by a small Python that measures it: the floor is
that interpreter's few MiB, not the caller's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import List, NamedTuple, Optional

_LAUNCHER = r"""
import json, os, resource, sys
address_space = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    if address_space > 0:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
print(json.dumps({"code": os.waitstatus_to_exitcode(status), "peak_kib": usage.ru_maxrss}))
"""


class Measured(NamedTuple):
    seconds: float
    peak_mib: float
    code: int  # -9 when it ran past the time limit
    stderr: str


def run_measured(command: List[str], time_limit_s: float,
                 address_space_bytes: Optional[int] = None) -> Measured:
    """Runs `command` (its stdout discarded), killed after `time_limit_s`; with
    `address_space_bytes` it cannot map more than that (a runaway fails instead of swapping)."""
    start = time.monotonic()
    # A session of its own, so that a run past the limit is killed with the command it started.
    launcher = subprocess.Popen(
        [sys.executable, "-S", "-c", _LAUNCHER, str(address_space_bytes or 0), *command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = launcher.communicate(timeout=time_limit_s)
    except subprocess.TimeoutExpired:
        os.killpg(launcher.pid, signal.SIGKILL)
        _, stderr = launcher.communicate()
        return Measured(time.monotonic() - start, float("nan"), -9, stderr)
    seconds = time.monotonic() - start
    report = json.loads(stdout.strip().splitlines()[-1])
    return Measured(seconds, report["peak_kib"] / 1024, report["code"], stderr)
