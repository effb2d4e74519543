"""NVTX overhead: what libtfprof_preload.so adds to each NVTX range, against a C prof_span pair.

Runs bench_nvtx (benchmarks/bench_nvtx.c), one process per measurement, in four modes:
  (a) nvtx, plain              nvtxRangePushA("op") + nvtxRangePop(), no NVTX tool loaded
  (b) nvtx, preloaded          the same under LD_PRELOAD=libtfprof_preload.so: each range a span
  (c) span, session            prof_span_begin("op") + prof_span_end() under prof_start(OPTIONS)
  (d) span, no session         the same pair with no session
Each round runs the four in turn (the order reversed every other round, so that a drift in the
machine's load weighs on all alike); figures are medians over the rounds of ns per range or pair.
The added cost per NVTX range is (b) - (a), the cost of a prof_span pair (c) - (d), both taken
per round. Target: added cost per NVTX range <= 1.5 x the prof_span pair. The verdict uses each
process's mean over its timed bursts; the same ratio from each process's fastest burst (the one
least disturbed by other tenants of a shared machine) is printed beside it.

(b) and (c) run with the same runtime options. A process makes its pairs in bursts (BURST pairs,
two events each, fit in the thread's ring of buffer_events) with a 50 ms pause after each, outside
the timed region, in which tfprof's collector thread drains the ring: the ring is reused, as in a
thread's steady state, and nothing is dropped. Each (b) trace is read back and must hold exactly
one "op" span per range pushed (timed and warm-up bursts), with no drops, or the run fails: a
benchmark of a preload that records nothing would prove nothing.

Usage: python benchmarks/bench_nvtx.py [--build-dir build/release] [--rounds 5]
           [--bursts 10] [--burst 20000] [--options buffer_events=131072,flush_interval_ms=10,cuda=off]
Exits 0 when the target is met, 1 when it is not, 2 on a failed or unverifiable run.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

TARGET_RATIO = 1.5
MODES = ("nvtx_plain", "nvtx_preload", "span_session", "span_idle")
LABELS = {
    "nvtx_plain": "(a) NVTX range, no tool",
    "nvtx_preload": "(b) NVTX range, libtfprof_preload.so",
    "span_session": "(c) prof_span pair, session running",
    "span_idle": "(d) prof_span pair, no session",
}


def clean_environment():
    """The caller's environment without anything that would load a tool or configure tfprof."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TFPROF_")}
    for name in ("LD_PRELOAD", "NVTX_INJECTION64_PATH", "NVTX_INJECTION32_PATH", "CUDA_INJECTION64_PATH"):
        env.pop(name, None)
    return env


def fail(message):
    print(f"bench_nvtx: {message}", file=sys.stderr)
    sys.exit(2)


def check_trace(path, expected_spans):
    """The preloaded run's trace holds one "op" span per range pushed and dropped nothing."""
    try:
        with open(path, encoding="utf-8") as file:
            trace = json.load(file)
    except (OSError, ValueError) as error:
        fail(f"the preloaded run wrote no readable trace at {path}: {error}")
    spans = sum(1 for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("name") == "op")
    header = trace.get("tfprof", {})
    problems = []
    if spans != expected_spans:
        problems.append(f"{spans} spans named 'op', expected {expected_spans}")
    if trace.get("dropped_events", 0) != 0:
        problems.append(f"{trace['dropped_events']} events dropped")
    if header.get("unmatched_span_ends", 0) != 0:
        problems.append(f"{header['unmatched_span_ends']} unmatched span ends")
    if problems:
        fail(f"trace {path}: " + "; ".join(problems))
    return spans


