"""The hot paths' costs: instructions (callgrind), which hold on any x86-64 machine, beside times on
this one, which do not.

Measured, each in its own processes:
  prof_span pair, session     prof_span_begin("op") + prof_span_end() under prof_start(OPTIONS)
  prof_span pair, no session  the same pair with no session (the header's inline check)
  prof_span pair, listening   the same in a dormant process that called prof_listen() (issue 38):
    (dormant)                 no session, nothing captures it
  prof_begin_step, no session prof_begin_step(i) alone, as a loop marking each iteration calls it
  prof_begin_step, listening  the same after prof_listen(): one call where the others count a pair
  prof_span pair, 23-byte     the pair with "decoder.layer.attention" (three aligned words)
  prof_span_begin_id pair     prof_span_begin_id(id) + prof_span_end(), "op" registered once
  NVTX pair, no tool          nvtxRangePushA("op") + nvtxRangePop(), no NVTX tool loaded
  NVTX pair, preload          the same under LD_PRELOAD=libtfprof_preload.so: each range a span
  NVTX registered, no tool    nvtxDomainRangePushEx with a registered string + nvtxDomainRangePop
  NVTX registered, preload    the same under the preload
  Python span, trace active   `with tfprof.span("x"): pass` inside tfprof.trace()
  Python span, no trace       the same with no trace; nullcontext is the baseline
Times: each C mode runs in PROCESSES processes (benchmarks/bench_hot_paths.c, in turn, the order
reversed every other round so that a drift in the machine's load weighs on all alike); a process
times BURSTS bursts of BURST pairs, and before each the floor: two raw timestamp reads per pair,
the least a recorded span can cost, in the same process (on a shared VM one process may read the
clock twice as slowly as the next). Reported: the median over processes of each process's mean, the
spread (min-max), and the median floor of the same processes. Python: benchmarks/bench_python.py
--json in PROCESSES processes (its best round each), medians and spread likewise.
Instructions: valgrind --tool=callgrind counts each C mode's burst function alone
(--toggle-collect), in two runs of different lengths; the difference divided by the difference in
pairs is the steady state per pair, without start-up, warm-up or first-seen names. The unrolled
loop's own share (mode "empty") is subtracted. Python: the whole interpreter counted for two loop
lengths, per `with` the same way, and an empty loop's iteration for the span's own cost
(nullcontext, bench_python.py's baseline for its ratios, is timed but not counted: a Python class,
it costs more than tfprof.span).

Dormant wake check (issue 38): a process that called prof_listen() runs disabled spans for
--dormant-seconds (default 2) while this script reads voluntary_ctxt_switches +
nonvoluntary_ctxt_switches of each of its threads but the main one (/proc/PID/task/*/status) before
and after: tfprof's listener, blocked in accept(), must not have run at all (0 switches), and no
other thread may come or go. Reported as a figure and a verdict in every run, --instructions-only
included.

Targets (issue 22): a prof_span pair <= 80 instructions; an NVTX push/pop pair under the preload adds
<= 40 ns to the same pair with no tool (median over rounds of the difference), with ASCII and with
registered strings. Each preloaded run's trace must hold one "op" span per range pushed, none
dropped, or the run fails: a benchmark of a preload that records nothing would prove nothing.

Usage: python benchmarks/bench_hot_paths.py [--build-dir build/release] [--processes 5]
           [--bursts 10] [--burst 20000] [--options buffer_events=131072,flush_interval_ms=10,cuda=off]
           [--python PYTHON] [--no-callgrind | --instructions-only] [--dormant-seconds 2]
--instructions-only counts instructions and checks their target without timing anything: what
holds on any machine, so CI runs it (scripts/test.sh). Where bench_hot_paths was built without the
NVTX headers, the NVTX modes are left out and said so.
Exits 0 when the targets are met, 1 when not, 2 on a failed or unverifiable run.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

PAIR_INSTRUCTIONS_TARGET = 80
NVTX_ADDED_NS_TARGET = 40.0
# Callgrind runs: bursts of this many pairs, 1 and 3 timed bursts (each after the same warm-up).
CALLGRIND_BURST = 8000
CALLGRIND_BURSTS = (1, 3)

C_MODES = ("span_session", "span_idle", "span_listen", "step_idle", "step_listen",
           "span_long_session", "span_id_session", "nvtx_plain", "nvtx_preload", "nvtx_registered_plain",
           "nvtx_registered_preload")
LABELS = {
    "span_session": "prof_span pair, session",
    "span_idle": "prof_span pair, no session",
    "span_listen": "prof_span pair, listening (dormant)",
    "step_idle": "prof_begin_step, no session",
    "step_listen": "prof_begin_step, listening",
    "span_long_session": "prof_span pair, 23-byte name",
    "span_id_session": "prof_span_begin_id pair",
    "nvtx_plain": "NVTX pair, no tool",
    "nvtx_preload": "NVTX pair, preload",
    "nvtx_registered_plain": "NVTX registered, no tool",
    "nvtx_registered_preload": "NVTX registered, preload",
    "python_active": "Python span, trace active",
    "python_idle": "Python span, no trace",
    "python_null": "Python nullcontext",
    "python_loop": "Python empty loop",
}
BURST_FUNCTION = {"span": "SpanBurst", "span-id": "SpanIdBurst", "span-long": "SpanLongBurst",
                  "nvtx": "NvtxBurst", "nvtx-registered": "NvtxRegisteredBurst",
                  "step": "StepBurst", "empty": "EmptyBurst"}


def fail(message):
    print(f"bench_hot_paths: {message}", file=sys.stderr)
    sys.exit(2)


def clean_environment():
    """The caller's environment without anything that would load a tool or configure tfprof."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TFPROF_")}
    for name in ("LD_PRELOAD", "NVTX_INJECTION64_PATH", "NVTX_INJECTION32_PATH", "CUDA_INJECTION64_PATH"):
        env.pop(name, None)
    return env


