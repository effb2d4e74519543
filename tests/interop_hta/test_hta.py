"""Holistic Trace Analysis (HolisticTraceAnalysis on PyPI, `hta`) reads a tfprof GPU trace: the
trace of known GPU work that tests/support/synthetic_gpu_trace.cc writes from real CUPTI records
(its comment gives the layout and the numbers checked here), loaded with HTA's TraceAnalysis.

Needs TFPROF_BUILD_DIR: a CMake build directory with tests/synthetic_gpu_trace (scripts/test.sh
passes build/test-release), and a venv with HTA (scripts/hta-env.sh)."""

import os
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from hta.trace_analysis import TraceAnalysis

BUILD = Path(os.environ.get("TFPROF_BUILD_DIR", "build/test-release")).resolve()
PROGRAM = BUILD / "tests" / "synthetic_gpu_trace"
RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK")

# HTA's own use of pandas warns about deprecations; those are HTA's to fix, not tfprof's.
pytestmark = pytest.mark.filterwarnings("ignore:::hta")

GEMM = "gemm(float const*, float const*, float*, int)"
RELU = "relu(float*, int)"
HTOD = "Memcpy HtoD (Pinned -> Device)"
DTOH = "Memcpy DtoH (Device -> Pageable)"
MEMSET = "Memset"  # HTA tells memory work by the name's first word; the memory kind is not checked


def short(name):
    return MEMSET if name.startswith("Memset (") else name


def built_without_cupti():
    """Whether CMake found no CUPTI headers in BUILD, so synthetic_gpu_trace is not a target."""
    cache = BUILD / "CMakeCache.txt"
    if not cache.exists():
        return False
    text = cache.read_text()
    return ("TFPROF_WITH_CUPTI:BOOL=OFF" in text
            or re.search(r"^TFPROF_(CUPTI|CUDA)_INCLUDE_DIR:PATH=.*NOTFOUND$", text, re.M) is not None)


if built_without_cupti():
    pytest.skip(f"{BUILD} was configured without the CUDA toolkit's CUPTI headers, so "
                "synthetic_gpu_trace was not built", allow_module_level=True)


def write_trace(path, **rank_variables):
    """Runs synthetic_gpu_trace into `path` with only the given rank variables set."""
    assert PROGRAM.exists(), f"no {PROGRAM}: build the synthetic_gpu_trace target in {BUILD}"
    env = {k: v for k, v in os.environ.items() if k not in RANK_VARIABLES}
    env.update(rank_variables)
    result = subprocess.run([str(PROGRAM), str(path)], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""
    return path


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    directory = tmp_path_factory.mktemp("hta_one_rank")
    write_trace(directory / "trainer.json")
    return TraceAnalysis(trace_dir=str(directory))


def gpu_events(analysis, rank=0):
    """HTA's parsed events that ran on a stream, as (category, name, stream, ts, dur)."""
    frame = analysis.t.get_trace(rank)
    symbols = analysis.t.symbol_table.get_sym_table()
    on_gpu = frame[frame["stream"].ne(-1)]
    return sorted((symbols[row.cat], short(symbols[row.name]), row.stream, row.ts, row.dur)
                  for row in on_gpu.itertuples())


def test_temporal_breakdown_matches_the_layout(analysis):
    breakdown = analysis.get_temporal_breakdown(visualize=False)
    assert list(breakdown["rank"]) == [0]
    row = breakdown.iloc[0]
    # Every time in the layout is a whole microsecond, so HTA's rounding to microseconds (start
    # up, end down) changes nothing: these are exact, not approximate.
    assert row["kernel_time(us)"] == pytest.approx(250, abs=1e-3)  # first start 20 to last end 270
    assert row["idle_time(us)"] == pytest.approx(115, abs=1e-3)
    assert row["compute_time(us)"] == pytest.approx(100, abs=1e-3)  # kernels, overlaps merged
    assert row["non_compute_time(us)"] == pytest.approx(35, abs=1e-3)  # two copies and a memset
    assert row["idle_time_pctg"] == pytest.approx(46.0)
    assert row["compute_time_pctg"] == pytest.approx(40.0)


def test_hta_sees_every_kernel_copy_and_memset_on_its_stream(analysis):
    events = gpu_events(analysis)
    assert Counter(category for category, *_ in events) == {
        "kernel": 5, "gpu_memcpy": 2, "gpu_memset": 1}
    # HTA aligns the trace to its first event, the start of step 1 (offset 0 in the layout).
    assert events == [
        ("gpu_memcpy", DTOH, 13, 250, 20),
        ("gpu_memcpy", HTOD, 13, 20, 10),
        ("gpu_memset", MEMSET, 7, 110, 5),
        ("kernel", GEMM, 7, 30, 20),
        ("kernel", GEMM, 7, 120, 40),
        ("kernel", GEMM, 7, 210, 30),
        ("kernel", RELU, 13, 40, 20),
        ("kernel", RELU, 13, 130, 10),
    ]


def test_gpu_kernel_breakdown_by_name_and_type(analysis):
    by_type, by_kernel = analysis.get_gpu_kernel_breakdown(visualize=False,
                                                           include_memory_kernels=True)
    sums = dict(zip(by_type["kernel_type"], by_type["sum"]))
    assert sums["COMPUTATION"] == 100 and sums["MEMORY"] == 35
    kernels = {short(name): (total, kind) for name, total, kind
               in zip(by_kernel["name"], by_kernel["sum (us)"], by_kernel["kernel_type"])}
    assert kernels == {
        GEMM: (90, "COMPUTATION"), RELU: (30, "COMPUTATION"),
        HTOD: (10, "MEMORY"), DTOH: (20, "MEMORY"), MEMSET: (5, "MEMORY")}


def test_each_gpu_event_is_linked_to_its_launch_call(analysis):
    frame = analysis.t.get_trace(0)
    symbols = analysis.t.symbol_table.get_sym_table()
    on_gpu = frame[frame["stream"].ne(-1)]
    launches = {}
    for row in on_gpu.itertuples():
        launch = frame.loc[row.index_correlation]
        assert symbols[launch["cat"]] == "cuda_runtime"
        assert launch["correlation"] == row.correlation
        launches[row.correlation] = symbols[launch["name"]]
    assert launches == {1: "cudaMemcpyAsync", 2: "cudaLaunchKernel", 3: "cudaLaunchKernel",
                        4: "cudaMemsetAsync", 5: "cudaLaunchKernel", 6: "cudaLaunchKernel",
                        7: "cudaLaunchKernel", 8: "cudaMemcpyAsync"}


def test_ranks_come_from_the_launchers_variables(tmp_path):
    write_trace(tmp_path / "worker0.json")
    write_trace(tmp_path / "worker1.json", SLURM_PROCID="1")
    write_trace(tmp_path / "worker2.json", RANK="2", SLURM_PROCID="7")
    analysis = TraceAnalysis(trace_dir=str(tmp_path))
    assert analysis.t.trace_files == {
        0: str(tmp_path / "worker0.json"), 1: str(tmp_path / "worker1.json"),
        2: str(tmp_path / "worker2.json")}
    breakdown = analysis.get_temporal_breakdown(visualize=False)
    assert list(breakdown["rank"]) == [0, 1, 2]
    assert list(breakdown["idle_time(us)"]) == [115, 115, 115]
