"""StepStats -> Chrome trace JSON: tfprof.convert against TensorFlow's own timeline.py, in the same
run, on the same file.

    python benchmarks/bench_convert.py [--nodes 1000000] [--repeat 1]

Needs tfprof, tensorflow-cpu and tensorboard in one environment (scripts/test.sh makes
build/venv-tf). Builds one StepStats of --nodes NodeExecStats shaped like a TF executor's (two
devices, labels with inputs, one output tensor per node with its allocation), writes it as a binary
RunMetadata, then converts it in separate child processes, each timed around the conversion alone
(reading the file included, interpreter start and imports excluded) and with its peak RSS:

  tfprof      tfprof.convert(run.pb, out.json, layout="timeline", rows="lanes")  (timeline.py's rows)
  tfprof-layout  tfprof.convert(run.pb, out.json): the engine's default layout (tfprof's own,
              as `tfprof convert` and prof_convert write it), through the trace model
  timeline    RunMetadata.ParseFromString + Timeline(...).generate_chrome_trace_format() + write

show_dataflow is on in both timeline layouts (timeline.py's default). Target: tfprof >= 50x
faster. Flat memory: tfprof's peak RSS follows the input's size, not the output's; it is printed
for half the nodes as well so the growth per node can be compared with the bytes per node of the
input and output.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

TARGET_RATIO = 50.0

# Child programs: each prints the seconds of the timed part and its peak RSS (VmHWM: since exec,
# so the parent's pages seen by fork do not count).
PEAK_RSS = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1]) / 1024"
TFPROF_CHILD = f"""
import sys, time, json, tfprof
start = time.perf_counter()
tfprof.convert(sys.argv[1], sys.argv[2], layout="timeline", rows="lanes")
print(json.dumps({{"seconds": time.perf_counter() - start, "peak_rss_mb": {PEAK_RSS}}}))
"""
TFPROF_LAYOUT_CHILD = f"""
import sys, time, json, tfprof
start = time.perf_counter()
tfprof.convert(sys.argv[1], sys.argv[2])
print(json.dumps({{"seconds": time.perf_counter() - start, "peak_rss_mb": {PEAK_RSS}}}))
"""
TIMELINE_CHILD = f"""
import os, sys, time, json
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import tensorflow as tf
from tensorflow.python.client import timeline
start = time.perf_counter()
metadata = tf.compat.v1.RunMetadata()
with open(sys.argv[1], "rb") as f:
    metadata.ParseFromString(f.read())
text = timeline.Timeline(metadata.step_stats).generate_chrome_trace_format()
with open(sys.argv[2], "w") as f:
    f.write(text)