def mode_command(mode, args, binary, preload, trace_path, bursts, burst):
    """(argv, env) for one C mode."""
    env = clean_environment()
    program_mode = {"span_session": "span", "span_idle": "span", "span_listen": "span",
                    "step_idle": "step", "step_listen": "step", "span_id_session": "span-id",
                    "span_long_session": "span-long",
                    "nvtx_plain": "nvtx",
                    "nvtx_preload": "nvtx", "nvtx_registered_plain": "nvtx-registered",
                    "nvtx_registered_preload": "nvtx-registered", "empty": "empty"}[mode]
    argv = [binary, program_mode, str(bursts), str(burst)]
    if mode in ("span_session", "span_long_session", "span_id_session"):
        argv.append(args.options)
    if mode.endswith("_listen"):
        argv.append("listen")  # prof_listen() first; no capture comes
    if mode.endswith("_preload"):
        env.update(LD_PRELOAD=preload, TFPROF_OUTPUT=trace_path, TFPROF_LOG_LEVEL="error",
                   TFPROF_OPTIONS=args.options)
    return argv, env, program_mode


def check_trace(path, expected_spans):
    """A preloaded run's trace holds one "op" span per range pushed and dropped nothing."""
    try:
        with open(path, encoding="utf-8") as file:
            trace = json.load(file)
    except (OSError, ValueError) as error:
        fail(f"the preloaded run wrote no readable trace at {path}: {error}")
    spans = sum(1 for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("name") == "op")
    problems = []
    if spans != expected_spans:
        problems.append(f"{spans} spans named 'op', expected {expected_spans}")
    if trace.get("dropped_events", 0) != 0:
        problems.append(f"{trace['dropped_events']} events dropped")
    if problems:
        fail(f"trace {path}: " + "; ".join(problems))


def run_timed(mode, args, binary, preload, work_dir, index):
    trace_path = os.path.join(work_dir, f"{mode}_{index}.json")
    argv, env, _ = mode_command(mode, args, binary, preload, trace_path, args.bursts, args.burst)
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        fail(f"{mode} failed ({result.returncode}): {' '.join(argv)}\n{result.stdout}{result.stderr}")
    if result.stderr.strip():
        fail(f"{mode} wrote to stderr (a warning from the runtime?):\n{result.stderr}")
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    if mode.endswith("session") and figures["events_recorded"] < 2 * figures["total_pairs"]:
        fail(f"{mode} recorded {figures['events_recorded']} events for {figures['total_pairs']} spans")
    if figures.get("listening", False) != mode.endswith("_listen"):
        fail(f"{mode}: the program says listening={figures.get('listening')}")
    if mode.endswith("_preload"):
        check_trace(trace_path, figures["total_pairs"])
        os.remove(trace_path)  # about 150 bytes per span; keep the disk free
    return figures


