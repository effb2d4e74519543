"""`tfprof summary/convert/merge` on the profiles TensorFlow's and JAX's profilers save
(`<host>.xplane.pb`, an XSpace): real public files (tests/data/real/xplane), checked event by
event against the same files decoded independently (xplane_file.py), profile directories of
several hosts, step markers, and damaged or foreign files."""

from __future__ import annotations

import collections
import decimal
import json
import pathlib
import shutil
from typing import Dict, List

import pytest

from conftest import ROOT, run_tfprof
from xplane_file import Space, decode, encode

XPLANE = ROOT / "tests" / "data" / "real" / "xplane"
SAMPLES = sorted(XPLANE.glob("*.xplane.pb"))
TF_DEMO = XPLANE / "tf_profiler_demo_gpu_multi_worker.xplane.pb"
JAX_GEMM = XPLANE / "tracelens_mi300_jax08_gemm_tw003.xplane.pb"
JAX_CONV = XPLANE / "tracelens_mi300_jax_conv_minimal.xplane.pb"

GPU_WORK = ("kernel", "gpu_memcpy", "gpu_memset")
MEMORY_STATS = ("memalloc_details", "MemFree_details", "MemoryResidency_details")


def ns(value) -> int:
    return int(decimal.Decimal(str(value)) * 1000)


def convert(exe, source: pathlib.Path, tmp_path: pathlib.Path, name: str = "out.json") -> dict:
    out = tmp_path / name
    run_tfprof(exe, "convert", str(source), "-o", str(out))
    return json.loads(out.read_text(), parse_float=decimal.Decimal)


def stream_events(space: Space):
    """(plane, line, event) for each event on a GPU's stream lines, the GPU's own records."""
    for plane in space.planes:
        if not plane.name.startswith("/device:GPU:"):
            continue
        for line in plane.lines:
            if line.name.startswith("Stream #"):
                for event in line.events:
                    yield plane, line, event


def host_events(space: Space):
    for plane in space.planes:
        if plane.name.startswith("/host:") and plane.name != "/host:metadata":
            for line in plane.lines:
                for event in line.events:
                    yield plane, line, event


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_stream_record_is_gpu_work_at_its_time(tfprof_exe, tmp_path, path):
    space = decode(path)
    expected = collections.Counter()
    for plane, line, event in stream_events(space):
        if any(key in event.stats for key in MEMORY_STATS):
            continue
        device = int(plane.name.rsplit(":", 1)[1])
        start = line.timestamp_ns + event.offset_ps // 1000
        expected[(device, line.id, event.name, start, event.duration_ps // 1000)] += 1
    assert expected, f"{path.name} has no GPU stream records"
    trace = convert(tfprof_exe, path, tmp_path)
    got = collections.Counter()
    for e in trace["traceEvents"]:
        if e["ph"] == "X" and e["cat"] in GPU_WORK:
            got[(e["args"]["device"], e["args"]["stream"], e["name"], ns(e["ts"]), ns(e["dur"]))] += 1
    assert got == expected


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_host_event_is_kept_and_launches_link_to_their_work(tfprof_exe, tmp_path, path):
    space = decode(path)
    # Step markers (_r, TraceContext) become steps, not spans.
    host = collections.Counter(event.name for _, _, event in host_events(space)
                               if "_r" not in event.stats and event.name != "TraceContext")
    trace = convert(tfprof_exe, path, tmp_path)
    gpu_pids = {e["pid"] for e in trace["traceEvents"] if e.get("cat") in GPU_WORK}
    got = collections.Counter(e["name"] for e in trace["traceEvents"]
                              if e["ph"] in ("X", "i") and e["pid"] not in gpu_pids
                              and e.get("cat") != "step")
    assert got == host
    # A launch and its work share a correlation id: one flow each (the host's id per device).
    launches = {event.stats["correlation_id"] for _, _, event in host_events(space)
                if "correlation_id" in event.stats}
    linked = sum(1 for _, _, event in stream_events(space)
                 if event.stats.get("correlation_id") in launches
                 and not any(key in event.stats for key in MEMORY_STATS))
    flows = [e for e in trace["traceEvents"] if e["ph"] == "s"]
    assert len(flows) == linked
    assert linked > 0


def test_tensorflow_2_4_gpu_profile(tfprof_exe, tmp_path):
    """The TensorFlow 2.4 demo: kernels with their launch shape and op, copies with their bytes,
    the derived lines (TensorFlow Ops, Steps) not counted again, one step from group 0."""
    space = decode(TF_DEMO)
    trace = convert(tfprof_exe, TF_DEMO, tmp_path)
    assert trace["tfprof"]["hostname"] == "34.83.195.179:6003"
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    philox = [k for k in kernels if k["name"].startswith("void tensorflow::functor::FillPhilox")]
    assert philox and all(k["args"]["grid"] == [160, 1, 1] and k["args"]["block"] == [1024, 1, 1]
                          and k["args"]["registers per thread"] == 38 for k in philox)
    copies = [e for e in trace["traceEvents"] if e.get("cat") == "gpu_memcpy"]
    decoded_bytes = sum(int(event.stats["memcpy_details"].split("size:")[1].split()[0])
                        for _, _, event in stream_events(space) if "memcpy_details" in event.stats)
    assert sum(c["args"]["bytes"] for c in copies) == decoded_bytes > 0
    derived = sum(len(line.events) for plane in space.planes for line in plane.lines
                  if plane.name.startswith("/device:GPU") and not line.name.startswith("Stream #"))
    assert derived > 0  # the file has them; the kernel count above matched without them
    steps = [e for e in trace["traceEvents"] if e.get("cat") == "step"]
    assert [s["args"]["step"] for s in steps] == [0]
    summary = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(TF_DEMO)).stdout)
    entry = summary["traces"][0]
    assert entry["format"] == "XPlane profile (XSpace)"
    assert len(entry["steps"]) == 1


