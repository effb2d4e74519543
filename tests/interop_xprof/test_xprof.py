"""XProf (TensorBoard's Profile tab: `xprof` on PyPI) reads the XPlane profiles tfprof writes, with
its own converters (xprof.convert.raw_to_tool_data, run offline) and its own HTTP server:
  - the trace viewer's rows hold tfprof's events, row by row (tfprof's Chrome trace of the same
    session is the independent count);
  - the kernel stats list tfprof's kernels with their launch shapes, counts and times;
  - the overview page's step times are tfprof's step table (a CPU run: the steps' own times;
    a GPU run: XProf times GPU steps by the GPU work it groups under each step);
  - XPlane -> tfprof -> XPlane keeps every row XProf shows of a real JAX and TensorFlow profile;
  - `xprof --logdir` lists a tfprof log directory's run and its tools, and serves their data.

Needs TFPROF_BUILD_DIR (the tfprof command and tests/synthetic_gpu_trace of a CMake build;
scripts/test.sh passes build/test-release) and a venv with xprof (scripts/xprof-env.sh)."""

import collections
import gzip
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from xprof.convert import raw_to_tool_data

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("TFPROF_BUILD_DIR", "build/test-release")).resolve()
TFPROF = BUILD / "tfprof"
SYNTHETIC = BUILD / "tests" / "synthetic_gpu_trace"
REAL_XPLANES = sorted((ROOT / "tests" / "data" / "real" / "xplane").glob("*.xplane.pb"))
GPU_WORK = ("kernel", "gpu_memcpy", "gpu_memset")
# Rows XProf derives from a profile rather than reads: from the grouping (Steps), from tf_op and
# hlo_op stats (XLA Ops, XLA Modules), from the HLO protos of JAX's /host:metadata plane, which
# tfprof does not carry (Framework Ops, Framework Name Scope, Source code), and rows older
# TensorFlow profiles hold already derived (TensorFlow Ops, TensorFlow Name Scope).
DERIVED_FROM_HLO_METADATA = ("Framework Ops", "Framework Name Scope", "Source code")
BAKED_INTO_OLD_TENSORFLOW_FILES = ("TensorFlow Ops", "TensorFlow Name Scope")


