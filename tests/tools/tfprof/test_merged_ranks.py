"""A merged trace is summarised rank by rank (issue 19, item 3): each rank's steps count only its
own host and GPUs, so every per-step figure of a rank in `tfprof merge`'s output equals the figure
`tfprof summary` gives for that rank's file alone, exactly. Real traces: the 8 ranks of one DLRM
job (PARAM) and 2 sampled ranks of a 128-rank job (HTA's tests), tests/data/real/README.md.
"""

from __future__ import annotations

import json
import re
import pathlib
from typing import Any, Dict, List

import pytest

from conftest import ROOT, run_tfprof

REAL = ROOT / "tests" / "data" / "real"
EIGHT_RANKS = sorted((REAL / "param" / "dlrm_kineto").glob("worker*.pt.trace.json.gz"))
TWO_RANKS = sorted((REAL / "hta" / "trace_filter").glob("sampled_rank-*.json.gz"))
STEP_FIGURES = ("duration_ns", "gpu_compute_ns", "communication_ns", "memcpy_ns", "input_wait_ns",
                "host_compute_ns", "idle_ns", "gpu_idle_ns", "sync_ns", "launch_ns", "kernels",
                "launches")
DEVICE_FIGURES = ("busy_ns", "kernel_ns", "communication_ns", "window_ns")


def summary_of(exe: pathlib.Path, path: pathlib.Path) -> Dict[str, Any]:
    (trace,) = json.loads(run_tfprof(exe, "summary", "--json", str(path)).stdout)["traces"]
    return trace


def merged_summary(exe: pathlib.Path, inputs: List[pathlib.Path],
                   tmp_path: pathlib.Path) -> Dict[str, Any]:
    merged = tmp_path / "merged.json"
    run_tfprof(exe, "merge", "-o", str(merged), *map(str, inputs))
    return summary_of(exe, merged)


@pytest.mark.parametrize("inputs", [TWO_RANKS, EIGHT_RANKS], ids=["2 ranks", "8 ranks"])
def test_each_rank_of_a_merge_has_its_own_figures(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path,
                                                  inputs: List[pathlib.Path]) -> None:
    assert len(inputs) in (2, 8)
    merged = merged_summary(tfprof_exe, inputs, tmp_path)
    assert merged["has_gpu"]
    expected_steps = 0
    for path in inputs:
        alone = summary_of(tfprof_exe, path)
        rank = alone["rank"]
        assert rank is not None
        mine = [step for step in merged["steps"] if step["rank"] == rank]
        assert [s["number"] for s in mine] == [s["number"] for s in alone["steps"]], path.name
        expected_steps += len(alone["steps"])
        for own, single in zip(mine, alone["steps"]):
            # The rank is in the step's label, and every figure is the single-rank one.
            assert f"rank {rank}" in own["process"], own["process"]
            for figure in STEP_FIGURES:
                assert own[figure] == single[figure], (path.name, own["number"], figure)
        # Each GPU is measured in its own rank's window.
        devices = [d for d in merged["devices"] if d["process"].startswith(f"rank {rank} ")]
        assert len(devices) == len(alone["devices"]) >= 1
        for own, single in zip(devices, alone["devices"]):
            for figure in DEVICE_FIGURES:
                assert own[figure] == single[figure], (path.name, figure)
    assert len(merged["steps"]) == expected_steps
    total = merged["step_total"]
    assert total["duration_ns"] == sum(s["duration_ns"] for s in merged["steps"])


def test_collectives_dominate_the_dlrm_ranks(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path) -> None:
    # Every DLRM rank spends most of its step in NCCL kernels with nothing to overlap them: HTA
    # calls that communication, and so must the summary, with its own finding.
    merged = merged_summary(tfprof_exe, EIGHT_RANKS, tmp_path)
    assert merged["communication_kernel_count"] == 8 * 8
    total = merged["step_total"]
    assert total["communication_ns"] > 0
    kinds = [f["kind"] for f in merged["findings"]]
    share = total["communication_ns"] / total["duration_ns"]
    assert ("communication_bound" in kinds) == (share >= 0.15), (share, kinds)


def test_runs_recorded_far_apart_get_a_hint(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path) -> None:
    # A 2017 TensorFlow run and a 2023 PyTorch run, aligned by wall-clock time, are six years
    # apart: the merge says so and names --align start.
    old = REAL / "tensorflow/ikhlestov_tensorflow_profiling/GPU/timeline_01.json"
    new = EIGHT_RANKS[0]
    result = run_tfprof(tfprof_exe, "merge", "-o", str(tmp_path / "m.json"), str(old), str(new))
    assert "days after" in result.stderr and "--align start" in result.stderr, result.stderr
    side_by_side = run_tfprof(tfprof_exe, "merge", "--align", "start", "-o",
                              str(tmp_path / "s.json"), str(old), str(new))
    assert "days after" not in side_by_side.stderr


def tile(page: str, key: str) -> float:
    """The percentage a key-figure tile of `tfprof report` shows."""
    match = re.search(r'<div class="k">' + re.escape(key) + r'</div><div class="v">([0-9.]+)%', page)
    assert match, f"no {key} tile"
    return float(match.group(1))


@pytest.mark.parametrize("inputs", [TWO_RANKS, EIGHT_RANKS], ids=["2 ranks", "8 ranks"])
def test_the_report_header_agrees_with_its_tables(tfprof_exe: pathlib.Path,
                                                   tmp_path: pathlib.Path,
                                                   inputs: List[pathlib.Path]) -> None:
    # The header's GPU utilisation and GPU idle are the GPU table's and the step table's figures:
    # before, a merged trace showed 45.5% utilisation beside 38.6% idle.
    summary = merged_summary(tfprof_exe, inputs, tmp_path)
    page_path = tmp_path / "report.html"
    run_tfprof(tfprof_exe, "report", "-o", str(page_path), str(tmp_path / "merged.json"))
    page = page_path.read_text()
    devices = summary["devices"]
    busy = sum(d["busy_ns"] for d in devices) / sum(d["window_ns"] for d in devices)
    total = summary["step_total"]
    assert tile(page, "GPU utilisation") == pytest.approx(100 * busy, abs=0.051)
    assert tile(page, "GPU idle") == pytest.approx(100 * total["gpu_idle_ns"] / total["duration_ns"],
                                                   abs=0.051)
    # One GPU per rank, each busy only in its own steps: busy and idle are complements.
    assert tile(page, "GPU utilisation") + tile(page, "GPU idle") == pytest.approx(100, abs=0.2)
