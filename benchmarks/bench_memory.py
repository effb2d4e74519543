"""Resident memory of a long profiled run, for each output, at fixed event rates.

    python benchmarks/bench_memory.py [--build build/dev] [--seconds 600] [--rates 1000000,2000000]
                                      [--library DIR] [--configs none,json,...] [--options K=V,...]

Runs build/.../benchmarks/bench_memory (one process per configuration) that records spans at
RATE events per second, a step every 5 ms, for SECONDS, and samples VmRSS once a second. The
baseline is the same loop with no session. Reported per configuration: RSS after the warm-up
(SECONDS/4) and at the end, the growth between them, events dropped by full rings, records lost
to memory, records discarded by keep=, how long prof_stop() took (it writes the output), and
at the end the records held in memory (prof_stats.memory_bytes) and the rest of the growth over
the baseline ("other": rings, name tables, the writers' and spill file's buffers, the backlog).

Configurations (the default memory limit holds throughout unless --options sets one; --options
adds session options to every configuration but the baseline):
  none        no output: what prof_export() would read comes from memory and the spill file
  json        output=trace.json, streamed while running (a complete trace after every step)
  jsongz      output=trace.json.gz, written at stop from memory and the spill file
  tfrecord    output=trace.tfrecord, one record per step streamed while running
  pftrace     output=trace.pftrace, Perfetto packets streamed while running
  tensorboard output=logs/, the same as a TensorBoard event file
  last100     keep=last:100, no output: the flight recorder
  nolimit     max_memory_mb=0: everything in memory (what every run did before 0.3)

Goal (issue 17): growth under 64 MB after the warm-up and no drops at 1M events/s on the
2-core development machine. --library DIR runs the same program against another libtfprof.so
(for example an older build) through LD_LIBRARY_PATH.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

CONFIGS = {
    "baseline": "-",
    "none": "",
    "json": "output={dir}/trace.json",
    "jsongz": "output={dir}/trace.json.gz",
    "tfrecord": "output={dir}/trace.tfrecord",
    "pftrace": "output={dir}/trace.pftrace",
    "tensorboard": "output={dir}/logs/",
    "last100": "keep=last:100",
    "nolimit": "max_memory_mb=0",
}


def run(program, rate, seconds, options, library):
    env = dict(os.environ)
    if library:
        env["LD_LIBRARY_PATH"] = library + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    result = subprocess.run([str(program), str(rate), str(seconds), "5", options],
                            capture_output=True, text=True, env=env, timeout=seconds * 3 + 600)
    if result.returncode != 0:
        sys.exit(f"bench_memory failed ({result.returncode}): {result.stderr}")
    return json.loads(result.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build/dev")
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--rates", default="1000000,2000000")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--library", default="", help="directory of another libtfprof.so to run")
    parser.add_argument("--json", help="also write the raw results here")
    parser.add_argument("--options", default="", help="session options added to each config")
    args = parser.parse_args()
    program = pathlib.Path(args.build) / "benchmarks" / "bench_memory"
    if not program.exists():
        sys.exit(f"{program} is missing: build the benchmarks first (cmake --build {args.build})")
    warmup = max(1, args.seconds // 4)
    print(f"tfprof memory over {args.seconds} s per run, a step every 5 ms; growth measured "
          f"from {warmup} s to the end" + (f"; library {args.library}" if args.library else ""))
    print(f"{'config':<12} {'events/s':>9} {'RSS@warmup':>11} {'RSS end':>9} {'growth':>9} "
          f"{'dropped':>9} {'mem lost':>9} {'discarded':>10} {'stop s':>7} {'spill MB':>9} "
          f"{'records':>9} {'other':>8}")
    results = []
    baseline_kb = 0
    for rate in (int(r) for r in args.rates.split(",")):
        for name in args.configs.split(","):
            with tempfile.TemporaryDirectory(prefix="tfprof-bench-memory-") as scratch:
                options = CONFIGS[name].format(dir=scratch)
                if args.options and options != "-":
                    options = ",".join(part for part in (options, args.options) if part)
                if name in ("json", "tfrecord", "pftrace", "tensorboard") and "warnings" not in options:
                    options += ",warnings=off"
                elif options == "":
                    options = "warnings=off"
                elif options != "-":
                    options += ",warnings=off"
                result = run(program, rate, args.seconds, options, args.library)
            result["config"] = name
            results.append(result)
            if name == "baseline":
                baseline_kb = result["rss_kb"][-1]
            rss = result["rss_kb"]
            start = rss[min(warmup, len(rss) - 1)]
            growth = rss[-1] - start
            # At the end: the records the session holds in memory, and the rest of what the
            # process gained over the baseline program (rings, names, writers' buffers, ...).
            records = result["records_kb"][-1]
            other = rss[-1] - records - baseline_kb if name != "baseline" else 0
            print(f"{name:<12} {rate:>9} {start / 1024:>9.1f}MB {rss[-1] / 1024:>7.1f}MB "
                  f"{growth / 1024:>7.1f}MB {result['dropped']:>9} {result['memory_dropped']:>9} "
                  f"{result['discarded']:>10} {result['stop_s']:>7.2f} "
                  f"{result['spill_bytes'] / 2**20:>9.1f} {records / 1024:>7.1f}MB "
                  f"{other / 1024:>6.1f}MB", flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
