"""A folder torch.profiler.tensorboard_trace_handler(DIR) wrote, given to the `tfprof` command as
it is: with one trace in it, that trace is read (the same figures as naming the file); with
several, each a worker or a profiling window of its own, they are named and nothing is guessed."""

from __future__ import annotations

import json
import pathlib
import shutil

from conftest import ROOT, run_tfprof

SAMPLES = ROOT / "tests/data/real/kineto/tb_plugin/samples/resnet50_num_workers_0"


def summary_json(exe: pathlib.Path, path: pathlib.Path) -> dict:
    (trace,) = json.loads(run_tfprof(exe, "summary", "--json", str(path)).stdout)["traces"]
    return trace


def test_a_folder_of_one_trace_reads_as_that_trace(tfprof_exe, tmp_path):
    source = sorted(SAMPLES.glob("*.pt.trace*.json.gz"))[0]
    folder = tmp_path / "log" / "resnet50"
    folder.mkdir(parents=True)
    shutil.copy(source, folder / "worker0.1623143089861.pt.trace.json.gz")
    (folder / "notes.txt").write_text("not a trace\n")  # other files are no traces
    by_folder, by_file = summary_json(tfprof_exe, folder), summary_json(tfprof_exe, source)
    assert by_folder["path"].endswith("worker0.1623143089861.pt.trace.json.gz")
    for figures in (by_folder, by_file):
        figures.pop("path")
    assert by_folder == by_file
    assert [step["number"] for step in by_folder["steps"]] == [5]
    converted = tmp_path / "converted.json"
    run_tfprof(tfprof_exe, "convert", str(folder), "-o", str(converted))
    events = json.loads(converted.read_text())["traceEvents"]
    kernels = sum(1 for event in events if str(event.get("cat", "")).lower() == "kernel")
    assert kernels == by_file["kernel_count"] > 0


def test_a_folder_of_several_traces_names_them(tfprof_exe):
    traces = sorted(path.name for path in SAMPLES.glob("*.pt.trace*.json.gz"))
    assert len(traces) == 2
    result = run_tfprof(tfprof_exe, "summary", str(SAMPLES), check=1)
    assert "holds 2 PyTorch profiler traces" in result.stderr
    for name in traces:
        assert name in result.stderr
    assert "tfprof merge" in result.stderr


def test_a_folder_with_no_trace_still_says_so(tfprof_exe, tmp_path):
    (tmp_path / "readme.json").write_text("{}")
    result = run_tfprof(tfprof_exe, "summary", str(tmp_path), check=1)
    assert "no TensorBoard event file" in result.stderr
