"""Helpers for the tests that run unmodified framework programs (tests/interop/programs) under
`tfprof run` and read what it wrote: the trace's spans and `tfprof summary --json`."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import sysconfig
from typing import Any, Dict, List, Optional, Sequence, Tuple

TFPROF = os.path.join(sysconfig.get_path("scripts"), "tfprof")
PROGRAMS = pathlib.Path(__file__).parent / "programs"


def run_under_tfprof(tmp_path: pathlib.Path, program: str, arguments: Sequence[str], output: str = "trace.json",
                     env: Optional[Dict[str, str]] = None,
                     log_level: str = "warning") -> Tuple[pathlib.Path, subprocess.CompletedProcess[str]]:
    """Runs programs/`program` with `arguments` under `tfprof run -o tmp_path/output`; fails the
    test unless it exits 0."""
    trace = tmp_path / output
    result = subprocess.run([TFPROF, "run", "--log-level", log_level, "-o", str(trace), "--", sys.executable,
                             str(PROGRAMS / program), *arguments],
                            capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})},
                            cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return trace, result


def run_in_code_program(tmp_path: pathlib.Path, source: str) -> Tuple[Dict[str, Any], pathlib.Path]:
    """Runs `source` (a program that traces itself into sys.argv[1] and prints JSON) in a process
    of its own; returns what it printed and the trace's path."""
    script = tmp_path / "in_code.py"
    script.write_text(source)
    output = tmp_path / "in_code.json"
    result = subprocess.run([sys.executable, str(script), str(output)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), output


def summary(trace: pathlib.Path) -> Dict[str, Any]:
    result = subprocess.run([TFPROF, "summary", "--json", str(trace)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["traces"][0]  # type: ignore[no-any-return]


def spans(trace: pathlib.Path) -> List[Dict[str, Any]]:
    events = json.loads(trace.read_text())["traceEvents"]
    return [e for e in events if e.get("ph") == "X"]


def steps_of(trace: pathlib.Path) -> List[Dict[str, Any]]:
    return sorted((e for e in spans(trace) if e.get("cat") == "step"), key=lambda e: e["ts"])


def interval(event: Dict[str, Any]) -> Tuple[float, float]:
    return event["ts"], event["ts"] + event["dur"]


def inside(inner: Dict[str, Any], outer: Dict[str, Any]) -> bool:
    (a, b), (c, d) = interval(inner), interval(outer)
    return c - 0.001 <= a and b <= d + 0.001


def input_share(steps: List[Dict[str, Any]]) -> float:
    return sum(s["input_wait_ns"] for s in steps) / sum(s["duration_ns"] for s in steps)


def finding_kinds(report: Dict[str, Any]) -> List[str]:
    return [f["kind"] for f in report["findings"]]
