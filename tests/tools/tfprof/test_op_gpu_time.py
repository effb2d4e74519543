"""GPU time by op (`tfprof summary --json`'s gpu_time_by_op) on the corpus' real PyTorch/Kineto
traces with kernels, against a computation of its own here: each kernel, copy and memset is found
by its correlation id to its launch call, then to the host ops open on the launch's thread at the
launch. Self: the innermost of those ops; total: every distinct name among them. Exact ns. The
XPlane profiles are walked the same way once converted to Chrome JSON; a merge of ranks is
checked against the ranks' sums.
"""

from __future__ import annotations

import collections
import decimal
import gzip
import json
import pathlib
from typing import Dict, List, Tuple

import pytest

from conftest import ROOT, run_tfprof

REAL = ROOT / "tests" / "data" / "real"
TRACES = [
    "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.trimmed-1step.json.gz",
    "kineto/tb_plugin/test/gpu_metrics_input.json",
    "hta/trace_diff/control/control.trimmed-1step.json.gz",
    "hta/nccl_parser_config/nccl_data.json.gz",
    "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
    "hta/triton_example/triton_example.json.gz",
    "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "tracelens/mi300/gaunernst_bert-small-uncased__1016001.json.gz",
    "tracelens/b200/eager_trace.json.gz",
    "tracelens/perf_model/normalization/normalization_layer_test.json.gz",
    "param/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json.gz",
]
NO_HOST_OP = "(no host op)"
HOST_OPS = {"cpu_op", "Operator", "user_annotation"}
GPU_WORK = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}


def ns(value) -> int:
    return int(decimal.Decimal(value) * 1000)


def is_runtime(category: str) -> bool:
    return category == "Runtime" or category.endswith("_runtime") or category.endswith("_driver")


def is_layer(name: str) -> bool:
    return name.startswith("nn.Module: ")


def load_events(path: pathlib.Path) -> List[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        data = json.load(f, parse_float=decimal.Decimal)
    return data if isinstance(data, list) else data["traceEvents"]


def expected_by_op(events: List[dict]) -> Tuple[Dict[str, int], Dict[str, int], Dict[str, int]]:
    """{op name: self ns}, {op name: total ns}, with NO_HOST_OP for work launched in no op, and
    {module span name: total ns}."""
    ops = collections.defaultdict(list)  # (pid, tid) -> [(begin, end, index, name)]
    modules = collections.defaultdict(list)  # the same, of nn.Module spans
    launches = {}  # correlation -> ((pid, tid), begin)
    work = []  # (correlation or None, duration)
    for index, e in enumerate(events):
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        args = e.get("args") or {}
        begin = ns(e["ts"])
        end = begin + ns(e.get("dur", 0))
        thread = (e.get("pid"), e.get("tid"))
        if cat in HOST_OPS and not e["name"].startswith("ProfilerStep#"):
            ops[thread].append((begin, end, index, e["name"]))
        elif cat == "python_function" and is_layer(e["name"]):
            modules[thread].append((begin, end, e["name"]))
        elif is_runtime(cat) and "correlation" in args:
            launches.setdefault(args["correlation"], (thread, begin))
        elif cat in GPU_WORK:
            work.append((args.get("correlation"), end - begin))
    self_ns = collections.Counter()
    total_ns = collections.Counter()
    layer_ns = collections.Counter()
    for correlation, duration in work:
        enclosing = []
        if correlation in launches:
            thread, at = launches[correlation]
            for name in {name for b, e, name in modules[thread] if b <= at < e}:
                layer_ns[name] += duration
            # Outer first; spans of the same extent in file order (Kineto writes parents first).
            enclosing = sorted((b, -e, i, name) for b, e, i, name in ops[thread]
                               if b <= at < e and not is_layer(name))
        if not enclosing:
            self_ns[NO_HOST_OP] += duration
            total_ns[NO_HOST_OP] += duration
            continue
        self_ns[enclosing[-1][3]] += duration
        for name in {span[3] for span in enclosing}:
            total_ns[name] += duration
    return self_ns, total_ns, layer_ns


@pytest.mark.parametrize("name", TRACES)
def test_gpu_time_by_op_matches_correlation_walk(tfprof_exe, name):
    path = REAL / name
    result = run_tfprof(tfprof_exe, "summary", "--json", "--top", "100000", str(path))
    summary = json.loads(result.stdout)["traces"][0]
    rows = {row["name"]: row for row in summary["gpu_time_by_op"]}
    self_ns, total_ns, layer_ns = expected_by_op(load_events(path))
    assert total_ns, f"{name}: no GPU work found by the test"
    assert {n: r["gpu_total_ns"] for n, r in rows.items()} == dict(total_ns)
    assert {n: r["gpu_self_ns"] for n, r in rows.items()} == {n: self_ns[n] for n in total_ns}
    layers = {row["name"]: row["gpu_total_ns"] for row in summary["gpu_time_by_layer"]}
    assert layers == dict(layer_ns)
    # Self times cover each piece of GPU work once.
    assert sum(r["gpu_self_ns"] for r in rows.values()) == summary["gpu_work_ns"]
    # Rows are sorted by total GPU time.
    totals = [row["gpu_total_ns"] for row in summary["gpu_time_by_op"]]
    assert totals == sorted(totals, reverse=True)


def test_a_merge_of_ranks_has_the_sum_of_their_gpu_time_by_op(tfprof_exe, tmp_path):
    """The eight DLRM ranks each count their correlation ids from 1: merged, every op's GPU
    time is still the sum of the ranks' own."""
    ranks = sorted((REAL / "param" / "dlrm_kineto").glob("*.pt.trace.json.gz"))
    assert len(ranks) == 8
    merged = tmp_path / "merged.json"
    run_tfprof(tfprof_exe, "merge", "-o", str(merged), *map(str, ranks))

    def by_op(path: pathlib.Path) -> collections.Counter:
        result = run_tfprof(tfprof_exe, "summary", "--json", "--top", "100000", str(path))
        rows = json.loads(result.stdout)["traces"][0]["gpu_time_by_op"]
        return collections.Counter({(row["name"], key): row[key] for row in rows
                                    for key in ("gpu_self_ns", "gpu_total_ns", "kernels")})

    expected = collections.Counter()
    for rank in ranks:
        expected.update(by_op(rank))
    assert by_op(merged) == expected


@pytest.mark.parametrize("path", sorted((REAL / "xplane").glob("*.xplane.pb")),
                         ids=lambda p: p.name)
def test_xplane_gpu_time_by_op_matches_correlation_walk(tfprof_exe, tmp_path, path):
    """TensorFlow's and JAX's XPlane profiles: the walk above on the profile converted to Chrome
    JSON (tfprof's XPlane reader, then correlation ids in the args) against the summary of the
    profile itself. (Their kernels' tf_op is "XlaModule:", the module and no op, or absent.)"""
    converted = tmp_path / "converted.json"
    run_tfprof(tfprof_exe, "convert", str(path), "-o", str(converted))
    result = run_tfprof(tfprof_exe, "summary", "--json", "--top", "100000", str(path))
    rows = {row["name"]: row for row in json.loads(result.stdout)["traces"][0]["gpu_time_by_op"]}
    self_ns, total_ns, _ = expected_by_op(load_events(converted))
    assert total_ns
    assert {n: r["gpu_total_ns"] for n, r in rows.items()} == dict(total_ns)
    assert {n: r["gpu_self_ns"] for n, r in rows.items()} == {n: self_ns[n] for n in total_ns}
