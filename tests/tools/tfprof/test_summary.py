"""`tfprof summary`: figures checked against traces with known answers, the example's
input-bound switch, every input format, bad input and the command line."""

from __future__ import annotations

import gzip
import json
import pathlib
import subprocess

import pytest

from conftest import ROOT, build_dir, run_tfprof
from tfprof_trace_builder import MS, US, TfprofTrace, input_bound_trace


def summary_json(exe, *paths, extra=()):
    result = run_tfprof(exe, "summary", "--json", *extra, *[str(p) for p in paths])
    return json.loads(result.stdout)["traces"]


def test_a_step_with_40_percent_gpu_idle_waiting_for_input_is_input_bound(tfprof_exe, tmp_path):
    path = input_bound_trace().write(tmp_path / "input_bound.json")
    [trace] = summary_json(tfprof_exe, path)
    assert trace["format"] == "tfprof Chrome trace"
    assert [step["number"] for step in trace["steps"]] == [1, 2, 3, 4, 5]
    for step in trace["steps"]:
        assert step["duration_ns"] == 100 * MS
        assert step["input_wait_ns"] == 40 * MS
        assert step["gpu_compute_ns"] == 50 * MS
        assert step["memcpy_ns"] == 5 * MS
        assert step["host_compute_ns"] == 5 * MS
        assert step["gpu_idle_ns"] == 45 * MS
        assert step["longest_input_op"] == "IteratorGetNext"
    finding = trace["findings"][0]
    assert finding["kind"] == "input_bound"
    assert finding["title"] == "Input-bound: the GPU waits for input 40% of step time"
    assert "IteratorGetNext" in finding["evidence"]
    assert any("prefetch" in r for r in finding["recommendations"])
    assert any("TFRecord" in r for r in finding["recommendations"])
    assert trace["top_kernels"][0]["name"] == "volta_sgemm_128x64_nn"
    assert trace["copies"] == [{"kind": "HtoD", "count": 5, "bytes": 500_000_000,
                                "total_ns": 25 * MS, "gigabytes_per_second": 20}]
    assert trace["devices"][0]["utilization"] == pytest.approx(0.55)
    assert trace["wall_offset_ns"] == 1_700_000_000_000_000_000

    text = run_tfprof(tfprof_exe, "summary", str(path)).stdout
    assert "Input-bound: the GPU waits for input 40% of step time" in text
    assert "What to do:" in text
    assert "volta_sgemm_128x64_nn" in text
    assert "Steps: 5, mean 100.000 ms" in text


def test_launch_bound_copy_bound_and_sync_stalls_are_told_apart(tfprof_exe, tmp_path):
    launch = TfprofTrace().thread(1, "MainThread").step(0, 0, 10 * MS)
    for i in range(200):
        b = i * 50 * US
        launch.span("cudaLaunchKernel", b, b + 40 * US, cat="cuda_runtime")
        launch.kernel("elementwise_add", b + 40 * US, b + 45 * US, correlation=i)
    copy = (TfprofTrace().thread(1, "MainThread").step(0, 0, 10 * MS)
            .memcpy("HtoD", 0, 6 * MS, 6_000_000).kernel("conv", 6 * MS, 10 * MS))
    sync = (TfprofTrace().thread(1, "MainThread").step(0, 0, 10 * MS).kernel("conv", 0, 5 * MS)
            .span("cudaStreamSynchronize", 1 * MS, 5 * MS, cat="cuda_runtime")
            .span("optimizer", 5 * MS, 10 * MS))
    traces = summary_json(tfprof_exe, launch.write(tmp_path / "launch.json"),
                          copy.write(tmp_path / "copy.json"), sync.write(tmp_path / "sync.json"))
    assert [t["findings"][0]["kind"] for t in traces] == ["launch_bound", "copy_bound", "sync_stall"]
    assert traces[0]["step_total"]["launches"] == 200
    assert traces[2]["step_total"]["sync_ns"] == 4 * MS


