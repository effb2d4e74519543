"""`tfprof summary` on a 5-million-event trace: events per second and peak memory, against
baselines measured in the same run on the same file.

    python benchmarks/bench_summary.py [--events 5000000] [--tfprof build/release/tfprof]
                                       [--trace PATH] [--keep]

Writes a tfprof-style Chrome trace (the shape runtime/export/chrome_trace_writer.cc writes:
steps, nested host spans on two threads, cudaLaunchKernel calls, kernels on two streams, copies)
with --events events, then times, each in a child process with its peak RSS (VmHWM):

  read       `cat FILE > /dev/null`: the cost of reading the bytes (the floor)
  summary    `tfprof summary --json FILE > /dev/null`: streaming parse + analysis

and prints events/s, summary time / read time, and peak RSS against the file's size. The target
is a summary of 5 million events in seconds, with memory well under the file's size (no JSON tree).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Per step: 1 step row, 4 host spans (step body, forward, backward, optimizer) + input span on
# the input thread, and per layer a launch call, a kernel; one copy.
LAYERS = 60
EVENTS_PER_STEP = 1 + 5 + 2 * LAYERS + 1


def write_trace(path: pathlib.Path, events: int) -> int:
    steps = max(1, events // EVENTS_PER_STEP)
    header = (
        '{"displayTimeUnit":"ns",\n"dropped_events":0,\n"gpu_records_dropped":0,\n'
        '"tfprof":{"version":"0.1.0","clock":"monotonic","pid":4242,"command_line":["bench"],'
        '"start_time_unix_ns":1700000000000000000,"start_time_monotonic_ns":1000000000,'
        f'"end_time_monotonic_ns":0,"events_recorded":{steps * EVENTS_PER_STEP},'
        '"unmatched_span_ends":0,"unmatched_step_ends":0,"gpu":{},"timestamps":"us"},\n'
        '"traceEvents":[\n'
        '{"ph":"M","pid":4242,"tid":0,"name":"process_name","args":{"name":"bench"}},\n'
        '{"ph":"M","pid":4242,"tid":1,"name":"thread_name","args":{"name":"MainThread"}},\n'
        '{"ph":"M","pid":4242,"tid":2,"name":"thread_name","args":{"name":"input"}}')
    written = 0
    with open(path, "w", buffering=1 << 22) as out:
        out.write(header)
        step_us = 1000.0
        for step in range(steps):
            b = 1_000_000.0 + step * step_us
            chunk = [
                f',\n{{"ph":"X","cat":"step","name":"step {step}","pid":4242,"tid":2000000000,'
                f'"ts":{b:.3f},"dur":{step_us:.3f},"args":{{"step":{step}}}}}',
                f',\n{{"ph":"X","cat":"user_annotation","name":"IteratorGetNext","pid":4242,'
                f'"tid":2,"ts":{b:.3f},"dur":300.000,"args":{{"step":{step}}}}}',
                f',\n{{"ph":"X","cat":"user_annotation","name":"train_step","pid":4242,"tid":1,'
                f'"ts":{b + 300:.3f},"dur":690.000,"args":{{"step":{step}}}}}',
                f',\n{{"ph":"X","cat":"user_annotation","name":"forward","pid":4242,"tid":1,'
                f'"ts":{b + 301:.3f},"dur":300.000,"args":{{"step":{step}}}}}',
                f',\n{{"ph":"X","cat":"user_annotation","name":"backward","pid":4242,"tid":1,'
                f'"ts":{b + 602:.3f},"dur":300.000,"args":{{"step":{step}}}}}',
                f',\n{{"ph":"X","cat":"user_annotation","name":"optimizer","pid":4242,"tid":1,'
                f'"ts":{b + 903:.3f},"dur":80.000,"args":{{"step":{step}}}}}',
            ]
            for layer in range(LAYERS):
                t = b + 302 + layer * 10
                correlation = step * LAYERS + layer
                chunk.append(
                    f',\n{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":4242,'
                    f'"tid":1,"ts":{t:.3f},"dur":3.500,"args":{{"cbid":211,'
                    f'"correlation":{correlation},"step":{step}}}}}')
                chunk.append(
                    f',\n{{"ph":"X","cat":"kernel","name":"layer_{layer}_kernel","pid":0,'
                    f'"tid":{7 + layer % 2},"ts":{t + 4:.3f},"dur":8.250,"args":{{"device":0,'
                    f'"context":1,"stream":{7 + layer % 2},"correlation":{correlation},'
                    f'"registers per thread":32,"grid":[80,1,1],"block":[256,1,1],'
                    f'"op":"forward","step":{step}}}}}')
            chunk.append(
                f',\n{{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)",'
                f'"pid":0,"tid":7,"ts":{b + 290:.3f},"dur":9.000,"args":{{"device":0,"context":1,'
                f'"stream":7,"correlation":0,"bytes":4194304,"kind":"HtoD"}}}}')
            out.write("".join(chunk))
            written += len(chunk)
        out.write("\n]}\n")
    return written + 3


def timed(command: list, stdout=subprocess.DEVNULL) -> tuple:
    """Runs `command`; returns (seconds, peak RSS in MiB of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=stdout)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is the maximum over all waited-for children: run the big one last.
    return seconds, max(after, before) / 1024.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--tfprof", default=str(ROOT / "build" / "release" / "tfprof"))
    parser.add_argument("--trace", help="use (or create) this trace file")
    parser.add_argument("--keep", action="store_true", help="keep the generated trace")
    args = parser.parse_args()

    tfprof = pathlib.Path(args.tfprof)
    if not tfprof.exists():
        print(f"bench_summary: {tfprof} is missing; build with cmake first", file=sys.stderr)
        return 2
    directory = tempfile.mkdtemp(prefix="bench_summary_")
    trace = pathlib.Path(args.trace) if args.trace else pathlib.Path(directory) / "trace.json"
    if not trace.exists():
        start = time.perf_counter()
        events = write_trace(trace, args.events)
        print(f"wrote {events} events, {trace.stat().st_size / 1e6:.0f} MB in "
              f"{time.perf_counter() - start:.1f} s: {trace}")
    else:
        events = args.events
    size_mb = trace.stat().st_size / 1e6

    read_s, _ = timed(["cat", str(trace)])
    summary_s, summary_rss = timed([str(tfprof), "summary", "--json", str(trace)])
    print(f"events            {events}")
    print(f"file              {size_mb:.0f} MB")
    print(f"read (cat)        {read_s:.2f} s")
    print(f"tfprof summary    {summary_s:.2f} s  = {events / summary_s / 1e6:.2f} M events/s, "
          f"{size_mb / summary_s:.0f} MB/s")
    print(f"ratio summary/read {summary_s / read_s:.1f}x")
    print(f"peak RSS          {summary_rss:.0f} MiB = {summary_rss * 1.048576 / size_mb:.2f} x the "
          f"file, {summary_rss * 1048576 / events:.0f} bytes/event")
    if not args.keep and not args.trace:
        trace.unlink()
        os.rmdir(directory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