def test_wall_clock_time_comes_from_the_task_environment(tfprof_exe, tmp_path):
    space = decode(JAX_GEMM)
    start = space.plane("Task Environment").stats["profile_start_time"]
    trace = convert(tfprof_exe, JAX_GEMM, tmp_path)
    header = trace["tfprof"]
    assert int(header["start_time_unix_ns"]) - int(header["start_time_monotonic_ns"]) == start
    # Without one (TensorFlow 2.4), times are only relative, and the output says so.
    old = convert(tfprof_exe, TF_DEMO, tmp_path, "old.json")
    assert "start_time_unix_ns" not in old["tfprof"]


def profile_run(root: pathlib.Path, run: str, hosts: Dict[str, pathlib.Path]) -> pathlib.Path:
    folder = root / "plugins" / "profile" / run
    folder.mkdir(parents=True)
    for host, source in hosts.items():
        shutil.copy(source, folder / f"{host}.xplane.pb")
    return folder


def test_a_log_directory_loads_its_newest_run_one_process_group_per_host(tfprof_exe, tmp_path):
    logdir = tmp_path / "logs"
    profile_run(logdir, "2026_01_01_10_00_00", {"old": TF_DEMO})
    profile_run(logdir, "2026_01_02_10_00_00", {"worker0": JAX_GEMM, "worker1": JAX_CONV})
    trace = convert(tfprof_exe, logdir, tmp_path)
    work = [e for e in trace["traceEvents"] if e.get("cat") in GPU_WORK]
    expected = sum(1 for p in (JAX_GEMM, JAX_CONV) for _, _, event in stream_events(decode(p))
                   if not any(key in event.stats for key in MEMORY_STATS))
    assert len(work) == expected
    names = {e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert "tw003" in names and any(n.startswith("chi-mi300x-013") for n in names)
    assert not any("34.83.195.179" in n for n in names)  # the older run is not read
    # A launch links only to its own host's work, though both hosts count correlation ids from 1.
    flows = [e for e in trace["traceEvents"] if e["ph"] in ("s", "f")]
    pid_of_flow = collections.defaultdict(set)
    for flow in flows:
        pid_of_flow[flow["id"]].add(flow["pid"])
    host_pids = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "process_name"}
    for pids in pid_of_flow.values():
        hosts = {host_pids[p].split(" ")[0] for p in pids}
        assert len(hosts) == 1, pids
    # The run folder itself reads the same.
    again = convert(tfprof_exe, logdir / "plugins/profile/2026_01_02_10_00_00", tmp_path, "b.json")
    assert len([e for e in again["traceEvents"] if e.get("cat") in GPU_WORK]) == expected


