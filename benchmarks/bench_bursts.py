"""What a burst loses, by cause, for each output format.

    python benchmarks/bench_bursts.py [--build build/dev] [--rounds 3] [--outputs json,pb,...]
                                      [--shapes spans2m,spans5m,ranges,names]
                                      [--options full_ring_wait_ms=1000]

Runs build/.../benchmarks/bench_bursts, one process per shape, output and round, and prints per
shape and output the medians over the rounds (min-max in brackets) of: events recorded, lost to
full rings (events_dropped), lost to memory or a writer that fell behind (events_memory_dropped),
the seconds the program spent recording (longer where back-pressure made it wait) and the seconds
prof_stop() took to finish the output. Shapes:

  spans2m  1 thread, 20M span pairs paced at 2M pairs/s (4M events/s), a step every 1000
  spans5m  the same at 5M pairs/s
  ranges   8 threads each ending 100,000 ranges the main thread started (in one burst)
  names    2M distinct span names, one pair each

Streamed outputs (.json, .tfrecord, .pftrace, a TensorBoard directory) are encoded while the
program runs; .json.gz and .pb at prof_stop(). The figures go in benchmarks/RESULTS.md.
"""

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile

SHAPES = {
    "spans2m": ["spans", "2000000", "1", "20000000"],
    "spans5m": ["spans", "5000000", "1", "20000000"],
    "ranges": ["ranges", "8", "100000"],
    "names": ["names", "2000000"],
}
OUTPUTS = {
    "json": "trace.json",
    "jsongz": "trace.json.gz",
    "pb": "trace.pb",
    "tfrecord": "trace.tfrecord",
    "tensorboard": "logs/",
    "pftrace": "trace.pftrace",
}


def run_once(program, shape, output, extra):
    with tempfile.TemporaryDirectory() as scratch:
        options = f"cuda=off,output={scratch}/{OUTPUTS[output]}" + (f",{extra}" if extra else "")
        result = subprocess.run([str(program), *SHAPES[shape], options], capture_output=True,
                                text=True, timeout=900)
    if result.returncode != 0:
        sys.exit(f"bench_bursts {shape} {output} failed ({result.returncode}): {result.stderr}")
    return json.loads(result.stdout)


def spread(values, digits=0):
    middle = statistics.median(values)
    if digits == 0:
        return f"{middle / 1e6:.2f}M [{min(values) / 1e6:.2f}-{max(values) / 1e6:.2f}]"
    return f"{middle:.2f} [{min(values):.2f}-{max(values):.2f}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build/dev")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--outputs", default=",".join(OUTPUTS))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--options", default="", help="more session options, e.g. full_ring_wait_ms=1000")
    args = parser.parse_args()
    program = pathlib.Path(args.build) / "benchmarks" / "bench_bursts"
    if not program.exists():
        sys.exit(f"{program} is missing: build the benchmarks first (cmake --build {args.build})")
    print(f"bench_bursts: {args.rounds} rounds, medians [min-max]; options: {args.options or '(none)'}")
    print(f"{'shape':<8} {'output':<12} {'recorded':>24} {'ring full':>24} {'memory/writer':>24} "
          f"{'record s':>18} {'stop s':>18}")
    for shape in args.shapes.split(","):
        for output in args.outputs.split(","):
            runs = [run_once(program, shape, output, args.options) for _ in range(args.rounds)]
            if any(run["stop_status"] != 0 for run in runs):
                sys.exit(f"{shape} {output}: prof_stop() failed: {runs}")
            print(f"{shape:<8} {output:<12} {spread([r['recorded'] for r in runs]):>24} "
                  f"{spread([r['ring_dropped'] for r in runs]):>24} "
                  f"{spread([r['memory_dropped'] for r in runs]):>24} "
                  f"{spread([r['record_s'] for r in runs], 2):>18} "
                  f"{spread([r['stop_s'] for r in runs], 2):>18}", flush=True)


if __name__ == "__main__":
    main()
