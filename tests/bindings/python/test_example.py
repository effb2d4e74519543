"""The Python example writes the trace its docstring promises."""

import pathlib
import subprocess
import sys

from trace_file import encloses, read_trace

EXAMPLE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "python" / "train_loop.py"


def test_train_loop_example_trace(tmp_path):
    path = tmp_path / "train_loop.json.gz"
    result = subprocess.run([sys.executable, str(EXAMPLE), str(path), "--steps", "6"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "6 steps" in result.stdout and "0 dropped" in result.stdout
    parsed = read_trace(path)
    assert [step["name"] for step in parsed.steps()] == [f"step {n}" for n in range(6)]
    main_row = parsed.row_of("MainThread")
    loader_row = parsed.row_of("loader")
    for name in ("wait_for_batch", "forward", "backward", "optimizer_update"):
        assert [span["args"]["step"] for span in main_row if span["name"] == name] == list(range(6))
    for name in ("load_batch", "decode", "augment", "random_crop", "flip"):
        assert sum(span["name"] == name for span in loader_row) == 6
    for load in (span for span in loader_row if span["name"] == "load_batch"):
        assert any(encloses(load, span) for span in loader_row if span["name"] == "decode")
    counters = {event["name"] for event in parsed.with_phase("C")}
    assert counters == {"queue_depth", "loss"}