def keras_like_profile(step_seconds: List[float], wait_fraction: float) -> bytes:
    """A host of a Keras fit as TensorFlow 2.x records it: "train" step markers with _r=1 and
    step_num (restarting each epoch) on the main thread, an IteratorGetNext op waiting
    `wait_fraction` of each step, the rest a train function; tf.data's Iterator:: events on a
    worker thread."""
    main, worker = [], []
    at = 1_000_000
    for index, seconds in enumerate(step_seconds):
        length = int(seconds * 1e9)
        wait = int(length * wait_fraction)
        main.append(("train", at, length, {"_r": 1, "step_num": index % 3, "epoch_num": index // 3}))
        main.append(("IteratorGetNextOp::DoCompute", at + 1000, wait - 2000, {}))
        main.append(("__inference_train_function_900", at + wait, length - wait - 1000, {}))
        worker.append(("Iterator::Map", at + 500, wait, {}))
        at += length + 10_000
    return encode([("/host:CPU", 0, [(7, "python3", 5000, main), (8, "tf_data_worker/8", 5000, worker)]),
                   ("Task Environment", 0, [])],
                  hostname="trainer", plane_stats={"Task Environment": {"profile_start_time": 1_700_000_000_000_000_000}})


def test_step_markers_make_steps_and_input_waits_are_seen(tfprof_exe, tmp_path):
    path = tmp_path / "trainer.xplane.pb"
    path.write_bytes(keras_like_profile([0.02] * 6, 0.7))
    summary = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(path)).stdout)
    entry = summary["traces"][0]
    # step_num restarts each epoch (0,1,2,0,1,2): the steps are numbered by their order.
    assert [s["number"] for s in entry["steps"]] == [0, 1, 2, 3, 4, 5]
    text = run_tfprof(tfprof_exe, "summary", str(path)).stdout
    assert "Input-bound" in text, text
    trace = convert(tfprof_exe, path, tmp_path)
    assert not [e for e in trace["traceEvents"] if e.get("name") == "train"]  # markers are steps
    steps = [e for e in trace["traceEvents"] if e.get("cat") == "step"]
    assert [ns(s["dur"]) for s in steps] == [20_000_000] * 6


def test_increasing_step_numbers_are_kept(tfprof_exe, tmp_path):
    events = [("train", 1000 + i * 3_000_000, 2_000_000, {"_r": 1, "step_num": 10 + i * 2})
              for i in range(4)]
    path = tmp_path / "jax.xplane.pb"
    path.write_bytes(encode([("/host:CPU", 0, [(1, "main", 0, events)])]))
    summary = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(path)).stdout)
    assert [s["number"] for s in summary["traces"][0]["steps"]] == [10, 12, 14, 16]


def test_converted_profile_summarises_the_same(tfprof_exe, tmp_path):
    direct = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(TF_DEMO)).stdout)
    for name in ("same.json", "same.pftrace"):
        out = tmp_path / name
        run_tfprof(tfprof_exe, "convert", str(TF_DEMO), "-o", str(out))
        converted = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(out)).stdout)
        assert converted["traces"][0]["steps"] == direct["traces"][0]["steps"], name
        assert converted["traces"][0]["top_kernels"] == direct["traces"][0]["top_kernels"], name


