"""Time and peak memory of `tfprof summary` and `tfprof convert` on the hostile trace shapes of
tests/tools/tfprof/hostile_traces.py, at EVENTS and 4x EVENTS, so that what grows faster than its
input shows (a linear path takes about 4x the time at 4x the size; a quadratic one 16x).

Each shape is written as Chrome JSON (and .json.gz, and an XPlane where the shape has one), then
converted by tfprof to .pftrace, .pb, .tfrecord and a TensorBoard event file, and each of those
inputs is read by `summary` and converted to every output (and with --layout timeline). One
line per run: input, what ran on it, events, input MiB, seconds, peak resident MiB of the run
itself (tests/tools/tfprof/peak_memory.py), and its exit status (-9: killed at --limit-s).

    build/venv/bin/python benchmarks/bench_hostile_inputs.py --events 25000 [--shapes a,b]
        [--build build/gpu-kit-build] [--work /tmp/hostile] [--limit-s 120]
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import subprocess
import sys
from typing import List

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools" / "tfprof"))
import hostile_traces  # noqa: E402
from peak_memory import run_measured  # noqa: E402

XPLANE_SHAPES = ("one_long_name", "overlapping", "many_threads", "many_events")
OUTPUTS = ("json", "pb", "tfrecord", "pftrace", "tensorboard", "timeline")


def inputs_of(shape: str, events: int, work: pathlib.Path, exe: pathlib.Path) -> List[pathlib.Path]:
    base = work / f"{shape}-{events}"
    made = [hostile_traces.write_json(shape, events, base.with_suffix(".json")),
            hostile_traces.write_json(shape, events, base.with_suffix(".json.gz"))]
    if shape in XPLANE_SHAPES:
        made.append(hostile_traces.write_xplane(shape, events, base.with_suffix(".xplane.pb")))
    for suffix in (".pftrace", ".pb", ".tfrecord"):
        target = base.with_suffix(suffix)
        subprocess.run([str(exe), "convert", str(made[0]), "-o", str(target)], check=True,
                       stdout=subprocess.DEVNULL)
        made.append(target)
    return made


def output_arguments(output: str, work: pathlib.Path) -> List[str]:
    if output == "tensorboard":
        return ["-o", f"{work}/logs/"]
    if output == "timeline":
        return ["-o", str(work / "out.json"), "--layout", "timeline"]
    return ["-o", str(work / f"out.{output}")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=25000)
    parser.add_argument("--shapes", default=",".join(hostile_traces.SHAPES))
    parser.add_argument("--outputs", default=",".join(OUTPUTS))
    parser.add_argument("--build", default=str(ROOT / "build" / "gpu-kit-build"))
    parser.add_argument("--work", default="/tmp/tfprof-hostile-bench")
    parser.add_argument("--limit-s", type=float, default=120)
    parser.add_argument("--sizes", default="1,4", help="multiples of --events to run")
    args = parser.parse_args()
    exe = pathlib.Path(args.build) / "tfprof"
    work = pathlib.Path(args.work)
    print(f"{'input':34} {'run':10} {'events':>8} {'MiB in':>7} {'s':>7} {'peak MiB':>8} rc")
    for shape in args.shapes.split(","):
        for multiple in (int(m) for m in args.sizes.split(",")):
            events = args.events * multiple
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            for source in inputs_of(shape, events, work, exe):
                size_mib = source.stat().st_size / (1 << 20)
                runs = [("summary", [str(exe), "summary", str(source)])]
                for output in args.outputs.split(","):
                    runs.append((output, [str(exe), "convert", str(source),
                                          *output_arguments(output, work)]))
                for label, command in runs:
                    seconds, peak_mib, code, _ = run_measured(command, args.limit_s)
                    name = source.name.replace(f"-{events}", "")
                    print(f"{name:34} {label:10} {events:8} {size_mib:7.1f} {seconds:7.2f} "
                          f"{peak_mib:8.0f} {code}", flush=True)
                    shutil.rmtree(work / "logs", ignore_errors=True)


if __name__ == "__main__":
    main()