def test_dropped_events_are_reported_first(tfprof_exe, tmp_path):
    path = input_bound_trace(dropped_events=7, gpu_records_dropped=3).write(tmp_path / "lossy.json")
    [trace] = summary_json(tfprof_exe, path)
    assert trace["losses"]["dropped_events"] == 7
    assert trace["losses"]["gpu_records_dropped"] == 3
    assert trace["findings"][0]["kind"] == "data_loss"
    assert "Dropped events: 7 host events, 3 GPU records." in run_tfprof(
        tfprof_exe, "summary", str(path)).stdout


def test_records_lost_for_memory_and_outside_the_kept_window_are_reported(tfprof_exe, tmp_path):
    original = input_bound_trace(memory_dropped_events=5, discarded_events=40)
    path = original.write(tmp_path / "window.json")
    pb = tmp_path / "window.pb"
    assert run_tfprof(tfprof_exe, "convert", str(path), "-o", str(pb)).returncode == 0
    for trace in summary_json(tfprof_exe, path, pb):  # the TensorFlow format keeps both
        assert trace["losses"]["memory_dropped_events"] == 5
        assert trace["losses"]["discarded_events"] == 40
        assert trace["findings"][0]["kind"] == "data_loss"
        assert "5 records were lost for memory" in trace["findings"][0]["evidence"]
    text = run_tfprof(tfprof_exe, "summary", str(path)).stdout
    assert "Lost for memory: 5 records" in text
    assert "Outside the kept window: 40 records" in text


def example_binary() -> pathlib.Path:
    exe = build_dir() / "examples" / "training_loop"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: build the examples")
    return exe


def input_share(exe, trace_path):
    """The median over steps of the share of step time waiting for input: a few steps slowed by
    the scheduler on a busy machine move the total, not the median."""
    [trace] = summary_json(exe, trace_path)
    shares = sorted(s["input_wait_ns"] / s["duration_ns"] for s in trace["steps"])
    return trace, shares[len(shares) // 2]


def test_the_example_with_slow_input_is_diagnosed_input_bound(tfprof_exe, tmp_path):
    slow = tmp_path / "slow.json"
    fast = tmp_path / "fast.json"
    subprocess.run([str(example_binary()), "--slow-input", str(slow), "30"], check=True,
                   capture_output=True)
    subprocess.run([str(example_binary()), str(fast), "30"], check=True, capture_output=True)
    slow_trace, slow_share = input_share(tfprof_exe, slow)
    _, fast_share = input_share(tfprof_exe, fast)
    assert len(slow_trace["steps"]) == 30
    assert slow_share > 0.4, slow_share  # the compute thread waits in WaitForInput
    assert slow_share > fast_share + 0.2, (slow_share, fast_share)
    finding = slow_trace["findings"][0]
    assert finding["kind"] == "input_bound"
    assert finding["title"].endswith("of step time is spent waiting for input")
    text = run_tfprof(tfprof_exe, "summary", str(slow)).stdout
    assert "Input-bound" in text and "num_parallel_calls" in text


def test_pytorch_profiler_traces_are_read(tfprof_exe, tmp_path):
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 10, "tid": 10,
         "ts": 1000.0, "dur": 1000.0},
        {"ph": "X", "cat": "user_annotation",
         "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "pid": 10,
         "tid": 10, "ts": 1000.0, "dur": 600.0},
        {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 10, "tid": 10,
         "ts": 1600.0, "dur": 300.0},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10,
         "ts": 1610.0, "dur": 5.0, "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "ampere_sgemm", "pid": 0, "tid": 7,
         "ts": 1620.0, "dur": 300.0, "args": {"device": 0, "stream": 7, "correlation": 1}},
    ]
    path = tmp_path / "torch.json"
    path.write_text(json.dumps({"schemaVersion": 1, "deviceProperties": [],
                                "traceEvents": events}))
    [trace] = summary_json(tfprof_exe, path)
    assert trace["format"] == "PyTorch profiler Chrome trace"
    assert [s["number"] for s in trace["steps"]] == [3]
    step = trace["steps"][0]
    assert step["duration_ns"] == 1000 * US
    assert step["input_wait_ns"] == 600 * US  # GPU idle, only the DataLoader on the host
    assert step["gpu_compute_ns"] == 300 * US
    assert trace["findings"][0]["kind"] == "input_bound"