def test_truncated_profile_is_damage_at_a_byte(tfprof_exe, tmp_path):
    cut = tmp_path / "cut.xplane.pb"
    data = JAX_GEMM.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    result = run_tfprof(tfprof_exe, "summary", str(cut), check=1)
    assert f"{cut}: byte " in result.stderr
    assert "the file is cut short: it ends inside a plane of " in result.stderr
    # The planes before the cut are kept (the GPU's come first: planes are sorted by name).
    salvaged = run_tfprof(tfprof_exe, "summary", "--json", "--salvage", str(cut))
    entry = json.loads(salvaged.stdout)["traces"][0]
    assert entry["damage"] and entry["kernel_count"] > 0


def test_foreign_files_name_the_formats_tried(tfprof_exe, tmp_path):
    named = tmp_path / "host.xplane.pb"
    named.write_text("hello, not a profile\n")
    result = run_tfprof(tfprof_exe, "summary", str(named), check=1)
    assert "not an XPlane profile" in result.stderr
    assert "byte 0" not in result.stderr
    binary = tmp_path / "mystery.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    result = run_tfprof(tfprof_exe, "summary", str(binary), check=1)
    assert "in no format tfprof reads" in result.stderr
    for tried in ("Chrome trace JSON", "Perfetto", "XPlane", "RunMetadata", "TFRecord"):
        assert tried in result.stderr
    assert "byte 0" not in result.stderr


# XProf's grouping (group_id), which XProf does again on a file without one, and the step
# markers' stats, which tfprof writes for its steps.
MODEL_STATS = {"group_id", "_r", "step_num"}