def callgrind_total(argv, env, toggle, work_dir):
    """Instructions callgrind counted inside `toggle` (its calls included) over one run."""
    out = os.path.join(work_dir, "callgrind.out")
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    command += [f"--toggle-collect={toggle}"] if toggle else []
    result = subprocess.run(command + argv, env=env, capture_output=True, text=True, timeout=1200)
    if result.returncode != 0:
        fail(f"callgrind failed ({result.returncode}): {' '.join(command + argv)}\n{result.stderr[-2000:]}")
    with open(out, encoding="utf-8") as file:
        for line in file:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    fail(f"no totals in {out} from {' '.join(command + argv)}")


def c_instructions(mode, args, binary, preload, work_dir):
    """Steady-state instructions per pair of one C mode."""
    totals = []
    for bursts in CALLGRIND_BURSTS:
        trace_path = os.path.join(work_dir, f"cg_{mode}.json")
        argv, env, program_mode = mode_command(mode, args, binary, preload, trace_path, bursts,
                                               CALLGRIND_BURST)
        totals.append(callgrind_total(argv, env, BURST_FUNCTION[program_mode], work_dir))
        if mode.endswith("_preload"):
            os.remove(trace_path)
    return (totals[1] - totals[0]) / ((CALLGRIND_BURSTS[1] - CALLGRIND_BURSTS[0]) * CALLGRIND_BURST)


PYTHON_LOOP = """
import contextlib, os, sys, tfprof
loops, variant = int(sys.argv[1]), sys.argv[2]
if variant == "python_active":
    # No collector thread and a ring for every event: the loop is all that grows with `loops`.
    tfprof.trace(buffer_events=1 << 22, flush_interval_ms=0).start()
body = "pass" if variant == "python_loop" else 'with tfprof.span("x"): pass'
exec("def run(n):\\n    for _ in range(n):\\n        " + body + "\\n")
run(loops)
sys.stdout.flush()
os._exit(0)  # no stop, no export: their cost grows with the events
"""


def python_instructions(python, variant, work_dir):
    """Instructions per `with` of one Python variant, the whole interpreter counted."""
    env = clean_environment()
    env["PYTHONHASHSEED"] = "0"
    loops = (20000, 60000)
    totals = [callgrind_total([python, "-c", PYTHON_LOOP, str(n), variant], env, None, work_dir)
              for n in loops]
    return (totals[1] - totals[0]) / (loops[1] - loops[0])


