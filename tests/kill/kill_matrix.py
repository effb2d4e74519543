#!/usr/bin/env python3
"""The kill matrix: streamed outputs cut by SIGKILL at random moments must still load.

For each format (.json, .tfrecord, a TensorBoard log directory, .pftrace) it runs
tests/kill/stream_steps (a session streaming steps of exactly SPANS spans each) many times, kills
it with SIGKILL at a random moment after it started, and reads what it left:

  - `tfprof summary --json` must exit 0 (a file cut mid-write is recovered, not refused), with a
    warning on stderr naming the file exactly when its "cut" says the file ends early;
  - `tfprof convert` to Chrome JSON must exit 0, and every step it holds must hold exactly SPANS
    "work" spans (a step the cut left partial must have been dropped, never kept short);
  - no hidden staging file (".tfprof-*.tmp") may be left beside the output.

Prints per format: runs, files left, files cut mid-write (recovered with a warning), files whole,
and failures; exits 1 on any failure. benchmarks/RESULTS.md records a full run.

Usage: kill_matrix.py [--runs N] [--formats json,tfrecord,tensorboard,perfetto] [--spans K]
                      [--max-delay-ms MS] [--jobs J] [--seed S] [--build-dir DIR]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional

ROOT = pathlib.Path(__file__).resolve().parents[2]
FORMATS = {"json": "trace.json", "tfrecord": "trace.tfrecord", "tensorboard": "logs",
           "perfetto": "trace.pftrace"}


@dataclasses.dataclass
class Outcome:
    file_left: bool = False
    cut: bool = False
    steps: int = 0
    failure: str = ""


def event_files(output: pathlib.Path) -> List[pathlib.Path]:
    if output.is_dir():
        return sorted(path for path in output.rglob("*") if "tfevents" in path.name)
    return [output] if output.exists() else []


def spans_per_step(chrome_json: pathlib.Path) -> Dict[int, int]:
    """Step number -> the "work" spans in it, from a Chrome trace tfprof wrote (its "step" arg:
    the step tfprof's one rule placed the span in; wall-clock microseconds as doubles are too
    coarse to place nanosecond spans by their times)."""
    events = json.loads(chrome_json.read_text())["traceEvents"]
    counts = {event["args"]["step"]: 0 for event in events
              if event.get("cat") == "step" and event.get("ph") == "X"}
    for event in events:
        if event.get("name") != "work" or event.get("ph") != "X":
            continue
        # Every span of stream_steps is inside a step: one in no step, or in a step the trace
        # does not hold, is counted under None (a failure).
        step = event.get("args", {}).get("step")
        key = step if step in counts else None
        counts[key] = counts.get(key, 0) + 1
    return counts


def check_output(tfprof: pathlib.Path, output: pathlib.Path, spans: int,
                 scratch: pathlib.Path) -> Outcome:
    outcome = Outcome()
    files = event_files(output)
    hidden = [path.name for path in output.parent.rglob(".tfprof-*.tmp")]
    if hidden:
        return Outcome(failure=f"hidden staging files left: {hidden}")
    if not files:
        return outcome  # killed before the file was named: nothing to read
    outcome.file_left = True
    summary = subprocess.run([str(tfprof), "summary", "--json", str(output)], capture_output=True,
                             text=True, timeout=120)
    if summary.returncode != 0:
        outcome.failure = f"summary exited {summary.returncode}: {summary.stderr.strip()}"
        return outcome
    trace = json.loads(summary.stdout)["traces"][0]
    dropped = trace["losses"]["dropped_events"] + trace["losses"]["memory_dropped_events"]
    if dropped:
        # Steps short of events the recorder never kept say nothing of the cut: the load is too
        # high for the machine (fewer jobs, or a slower stream_steps).
        outcome.failure = f"the recording itself lost {dropped} events: lower the load"
        return outcome
    cut = trace.get("cut")
    outcome.cut = cut is not None
    warned = "the file ends at byte" in summary.stderr
    if warned != outcome.cut:
        outcome.failure = f"warning printed: {warned}, cut: {cut}; stderr: {summary.stderr.strip()}"
        return outcome
    if cut is not None and cut["file"] not in summary.stderr:
        outcome.failure = f"the warning does not name {cut['file']}: {summary.stderr.strip()}"
        return outcome
    converted = scratch / "converted.json"
    convert = subprocess.run([str(tfprof), "convert", str(output), "-o", str(converted)],
                             capture_output=True, text=True, timeout=120)
    if convert.returncode != 0:
        outcome.failure = f"convert exited {convert.returncode}: {convert.stderr.strip()}"
        return outcome
    counts = spans_per_step(converted)
    outcome.steps = len(counts)
    short = {number: count for number, count in counts.items() if count != spans}
    if short:
        outcome.failure = (f"steps not whole ({spans} spans each expected): "
                           f"{dict(sorted(short.items(), key=lambda item: (item[0] is not None, item[0] or 0))[:5])}; "
                           f"cut: {cut}")
    return outcome


def output_size(output: pathlib.Path) -> int:
    """The bytes of the stream's file (-1 while it has no name)."""
    try:
        files = event_files(output)
        return files[0].stat().st_size if files else -1
    except OSError:
        return -1