def recorded_events(space: Space) -> collections.Counter:
    """Each recorded event (not a step marker, not on a line TensorFlow derives) by its plane,
    line, name, wall-clock start and end in ns, and its other stats."""
    environment = [p.stats for p in space.planes if p.name == "Task Environment"]
    start = environment[0].get("profile_start_time", 0) if environment else 0
    events = collections.Counter()
    for plane in space.planes:
        if plane.name == "/host:metadata" or not plane.name.startswith(("/host:", "/device:")):
            continue
        for line in plane.lines:
            if plane.name.startswith("/device:") and not line.name.startswith("Stream #"):
                continue  # "Steps", "TensorFlow Ops", "XLA Ops": XProf derives them again
            for event in line.events:
                if "_r" in event.stats or event.name == "TraceContext":
                    continue
                begin = start + line.timestamp_ns + event.offset_ps // 1000
                stats = tuple(sorted((k, str(v)) for k, v in event.stats.items()
                                     if k not in MODEL_STATS))
                events[(plane.name, line.name, event.name, begin,
                        begin + event.duration_ps // 1000, stats)] += 1
    return events


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_xplane_round_trip_keeps_every_recorded_event(tfprof_exe, tmp_path, path):
    """XPlane -> tfprof -> XPlane: every event of every thread and stream at its wall-clock time,
    with its stats; the steps tfprof found as step markers of their threads."""
    out = tmp_path / "host.xplane.pb"
    run_tfprof(tfprof_exe, "convert", str(path), "-o", str(out))
    original, ours = decode(path), decode(out)
    assert recorded_events(ours) == recorded_events(original)
    summary = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(path)).stdout)
    steps = summary["traces"][0]["steps"]
    markers = [(event.stats["step_num"], event.duration_ps // 1000)
               for plane in ours.planes for line in plane.lines for event in line.events
               if event.stats.get("_r") == 1]
    assert markers == [(step["number"], step["duration_ns"]) for step in steps]
    assert ours.hostnames == original.hostnames[:1]
    # Converted again, the same bytes: nothing is lost or moved a second time.
    again = tmp_path / "again.xplane.pb"
    run_tfprof(tfprof_exe, "convert", str(out), "-o", str(again))
    assert again.read_bytes() == out.read_bytes()


def test_merge_fold_puts_tensorflow_threads_into_the_session_process(tfprof_exe, tmp_path):
    """`merge --fold SESSION PROFILE`: TensorFlow's profile of the same process joins tfprof's
    session trace: one process, the same thread one row, TensorFlow's events where the wall
    clock puts them, TensorFlow's steps used only when the session marked none."""
    from tfprof_trace_builder import TfprofTrace

    start_unix = 1_700_000_000_000_000_000
    session = (TfprofTrace(pid=4242, start_monotonic_ns=5_000, start_unix_ns=start_unix)
               .thread(7, "MainThread").span("fit", 0, 200_000_000, tid=7))
    session_path = session.write(tmp_path / "session.json")
    # TensorFlow's profile started 1 ms after the session, on the same thread (id 7).
    profile = tmp_path / "profile.xplane.pb"
    profile.write_bytes(encode(
        [("/host:CPU", 0, [(7, "python3", 0, [("train", 2_000_000, 50_000_000, {"_r": 1, "step_num": 0}),
                                              ("dense/MatMul:MatMul", 3_000_000, 1_000_000, {})]),
                           (99, "tf_data_worker/99", 0, [("Iterator::Map", 2_500_000, 400_000, {})])]),
         ("Task Environment", 0, [])],
        hostname="trainer", plane_stats={"Task Environment": {"profile_start_time": start_unix + 1_000_000}}))
    out = tmp_path / "folded.json"
    run_tfprof(tfprof_exe, "merge", "--fold", str(session_path), str(profile), "-o", str(out))
    trace = json.loads(out.read_text(), parse_float=decimal.Decimal)
    events = trace["traceEvents"]
    spans = {e["name"]: e for e in events if e["ph"] == "X" and e.get("cat") != "step"}
    assert spans["fit"]["pid"] == spans["dense/MatMul:MatMul"]["pid"] == spans["Iterator::Map"]["pid"]
    assert spans["fit"]["tid"] == spans["dense/MatMul:MatMul"]["tid"]  # one row for thread 7
    # On one clock: the op is 3 ms into the profile, which began 1 ms into the session.
    assert ns(spans["dense/MatMul:MatMul"]["ts"]) - ns(spans["fit"]["ts"]) == 4_000_000
    processes = [e for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert len(processes) == 1
    steps = [e for e in events if e.get("cat") == "step"]
    assert len(steps) == 1 and ns(steps[0]["dur"]) == 50_000_000  # TensorFlow's: the session had none
    # With the session's own steps, TensorFlow's are not counted again.
    session.step(1, 0, 100_000_000)
    session.write(session_path)
    run_tfprof(tfprof_exe, "merge", "--fold", str(session_path), str(profile), "-o", str(out))
    steps = [e for e in json.loads(out.read_text())["traceEvents"] if e.get("cat") == "step"]
    assert [s["args"]["step"] for s in steps] == [1]
    # fold needs wall-clock alignment.
    result = run_tfprof(tfprof_exe, "merge", "--fold", "--align", "start", str(session_path),
                        str(profile), "-o", str(out), check=2)
    assert "fold=on applies to merging in tfprof's layout by wall-clock time" in result.stderr


def test_report_on_a_profile_directory(tfprof_exe, tmp_path):
    logdir = tmp_path / "logs"
    profile_run(logdir, "2026_01_01_10_00_00", {"gpu-worker": TF_DEMO})
    out = tmp_path / "report.html"
    run_tfprof(tfprof_exe, "report", str(logdir), "-o", str(out))
    html = out.read_text()
    assert "XPlane profile (XSpace)" in html
    assert "34.83.195.179:6003" in html
    assert "FillPhiloxRandomKernelLaunch" in html  # a top kernel, by the GPU's own record


@pytest.mark.parametrize("output", ["x.json.gz", "x.pftrace", "x.pb", "x.tfrecord", "x.xplane.pb", "logs/"])
def test_every_output_format_keeps_the_kernels_and_steps(tfprof_exe, tmp_path, output):
    direct = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(TF_DEMO)).stdout)["traces"][0]
    out = tmp_path / output
    run_tfprof(tfprof_exe, "convert", str(TF_DEMO), "-o", str(out) + ("/" if output.endswith("/") else ""))
    again = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(out)).stdout)["traces"][0]
    assert again["kernel_count"] == direct["kernel_count"] > 0
    assert [s["number"] for s in again["steps"]] == [s["number"] for s in direct["steps"]]


