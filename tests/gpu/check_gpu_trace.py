"""Runs the CUDA example (examples/cuda/gpu_training_loop) under tfprof and checks its trace against
the manifest of everything the example launched.

--format json: every kernel exactly once, on its device and stream row, with the launching op and
step; a launch-to-GPU flow ("ac2g") for every launch call, starting no later than the work;
copies with their direction and size; the memset; graph kernels with their graph id; the
driver-API launch on the cuda_driver row.
--format pb: the TensorFlow RunMetadata: devices /device:GPU:D/stream:all, .../stream:S and
.../memcpy, kernel labels naming the kernel and ending in "@@<op>" as TensorFlow's tracer writes.
--launcher: how tfprof gets into the example: `direct` (it links libtfprof and starts its own
session), or unmodified under the preload library, which then owns the session and writes the
trace at exit: `ld_preload` (LD_PRELOAD), `tfprof_run` (`tfprof run -o TRACE -- example`) or
`injection` (CUDA_INJECTION64_PATH: the driver loads the library at cuInit).

Exits 77 (a CTest skip) with the reason when no CUDA driver or device can be used.
Usage: check_gpu_trace.py --format json|pb --example BINARY --dump-step-stats BINARY --work-dir DIR
                          [--launcher direct|ld_preload|tfprof_run|injection]
                          [--preload LIBRARY] [--tfprof BINARY] [--timeout SECONDS]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

from gpu_device import SKIP_EXIT_CODE, no_device_reason

STEPS = 4
US_TOLERANCE = 0.001  # trace times are microseconds with three decimals


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(SKIP_EXIT_CODE)


def example_command(args, trace_path, manifest_path):
    """The command line and environment that run the example under args.launcher; the trace is
    written to trace_path whoever owns the session."""
    command, env = [args.example, trace_path, manifest_path, str(STEPS)], dict(os.environ)
    if args.launcher == "direct":
        return command, env
    # Unmodified under the preload library: its session (cuda=on) writes trace_path at exit; the
    # example's own session gets PROF_EALREADY and its output path goes unused.
    command[1] = trace_path + ".unused.json"
    env.update(TFPROF_OPTIONS="cuda=on", TFPROF_LOG_LEVEL="info")
    if args.launcher == "tfprof_run":
        return [args.tfprof, "run", "-o", trace_path, "--options", "cuda=on", "--"] + command, env
    env["TFPROF_OUTPUT"] = trace_path
    if args.launcher == "ld_preload":
        env["LD_PRELOAD"] = args.preload
    else:  # injection
        env["CUDA_INJECTION64_PATH"] = args.preload
    return command, env


def run_example(args, trace_path, manifest_path):
    command, env = example_command(args, trace_path, manifest_path)
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout,
                                env=env)
    except subprocess.TimeoutExpired:
        fail(f"{' '.join(command)} ({args.launcher}) ran over {args.timeout} s")
    print(result.stdout, end="")
    if result.returncode == SKIP_EXIT_CODE:
        skip(f"the example skipped: {result.stdout.strip()}")
    if result.returncode != 0:
        fail(f"{' '.join(command)} exited {result.returncode}: {result.stderr.strip()}")
    if not os.path.exists(trace_path):
        fail(f"no trace at {trace_path} ({args.launcher}); stderr: {result.stderr.strip()}")
    with open(manifest_path, encoding="utf-8") as file:
        return json.load(file)


def expect_equal_counts(what, actual, expected):
    if actual == expected:
        return
    missing = expected - actual
    extra = actual - expected
    fail(f"{what}: missing {dict(missing)}, unexpected {dict(extra)}")


def kernel_launches(manifest):
    return [l for l in manifest["launches"] if l["kind"] in ("kernel", "graph")]


# ---- Chrome trace JSON -------------------------------------------------------------------------

def gpu_pid(events, device):
    for event in events:
        if event.get("ph") == "M" and event.get("name") == "process_name" \
                and event["args"].get("name") == f"GPU {device}":
            return event["pid"]
    fail(f"no process named 'GPU {device}'")


def check_gpu_summary(trace):
    gpu = trace.get("tfprof", {}).get("gpu")
    if gpu is None:
        fail("the trace has no tfprof.gpu summary")
    if gpu.get("state") != "active":
        fail(f"GPU tracing was {gpu.get('state')!r}, not 'active': {gpu.get('reason', '')}")
    for counter in ("records_dropped", "buffers_refused"):
        if gpu.get(counter, 0) != 0:
            fail(f"tfprof.gpu.{counter} is {gpu[counter]}")


def translate_streams(manifest, observed):
    """The manifest with its stream ids as CUPTI numbers them. The example records
    cudaStreamGetId(), which equals CUPTI's streamId when the session starts after the program
    initialised CUDA, but not when CUPTI was armed before (the preload: 14 and 15 for CUPTI's 13
    and 14 on an H200). Each (kernel, op) pair of the manifest must sit on one row, and two streams
    never share a row. `observed`: (kernel name, op, row) of every kernel in the trace."""
    rows = collections.defaultdict(set)
    for name, op, row in observed:
        rows[(name, op)].add(row)
    mapping = {}
    for l in kernel_launches(manifest):
        found = rows.get((l["name"], l["op"]), set())
        if len(found) > 1:
            fail(f"kernel {l['name']} under {l['op']} is on rows {sorted(found)}, not on one stream")
        for row in found:
            if mapping.setdefault(l["stream"], row) != row:
                fail(f"stream {l['stream']}'s kernels are on rows {mapping[l['stream']]} and {row}")
    if len(set(mapping.values())) != len(mapping):
        fail(f"two streams share a row: {mapping}")
    renumbered = {k: v for k, v in mapping.items() if k != v}
    if renumbered:
        print(f"streams as CUPTI numbers them (cudaStreamGetId -> CUPTI): {renumbered}")
    translated = dict(manifest)
    translated["launches"] = [dict(l, stream=mapping.get(l["stream"], l["stream"]))
                              for l in manifest["launches"]]
    return translated


def check_rows(events, pid, manifest):
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name" and e["pid"] == pid}
    for stream in {l["stream"] for l in manifest["launches"]}:
        if names.get(stream) != f"stream {stream}":
            fail(f"GPU row {stream} is named {names.get(stream)!r}, expected 'stream {stream}'")


def check_kernels(kernels, manifest):
    """Each kernel exactly once on its stream, under its op and in its step; graph ids exactly on
    graph kernels."""
    launches = kernel_launches(manifest)
    expected = collections.Counter()
    detailed = collections.Counter()
    for l in launches:
        expected[(l["name"], l["stream"])] += l["count"]
        detailed[(l["name"], l["stream"], l["op"], l["step"], l["kind"] == "graph")] += l["count"]
    expect_equal_counts("kernels by (name, stream)",
                        collections.Counter((k["name"], k["tid"]) for k in kernels), expected)
    expect_equal_counts(
        "kernels by (name, stream, op, step, in a graph)",
        collections.Counter((k["name"], k["tid"], k["args"].get("op"), k["args"].get("step"),
                             k["args"].get("graph id", 0) != 0) for k in kernels),
        detailed)
    for kernel in kernels:
        if kernel["args"].get("stream") != kernel["tid"]:
            fail(f"kernel {kernel['name']} on row {kernel['tid']} has args.stream "
                 f"{kernel['args'].get('stream')}")


def check_copies_and_memsets(events, pid, manifest):
    expected = collections.Counter()
    for l in manifest["launches"]:
        if l["kind"] in ("memcpy", "memset"):
            expected[(l["kind"], l["name"], l["stream"], l["bytes"], l["op"], l["step"])] += l["count"]
    actual = collections.Counter()
    for event in events:
        if event.get("ph") != "X" or event["pid"] != pid:
            continue
        args = event["args"]
        if event.get("cat") == "gpu_memcpy":
            actual[("memcpy", args.get("kind"), event["tid"], args.get("bytes"), args.get("op"),
                    args.get("step"))] += 1
        elif event.get("cat") == "gpu_memset":
            actual[("memset", "memset", event["tid"], args.get("bytes"), args.get("op"),
                    args.get("step"))] += 1
    expect_equal_counts("copies and memsets by (kind, direction, stream, bytes, op, step)", actual,
                        expected)


def check_flows(events, pid, manifest):
    """Every launch call has an ac2g flow: "s" on the call, "f" on its first GPU activity; the call
    starts no later than that work. The call is cuda_runtime or, for cuLaunchKernel, cuda_driver."""
    activities = collections.defaultdict(list)
    for event in events:
        if event.get("ph") == "X" and event["pid"] == pid \
                and event.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            activities[event["args"]["correlation"]].append(event)
    # A runtime call may make driver calls of the same correlation: the outermost starts first.
    calls = collections.defaultdict(list)
    for event in events:
        if event.get("ph") == "X" and event.get("cat") in ("cuda_runtime", "cuda_driver"):
            calls[event["args"]["correlation"]].append(event)
    starts = collections.defaultdict(list)
    finishes = collections.defaultdict(list)
    for event in events:
        if event.get("cat") == "ac2g":
            (starts if event["ph"] == "s" else finishes)[event["id"]].append(event)

    apis = collections.Counter()
    for correlation, work in activities.items():
        first = min(work, key=lambda e: e["ts"])
        if not calls[correlation]:
            fail(f"{first['name']} (correlation {correlation}) has no API call")
        call = min(calls[correlation], key=lambda e: e["ts"])
        apis[call["name"]] += 1
        if call["cat"] != ("cuda_runtime" if call["name"].startswith("cuda") else "cuda_driver"):
            fail(f"{call['name']} has category {call['cat']}")
        if call["ts"] > first["ts"] + US_TOLERANCE:
            fail(f"{call['name']} at {call['ts']} starts after its work {first['name']} at {first['ts']}")
        if len(starts[correlation]) != 1 or len(finishes[correlation]) != 1:
            fail(f"correlation {correlation} ({call['name']}): {len(starts[correlation])} flow starts "
                 f"and {len(finishes[correlation])} flow ends, expected one of each")
        start, finish = starts[correlation][0], finishes[correlation][0]
        if (start["pid"], start["tid"]) != (call["pid"], call["tid"]) or \
                not call["ts"] - US_TOLERANCE <= start["ts"] <= call["ts"] + call["dur"] + US_TOLERANCE:
            fail(f"the flow of {call['name']} (correlation {correlation}) does not start on the call")
        if (finish["pid"], finish["tid"]) != (first["pid"], first["tid"]) or finish.get("bp") != "e" \
                or abs(finish["ts"] - first["ts"]) > US_TOLERANCE:
            fail(f"the flow of {call['name']} (correlation {correlation}) does not end on "
                 f"{first['name']} with bp 'e': {finish}")
        if start["ts"] > finish["ts"]:
            fail(f"the flow of {call['name']} (correlation {correlation}) goes back in time")

    # Launch calls by function, whatever their version suffix ("_v7000"); a graph launch is one
    # call for the graph's kernels.
    expected = collections.Counter()
    graph_launches = set()
    for l in manifest["launches"]:
        if l["kind"] == "graph":
            graph_launches.add((l["op"], l["step"]))
        else:
            expected[l["api"]] += l["count"]
    expected["cudaGraphLaunch"] += len(graph_launches)
    for api, count in expected.items():
        found = sum(n for name, n in apis.items() if name.startswith(api))
        if found != count:
            fail(f"{found} {api} calls launched GPU work, expected {count} (calls: {dict(apis)})")


def check_step_rows(events, pid, manifest):
    spans = {(e["tid"], e["name"]) for e in events
             if e.get("ph") == "X" and e["pid"] == pid and e.get("cat") == "gpu_user_annotation"}
    for l in manifest["launches"]:
        if (l["stream"], f"step {l['step']}") not in spans:
            fail(f"no 'step {l['step']}' span on stream {l['stream']}")


def check_json(args, manifest, trace_path):
    with open(trace_path, encoding="utf-8") as file:
        trace = json.load(file)
    check_gpu_summary(trace)
    events = trace["traceEvents"]
    pid = gpu_pid(events, manifest["device"])
    if pid != manifest["device"]:
        fail(f"GPU {manifest['device']} has pid {pid}, expected its device id")
    setup = []
    if args.launcher != "direct":
        # The preload's session also sees the program's setup before its first step (a memset of
        # the weights), which the manifest, written by the example's own steps, does not list.
        setup = [e for e in events if e.get("ph") == "X" and e.get("pid") == pid and "step" not in
                 e.get("args", {}) and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        events = [e for e in events if not any(e is s for s in setup)]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    if any(k["pid"] != pid for k in kernels):
        fail("kernels outside the GPU's process")
    manifest = translate_streams(
        manifest, [(k["name"], k["args"].get("op"), k["tid"]) for k in kernels])
    check_rows(events, pid, manifest)
    check_kernels(kernels, manifest)
    check_copies_and_memsets(events, pid, manifest)
    check_flows(events, pid, manifest)
    check_step_rows(events, pid, manifest)
    print(f"PASS: {len(kernels)} kernels, flows, copies, memsets, graphs and steps as launched"
          + (f"; {len(setup)} GPU activities of the program's setup, before its steps" if setup else ""))


# ---- TensorFlow RunMetadata (.pb) -------------------------------------------------------------

def label_op(label):
    """The op timeline.py reads from a GPU label: between "@@" and the next "#" (or the end)."""
    if "@@" not in label:
        return None
    return label.split("@@", 1)[1].split("#", 1)[0]


def check_pb(args, manifest, trace_path):
    dump = subprocess.run([args.dump_step_stats, trace_path], capture_output=True, text=True,
                          timeout=120)
    if dump.returncode != 0:
        fail(f"reading {trace_path}: {dump.stderr.strip()}")
    devices = {d["device"]: d["nodes"] for d in json.loads(dump.stdout)["devices"]}
    prefix = f"/device:GPU:{manifest['device']}"
    observed = []
    for device, nodes in devices.items():
        match = re.fullmatch(re.escape(prefix) + r"/stream:(\d+)", device)
        for node in nodes if match else []:
            label = node["timeline_label"]
            observed.append((label.split(" ", 1)[0], label_op(label), int(match[1])))
    manifest = translate_streams(manifest, observed)
    launches = kernel_launches(manifest)

    def kernels_on(device):
        if device not in devices:
            fail(f"no device {device} in the StepStats (devices: {sorted(devices)})")
        found = collections.Counter()
        for node in devices[device]:
            kernel = node["timeline_label"].split(" ", 1)[0]
            if kernel in {l["name"] for l in launches}:
                found[(kernel, label_op(node["timeline_label"]))] += 1
        return found

    expected_all = collections.Counter()
    for l in launches:
        expected_all[(l["name"], l["op"])] += l["count"]
    expect_equal_counts(f"kernels by (name, @@op) on {prefix}/stream:all",
                        kernels_on(f"{prefix}/stream:all"), expected_all)
    for stream in {l["stream"] for l in launches}:
        expected = collections.Counter()
        for l in launches:
            if l["stream"] == stream:
                expected[(l["name"], l["op"])] += l["count"]
        expect_equal_counts(f"kernels by (name, @@op) on {prefix}/stream:{stream}",
                            kernels_on(f"{prefix}/stream:{stream}"), expected)

    copies = [l for l in manifest["launches"] if l["kind"] == "memcpy"]
    expected = collections.Counter()
    for l in copies:
        expected[(l["name"], l["bytes"], l["op"])] += l["count"]
    memcpy_device = f"{prefix}/memcpy"
    found = collections.Counter()
    for node in devices.get(memcpy_device, []):
        label = node["timeline_label"]
        match = re.match(r"\S*(HtoD|DtoH)\S* bytes:(\d+)", label)
        if match is None:
            fail(f"memcpy label {label!r} names no direction and size")
        found[(match[1], int(match[2]), label_op(label))] += 1
    expect_equal_counts(f"copies by (direction, bytes, @@op) on {memcpy_device}", found, expected)
    print(f"PASS: {sum(expected_all.values())} kernels on stream:all and their streams, "
          f"{len(copies)} copies on memcpy, labels ending in @@<op>")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--format", choices=("json", "pb"), required=True)
    parser.add_argument("--example", required=True)
    parser.add_argument("--dump-step-stats", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--launcher", choices=("direct", "ld_preload", "tfprof_run", "injection"),
                        default="direct")
    parser.add_argument("--preload", help="libtfprof_preload.so (ld_preload, injection)")
    parser.add_argument("--tfprof", help="the tfprof command (tfprof_run)")
    parser.add_argument("--timeout", type=int, default=240, help="seconds the example may run")
    args = parser.parse_args()
    if args.launcher in ("ld_preload", "injection") and not args.preload:
        parser.error(f"--launcher {args.launcher} needs --preload")
    if args.launcher == "tfprof_run" and not args.tfprof:
        parser.error("--launcher tfprof_run needs --tfprof")

    reason = no_device_reason()
    if reason is not None:
        skip(reason)
    os.makedirs(args.work_dir, exist_ok=True)
    trace_path = os.path.join(args.work_dir, f"gpu_training_loop.{args.format}")
    if os.path.exists(trace_path):
        os.remove(trace_path)  # a trace left by an earlier run must not pass for this one
    manifest = run_example(args, trace_path, os.path.join(args.work_dir, "manifest.json"))
    (check_json if args.format == "json" else check_pb)(args, manifest, trace_path)


if __name__ == "__main__":
    main()