print(json.dumps({{"seconds": time.perf_counter() - start, "peak_rss_mb": {PEAK_RSS}}}))
"""


def build_run_metadata(nodes: int, path: pathlib.Path) -> None:
    import tensorflow as tf

    metadata = tf.compat.v1.RunMetadata()
    devices = [metadata.step_stats.dev_stats.add() for _ in range(2)]
    for index, device in enumerate(devices):
        device.device = f"/job:localhost/replica:0/task:0/device:CPU:{index}"
    start_us = 1_700_000_000_000_000
    for index in range(nodes):
        device = devices[index % 2]
        node = device.node_stats.add()
        name = f"layer{index // 8}/op{index % 8}"
        inputs = f"layer{max(index // 8 - 1, 0)}/op{index % 8}, layer{index // 8}/weights"
        node.node_name = name
        node.timeline_label = f"{name} = MatMul({inputs})"
        node.all_start_micros = start_us + index * 3
        node.op_start_rel_micros = 1
        node.op_end_rel_micros = 4
        node.all_end_rel_micros = 5 + index % 7  # overlaps its neighbours: several lanes
        node.scheduled_micros = node.all_start_micros - 1
        output = node.output.add()
        output.tensor_description.dtype = tf.float32.as_datatype_enum
        for size in (128, 256):
            output.tensor_description.shape.dim.add().size = size
        allocation = output.tensor_description.allocation_description
        allocation.requested_bytes = allocation.allocated_bytes = 128 * 256 * 4
        allocation.allocator_name = "cpu"
    path.write_bytes(metadata.SerializeToString())


def run_child(program: str, source: pathlib.Path, output: pathlib.Path) -> dict:
    process = subprocess.run([sys.executable, "-c", program, str(source), str(output)],
                             capture_output=True, text=True)
    if process.returncode != 0:
        raise SystemExit(f"child failed ({process.returncode}):\n{process.stderr[-3000:]}")
    result = json.loads(process.stdout.strip().splitlines()[-1])
    result["output_mb"] = output.stat().st_size / 1e6
    with open(output) as f:
        events = json.load(f)["traceEvents"]
    result["op_events"] = sum(1 for event in events
                              if event.get("ph") == "X" and event.get("cat") in ("Op", "user_annotation"))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--skip-timeline", action="store_true", help="time tfprof only")
    args = parser.parse_args()

    import tfprof

    with tempfile.TemporaryDirectory(prefix="tfprof-bench-convert-") as scratch:
        directory = pathlib.Path(scratch)
        print(f"tfprof {tfprof.__version__} StepStats -> Chrome trace JSON, {args.nodes} NodeExecStats", flush=True)
        sizes = {}
        for nodes in (args.nodes // 2, args.nodes):
            started = time.perf_counter()
            build_run_metadata(nodes, directory / f"run{nodes}.pb")
            sizes[nodes] = (directory / f"run{nodes}.pb").stat().st_size / 1e6
            print(f"  input: {nodes} nodes, {sizes[nodes]:.1f} MB (built in {time.perf_counter() - started:.1f} s)", flush=True)

        results = {}
        for label, child in (("tfprof", TFPROF_CHILD), ("tfprof-layout", TFPROF_LAYOUT_CHILD)):
            for nodes in (args.nodes // 2, args.nodes):
                results[(label, nodes)] = run_child(child, directory / f"run{nodes}.pb", directory / "tfprof.json")
                r = results[(label, nodes)]
                print(f"  {label:<16} {nodes:>8} nodes: {r['seconds']:8.2f} s  peak RSS {r['peak_rss_mb']:7.0f} MB"
                      f"  output {r['output_mb']:7.1f} MB  ops {r['op_events']}", flush=True)
        status = 0
        if not args.skip_timeline:
            r = results[("timeline", args.nodes)] = run_child(TIMELINE_CHILD, directory / f"run{args.nodes}.pb",
                                                              directory / "timeline.json")
            print(f"  timeline.py      {args.nodes:>8} nodes: {r['seconds']:8.2f} s  peak RSS {r['peak_rss_mb']:7.0f} MB"
                  f"  output {r['output_mb']:7.1f} MB  ops {r['op_events']}", flush=True)
            mine = results[("tfprof", args.nodes)]
            if mine["op_events"] != r["op_events"]:
                print(f"  MISMATCH: tfprof wrote {mine['op_events']} op events, timeline.py {r['op_events']}")
                status = 1
            ratio = r["seconds"] / mine["seconds"]
            print(f"  speed: tfprof is {ratio:.1f}x faster than timeline.py (target >= {TARGET_RATIO:.0f}x)"
                  f" -> {'met' if ratio >= TARGET_RATIO else 'NOT met'}")
            print(f"  memory: tfprof peak RSS {mine['peak_rss_mb']:.0f} MB vs timeline.py {r['peak_rss_mb']:.0f} MB"
                  f" ({r['peak_rss_mb'] / mine['peak_rss_mb']:.1f}x)")
            if ratio < TARGET_RATIO:
                status = 1
        extra_nodes = args.nodes - args.nodes // 2
        per_node_in = (sizes[args.nodes] - sizes[args.nodes // 2]) * 1e6 / extra_nodes
        for label in ("tfprof", "tfprof-layout"):
            half, full = results[(label, args.nodes // 2)], results[(label, args.nodes)]
            per_node_rss = (full["peak_rss_mb"] - half["peak_rss_mb"]) * 1e6 / extra_nodes
            per_node_out = (full["output_mb"] - half["output_mb"]) * 1e6 / extra_nodes
            print(f"  {label} memory growth: {per_node_rss:.0f} B of RSS per extra node; input "
                  f"{per_node_in:.0f} B/node, output {per_node_out:.0f} B/node (the output is streamed)")
    return status


if __name__ == "__main__":
    sys.exit(main())