def test_tensorflow_formats_written_by_tfprof_are_read(tfprof_exe, tmp_path):
    tfprof = pytest.importorskip("tfprof")
    for suffix in (".pb", ".tfrecord", ".json.gz"):
        path = tmp_path / f"trace{suffix}"
        with tfprof.trace(str(path)):
            for step in range(3):
                with tfprof.step(step):
                    with tfprof.span("IteratorGetNext"):
                        pass
                    with tfprof.span("train"):
                        sum(range(20000))
        [trace] = summary_json(tfprof_exe, path)
        assert trace["top_ops_by_total"], suffix
        names = {op["name"] for op in trace["top_ops_by_total"]}
        assert {"IteratorGetNext", "train"} <= names, (suffix, names)
        if suffix != ".pb":  # a single RunMetadata holds one run
            assert len(trace["steps"]) == 3, suffix


def test_several_files_one_missing_exits_1_and_still_summarizes_the_others(tfprof_exe, tmp_path):
    good = input_bound_trace().write(tmp_path / "good.json")
    missing = tmp_path / "missing.json"
    result = run_tfprof(tfprof_exe, "summary", str(good), str(missing), check=1)
    assert f"== {good} ==" in result.stdout
    assert str(missing) in result.stderr
    # --json says which file could not be read and why, beside the ones that were.
    result = run_tfprof(tfprof_exe, "summary", "--json", str(good), str(missing), check=1)
    document = json.loads(result.stdout)
    assert [trace["path"] for trace in document["traces"]] == [str(good)]
    assert document["traces"][0]["damage"] is None
    [error] = document["errors"]
    assert error["path"] == str(missing) and "no such file" in error["error"]


def test_truncated_input_is_recovered_to_its_last_whole_step(tfprof_exe, tmp_path):
    # What a writer killed mid-write leaves: no --salvage needed, one warning, whole steps only.
    text = json.dumps(input_bound_trace().document())
    truncated = tmp_path / "truncated.json"
    truncated.write_text(text[: len(text) // 2])
    size = truncated.stat().st_size
    result = run_tfprof(tfprof_exe, "summary", str(truncated))
    [warning] = [line for line in result.stderr.splitlines() if "warning:" in line]
    assert warning.startswith(f"tfprof summary: warning: {truncated}: the file ends at byte {size} (")
    assert "recovered to its last whole step: kept " in warning
    assert f"Recovered: {truncated}: the file ends at byte {size}" in result.stdout
    document = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(truncated)).stdout)
    [trace] = document["traces"]
    assert trace["damage"] is None and document["errors"] == []
    cut = trace["cut"]
    assert cut["file"] == str(truncated) and cut["file_bytes"] == size
    assert 0 < len(trace["steps"]) < 10
    assert cut["last_whole_step"] == trace["steps"][-1]["number"]
    assert cut["steps_dropped"] >= 1 and cut["first_dropped_step"] == cut["last_whole_step"] + 1
    assert cut["events_kept"] == trace["activities"]
    assert cut["warning"] in result.stderr

    gz = tmp_path / "truncated.json.gz"
    gz.write_bytes(gzip.compress(text.encode())[:200])
    result = run_tfprof(tfprof_exe, "summary", str(gz))
    assert f"warning: {gz}: the file ends at byte 200 (inside the gzip stream" in result.stderr


