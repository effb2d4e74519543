"""One convert/merge engine: `tfprof convert`/`merge` (the command), tfprof.convert()/merge()
(Python) and prof_convert()/prof_merge() (C, called through ctypes on the library the Python
package carries) write byte-identical files for the same inputs and options, for every input
format and in both layouts. Also: what the engine newly allows (Chrome JSON into prof_convert,
merges into TensorFlow's formats) is checked on its content."""

from __future__ import annotations

import ctypes
import json
import pathlib
import subprocess
import sys
from typing import Dict, List, Sequence

import pytest

from conftest import run_tfprof
from test_convert import load, pytorch_trace, spans, steps, training_trace
from tfprof_trace_builder import MS

tfprof = pytest.importorskip("tfprof")

UNIX = 1_700_000_000_000_000_000


def step_stats_inputs(tmp_path: pathlib.Path) -> Dict[str, pathlib.Path]:
    """The same library session as tfprof's Chrome JSON, RunMetadata, TFRecord and event file."""
    chrome = training_trace().write(tmp_path / "trace.json")
    paths = {"json": chrome, "pytorch": pytorch_trace(tmp_path / "pytorch.json")}
    for name, output in (("pb", "run.pb"), ("tfrecord", "run.tfrecord"), ("logs", "logs/")):
        run_tfprof_convert(chrome, tmp_path / output)
        paths[name] = tmp_path / output.rstrip("/")
    return paths


def run_tfprof_convert(source: pathlib.Path, target: pathlib.Path) -> None:
    subprocess.run([sys.executable, "-c", "import sys, tfprof; tfprof.convert(sys.argv[1], sys.argv[2])",
                    str(source), str(target) + ("/" if target.suffix == "" else "")], check=True, timeout=120)


def c_library() -> ctypes.CDLL:
    library = ctypes.CDLL(tfprof.library_path())
    library.prof_convert.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
    library.prof_merge.argtypes = [ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.c_char_p,
                                   ctypes.c_char_p]
    library.prof_last_error.restype = ctypes.c_char_p
    return library


def c_convert(inputs: Sequence[pathlib.Path], output: pathlib.Path, options: str, merging: bool) -> None:
    library = c_library()
    encoded = [str(path).encode() for path in inputs]
    if merging:
        array = (ctypes.c_char_p * len(encoded))(*encoded)
        code = library.prof_merge(array, len(encoded), str(output).encode(), options.encode())
    else:
        code = library.prof_convert(encoded[0], str(output).encode(), options.encode())
    assert code == 0, library.prof_last_error().decode()


# Option string for C, keyword arguments for Python, flags for the command: the same options.
OPTION_SETS = [
    ("", {}, []),
    ("layout=timeline", {"layout": "timeline"}, ["--layout", "timeline"]),
    ("layout=timeline,rows=lanes,show_memory=on,show_dataflow=off",
     {"layout": "timeline", "rows": "lanes", "show_memory": True, "show_dataflow": False},
     ["--layout=timeline", "--rows", "lanes", "--show-memory", "--no-dataflow"]),
]


@pytest.mark.parametrize("input_name", ["json", "pytorch", "pb", "tfrecord", "logs"])
@pytest.mark.parametrize("option_set", range(len(OPTION_SETS)))
def test_convert_is_byte_identical_from_the_command_python_and_c(tfprof_exe, tmp_path, input_name, option_set):
    inputs = step_stats_inputs(tmp_path)
    source = inputs[input_name]
    options, keywords, flags = OPTION_SETS[option_set]
    for suffix in ([".json"] if options else [".json", ".json.gz", ".pb", ".tfrecord"]):
        by_command = tmp_path / f"command{suffix}"
        by_python = tmp_path / f"python{suffix}"
        by_c = tmp_path / f"c{suffix}"
        run_tfprof(tfprof_exe, "convert", str(source), "-o", str(by_command), *flags)
        tfprof.convert(source, by_python, **keywords)
        c_convert([source], by_c, options, merging=False)
        assert by_command.read_bytes() == by_python.read_bytes() == by_c.read_bytes(), suffix
        assert by_command.stat().st_size > 200


@pytest.mark.parametrize("option_set", range(len(OPTION_SETS)))
def test_merge_is_byte_identical_from_the_command_python_and_c(tfprof_exe, tmp_path, option_set):
    inputs = step_stats_inputs(tmp_path)
    sources = [inputs["json"], inputs["tfrecord"], inputs["pytorch"]]
    options, keywords, flags = OPTION_SETS[option_set]
    by_command, by_python, by_c = (tmp_path / f"{who}.json" for who in ("command", "python", "c"))
    run_tfprof(tfprof_exe, "merge", "-o", str(by_command), *map(str, sources), *flags)
    tfprof.merge(sources, by_python, **keywords)
    c_convert(sources, by_c, options, merging=True)
    assert by_command.read_bytes() == by_python.read_bytes() == by_c.read_bytes()


def test_prof_convert_reads_chrome_json_that_it_used_to_reject(tmp_path):
    """The issue's case: tfprof.convert() of a Chrome trace failed with 'malformed protobuf'."""
    source = training_trace().write(tmp_path / "trace.json")
    tfprof.convert(source, tmp_path / "run.pb")
    tfprof.convert(tmp_path / "run.pb", tmp_path / "back.json")
    original, back = load(source), load(tmp_path / "back.json")
    assert steps(back) == steps(original)
    # TensorFlow keeps no kind for host nodes: spans and CUDA calls both come back as spans.
    assert spans(back, ["user_annotation"]) == spans(original, ["user_annotation", "cuda_runtime"])
    assert spans(back, ["kernel"]) == spans(original, ["kernel"])


def test_a_merge_can_be_written_in_tensorflow_formats(tfprof_exe, tmp_path):
    rank0 = training_trace().write(tmp_path / "rank0.json")
    later = training_trace()
    later.start_unix_ns = UNIX + 5 * MS
    rank1 = later.write(tmp_path / "rank1.json")
    run_tfprof(tfprof_exe, "merge", "-o", str(tmp_path / "job.tfrecord"), str(rank0), str(rank1))
    run_tfprof(tfprof_exe, "convert", str(tmp_path / "job.tfrecord"), "-o", str(tmp_path / "job.json"))
    merged = load(tmp_path / "job.json")
    names = [name for name, _, _ in spans(merged, {"user_annotation"})]
    assert names.count("dense/MatMul:MatMul") == 6  # three steps of each rank
    # The two ranks' host devices stay apart: task:0 and task:1.
    tasks = {e["args"]["name"] for e in merged["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert any("task:1" in name for name in tasks), tasks


def test_align_start_is_an_engine_option_from_python_and_c(tmp_path):
    monday = training_trace().write(tmp_path / "monday.json")
    tuesday_trace = training_trace()
    tuesday_trace.start_unix_ns = UNIX + 86_400 * 10**9
    tuesday = tuesday_trace.write(tmp_path / "tuesday.json")
    tfprof.merge([monday, tuesday], tmp_path / "python.json", align="start")
    c_convert([monday, tuesday], tmp_path / "c.json", "align=start", merging=True)
    assert (tmp_path / "python.json").read_bytes() == (tmp_path / "c.json").read_bytes()
    sources = load(tmp_path / "python.json")["tfprof"]["sources"]
    assert [source["aligned_by"] for source in sources] == ["first event", "first event"]
    with pytest.raises(ValueError, match="align=start applies to merging"):
        tfprof.merge([monday, tuesday], tmp_path / "x.json", align="start", layout="timeline")