def thread_switches(pid):
    """{tid: (name, context switches so far)} of every thread of `pid` but the main one."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        if int(tid) == pid:
            continue
        fields = {}
        try:
            with open(f"/proc/{pid}/task/{tid}/status", encoding="utf-8") as file:
                for line in file:
                    key, _, value = line.partition(":")
                    fields[key] = value.strip()
        except OSError:
            continue  # the thread ended meanwhile: it shows as gone
        threads[int(tid)] = (fields["Name"], int(fields["voluntary_ctxt_switches"]) +
                             int(fields["nonvoluntary_ctxt_switches"]))
    return threads


def dormant_wake_check(binary, seconds):
    """Runs `bench_hot_paths dormant SECONDS` and returns (ok, description): whether the threads
    besides the main one (tfprof's listener) were not switched in at all while the process idled."""
    process = subprocess.Popen([binary, "dormant", str(seconds)], env=clean_environment(),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        listening = json.loads(process.stdout.readline() or "{}")
        if listening.get("phase") != "listening":
            fail(f"bench_hot_paths dormant did not start listening: {process.stderr.read()}")
        before = thread_switches(process.pid)
        spun = json.loads(process.stdout.readline() or "{}")
        after = thread_switches(process.pid)
    finally:
        process.stdin.close()
        rc = process.wait(timeout=60)
    if spun.get("phase") != "spun" or rc != 0:
        fail(f"bench_hot_paths dormant failed ({rc}): {process.stderr.read()}")
    woken = sum(after[tid][1] - before[tid][1] for tid in before if tid in after)
    threads = ", ".join(f"{name or '?'} (tid {tid})" for tid, (name, _) in sorted(before.items()))
    ok = bool(before) and before.keys() == after.keys() and woken == 0
    text = (f"{len(before)} thread(s) besides the main one [{threads}]: {woken} context switches in "
            f"{seconds:g} s while the main thread made {spun['pairs']} disabled span pairs")
    if before.keys() != after.keys():
        text += f"; threads before {sorted(before)}, after {sorted(after)}"
    if not before:
        text += "; no listener thread found"
    return ok, text


def run_python_timed(python):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_python.py")
    result = subprocess.run([python, script, "--json", "--loops", "20000", "--rounds", "5"],
                            env=clean_environment(), capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        fail(f"bench_python.py failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            cpu = next(line.split(":", 1)[1].strip() for line in file if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Linux {platform.release()}"


def spread(values):
    return f"{statistics.median(values):8.2f}  ({min(values):.2f}-{max(values):.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default="build/release")
    parser.add_argument("--processes", type=int, default=5, help="processes per mode (timed)")
    parser.add_argument("--bursts", type=int, default=10, help="timed bursts per process")
    parser.add_argument("--burst", type=int, default=20000, help="pairs per burst (a multiple of 8)")
    parser.add_argument("--options", default="buffer_events=131072,flush_interval_ms=10,cuda=off",
                        help="runtime options of the span session and of the preload (TFPROF_OPTIONS)")
    parser.add_argument("--python", help="a Python with tfprof installed, for the Python figures")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--no-callgrind", action="store_true", help="times only")
    what.add_argument("--instructions-only", action="store_true",
                      help="instruction counts and their target only, no timing")
    parser.add_argument("--work-dir")
    parser.add_argument("--dormant-seconds", type=float, default=2.0,
                        help="how long the dormant wake check watches a listening process")
    args = parser.parse_args()

    binary = os.path.join(args.build_dir, "benchmarks", "bench_hot_paths")
    preload = os.path.abspath(os.path.join(args.build_dir, "libtfprof_preload.so"))
    for path in (binary, preload):
        if not os.path.exists(path):
            fail(f"{path} is missing: build the targets bench_hot_paths and tfprof_preload in {args.build_dir}")
    use_callgrind = not args.no_callgrind
    if use_callgrind and shutil.which("valgrind") is None:
        fail("valgrind is not installed (apt install valgrind), or pass --no-callgrind")
    modes = C_MODES
    probe = subprocess.run([binary, "nvtx", "1", "8"], env=clean_environment(), capture_output=True,
                           text=True, timeout=60)
    if "without the NVTX headers" in probe.stderr:
        modes = tuple(mode for mode in C_MODES if not mode.startswith("nvtx"))
        print("  (bench_hot_paths was built without the NVTX headers: no NVTX figures)")

    timed = {mode: [] for mode in modes}
    python_timed = []
    instructions = {}
    with tempfile.TemporaryDirectory(dir=args.work_dir) as work_dir:
        for index in range(0 if args.instructions_only else args.processes):
            order = modes if index % 2 == 0 else tuple(reversed(modes))
            for mode in order:
                timed[mode].append(run_timed(mode, args, binary, preload, work_dir, index))
            if args.python:
                python_timed.append(run_python_timed(args.python))
        if use_callgrind:
            loop = c_instructions("empty", args, binary, preload, work_dir)
            for mode in modes:
                instructions[mode] = c_instructions(mode, args, binary, preload, work_dir) - loop
            if args.python:
                for variant in ("python_active", "python_idle", "python_loop"):
                    instructions[variant] = python_instructions(args.python, variant, work_dir)

    def per_process(mode, key="ns_per_pair"):
        return [figures[key] for figures in timed[mode]]

    def added(mode, baseline):
        """Per round: `mode` minus `baseline`, ns per pair."""
        return [b - a for a, b in zip(per_process(baseline), per_process(mode))]

    def timing(values):
        return f"{spread(values):<38}" if values else f"{'-':<38}"

    if args.instructions_only:
        print("Hot paths: instructions per pair (callgrind), no timing")
    else:
        print(f"Hot paths: {args.processes} processes per mode, {args.bursts} timed bursts of "
              f"{args.burst} pairs each (after warm-up), options {args.options}")
    print(f"  machine: {machine()}")
    print(f"  {'per pair':<36}{'instructions':>13}   {'ns: median (min-max over processes)':<38}{'floor ns':>9}")
    for mode in modes:
        count = f"{instructions[mode]:13.1f}" if mode in instructions else f"{'-':>13}"
        floors = per_process(mode, "floor_ns_per_pair")
        floor = f"{statistics.median(floors):9.2f}" if floors else ""
        print(f"  {LABELS[mode]:<36}{count}   {timing(per_process(mode))}{floor}")
    if args.python:
        keys = {"python_active": "span (trace active)", "python_idle": "span (no trace)",
                "python_null": "nullcontext (no trace)"}
        for variant, key in keys.items():
            count = f"{instructions[variant]:13.1f}" if variant in instructions else f"{'-':>13}"
            print(f"  {LABELS[variant]:<36}{count}   {timing([f['ns'][key] for f in python_timed])}")
        if "python_loop" in instructions:
            print(f"  {LABELS['python_loop']:<36}{instructions['python_loop']:13.1f}")
    if not args.instructions_only:
        floors = [f for mode in modes for f in per_process(mode, "floor_ns_per_pair")]
        print(f"  floor (two timestamp reads), all processes: median {statistics.median(floors):.2f} ns, "
              f"{min(floors):.2f}-{max(floors):.2f}")
        over_floor = [t / f for t, f in zip(per_process("span_session"),
                                            per_process("span_session", "floor_ns_per_pair"))]
        print(f"  prof_span pair / its process's floor: median {statistics.median(over_floor):.2f}x "
              f"({min(over_floor):.2f}-{max(over_floor):.2f})")

    met = True
    dormant_ok, dormant_text = dormant_wake_check(binary, args.dormant_seconds)
    met &= dormant_ok
    print(f"  target: a dormant listening process wakes no thread: {dormant_text}: "
          f"{'met' if dormant_ok else 'MISSED'}")
    if "span_session" in instructions:
        ok = instructions["span_session"] <= PAIR_INSTRUCTIONS_TARGET
        met &= ok
        print(f"  target: prof_span pair {instructions['span_session']:.1f} instructions "
              f"(<= {PAIR_INSTRUCTIONS_TARGET}): {'met' if ok else 'MISSED'}")
    for mode, baseline, what in (("nvtx_preload", "nvtx_plain", "ASCII"),
                                 ("nvtx_registered_preload", "nvtx_registered_plain", "registered")):
        if mode not in modes:
            continue
        if args.instructions_only:
            if mode in instructions:
                print(f"  NVTX pair under the preload adds {instructions[mode] - instructions[baseline]:.1f} "
                      f"instructions with {what} strings")
            continue
        rounds = added(mode, baseline)
        value = statistics.median(rounds)
        ok = value <= NVTX_ADDED_NS_TARGET
        met &= ok
        extra = ""
        if mode in instructions:
            extra = f", {instructions[mode] - instructions[baseline]:.1f} instructions"
        print(f"  target: NVTX pair under the preload adds {value:.2f} ns with {what} strings "
              f"(<= {NVTX_ADDED_NS_TARGET:.0f}; rounds {', '.join(f'{v:.1f}' for v in rounds)}{extra}): "
              f"{'met' if ok else 'MISSED'}")
    if "python_active" in instructions:
        print(f"  Python span beyond an empty loop's iteration: "
              f"{instructions['python_active'] - instructions['python_loop']:.1f} instructions with a "
              f"trace, {instructions['python_idle'] - instructions['python_loop']:.1f} without")
    print(f"verdict: {'targets met' if met else 'targets NOT met'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