def tfprof(*args):
    result = subprocess.run([str(TFPROF), *map(str, args)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, f"tfprof {' '.join(map(str, args))}:\n{result.stderr}"
    return result.stdout


def tool(path, name):
    """XProf's tool `name` on the XSpace at `path` (its own converters, no cache)."""
    data, _ = raw_to_tool_data.xspace_to_tool_data([str(path)], name, {"use_saved_result": False})
    assert data is not None, f"XProf made no {name} of {path}"
    return json.loads(data)


def trace_viewer_rows(path):
    """(process, thread) -> number of complete events, as XProf's trace viewer lists them."""
    events = tool(path, "trace_viewer")["traceEvents"]
    names = {}
    for event in events:
        if event.get("ph") == "M" and event["name"] in ("process_name", "thread_name"):
            names[(event["pid"], event.get("tid"), event["name"])] = event["args"]["name"]
    rows = collections.Counter()
    for event in events:
        if event.get("ph") == "X":
            rows[(names[(event["pid"], None, "process_name")],
                  names.get((event["pid"], event["tid"], "thread_name")))] += 1
    return rows


def table(tool_json, column):
    """The rows of the data table (of a tool's list of tables) that has `column`, as dicts."""
    tables = tool_json if isinstance(tool_json, list) else [tool_json]
    for candidate in tables:
        ids = [col["id"] for col in candidate.get("cols", [])]
        if column in ids:
            return [dict(zip(ids, [cell.get("v") for cell in row["c"]]))
                    for row in candidate["rows"]]
    raise AssertionError(f"no table with column {column}")


@pytest.fixture(scope="module")
def gpu_session(tmp_path_factory):
    """The synthetic GPU session (real CUPTI records) as tfprof's Chrome trace and its XPlane."""
    assert SYNTHETIC.exists(), f"no {SYNTHETIC}: build the synthetic_gpu_trace target in {BUILD}"
    directory = tmp_path_factory.mktemp("gpu")
    subprocess.run([str(SYNTHETIC), str(directory / "trace.json")], check=True, timeout=60)
    subprocess.run([str(SYNTHETIC), str(directory / "host.xplane.pb")], check=True, timeout=60)
    trace = json.loads((directory / "trace.json").read_text())
    return directory, trace


def thread_names(trace):
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "thread_name"}


def test_trace_viewer_rows_hold_tfprofs_events(gpu_session):
    directory, trace = gpu_session
    names = thread_names(trace)
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    expected = collections.Counter()
    for event in events:
        if event["cat"] in GPU_WORK:
            expected[(f"/device:GPU:{event['args']['device']}", f"Stream #{event['tid']}")] += 1
        elif event["cat"] == "gpu_user_annotation":
            # Beside the host's threads: XProf would count a device row's events as GPU time.
            expected[("/host:CPU", f"/device:GPU:0 stream {event['tid']}")] += 1
        elif event["cat"] == "step":
            expected[("/host:CPU", names[(event["pid"], event["args"]["thread"])])] += 1
        else:
            expected[("/host:CPU", names[(event["pid"], event["tid"])])] += 1
    rows = trace_viewer_rows(directory / "host.xplane.pb")
    derived = {row for row in rows if row[0].startswith("/device:") and
               not row[1].startswith("Stream #")}
    assert {row: rows[row] for row in rows if row not in derived} == expected
    # XProf grouped the work by tfprof's steps: a Steps row of three, on the GPU.
    assert rows[("/device:GPU:0", "Steps")] == 3


def test_kernel_stats_are_tfprofs_kernels(gpu_session):
    directory, trace = gpu_session
    expected = {}
    for event in trace["traceEvents"]:
        if event.get("cat") != "kernel":
            continue
        args = event["args"]
        key = (event["name"], args["registers per thread"], args["shared memory"],
               ",".join(map(str, args["block"])), ",".join(map(str, args["grid"])), args["op"])
        count, total = expected.get(key, (0, 0.0))
        expected[key] = (count + 1, total + event["dur"])
    rows = table(tool(directory / "host.xplane.pb", "kernel_stats"), "kernel_name")
    got = {(r["kernel_name"], r["registers_per_thread"], r["shmem_bytes"], r["block_dim"],
            r["grid_dim"], r["op_name"]): (r["occurrences"], r["total_duration_us"]) for r in rows}
    assert got.keys() == expected.keys()
    for key, (count, total_us) in expected.items():
        assert got[key][0] == count
        assert got[key][1] == pytest.approx(total_us, abs=1e-6)
    # tfprof's own kernel table agrees on the kernels and their total time.
    summary = json.loads(tfprof("summary", "--json", directory / "trace.json"))["traces"][0]
    ours = {k["name"]: (k["count"], k["total_ns"] / 1000) for k in summary["top_kernels"]}
    by_name = collections.Counter()
    for (name, *_), (count, total_us) in expected.items():
        by_name[name] += count
    assert {name: count for name, (count, _) in ours.items()} == dict(by_name)


def test_gpu_steps_are_the_gpu_work_of_tfprofs_steps(gpu_session):
    """XProf times a GPU profile's step by the device work grouped under it: for each of tfprof's
    steps, the span from the first to the last GPU work its launches made."""
    directory, trace = gpu_session
    steps = sorted((e for e in trace["traceEvents"] if e.get("cat") == "step"),
                   key=lambda e: e["ts"])
    work = [e for e in trace["traceEvents"] if e.get("cat") in GPU_WORK]
    expected = []
    for step in steps:
        mine = [e for e in work if e["args"].get("step") == step["args"]["step"]]
        expected.append(max(e["ts"] + e["dur"] for e in mine) - min(e["ts"] for e in mine))
    rows = table(tool(directory / "host.xplane.pb", "input_pipeline_analyzer"), "stepTimeMs")
    assert [r["stepTimeMs"] * 1000 for r in rows] == pytest.approx(expected, abs=1e-6)


def pytorch_cpu_trace(path, durations_ms):
    """A PyTorch-profiler-shaped CPU trace: ProfilerStep#N annotations, each holding an op."""
    events, at = [], 1000.0
    for number, duration in enumerate(durations_ms):
        step_us = duration * 1000
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{number}",
                       "pid": 7, "tid": 7, "ts": at, "dur": step_us})
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7,
                       "ts": at + 10, "dur": step_us / 2})
        at += step_us + 50
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_cpu_step_times_are_tfprofs_step_table(tmp_path):
    source = pytorch_cpu_trace(tmp_path / "cpu.json", [12.5, 8.25, 9.0, 30.0, 7.75, 8.5, 11.0, 9.5])
    tfprof("convert", source, "-o", tmp_path / "host.xplane.pb")
    ours = json.loads(tfprof("summary", "--json", source))["traces"][0]["steps"]
    assert len(ours) == 8
    rows = table(tool(tmp_path / "host.xplane.pb", "input_pipeline_analyzer"), "stepTimeMs")
    # XProf leaves out the first and the last step of more than five (they may be partial).
    assert [r["stepTimeMs"] for r in rows] == pytest.approx(
        [step["duration_ns"] / 1e6 for step in ours[1:-1]], abs=1e-9)
    overview = tool(tmp_path / "host.xplane.pb", "overview_page")
    assert len(table(overview, "stepTimeMs")) == 6


