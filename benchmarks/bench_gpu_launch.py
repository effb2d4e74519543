"""GPU launch overhead: what tracing adds to each kernel launch, tfprof against torch.profiler.

A launch-bound loop (tiny in-place adds on a 16-element CUDA tensor: one small kernel each) is
timed untraced, under tfprof (cuda=on) and under torch.profiler (CPU and CUDA activities). Each
traced mode runs in a fresh process, since CUPTI serves one subscriber per process; that process
first times the same loop untraced, so the added time per launch is measured against a baseline of
the same process. Rounds alternate the modes; medians are reported with the kernels each trace
captured (from its Chrome trace: events with cat "kernel").

Target: tfprof adds at most half of what torch.profiler adds per launch, capturing the same kernels.

Usage: python benchmarks/bench_gpu_launch.py [--launches N] [--rounds R] [--work-dir DIR]
Uses the installed tfprof package, or else the library named by TFPROF_LIBRARY through ctypes.
Exits 0 with a SKIP line when torch or a CUDA device is missing.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

WARMUP_LAUNCHES = 2000  # untraced: the allocator, the kernel's module, the launch path
TRACED_WARMUP_LAUNCHES = 1000  # traced, before timing: tracers set up per module lazily


def timed_loop(torch, tensor, launches):
    torch.cuda.synchronize()
    begin = time.perf_counter()
    for _ in range(launches):
        tensor.add_(1.0)
    torch.cuda.synchronize()
    return time.perf_counter() - begin


class LibraryTrace:
    """tfprof through its C ABI, for machines where the Python package is not installed."""

    def __init__(self, library, path):
        self._lib = ctypes.CDLL(library)
        self._lib.prof_last_error.restype = ctypes.c_char_p
        self._options = f"output={path},cuda=on".encode()

    def _check(self, what, status):
        if status != 0:
            raise RuntimeError(f"{what}: {self._lib.prof_last_error().decode()}")

    def start(self):
        self._check("prof_start", self._lib.prof_start(self._options))

    def stop(self):
        self._check("prof_stop", self._lib.prof_stop())


def tfprof_trace(path):
    try:
        import tfprof
    except ImportError:
        library = os.environ.get("TFPROF_LIBRARY")
        if not library:
            raise RuntimeError("the tfprof package is not installed and TFPROF_LIBRARY is not set")
        return LibraryTrace(library, path)
    return tfprof.trace(path, cuda="on")


def read_trace(path):
    """The kernels a Chrome trace holds, and tfprof's GPU summary (absent in torch's traces)."""
    with open(path, encoding="utf-8") as file:
        trace = json.load(file)
    kernels = sum(1 for e in trace["traceEvents"] if e.get("cat") == "kernel")
    return kernels, trace.get("tfprof", {}).get("gpu", {})


def run_child(mode, launches, trace_path):
    """One round of one mode; prints its figures as JSON."""
    import torch

    tensor = torch.zeros(16, device="cuda")
    timed_loop(torch, tensor, WARMUP_LAUNCHES)
    baseline = min(timed_loop(torch, tensor, launches) for _ in range(3))
    if mode == "tfprof":
        trace = tfprof_trace(trace_path)
        trace.start()
        timed_loop(torch, tensor, TRACED_WARMUP_LAUNCHES)
        traced = timed_loop(torch, tensor, launches)
        begin = time.perf_counter()
        trace.stop()  # exports to trace_path
        finish = time.perf_counter() - begin
    else:
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities) as profiler:
            timed_loop(torch, tensor, TRACED_WARMUP_LAUNCHES)
            traced = timed_loop(torch, tensor, launches)
            begin = time.perf_counter()
        profiler.export_chrome_trace(trace_path)
        finish = time.perf_counter() - begin
    kernels, gpu = read_trace(trace_path)
    if mode == "tfprof" and gpu.get("state") != "active":
        raise RuntimeError(f"tfprof traced no GPU activity: {gpu}")
    print(json.dumps({"baseline_s": baseline, "traced_s": traced, "finish_s": finish,
                      "kernels": kernels, "dropped": gpu.get("records_dropped", 0),
                      "cupti": gpu.get("cupti", "")}))


def run_round(mode, launches, work_dir, index):
    trace_path = os.path.join(work_dir, f"{mode}_{index}.json")
    result = subprocess.run([sys.executable, __file__, "--child", mode, "--launches", str(launches),
                             "--trace", trace_path], capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        sys.exit(f"bench_gpu_launch: the {mode} round failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    os.remove(trace_path)  # traces of 50,000 launches are large; keep the disk free
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--launches", type=int, default=50000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--work-dir")
    parser.add_argument("--child", choices=("tfprof", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--trace", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        try:
            run_child(args.child, args.launches, args.trace)
        except RuntimeError as error:
            sys.exit(f"{args.child}: {error}")
        return 0

    try:
        import torch
    except ImportError:
        print("SKIP: bench_gpu_launch needs PyTorch (import torch failed)")
        return 0
    if not torch.cuda.is_available():
        print("SKIP: bench_gpu_launch needs a CUDA device (torch.cuda.is_available() is False)")
        return 0

    modes = ("tfprof", "torch")
    rounds = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory(dir=args.work_dir) as work_dir:
        for index in range(args.rounds):
            for mode in modes:
                rounds[mode].append(run_round(mode, args.launches, work_dir, index))

    expected_kernels = args.launches + TRACED_WARMUP_LAUNCHES
    print(f"GPU launch overhead: {args.launches} launches of a 16-element add_, "
          f"{torch.cuda.get_device_name(0)}, torch {torch.__version__} (CUDA {torch.version.cuda}), "
          f"median of {args.rounds} rounds")
    print(f"  {'mode':<16}{'untraced us/launch':>20}{'traced us/launch':>18}"
          f"{'added us/launch':>17}{'stop+export s':>15}{'kernels':>10}")
    added = {}
    kernels = {}
    for mode in modes:
        def median(key):
            return statistics.median(r[key] for r in rounds[mode])
        per_launch = 1e6 / args.launches
        added[mode] = statistics.median((r["traced_s"] - r["baseline_s"]) * per_launch
                                        for r in rounds[mode])
        kernels[mode] = sorted({r["kernels"] for r in rounds[mode]})
        label = "tfprof" if mode == "tfprof" else "torch.profiler"
        print(f"  {label:<16}{median('baseline_s') * per_launch:>20.3f}"
              f"{median('traced_s') * per_launch:>18.3f}{added[mode]:>17.3f}"
              f"{median('finish_s'):>15.2f}{'/'.join(map(str, kernels[mode])):>10}")
    ratio = added["tfprof"] / added["torch"] if added["torch"] > 0 else float("inf")
    counts_ok = kernels["tfprof"] == kernels["torch"] == [expected_kernels]
    print(f"  added time, tfprof / torch.profiler: {ratio:.2f} (target <= 0.50); kernels captured "
          f"per round: expected {expected_kernels}")
    print(f"  tfprof: CUPTI records dropped {sum(r['dropped'] for r in rounds['tfprof'])}, "
          f"libcupti {rounds['tfprof'][0]['cupti'] or '(not named)'}")
    met = ratio <= 0.5 and counts_ok
    print(f"verdict: {'target met' if met else 'target NOT met'}: tfprof adds "
          f"{added['tfprof']:.3f} us per launch, torch.profiler {added['torch']:.3f} us; kernel "
          f"counts {'match' if counts_ok else 'DIFFER'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
