"""Holistic Trace Analysis gives the same figures on PyTorch traces converted by `tfprof convert`
as on the originals, for a two-rank job: its iterations (found from the ProfilerStep#N spans,
which a conversion keeps as they were), the temporal breakdown, the kernel type breakdown, the
kernel launch statistics and the communication/computation overlap.

Before conversions kept the profiler's step spans, HTA found no iteration in a converted file, so
it kept the last step it drops from an original (include_last_profiler_step=False): on the
sampled_rank pair, whose files hold two steps, its kernel time and launch counts doubled.

Needs TFPROF_BUILD_DIR (a build tree with the `tfprof` executable) and a venv with HTA
(scripts/hta-env.sh)."""

import math
import os
import subprocess
from pathlib import Path

import pytest
from hta.trace_analysis import TraceAnalysis

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TFPROF_BUILD_DIR", "build/test-release")).resolve()
TFPROF = BUILD / "tfprof"
REAL = ROOT / "tests" / "data" / "real"
JOBS = {
    "sampled_rank": sorted((REAL / "hta" / "trace_filter").glob("sampled_rank-*.json.gz")),
    "dlrm_kineto": sorted((REAL / "param" / "dlrm_kineto").glob("worker[01]_*.json.gz")),
}

pytestmark = pytest.mark.filterwarnings("ignore:::hta")


def figures(directory: Path) -> dict:
    """HTA's iteration-aware figures for the traces in `directory`, per rank."""
    analysis = TraceAnalysis(trace_dir=str(directory))
    ranks = sorted(analysis.t.get_ranks())
    result = {"ranks": ranks}
    result["iterations"] = {
        rank: sorted(int(i) for i in analysis.t.get_trace(rank)["iteration"].unique())
        for rank in ranks}
    temporal = analysis.get_temporal_breakdown(visualize=False)
    result["temporal"] = sorted(tuple(sorted(row.items())) for row in temporal.to_dict("records"))
    types, per_rank = analysis.get_gpu_kernel_breakdown(visualize=False,
                                                        include_memory_kernels=True)
    result["kernel_types"] = dict(zip(types["kernel_type"], (float(s) for s in types["sum"])))
    result["kernels"] = sorted(
        (row["name"], int(row["rank"]), row["kernel_type"], float(row["sum (us)"]),
         float(row["max (us)"]), float(row["min (us)"]), float(row["mean (us)"]))
        for row in per_rank.to_dict("records"))
    launches = analysis.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False)
    result["launches"] = {
        rank: (len(frame), float(frame["cpu_duration"].sum()), float(frame["gpu_duration"].sum()),
               float(frame["launch_delay"].sum()))
        for rank, frame in launches.items()}
    overlap = analysis.get_comm_comp_overlap(visualize=False)
    result["overlap"] = dict(zip((int(r) for r in overlap["rank"]),
                                 (float(p) for p in overlap["comp_comm_overlap_pctg"])))
    return result


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    if not TFPROF.exists():
        pytest.fail(f"no {TFPROF}: build the tfprof_cli target in {BUILD}")
    directories = {}
    for job, paths in JOBS.items():
        assert len(paths) == 2, job
        original = tmp_path_factory.mktemp(f"{job}_original")
        copy = tmp_path_factory.mktemp(f"{job}_converted")
        for path in paths:
            (original / path.name).symlink_to(path)
            target = copy / path.name.replace(".json.gz", ".json")
            result = subprocess.run([str(TFPROF), "convert", str(path), "-o", str(target)],
                                    capture_output=True, text=True, timeout=300)
            assert result.returncode == 0, result.stderr
        directories[job] = (original, copy)
    return directories


@pytest.mark.parametrize("job", sorted(JOBS))
def test_hta_figures_of_converted_traces_equal_the_originals(converted, job):
    original, copy = converted[job]
    before, after = figures(original), figures(copy)
    assert before["ranks"] == after["ranks"] == [0, 1]
    # Iterations are found in both (not only -1, events outside every step).
    assert any(i >= 0 for i in after["iterations"][0])
    for name in before:
        if name == "overlap":
            assert before[name].keys() == after[name].keys()
            for rank, value in before[name].items():
                assert math.isclose(after[name][rank], value, rel_tol=0, abs_tol=1e-9), rank
        else:
            assert after[name] == before[name], name


def test_the_sampled_pair_is_analysed_for_its_first_step_only(converted):
    """The figure that doubled: HTA drops the last of the two steps in both files."""
    original, copy = converted["sampled_rank"]
    for directory in (original, copy):
        result = figures(directory)
        assert result["iterations"] == {0: [551], 1: [551]}
        assert result["launches"][0][0] == 602