@pytest.mark.parametrize("path", REAL_XPLANES, ids=lambda p: p.name)
def test_round_trip_keeps_every_row_xprof_shows(tmp_path, path):
    (tmp_path / "original").mkdir()
    original = tmp_path / "original" / "host.xplane.pb"
    shutil.copy(path, original)
    (tmp_path / "ours").mkdir()
    ours = tmp_path / "ours" / "host.xplane.pb"
    tfprof("convert", original, "-o", ours)
    before, after = trace_viewer_rows(original), trace_viewer_rows(ours)
    steps = json.loads(tfprof("summary", "--json", original))["traces"][0]["steps"]
    step_thread_rows = collections.Counter()
    for row, count in after.items():
        if row not in before and row[1] in DERIVED_FROM_HLO_METADATA:
            raise AssertionError(f"{row} was not in the original")
    for row in set(before) | set(after):
        if row[1].startswith(DERIVED_FROM_HLO_METADATA + BAKED_INTO_OLD_TENSORFLOW_FILES):
            continue
        if before[row] != after[row]:
            step_thread_rows[row] = after[row] - before[row]
    # Where they differ, it is tfprof's steps, written as markers of the thread that ran them
    # (a TensorFlow profile's steps come from its function calls, which stay as they were).
    assert sum(step_thread_rows.values()) in (0, len(steps))
    assert all(delta > 0 for delta in step_thread_rows.values())


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(port, route):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{route}", timeout=30) as response:
        body = response.read()
        if response.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        return json.loads(body)


def test_the_xprof_server_lists_the_run_and_serves_its_tools(gpu_session, tmp_path):
    directory, _ = gpu_session
    tfprof("convert", directory / "trace.json", "-o", f"{tmp_path}/logs/")
    [profile] = (tmp_path / "logs" / "plugins" / "profile").glob("*/*.xplane.pb")
    run, host = profile.parent.name, profile.name[:-len(".xplane.pb")]
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "xprof.server", "--logdir",
                               str(tmp_path / "logs"), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                runs = get(port, "/runs")
                break
            except OSError:
                assert server.poll() is None, "xprof's server exited"
                assert time.monotonic() < deadline, "xprof's server did not answer in 120 s"
                time.sleep(0.5)
        assert runs == [run]
        tools = get(port, f"/run_tools?run={run}")
        for name in ("trace_viewer@", "overview_page", "kernel_stats", "framework_op_stats"):
            assert name in tools
        assert get(port, f"/hosts?run={run}&tag=kernel_stats") == [{"hostname": host}]
        kernels = table(get(port, f"/data?run={run}&tag=kernel_stats&host={host}"), "kernel_name")
        assert sorted({k["kernel_name"] for k in kernels}) == [
            "gemm(float const*, float const*, float*, int)", "relu(float*, int)"]
    finally:
        server.terminate()
        server.wait(timeout=30)
