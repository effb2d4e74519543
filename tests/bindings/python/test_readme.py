"""The README's Python quick start runs as written and writes what it says."""

import pathlib
import re
import subprocess
import sys

from trace_file import read_trace

README = pathlib.Path(__file__).resolve().parents[3] / "README.md"


def test_readme_python_example_runs_and_writes_its_traces(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README has no python example"
    result = subprocess.run([sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Stats(running=False" in result.stdout
    for name in ("trace.json", "trace.json.gz"):
        parsed = read_trace(tmp_path / name)
        assert [step["name"] for step in parsed.steps()] == [f"step {n}" for n in range(10)]
        assert sorted(span["name"] for span in parsed.row_of("loader")) == ["decode", "load_batch"]
        assert sorted({span["name"] for span in parsed.row_of("MainThread")}) == ["forward"]
        assert len(parsed.with_phase("C")) == 10
    # The TensorFlow formats it writes, converted back: every step's forward op, in every file.
    records = (tmp_path / "run.tfrecord").read_bytes()
    assert len(records) > 0 and len(list((tmp_path / "logs").glob("events.out.tfevents.*"))) == 1
    assert len(list((tmp_path / "logs").glob("plugins/profile/*/*.xplane.pb"))) == 1
    # TensorBoard's Profile tab's format, read back: the same ten steps' ops.
    subprocess.run([sys.executable, "-c", "import tfprof; tfprof.convert('host.xplane.pb', "
                    "'xplane.json')"], cwd=tmp_path, check=True, timeout=60)
    forward = [e for e in read_trace(tmp_path / "xplane.json").with_phase("X") if e["name"] == "forward"]
    assert len(forward) == 10
    for name, copies in (("run_pb.json", 1), ("merged.json", 2)):
        events = read_trace(tmp_path / name).with_phase("X")
        forward = [event for event in events if event["name"].split(":")[0] == "forward"]
        assert len(forward) == 10 * copies, name