def test_damage_inside_a_file_is_refused_and_salvage_reads_before_it(tfprof_exe, tmp_path):
    text = json.dumps(input_bound_trace().document())
    damaged = tmp_path / "damaged.json"
    at = text.index(",", len(text) // 2) + 1  # no JSON value starts with '@'
    damaged.write_text(text[:at] + "@@@" + text[at:])
    result = run_tfprof(tfprof_exe, "summary", str(damaged), check=1)
    assert str(damaged) in result.stderr and "byte" in result.stderr, result.stderr
    salvaged = run_tfprof(tfprof_exe, "summary", "--salvage", "--json", str(damaged))
    [trace] = json.loads(salvaged.stdout)["traces"]
    assert 0 < len(trace["steps"]) <= 5
    assert "salvaged" in salvaged.stderr
    # The output itself says it was salvaged, and from what damage.
    assert str(damaged) in trace["damage"] and "byte" in trace["damage"]
    assert trace["cut"] is None
    assert json.loads(salvaged.stdout)["errors"] == []
    text = run_tfprof(tfprof_exe, "summary", "--salvage", str(damaged)).stdout
    assert "Salvaged: only what precedes the damage is summarised" in text

    png = tmp_path / "picture.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    result = run_tfprof(tfprof_exe, "summary", str(png), check=1)
    assert str(png) in result.stderr and "not a trace" in result.stderr

    empty = tmp_path / "empty.json"
    empty.write_text("")
    assert str(empty) in run_tfprof(tfprof_exe, "summary", str(empty), check=1).stderr


def test_command_line(tfprof_exe, tmp_path):
    assert "usage: tfprof summary" in run_tfprof(tfprof_exe, "summary", "--help").stdout
    assert "no trace file" in run_tfprof(tfprof_exe, "summary", check=2).stderr
    assert "unknown option '--bogus'" in run_tfprof(
        tfprof_exe, "summary", "--bogus", "x.json", check=2).stderr
    assert "--top" in run_tfprof(tfprof_exe, "summary", "--top", "many", "x.json",
                                 check=2).stderr
    for command in ("run", "summary", "report", "convert", "merge"):
        result = run_tfprof(tfprof_exe, command, "--help")
        assert f"tfprof {command}" in result.stdout, command
    assert "summary" in run_tfprof(tfprof_exe, "--help").stdout


def test_progress_only_on_a_terminal(tfprof_exe, tmp_path):
    path = input_bound_trace().write(tmp_path / "t.json")
    piped = run_tfprof(tfprof_exe, "summary", str(path))
    assert piped.stderr == ""
    forced = run_tfprof(tfprof_exe, "summary", str(path), env={"TFPROF_PROGRESS": "1"})
    # text mode turns the carriage returns into newlines; the erase-line code stays
    assert "reading" in forced.stderr and "\x1b[K" in forced.stderr


def test_input_ops_option_replaces_the_patterns(tfprof_exe, tmp_path):
    trace = (TfprofTrace().thread(1, "MainThread").step(0, 0, 10 * MS)
             .span("IteratorGetNext", 0, 3 * MS).span("decode_jpeg", 3 * MS, 5 * MS)
             .kernel("conv", 5 * MS, 10 * MS))
    path = trace.write(tmp_path / "t.json")
    [default] = summary_json(tfprof_exe, path)
    [custom] = summary_json(tfprof_exe, path, extra=("--input-ops", "decode_*"))
    assert default["step_total"]["input_wait_ns"] == 3 * MS
    assert custom["step_total"]["input_wait_ns"] == 2 * MS


def test_events_of_unknown_categories_are_named_not_dropped_silently(tfprof_exe, tmp_path):
    # A Chrome trace with categories no known profiler writes: they are read as host ops and
    # the summary lists them with their counts, in the text and the JSON.
    events = [{"ph": "X", "cat": "my_engine", "name": f"op{i}", "pid": 1, "tid": 1,
               "ts": 10 * i, "dur": 5} for i in range(3)]
    events.append({"ph": "X", "cat": "vendor.scheduler", "name": "tick", "pid": 1, "tid": 2,
                   "ts": 0, "dur": 30})
    path = tmp_path / "foreign.json"
    path.write_text(json.dumps({"traceEvents": events}))
    (trace,) = summary_json(tfprof_exe, path)
    assert trace["unknown_categories"] == [{"category": "my_engine", "events": 3},
                                           {"category": "vendor.scheduler", "events": 1}]
    assert trace["activities"] == 4
    text = run_tfprof(tfprof_exe, "summary", str(path)).stdout
    assert 'Unknown categories, read as host ops: "my_engine" (3) "vendor.scheduler" (1).' in text