def kill_on_write(process: subprocess.Popen, output: pathlib.Path, watch_s: float) -> None:
    """SIGKILLs `process` as soon as its output is seen changing size (a piece being written:
    a .json's old tail cut off, or any file growing), or after `watch_s`."""
    size = output_size(output)
    deadline = time.monotonic() + watch_s
    while time.monotonic() < deadline and output_size(output) == size:
        pass
    process.send_signal(signal.SIGKILL)


def run_once(program: pathlib.Path, tfprof: pathlib.Path, form: str, spans: int,
             delay_s: float, on_write: bool, keep_failures: Optional[pathlib.Path]) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="tfprof-kill-") as directory:
        scratch = pathlib.Path(directory)
        output = scratch / "out" / FORMATS[form]
        output.parent.mkdir()
        process = subprocess.Popen([str(program), str(output), form, str(spans)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert process.stdout is not None
        ready = process.stdout.readline()
        if ready.strip() != b"ready":
            process.kill()
            _, errors = process.communicate()
            return Outcome(failure=f"stream_steps did not start: {errors.decode(errors='replace')}")
        time.sleep(delay_s)
        if on_write:
            kill_on_write(process, output, 0.2)
        else:
            process.send_signal(signal.SIGKILL)
        process.communicate(timeout=60)
        try:
            outcome = check_output(tfprof, output, spans, scratch)
        except subprocess.TimeoutExpired as expired:
            outcome = Outcome(file_left=True, failure=f"timed out: {' '.join(expired.cmd)}")
        if outcome.failure and keep_failures is not None:
            kept = keep_failures / f"{form}-{os.getpid()}-{time.monotonic_ns()}"
            subprocess.run(["cp", "-r", str(output.parent), str(kept)], check=False)
            outcome.failure += f" (kept in {kept})"
        return outcome


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300, help="kills per format (default 300)")
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated formats")
    parser.add_argument("--spans", type=int, default=64, help="spans per step (even; default 64)")
    parser.add_argument("--max-delay-ms", type=float, default=30.0,
                        help="the kill comes uniformly within this time after the start")
    parser.add_argument("--jobs", type=int, default=4, help="runs at a time (default 4)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    parser.add_argument("--build-dir", default=os.environ.get("TFPROF_BUILD_DIR", "build/test-release"))
    parser.add_argument("--keep-failures", default=None, help="copy failed outputs here")
    args = parser.parse_args(argv)
    build = (ROOT / args.build_dir).resolve()
    program, tfprof = build / "tests" / "kill" / "stream_steps", build / "tfprof"
    for needed in (program, tfprof):
        if not needed.exists():
            print(f"kill_matrix: {needed} is missing: build the tree first", file=sys.stderr)
            return 2
    seed = args.seed if args.seed is not None else time.time_ns() % 1_000_000
    chooser = random.Random(seed)
    keep = pathlib.Path(args.keep_failures).resolve() if args.keep_failures else None
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    forms = [form for form in args.formats.split(",") if form]
    print(f"kill matrix: {args.runs} SIGKILLs per format, {args.spans} spans a step, kill within "
          f"{args.max_delay_ms:g} ms of the start (every other one at the next write seen), "
          f"seed {seed}")
    print(f"{'format':<12} {'runs':>5} {'files':>6} {'cut':>5} {'whole':>6} {'steps':>8} "
          f"{'failed':>7}")
    failed_any = False
    for form in forms:
        # Half the kills at a uniformly random moment; half at the first write seen after one
        # (most of a stream's time is spent recording and encoding, little writing).
        delays = [chooser.uniform(0, args.max_delay_ms) / 1000 for _ in range(args.runs)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            outcomes = list(pool.map(
                lambda run: run_once(program, tfprof, form, args.spans, delays[run], run % 2 == 1,
                                     keep),
                range(args.runs)))
        files = sum(outcome.file_left for outcome in outcomes)
        cut = sum(outcome.cut for outcome in outcomes)
        failures = [outcome.failure for outcome in outcomes if outcome.failure]
        steps = sum(outcome.steps for outcome in outcomes)
        print(f"{form:<12} {len(outcomes):>5} {files:>6} {cut:>5} {files - cut:>6} {steps:>8} "
              f"{len(failures):>7}")
        for failure in failures[:5]:
            print(f"  FAILED: {failure}")
        failed_any = failed_any or bool(failures)
    return 1 if failed_any else 0


if __name__ == "__main__":
    sys.exit(main())