def run_mode(mode, args, binary, preload, work_dir, round_index):
    env = clean_environment()
    shape = [str(args.bursts), str(args.burst)]
    trace_path = None
    if mode.startswith("nvtx"):
        command = [binary, "nvtx", *shape]
        if mode == "nvtx_preload":
            trace_path = os.path.join(work_dir, f"nvtx_{round_index}.json")
            env.update(LD_PRELOAD=preload, TFPROF_OUTPUT=trace_path, TFPROF_LOG_LEVEL="error",
                       TFPROF_OPTIONS=args.options)
    else:
        command = [binary, "span", *shape, args.options if mode == "span_session" else "-"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        fail(f"{mode} failed ({result.returncode}): {' '.join(command)}\n{result.stdout}{result.stderr}")
    if result.stderr.strip():
        fail(f"{mode} wrote to stderr (a warning from the runtime?):\n{result.stderr}")
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    if mode == "span_session" and figures["events_recorded"] < 2 * figures["total_pairs"]:
        fail(f"span_session recorded {figures['events_recorded']} events for {figures['total_pairs']} spans")
    if trace_path is not None:
        figures["spans_in_trace"] = check_trace(trace_path, figures["total_pairs"])
        os.remove(trace_path)  # about 150 bytes per span; keep the disk free
    return figures


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            cpu = next(line.split(":", 1)[1].strip() for line in file if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default="build/release")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--bursts", type=int, default=10, help="timed bursts per process")
    parser.add_argument("--burst", type=int, default=20000, help="ranges per burst (a multiple of 8)")
    parser.add_argument("--options", default="buffer_events=131072,flush_interval_ms=10,cuda=off",
                        help="runtime options for (b) (as TFPROF_OPTIONS) and (c) (prof_start)")
    parser.add_argument("--work-dir")
    args = parser.parse_args()

    binary = os.path.join(args.build_dir, "benchmarks", "bench_nvtx")
    preload = os.path.abspath(os.path.join(args.build_dir, "libtfprof_preload.so"))
    for path in (binary, preload):
        if not os.path.exists(path):
            fail(f"{path} is missing: build the targets bench_nvtx and tfprof_preload in {args.build_dir}")

    rounds = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(dir=args.work_dir) as work_dir:
        for index in range(args.rounds):
            order = MODES if index % 2 == 0 else tuple(reversed(MODES))
            for mode in order:
                rounds[mode].append(run_mode(mode, args, binary, preload, work_dir, index))

    def per_round(mode, key="ns_per_pair"):
        return [r[key] for r in rounds[mode]]

    def costs(key):
        """Per round: added per NVTX range, (b) - (a), and the prof_span pair, (c) - (d)."""
        added_rounds = [b - a for a, b in zip(per_round("nvtx_plain", key), per_round("nvtx_preload", key))]
        pair_rounds = [c - d for d, c in zip(per_round("span_idle", key), per_round("span_session", key))]
        return added_rounds, pair_rounds

    added_per_range, span_pair = costs("ns_per_pair")
    added = statistics.median(added_per_range)
    pair = statistics.median(span_pair)
    ratio = added / pair if pair > 0 else float("inf")
    best_added, best_pair = (statistics.median(v) for v in costs("best_burst_ns_per_pair"))
    first = rounds["nvtx_preload"][0]

    print(f"NVTX overhead: {first['timed_pairs']} timed ranges per process ({args.bursts} bursts of "
          f"{args.burst}, after untimed warm-up bursts), median of {args.rounds} rounds")
    print(f"  machine: {machine()}")
    print(f"  options: {args.options}")
    print(f"  {'ns per range or pair':<40}{'median':>9}{'min':>9}{'max':>9}{'best burst':>12}")
    for mode in MODES:
        values = per_round(mode)
        best = statistics.median(per_round(mode, "best_burst_ns_per_pair"))
        print(f"  {LABELS[mode]:<40}{statistics.median(values):>9.2f}{min(values):>9.2f}"
              f"{max(values):>9.2f}{best:>12.2f}")
    print(f"  added per NVTX range, (b) - (a): {added:.2f} ns  (rounds: "
          f"{', '.join(f'{v:.1f}' for v in added_per_range)})")
    print(f"  prof_span pair, (c) - (d):       {pair:.2f} ns  (rounds: "
          f"{', '.join(f'{v:.1f}' for v in span_pair)})")
    spans = sorted({r["spans_in_trace"] for r in rounds["nvtx_preload"]})
    print(f"  every (b) trace held {'/'.join(map(str, spans))} 'op' spans, one per range pushed, "
          f"none dropped")
    print(f"  ratio {ratio:.2f} (target <= {TARGET_RATIO}); from each process's fastest burst, the "
          f"least disturbed by other tenants: {best_added:.2f} / {best_pair:.2f} ns = "
          f"{best_added / best_pair if best_pair > 0 else float('inf'):.2f}")
    met = ratio <= TARGET_RATIO
    print(f"verdict: {'target met' if met else 'target NOT met'}: the preload adds {added:.2f} ns per "
          f"NVTX range; a prof_span pair costs {pair:.2f} ns")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