REAL_TRACES = sorted(p for p in (ROOT / "tests" / "data" / "real").rglob("*")
                     if p.is_file() and (".json" in p.name or p.suffix in (".pb", ".pftrace",
                                                                            ".tfrecord")))


@pytest.mark.parametrize("path", REAL_TRACES, ids=lambda p: p.name)
def test_every_real_trace_keeps_its_gpu_work_and_steps_as_xplane(tfprof_exe, tmp_path, path):
    """Any trace tfprof reads converts to XPlane and reads back with the same kernels, launch
    calls, GPU time, steps and step time (the verdicts stand on those)."""
    out = tmp_path / "host.xplane.pb"
    run_tfprof(tfprof_exe, "convert", str(path), "-o", str(out))
    direct = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(path)).stdout)["traces"][0]
    again = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(out)).stdout)["traces"][0]
    for key in ("kernel_count", "launch_calls", "gpu_work_ns"):
        assert again[key] == direct[key], key
    assert [(s["number"], s["duration_ns"]) for s in again["steps"]] == \
        [(s["number"], s["duration_ns"]) for s in direct["steps"]]


def test_steps_that_name_no_thread_are_marked_on_the_busiest_one(tfprof_exe, tmp_path):
    """A RunMetadata's steps (one run each) name no thread: the XPlane marks them on their
    process's busiest host thread, so that they survive as steps."""
    records = tmp_path / "run.tfrecord"
    run_tfprof(tfprof_exe, "convert", str(TF_DEMO), "-o", str(records))
    out = tmp_path / "host.xplane.pb"
    result = run_tfprof(tfprof_exe, "convert", str(records), "-o", str(out))
    assert "left out" not in result.stderr
    direct = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(records)).stdout)["traces"][0]
    again = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(out)).stdout)["traces"][0]
    assert direct["steps"] and direct["step_thread"] == ""
    assert [(s["number"], s["duration_ns"]) for s in again["steps"]] == \
        [(s["number"], s["duration_ns"]) for s in direct["steps"]]
    # The thread with the most spans of the step's process carries the marker.
    space = decode(out)
    host = space.plane("/host:CPU")
    marked = [line for line in host.lines if any(e.stats.get("_r") == 1 for e in line.events)]
    assert len(marked) == 1
    busiest = max(host.lines, key=lambda line: sum(1 for e in line.events if "_r" not in e.stats))
    assert marked[0].name == busiest.name


def test_merged_ranks_keep_their_rows_apart(tfprof_exe, tmp_path):
    """Two ranks merged into one profile: XProf keys rows by line id, so each rank's GPU stream
    and thread is a line of its own, with all of its events."""
    source = ROOT / "tests" / "data" / "real" / "hta" / "amd_trace" / \
        "mi250_minitoy_train_ROCm6_2_kineto.json.gz"
    single, merged = tmp_path / "one.xplane.pb", tmp_path / "two.xplane.pb"
    run_tfprof(tfprof_exe, "convert", str(source), "-o", str(single))
    run_tfprof(tfprof_exe, "merge", str(source), str(source), "-o", str(merged))
    one, two = decode(single), decode(merged)
    for plane in two.planes:
        ids = [line.id for line in plane.lines]
        assert len(ids) == len(set(ids)), plane.name
    count = lambda space: collections.Counter(  # noqa: E731
        plane.name for plane in space.planes for line in plane.lines for _ in line.events)
    assert count(two) == {name: 2 * n for name, n in count(one).items()}
