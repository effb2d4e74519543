"""Runs gpu_soak (tests/gpu/gpu_soak.cu) and checks that no GPU work went missing unaccounted: every
kernel that ran on the device is in the trace, or counted in the records CUPTI reported dropped.

The kernels in the trace are read back by `tfprof summary --json` from the streamed .tfrecord
(its kernel count; the per-step counts are reported beside it); the kernels that ran come from a
counter each kernel increments on the device. With no record dropped, trace kernels == kernels launched == kernels run, exactly. CUPTI
counts its dropped records without saying which kind they were (kernel or API call), so with drops
the check is trace kernels <= launched <= trace kernels + dropped records, and the figures say so.

Prints PASS/FAIL lines and a JSON line of figures (prefixed "RESULT: "); exits 77 without a device.
Usage: check_gpu_soak.py --seconds N --soak BINARY --tfprof BINARY --work-dir DIR [--rate K]
"""
import argparse
import json
import os
import subprocess
import sys
import time

from gpu_device import SKIP_EXIT_CODE, no_device_reason

PROF_GPU_ACTIVE = 3  # prof_stats_t.gpu_state


def fail(message, figures=None):
    if figures is not None:
        print("RESULT: " + json.dumps(figures))
    print("FAIL: " + message)
    sys.exit(1)


class AccountingError(Exception):
    """The trace and the soak's counts do not account for every kernel; the message says how."""


def account(soak, trace_summary):
    """Checks `tfprof summary --json`'s trace (one element of "traces") against gpu_soak's result;
    returns the verdict, raises AccountingError."""
    steps = trace_summary["steps"]
    # Every kernel of the trace once (a step counts only the kernels that start inside it).
    kernels = trace_summary["kernel_count"]
    dropped_in_trace = trace_summary.get("losses", {}).get("gpu_records_dropped")
    launched, executed, dropped = soak["launched"], soak["executed"], soak["gpu_records_dropped"]
    if executed != launched:
        raise AccountingError(f"the device ran {executed} kernels of {launched} launched")
    if soak["gpu_state"] != PROF_GPU_ACTIVE:
        raise AccountingError(f"GPU tracing was not active (gpu_state {soak['gpu_state']})")
    if len(steps) != soak["steps"]:
        raise AccountingError(f"the trace has {len(steps)} steps, the soak made {soak['steps']}")
    if dropped_in_trace != dropped:
        raise AccountingError(f"the trace says {dropped_in_trace} GPU records were dropped, "
                              f"prof_get_stats {dropped}")
    if dropped == 0:
        if kernels != launched:
            raise AccountingError(f"{kernels} kernels in the trace, {launched} launched, none dropped")
        return f"all {launched} kernels in the trace, none dropped"
    if not kernels <= launched <= kernels + dropped:
        raise AccountingError(f"{kernels} kernels in the trace and {dropped} records dropped do not "
                              f"account for {launched} launched")
    return (f"{kernels} of {launched} kernels in the trace; {dropped} records dropped (of any "
            f"kind) account for the other {launched - kernels}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, required=True)
    parser.add_argument("--rate", type=int, default=50000, help="kernels launched per second")
    parser.add_argument("--soak", required=True, help="the gpu_soak program")
    parser.add_argument("--tfprof", required=True, help="the tfprof command")
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--keep-trace", action="store_true", help="leave the .tfrecord behind")
    args = parser.parse_args()

    reason = no_device_reason()
    if reason is not None:
        print("SKIP: " + reason)
        sys.exit(SKIP_EXIT_CODE)
    os.makedirs(args.work_dir, exist_ok=True)
    trace = os.path.join(args.work_dir, "soak.tfrecord")
    result_path = os.path.join(args.work_dir, "soak_result.json")
    for stale in (trace, result_path):
        if os.path.exists(stale):
            os.remove(stale)

    run = subprocess.run([args.soak, str(args.seconds), trace, result_path, str(args.rate)],
                         capture_output=True, text=True, timeout=args.seconds * 3 + 300)
    print(run.stdout, end="")
    if run.returncode == SKIP_EXIT_CODE:
        print("SKIP: gpu_soak skipped: " + run.stdout.strip())
        sys.exit(SKIP_EXIT_CODE)
    if run.returncode != 0:
        fail(f"gpu_soak exited {run.returncode}: {run.stderr.strip()}")
    with open(result_path, encoding="utf-8") as file:
        soak = json.load(file)

    begin = time.monotonic()
    summary_run = subprocess.run([args.tfprof, "summary", "--json", trace], capture_output=True,
                                 text=True, timeout=1800)
    summary_seconds = time.monotonic() - begin
    if summary_run.returncode != 0:
        fail(f"tfprof summary --json {trace} exited {summary_run.returncode}: "
             f"{summary_run.stderr.strip()}")
    trace_summary = json.loads(summary_run.stdout)["traces"][0]
    figures = dict(soak)
    figures.update(kernels_in_trace=trace_summary["kernel_count"],
                   kernels_in_steps=sum(step["kernels"] for step in trace_summary["steps"]),
                   steps_in_trace=len(trace_summary["steps"]), trace_bytes=os.path.getsize(trace),
                   summary_seconds=round(summary_seconds, 1),
                   dropped_in_trace=trace_summary["losses"].get("gpu_records_dropped"))
    if not args.keep_trace:
        os.remove(trace)  # minutes of kernels make gigabytes
    try:
        verdict = account(soak, trace_summary)
    except AccountingError as error:
        fail(str(error), figures)
    print("RESULT: " + json.dumps(figures))
    print(f"PASS: {verdict}; {soak['achieved_rate']:.0f} kernels/s for {soak['seconds']:.0f} s, "
          f"peak RSS {soak['peak_rss_mib']:.0f} MiB")


if __name__ == "__main__":
    main()
