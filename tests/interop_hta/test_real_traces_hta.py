"""tfprof's GPU figures on the real PyTorch/Kineto traces of tests/data/real/ (its README names
each file's source; the TensorFlow files are not Kineto traces and are left out), checked against
Holistic Trace Analysis 0.5.0 (HolisticTraceAnalysis on PyPI, `hta`) and against a third count
made here, in Python, from the raw JSON (issue 19). When tfprof and HTA disagree, the third count
says which one is wrong.

What HTA 0.5.0 computes (read from its source; paths are inside the `hta` package)
=================================================================================

Loading a directory, `TraceAnalysis(trace_dir=...)` (trace_analysis.py, common/trace.py):
- Files: every name in the directory ending in ".gz" or ".json" (common/trace_file.py,
  create_rank_to_trace_dict_from_dir); ".gz" is read with gzip. Each file must hold a JSON object
  with "traceEvents": a bare JSON array (the Dec 2020 Kineto trace) fails in
  common/trace_parser.py, _parse_trace_dataframe_json (`'list' object has no attribute 'items'`).
- Rank: not read from the parsed `distributedInfo` but by a regex, `"rank":\\s+(\\d+)`, over the
  file's text line by line; the first match wins (so `"rank":3` without a space is not found).
  No match: rank 0, with a warning. Two files with the same rank: the last one listed wins.
- Rows (common/trace_parser.py, _compress_df): every trace event with a non-null "dur" and "cat"
  except cat "Trace", whatever its "ph" (so metadata, flows and instants go). Selected args become
  columns; "stream" is `int(args["stream"])`, -1 when absent or not an integer ("0x0" in ROCm
  runtime rows is -1; utils/utils.py, normalize_gpu_stream_numbers). "correlation" defaults to -1.
- Time: microseconds. When the "ts" column is floating point (any event has a fractional ts, as in
  every trace with baseTimeNanoseconds or ns resolution), round_down_time_stamps sets
  ts = ceil(ts) and end = floor(ts + dur): every such event loses up to 2 us, about 1 us on
  average (HTA_DISABLE_NS_ROUNDING=1 turns this off; this module unsets it, as it checks HTA's
  default reading). Integer-microsecond traces are left as they are. All ranks are then shifted so that
  the earliest row of any rank is at 0 (Trace._align_all_ranks).
- Last step (Trace._filter_irrelevant_gpu_kernels, include_last_profiler_step=False): when the
  symbol table of ALL loaded ranks holds more than one distinct name containing "ProfilerStep",
  each rank keeps only its CPU rows (every row that is not a "GPU kernel", see below) starting
  before the start of its last ProfilerStep row, and the GPU rows (stream >= 0 and correlation
  >= 0, or named "Event Sync"/"Context Sync") whose correlation equals one of those CPU rows'.
  GPU work launched in the last step is dropped, and so is GPU work whose launch is not in the
  trace; work launched before the first step is kept. With one step name (or none) nothing is
  filtered.

The "GPU events" of every analysis below are the rows with stream != -1. That is kernels, copies
and memsets, but also `cuda_sync` rows ("Stream Sync", "Event Sync", which Kineto files with a
stream) and any host row that carries a "stream" arg (Triton's launcher cpu_op in the
triton_example and b200 traces, which has `"stream": 0`).

Kernel type, utils/utils.py get_kernel_type, by name only:
COMMUNICATION when the name matches `^nccl.*Kernel` (ncclKernel_*, ncclDevKernel_*; no rccl, no
gloo); else MEMORY when it starts with "Memcpy", "Memset" or "dma" (Kineto's copy and memset
rows are named so); else COMPUTATION unless it matches `(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|
(.*Sync)` (contains "Memcpy", starts with "Memset", or contains "Sync"); else OTHER. So cuda_sync
rows are OTHER, and a host row with a stream arg is COMPUTATION.

get_temporal_breakdown (analyzers/breakdown_analysis.py), per rank, in us:
- merge_kernel_intervals (utils/utils.py): sort by ts, end = ts + dur; a row starts a new merged
  interval when its ts is greater than the largest end so far (touching intervals merge).
- kernel_time = last merged end - first merged start over ALL GPU events of the rank (all its
  devices and streams together): HTA's window, the span of the rank's GPU activity, not the
  profiler steps.
- idle_time = kernel_time - length of the union of all GPU events.
- compute_time = length of the union of the COMPUTATION events.
- non_compute_time = kernel_time - compute_time - idle_time, i.e. union(all) - union(COMPUTATION):
  time when only copies, memsets, communication kernels or OTHER rows run.
- *_pctg = round(100 * x / kernel_time, 2).
A rank without GPU events fails there with IndexError (`.iloc[-1]` of an empty frame).

get_gpu_kernel_breakdown(include_memory_kernels=True) (same file; _get_gpu_kernel_type_time):
the union of each type's events, for COMPUTATION, COMMUNICATION and MEMORY (OTHER is left out),
swept together; each instant is labelled by the set of types running, named in that order and
joined by " overlapping " ("COMPUTATION overlapping COMMUNICATION", "COMMUNICATION overlapping
MEMORY", ...). kernel_type_df["sum"] is the time (us) under each label, SUMMED OVER ALL RANKS
loaded; "percentage" = round(100 * sum / sum of all labels, 1), i.e. of the time any of the three
types runs, not of kernel_time. The second frame (per kernel name: sum, max, min, mean, std of
dur, the smallest kernels folded into "others") is not used here.

get_comm_comp_overlap (analyzers/communication_analysis.py), per rank: length of
union(COMMUNICATION) intersected with union(COMPUTATION), divided by the length of
union(COMMUNICATION), as comp_comm_overlap_pctg = round(100 * ratio, 2).

get_idle_time_breakdown (breakdown_analysis.py), one rank (default 0): rows with stream != -1
and cat in kernel/Kernel/gpu_memset/Memset/gpu_memcpy/Memcpy/mtia_ccp_events (so no cuda_sync
here), per stream sorted by ts: each row's idle_interval = its ts - the previous row's end (the
previous row in ts order, not the largest end so far). The interval is "host wait" when the row's
launch (its correlated runtime row) started after the previous row ended, else "kernel wait" when
it is shorter than consecutive_kernel_delay (default 30; compared with gaps in microseconds,
although HTA's docstring says nanoseconds), else "other".
Per stream: idle_time per category and its share of the stream's idle total. The total over the
categories is the stream's span (first start to last end) minus the durations of its rows.

What tfprof computes (tools/tfprof/analysis/trace_summary.cc)
=============================================================

GPU work is what the Chrome reader files as kernels (cat kernel/Kernel), copies and memsets
(gpu_memcpy/Memcpy, gpu_memset/Memset); cuda_sync rows are synchronisation, not GPU work, and a
host op stays a host op whatever its args. Times are exact nanoseconds. A kernel is a collective's
(communication) when its name holds "nccl" or "rccl" in any case (op_classes.cc), else a compute
kernel; HTA's rule is narrower (`^nccl.*Kernel`, case-sensitive), which no kernel of this corpus
tells apart. A host op named "gloo:*" is a host collective. Per step (a host ProfilerStep#N; with
none, the whole trace is one step, step_total): gpu_compute_ns = union of compute kernels;
communication_ns = union of collective kernels and host collectives, less the compute union;
memcpy_ns = union of copies and memsets less all kernels and less communication_ns;
gpu_idle_ns = duration - union of all GPU work. step_total sums the steps. Per device over the
window (the steps, first begin to last end, else the first to the last activity of the trace,
global instants such as Kineto's "Record Window End" not counted): busy_ns, kernel_ns (all
kernels), communication_ns (union of collective kernels), window_ns.

How the two are compared
========================

Three counts, made here from the raw JSON by one function (`figures`) with five choices, each of
them one way tfprof and HTA differ:
  s0  tfprof's terms: tfprof's GPU work, tfprof's kernel classes, exact times, tfprof's window.
  s1  + HTA's GPU events: also cuda_sync rows and host rows with a stream arg; no Gloo host
        collectives.
  s2  + HTA's last-step filter.
  s3  + HTA's window: the span of the GPU events instead of tfprof's steps.
  s4  + HTA's rounding of fractional-microsecond times.
  s5  + HTA's kernel types by name: HTA's terms, all five choices made HTA's way.
1. tfprof against s0, in tfprof's own window: the same figure, so within 1 percentage point of
   the step (or window) duration, and kernel counts exactly.
2. HTA against s5: the same figure in HTA's window, within 1 percentage point of kernel_time.
3. tfprof against HTA, both as a share of HTA's kernel_time, within 1 percentage point once
   tfprof's figure is moved by the documented adjustments s1-s0, s2-s1, s3-s2, s4-s3 and s5-s4
   (each is named in the failure message with its size). No tolerance is widened: where the tools
   measure different things, the difference is computed, said, and added.

The multi-rank directories (the 8 PARAM DLRM ranks; the two HTA trace_filter ranks) are loaded
into HTA together as well: per-rank figures must not change, and the kernel-type sums, which HTA
adds over ranks, are compared with tfprof's sums over the ranks' files.

Needs TFPROF_BUILD_DIR (default build/test-release) with the `tfprof` executable, and a venv with
HTA (scripts/hta-env.sh).
"""

from __future__ import annotations

import functools
import gzip
import json
import math
import os
import re
import subprocess
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import pytest
from hta.configs.env_options import HTA_DISABLE_NS_ROUNDING_ENV
from hta.trace_analysis import TraceAnalysis

ROOT = Path(__file__).resolve().parents[2]
BUILD = (ROOT / os.environ.get("TFPROF_BUILD_DIR", "build/test-release")).resolve()
TFPROF = BUILD / "tfprof"
REAL = ROOT / "tests" / "data" / "real"
TRACES = sorted(p for p in REAL.rglob("*.json*") if "tensorflow" not in p.relative_to(REAL).parts)
PARAM = sorted((REAL / "param" / "dlrm_kineto").glob("*.json.gz"))
SAMPLED = sorted((REAL / "hta" / "trace_filter").glob("sampled_rank-*.json.gz"))

# HTA's own use of pandas warns about deprecations; those are HTA's to fix, not tfprof's.
pytestmark = pytest.mark.filterwarnings("ignore:::hta")

TOLERANCE_PP = 1.0  # percentage points

# --- tfprof's terms (runtime/formats/chrome/chrome_categories.cc, chrome_json_reader.cc) ---
KERNEL_CATS = {"kernel", "Kernel"}
COPY_CATS = {"gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
STEP_CATS = {"cpu_op", "user_annotation", "Operator"}  # host ops; a ProfilerStep#N there is a step
IGNORED_CATS = {"Trace", "ac2g", "async", "fwdbwd", "async_gpu", "async_cpu_to_gpu"}
STEP_NAME = re.compile(r"ProfilerStep#(\d+)")
# tools/tfprof/analysis/op_classes.cc: a kernel whose name holds "nccl" or "rccl", in any case,
# is a collective's; a host op named "gloo:*" is a host collective (Gloo's blocking calls).
TFPROF_COMMUNICATION = re.compile(r"nccl|rccl", re.IGNORECASE)
TFPROF_HOST_COLLECTIVE = re.compile(r"gloo:.*", re.DOTALL)
HOST_CATS = {"cpu_op", "user_annotation", "Operator", "python_function", "Runtime"}

# --- HTA's terms (hta/utils/utils.py) ---
HTA_COMMUNICATION = re.compile(r"^nccl.*Kernel")
HTA_MEMORY = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
HTA_NOT_COMPUTATION = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")
HTA_RANK = re.compile(r'"rank":\s+(\d+)')
HTA_IDLE_CATS = {"kernel", "Kernel", "gpu_memset", "Memset", "gpu_memcpy", "Memcpy",
                 "mtia_ccp_events"}

COMPUTATION, COMMUNICATION, MEMORY, OTHER = "COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER"
SWEPT = (COMPUTATION, COMMUNICATION, MEMORY)  # HTA's order, which names the overlap labels

Interval = Tuple[Decimal, Decimal]


def hta_type(name: str) -> str:
    if HTA_COMMUNICATION.match(name):
        return COMMUNICATION
    if HTA_MEMORY.match(name):
        return MEMORY
    return OTHER if HTA_NOT_COMPUTATION.match(name) else COMPUTATION


def tfprof_type(row: "Row") -> str:
    if row.cat in COPY_CATS:
        return MEMORY
    return COMMUNICATION if TFPROF_COMMUNICATION.search(row.name) else COMPUTATION


# ------------------------------------------------------------------------------------------
# Intervals (us, Decimal: exact for the microseconds-with-3-decimals of the traces)


def union(intervals: Iterable[Interval]) -> List[Interval]:
    """HTA's merge_kernel_intervals: sorted by start; a new interval when a start is after the
    largest end so far. For intervals of non-negative length, the usual union."""
    merged: List[List[Decimal]] = []
    for begin, end in sorted(intervals):
        if merged and begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([begin, end])
    return [(b, e) for b, e in merged]


def length(intervals: Iterable[Interval]) -> Decimal:
    return sum((e - b for b, e in intervals), Decimal(0))


def intersect(a: Sequence[Interval], b: Sequence[Interval]) -> List[Interval]:
    """Both sorted and disjoint."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        begin, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if begin < end:
            out.append((begin, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a: Sequence[Interval], b: Sequence[Interval]) -> List[Interval]:
    """a minus b, both sorted and disjoint."""
    out, j = [], 0
    for begin, end in a:
        while j < len(b) and b[j][1] <= begin:
            j += 1
        k, cursor = j, begin
        while k < len(b) and b[k][0] < end:
            if b[k][0] > cursor:
                out.append((cursor, b[k][0]))
            cursor = max(cursor, b[k][1])
            k += 1
        if cursor < end:
            out.append((cursor, end))
    return out


def sweep_labels(by_type: Dict[str, List[Interval]]) -> Dict[str, Decimal]:
    """HTA's kernel-type labels: time under each set of types that run together."""
    edges = []
    for bit, kind in enumerate(SWEPT):
        for begin, end in by_type[kind]:
            edges += [(begin, 1 << bit), (end, -(1 << bit))]
    edges.sort(key=lambda edge: edge[0])
    labels: Dict[str, Decimal] = {}
    running, previous = 0, None
    for at, change in edges:
        if running > 0 and previous is not None and at > previous:
            label = " overlapping ".join(k for bit, k in enumerate(SWEPT) if running & (1 << bit))
            labels[label] = labels.get(label, Decimal(0)) + (at - previous)
        running += change
        previous = at
    return labels


# ------------------------------------------------------------------------------------------
# The third count: the raw JSON, read here


@dataclass(frozen=True)
class Row:
    name: str
    cat: str
    begin: Decimal      # us, exact
    end: Decimal
    hta_begin: Decimal  # us, as HTA holds it (rounded when the trace's ts are fractional)
    hta_end: Decimal
    stream: int         # HTA's reading of args.stream, -1 when none
    correlation: int
    tfprof_gpu: bool    # a kernel, copy or memset to tfprof
    tfprof_host_collective: bool  # a Gloo host collective to tfprof
    hta_gpu: bool = False  # among HTA's analysed GPU events (set after HTA's last-step filter)


def hta_int(value, default=-1) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


@dataclass
class RawTrace:
    path: Path
    bare_array: bool
    hta_rank: int
    rows: List[Row]              # HTA's rows (dur and cat present, cat not "Trace")
    hta_rounds: bool
    steps: Dict[int, Interval]   # tfprof's steps: host ProfilerStep#N
    activity: Interval           # first to last activity tfprof keeps (its window without steps)
    step_names: frozenset        # HTA's symbols containing "ProfilerStep"

    @property
    def tfprof_gpu(self) -> List[Row]:
        return [r for r in self.rows if r.tfprof_gpu]

    def hta_candidates(self) -> List[Row]:
        return [r for r in self.rows if r.stream != -1]


def read_raw(path: Path) -> RawTrace:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as file:
        text = file.read()
    data = json.loads(text, parse_float=Decimal)
    events = data if isinstance(data, list) else data.get("traceEvents", [])
    rank = 0
    for line in text.decode("utf-8", "replace").splitlines():
        match = HTA_RANK.search(line)
        if match:
            rank = int(match.group(1))
            break
    # pandas makes the ts column floating point when any ts is fractional or missing.
    rounds = any(isinstance(e.get("ts"), Decimal) or e.get("ts") is None for e in events)
    rows, steps, step_names = [], {}, set()
    first = last = None
    for e in events:
        ph, cat, ts, dur = e.get("ph"), e.get("cat"), e.get("ts"), e.get("dur")
        # tfprof's activities: spans of the categories it keeps, and instants other than the
        # global ones that mark the recording itself (Kineto's "Record Window End").
        if ts is not None and (ph == "X" and cat not in IGNORED_CATS
                               or ph in ("i", "I") and e.get("s") != "g"):
            end = Decimal(ts) + Decimal(dur or 0)
            first = Decimal(ts) if first is None else min(first, Decimal(ts))
            last = end if last is None else max(last, end)
        if ph == "X" and cat in STEP_CATS:
            match = STEP_NAME.fullmatch(str(e.get("name", "")))
            if match:
                steps[int(match.group(1))] = (Decimal(ts), Decimal(ts) + Decimal(dur))
        if dur is None or cat is None or cat == "Trace" or ts is None:
            continue
        name = str(e.get("name", ""))
        for symbol in (name, cat):
            if "ProfilerStep" in symbol:
                step_names.add(symbol)
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if rounds:
            hta_begin = Decimal(math.ceil(float(ts)))
            hta_end = Decimal(math.floor(float(ts) + float(dur)))
        else:
            hta_begin, hta_end = Decimal(ts), Decimal(ts) + Decimal(dur)
        rows.append(Row(name=name, cat=cat, begin=Decimal(ts), end=Decimal(ts) + Decimal(dur),
                        hta_begin=hta_begin, hta_end=hta_end,
                        stream=hta_int(args.get("stream", -1)),
                        correlation=hta_int(args.get("correlation", -1)),
                        tfprof_gpu=ph == "X" and cat in KERNEL_CATS | COPY_CATS,
                        tfprof_host_collective=(
                            ph == "X" and TFPROF_HOST_COLLECTIVE.fullmatch(name) is not None
                            and (cat in HOST_CATS or cat.endswith(("_runtime", "_driver"))))))
    return RawTrace(path=path, bare_array=isinstance(data, list), hta_rank=rank, rows=rows,
                    hta_rounds=rounds, steps=steps,
                    activity=(first or Decimal(0), last or Decimal(0)),
                    step_names=frozenset(step_names))


def hta_filtered(trace: RawTrace, loaded_step_names: frozenset) -> List[Row]:
    """The rows with stream != -1 that HTA analyses after _filter_irrelevant_gpu_kernels, given
    the ProfilerStep symbols of every rank loaded with this one."""
    candidates = trace.hta_candidates()
    if len(loaded_step_names) <= 1:
        return candidates

    def is_gpu(row: Row) -> bool:
        return (row.stream >= 0 and row.correlation >= 0) or row.name in ("Event Sync",
                                                                          "Context Sync")

    cpu = [r for r in trace.rows if not is_gpu(r)]
    last_start = max(r.hta_begin for r in cpu if r.name in loaded_step_names)
    kept_cpu = [r for r in cpu if r.hta_begin < last_start]
    launched = {r.correlation for r in kept_cpu}
    kept = [r for r in trace.rows if is_gpu(r) and r.correlation in launched] + kept_cpu
    return [r for r in kept if r.stream != -1]


@dataclass
class Figures:
    """Lengths in us within the window (the union of `window`)."""
    window: Decimal
    busy: Decimal           # union of all GPU events
    kernels: Decimal        # union of compute and communication kernels
    compute: Decimal        # union of compute
    communication: Decimal  # union of communication
    communication_only: Decimal  # communication (s0: and Gloo host collectives) less compute:
                                 # tfprof's communication_ns
    memory_only: Decimal    # copies and memsets less all kernels and the above: tfprof's
                            # memcpy_ns; from s1 on, HTA's "MEMORY" label
    overlap: Decimal        # communication and compute together
    labels: Dict[str, Decimal]  # HTA's kernel-type labels
    span: Interval          # first start to last end of the GPU events
    count: int

    @property
    def non_compute(self) -> Decimal:
        return self.busy - self.compute


def figures(trace: RawTrace, stage: int, windows: Optional[List[Interval]] = None,
            loaded_step_names: Optional[frozenset] = None) -> Figures:
    """The count at stage s0..s5 (module docstring). `windows`: tfprof's window for s0-s2 (the
    steps, or the whole trace when None is given and there are none)."""
    step_names = trace.step_names if loaded_step_names is None else loaded_step_names
    if stage == 0:
        rows = trace.tfprof_gpu
    elif stage == 1:
        rows = trace.hta_candidates()
    else:
        rows = hta_filtered(trace, step_names)
    rounded = stage >= 4

    def kind(row: Row) -> str:
        if stage >= 5 or not row.tfprof_gpu:
            return hta_type(row.name)
        return tfprof_type(row)

    by_type: Dict[str, List[Interval]] = {k: [] for k in (*SWEPT, OTHER)}
    for row in rows:
        interval = (row.hta_begin, row.hta_end) if rounded else (row.begin, row.end)
        by_type[kind(row)].append(interval)
    by_type = {k: union(v) for k, v in by_type.items()}
    everything = union(i for v in by_type.values() for i in v)
    span = (everything[0][0], max(e for _, e in everything)) if everything else (Decimal(0),) * 2
    if stage >= 3:
        windows = [span]
    elif windows is None:
        windows = [(b, e) for b, e in sorted(trace.steps.values())] or [trace.activity]

    def within(intervals: Sequence[Interval]) -> List[Interval]:
        return intersect(list(intervals), windows) if stage < 3 else list(intervals)

    compute, communication = by_type[COMPUTATION], by_type[COMMUNICATION]
    kernels = union(compute + communication)
    # tfprof counts a Gloo host collective as communication too (HTA never sees host rows).
    host_collectives = [(r.begin, r.end) for r in trace.rows
                        if r.tfprof_host_collective] if stage == 0 else []
    communication_only = subtract(union(communication + host_collectives), compute)
    clipped = {k: within(v) for k, v in by_type.items()}
    return Figures(
        window=length(windows),
        busy=length(within(everything)),
        kernels=length(within(kernels)),
        compute=length(within(compute)),
        communication=length(within(communication)),
        communication_only=length(within(communication_only)),
        memory_only=length(within(subtract(by_type[MEMORY],
                                           union(kernels + communication_only)))),
        overlap=length(within(intersect(communication, compute))),
        labels=sweep_labels(clipped),
        span=span, count=len(rows))


# ------------------------------------------------------------------------------------------
# tfprof and HTA, each run once per file or directory


@functools.lru_cache(maxsize=None)
def raw(path: Path) -> RawTrace:
    return read_raw(path)


@functools.lru_cache(maxsize=None)
def tfprof_summary(path: Path) -> dict:
    if not TFPROF.exists():
        pytest.fail(f"{TFPROF} is missing: build the tree first (cmake --build {BUILD})")
    result = subprocess.run([str(TFPROF), "summary", "--json", str(path)], capture_output=True,
                            text=True, timeout=300,
                            env={k: v for k, v in os.environ.items() if k != "TFPROF_PROGRESS"})
    assert result.returncode == 0, result.stderr
    (trace,) = json.loads(result.stdout)["traces"]
    return trace


@dataclass
class HtaResult:
    ranks: Dict[int, str]            # rank -> file name
    temporal: Dict[int, dict]        # rank -> get_temporal_breakdown row
    labels: Dict[str, float]         # kernel_type_df: label -> sum (us), over all ranks
    overlap_pctg: Dict[int, float]   # rank -> comp_comm_overlap_pctg (NaN without communication)
    stream_idle: Dict[Tuple[int, int], float]  # (rank, stream) -> idle time (us), all categories
    analysed: Dict[int, Tuple[int, float]]     # rank -> (GPU rows, sum of their dur)


class HtaRuns:
    """HTA on a directory of symlinks, each directory loaded once per module."""

    def __init__(self, root: Path):
        self.root = root
        self.cache: Dict[Tuple[str, ...], HtaResult] = {}

    def directory(self, paths: Sequence[Path]) -> Path:
        directory = self.root / f"d{len(self.cache)}"
        directory.mkdir()
        for path in paths:
            if raw(path).bare_array:
                # HTA cannot read a bare event array: it is handed the same events in an object.
                with (gzip.open if path.name.endswith(".gz") else open)(path, "rt") as file:
                    events = json.load(file)
                target = directory / path.name.replace(".json.gz", ".wrapped.json")
                target.write_text(json.dumps({"traceEvents": events}))
            else:
                (directory / path.name).symlink_to(path)
        return directory

    def __call__(self, *paths: Path) -> HtaResult:
        key = tuple(str(p) for p in paths)
        if key not in self.cache:
            analysis = TraceAnalysis(trace_dir=str(self.directory(paths)))
            temporal = analysis.get_temporal_breakdown(visualize=False)
            types, _ = analysis.get_gpu_kernel_breakdown(visualize=False,
                                                         include_memory_kernels=True)
            overlap = analysis.get_comm_comp_overlap(visualize=False)
            analysed = {}
            for rank in analysis.t.get_ranks():
                frame = analysis.t.get_trace(rank)
                gpu = frame[frame["stream"].ne(-1)]
                analysed[rank] = (len(gpu), float(gpu["dur"].sum()))
            idle, _ = analysis.get_idle_time_breakdown(ranks=analysis.t.get_ranks(),
                                                       visualize=False)
            stream_idle: Dict[Tuple[int, int], float] = {}
            for row in idle.itertuples():
                key2 = (int(row.rank), int(row.stream))
                stream_idle[key2] = stream_idle.get(key2, 0.0) + float(row.idle_time)
            self.cache[key] = HtaResult(
                ranks={r: Path(f).name for r, f in analysis.t.trace_files.items()},
                temporal={int(r["rank"]): r for r in temporal.to_dict("records")},
                labels=dict(zip(types["kernel_type"], (float(s) for s in types["sum"]))),
                overlap_pctg=dict(zip((int(r) for r in overlap["rank"]),
                                      overlap["comp_comm_overlap_pctg"])),
                stream_idle=stream_idle, analysed=analysed)
        return self.cache[key]


@pytest.fixture(scope="module", autouse=True)
def hta_defaults():
    """HTA as it reads traces by default: its rounding of fractional microseconds on."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(HTA_DISABLE_NS_ROUNDING_ENV, raising=False)
        yield


@pytest.fixture(scope="module")
def hta(tmp_path_factory) -> HtaRuns:
    return HtaRuns(tmp_path_factory.mktemp("hta_real"))


def has_gpu_work(path: Path) -> bool:
    return bool(raw(path).tfprof_gpu)


GPU_TRACES = [p for p in TRACES if has_gpu_work(p)]
NO_GPU_TRACES = [p for p in TRACES if not has_gpu_work(p)]
COMMUNICATION_TRACES = [p for p in GPU_TRACES
                        if any(TFPROF_COMMUNICATION.search(r.name) for r in raw(p).tfprof_gpu
                               if r.cat in KERNEL_CATS)]


def trace_id(path: Path) -> str:
    return str(path.relative_to(REAL))


def us(ns: int) -> Decimal:
    return Decimal(ns) / 1000


def pp(value: Decimal, basis: Decimal) -> float:
    return float(100 * value / basis) if basis else 0.0


# ------------------------------------------------------------------------------------------
# 1. tfprof against the third count, in tfprof's window


def tfprof_windows(summary: dict) -> List[Tuple[dict, List[Interval]]]:
    """tfprof's steps, each with its window; without steps, step_total over the whole trace."""
    raw_steps = raw(Path(summary["path"])).steps
    if summary["steps"]:
        return [(step, [raw_steps[step["number"]]]) for step in summary["steps"]]
    return [(summary["step_total"], None)]


def tfprof_step_figures(summary: dict,
                        trace: RawTrace) -> Iterator[Tuple[str, dict, List[Interval], Figures]]:
    """(label, tfprof's step, its window, the raw JSON's figures over that window) of each of
    tfprof_windows."""
    for step, windows in tfprof_windows(summary):
        yield f"step {step['number']}", step, windows, figures(trace, 0, windows)


def tfprof_device_window(trace: RawTrace) -> Optional[List[Interval]]:
    """tfprof's device window: the first step's begin to the last one's end (None without
    steps)."""
    if not trace.steps:
        return None
    steps = sorted(trace.steps.values())
    return [(steps[0][0], max(e for _, e in steps))]


def check_close(failures: List[str], what: str, tfprof_ns: int, independent_us: Decimal,
                basis_us: Decimal) -> None:
    off = pp(us(tfprof_ns) - independent_us, basis_us)
    if abs(off) > TOLERANCE_PP:
        failures.append(f"{what}: tfprof {us(tfprof_ns)} us, independent {independent_us} us "
                        f"({off:+.2f} pp of {basis_us} us)")


@pytest.mark.parametrize("path", GPU_TRACES, ids=trace_id)
def test_tfprof_step_and_device_figures_match_the_raw_json(path: Path) -> None:
    """Fields tfprof has today: busy (via gpu_idle_ns), copies, kernels, device figures."""
    summary, trace = tfprof_summary(path), raw(path)
    failures: List[str] = []
    for label, step, windows, mine in tfprof_step_figures(summary, trace):
        check_close(failures, f"{label} duration_ns", step["duration_ns"], mine.window,
                    mine.window)
        check_close(failures, f"{label} busy (duration - gpu_idle_ns)",
                    step["duration_ns"] - step["gpu_idle_ns"], mine.busy, mine.window)
        check_close(failures, f"{label} memcpy_ns", step["memcpy_ns"], mine.memory_only,
                    mine.window)
        if windows is not None:
            begin, end = windows[0]
            kernels = sum(1 for r in trace.tfprof_gpu
                          if r.cat in KERNEL_CATS and begin <= r.begin < end)
            assert step["kernels"] == kernels, label
    assert summary["kernel_count"] == sum(1 for r in trace.tfprof_gpu if r.cat in KERNEL_CATS)
    (device,) = summary["devices"]  # every trace here has one GPU
    mine = figures(trace, 0, tfprof_device_window(trace) or [trace.activity])
    check_close(failures, "device window_ns", device["window_ns"], mine.window, mine.window)
    check_close(failures, "device busy_ns", device["busy_ns"], mine.busy, mine.window)
    check_close(failures, "device kernel_ns", device["kernel_ns"], mine.kernels, mine.window)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("path", GPU_TRACES, ids=trace_id)
def test_tfprof_compute_and_communication_split_matches_the_raw_json(path: Path) -> None:
    """The compute/communication split: gpu_compute_ns of compute kernels only,
    communication_ns per step and per device, communication_kernel_count."""
    summary, trace = tfprof_summary(path), raw(path)
    failures: List[str] = []
    for label, step, _, mine in tfprof_step_figures(summary, trace):
        check_close(failures, f"{label} gpu_compute_ns", step["gpu_compute_ns"], mine.compute,
                    mine.window)
        check_close(failures, f"{label} communication_ns", step["communication_ns"],
                    mine.communication_only, mine.window)
    (device,) = summary["devices"]
    mine = figures(trace, 0, tfprof_device_window(trace) or [trace.activity])
    check_close(failures, "device communication_ns", device["communication_ns"],
                mine.communication, mine.window)
    assert summary["communication_kernel_count"] == sum(
        1 for r in trace.tfprof_gpu if r.cat in KERNEL_CATS and TFPROF_COMMUNICATION.search(r.name))
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------------------------------
# 2. HTA against the third count, in HTA's terms


def hta_single(hta: HtaRuns, path: Path) -> Tuple[HtaResult, dict]:
    result = hta(path)
    (rank,) = result.temporal
    return result, result.temporal[rank]


@pytest.mark.parametrize("path", GPU_TRACES, ids=trace_id)
def test_hta_figures_match_the_raw_json_in_htas_terms(hta: HtaRuns, path: Path) -> None:
    """Checks this module's reading of HTA: if it fails, the docstring is wrong, not tfprof."""
    trace = raw(path)
    result, row = hta_single(hta, path)
    rank = next(iter(result.temporal))
    assert rank == trace.hta_rank
    mine = figures(trace, 5)
    count, dur = result.analysed[rank]
    assert count == mine.count
    assert dur == pytest.approx(float(sum(r.hta_end - r.hta_begin
                                          for r in hta_filtered(trace, trace.step_names))))
    span = mine.span[1] - mine.span[0]
    assert row["kernel_time(us)"] == pytest.approx(float(span))
    # To the nanosecond, not within a tolerance: the third count does HTA's arithmetic on
    # HTA's rows (in floating point there, in decimal here).
    for column, value in (("idle_time(us)", span - mine.busy),
                          ("compute_time(us)", mine.compute),
                          ("non_compute_time(us)", mine.non_compute)):
        assert row[column] == pytest.approx(float(value), abs=1e-3), column
    assert set(result.labels) == {k for k, v in mine.labels.items() if v}
    assert result.labels.get(MEMORY, 0.0) == pytest.approx(float(mine.memory_only), abs=1e-3)
    for label, value in mine.labels.items():
        assert result.labels.get(label, 0.0) == pytest.approx(float(value), abs=1e-3), label
    if mine.communication:
        assert result.overlap_pctg[rank] == pytest.approx(
            round(float(100 * mine.overlap / mine.communication), 2), abs=0.01)


@pytest.mark.parametrize("path", GPU_TRACES, ids=trace_id)
def test_hta_idle_time_breakdown_per_stream_matches_the_raw_json(hta: HtaRuns,
                                                                  path: Path) -> None:
    """get_idle_time_breakdown: a stream's idle time, all categories, is its span less the
    durations of its kernels, copies and memsets, in HTA's rounded microseconds."""
    trace = raw(path)
    result, _ = hta_single(hta, path)
    rank = next(iter(result.temporal))
    by_stream: Dict[int, List[Row]] = {}
    for row in hta_filtered(trace, trace.step_names):
        if row.cat in HTA_IDLE_CATS:
            by_stream.setdefault(row.stream, []).append(row)
    expected = {}
    for stream, rows in by_stream.items():
        rows.sort(key=lambda r: r.hta_begin)
        expected[(rank, stream)] = float(sum(b.hta_begin - a.hta_end
                                             for a, b in zip(rows, rows[1:])))
    assert result.stream_idle.keys() == expected.keys()
    for key, value in expected.items():
        assert result.stream_idle[key] == pytest.approx(value, abs=0.01 * len(by_stream[key[1]])), key


# ------------------------------------------------------------------------------------------
# 3. tfprof against HTA, on HTA's basis, with the documented adjustments

ADJUSTMENTS = ("HTA's GPU events (cuda_sync rows, host rows with a stream arg, no Gloo)",
               "HTA's last-step filter",
               "HTA's window (GPU span) instead of tfprof's steps",
               "HTA's rounding to whole microseconds",
               "HTA's kernel types by name")


def compare(failures: List[str], what: str, tfprof_us: Decimal, hta_us: float,
            stages: List[Decimal], basis: Decimal) -> None:
    """tfprof's figure moved by the adjustments (stages[i+1] - stages[i], counted from the raw
    JSON) against HTA's, as shares of HTA's window `basis`."""
    adjustments = [b - a for a, b in zip(stages, stages[1:])]
    adjusted = tfprof_us + sum(adjustments, Decimal(0))
    off = pp(adjusted - Decimal(str(hta_us)), basis)
    if abs(off) > TOLERANCE_PP:
        detail = ", ".join(f"{name} {pp(a, basis):+.2f} pp" for name, a in zip(ADJUSTMENTS,
                                                                                adjustments) if a)
        failures.append(
            f"{what}: tfprof {pp(tfprof_us, basis):.2f}% (independent in tfprof's terms "
            f"{pp(stages[0], basis):.2f}%), adjusted {pp(adjusted, basis):.2f}%, "
            f"HTA {pp(Decimal(str(hta_us)), basis):.2f}% (independent in HTA's terms "
            f"{pp(stages[-1], basis):.2f}%); adjustments: {detail or 'none'}")


@functools.lru_cache(maxsize=None)
def stage_figures(path: Path, loaded_step_names: Optional[frozenset] = None,
                  device_window: bool = False) -> Tuple[Figures, ...]:
    """s0..s5 for one file; `device_window`: tfprof's device window (first step's begin to the
    last one's end) instead of its steps."""
    trace = raw(path)
    windows = tfprof_device_window(trace) if device_window else None
    return tuple(figures(trace, stage, windows, loaded_step_names) for stage in range(6))


def tfprof_totals(path: Path) -> dict:
    return tfprof_summary(path)["step_total"]


@pytest.mark.parametrize("path", GPU_TRACES, ids=trace_id)
def test_idle_and_copy_time_match_hta(hta: HtaRuns, path: Path) -> None:
    """Idle time (tfprof: window - busy) and time when only copies or memsets run (tfprof's
    memcpy_ns, HTA's "MEMORY" label): fields tfprof has today."""
    trace = raw(path)
    _, row = hta_single(hta, path)
    stages = stage_figures(path)
    basis = Decimal(str(row["kernel_time(us)"]))
    total = tfprof_totals(path)
    result = hta(path)
    failures: List[str] = []
    compare(failures, "busy = kernel_time - idle_time",
            us(total["duration_ns"] - total["gpu_idle_ns"]),
            row["kernel_time(us)"] - row["idle_time(us)"], [s.busy for s in stages], basis)
    compare(failures, "MEMORY only (memcpy_ns)", us(total["memcpy_ns"]),
            result.labels.get(MEMORY, 0.0), [s.memory_only for s in stages], basis)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("path", GPU_TRACES, ids=trace_id)
def test_compute_time_matches_hta(hta: HtaRuns, path: Path) -> None:
    """HTA's compute_time against tfprof's gpu_compute_ns (compute kernels only)."""
    trace = raw(path)
    _, row = hta_single(hta, path)
    stages = stage_figures(path)
    failures: List[str] = []
    compare(failures, "compute_time", us(tfprof_totals(path)["gpu_compute_ns"]),
            row["compute_time(us)"], [s.compute for s in stages],
            Decimal(str(row["kernel_time(us)"])))
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("path", GPU_TRACES, ids=trace_id)
def test_non_compute_and_communication_time_match_hta(hta: HtaRuns, path: Path) -> None:
    """HTA's non_compute_time against tfprof's memcpy_ns + communication_ns; HTA's
    COMMUNICATION-only labels against communication_ns; HTA's compute/communication overlap
    against tfprof's device communication_ns and step communication_ns."""
    trace = raw(path)
    result, row = hta_single(hta, path)
    stages = stage_figures(path)
    basis = Decimal(str(row["kernel_time(us)"]))
    total = tfprof_totals(path)
    failures: List[str] = []
    compare(failures, "non_compute_time (memcpy_ns + communication_ns)",
            us(total["memcpy_ns"] + total["communication_ns"]), row["non_compute_time(us)"],
            [s.non_compute for s in stages], basis)
    only = (COMMUNICATION, f"{COMMUNICATION} overlapping {MEMORY}")
    compare(failures, "COMMUNICATION without COMPUTATION (communication_ns)",
            us(total["communication_ns"]), sum(result.labels.get(k, 0.0) for k in only),
            [s.communication_only for s in stages], basis)
    if path in COMMUNICATION_TRACES:
        # Device figures are over the window from the first step's begin to the last one's end.
        (device,) = tfprof_summary(path)["devices"]
        on_device = stage_figures(path, device_window=True)
        hta_union = sum(v for k, v in result.labels.items() if COMMUNICATION in k)
        compare(failures, "union of communication kernels (device communication_ns)",
                us(device["communication_ns"]), hta_union,
                [s.communication for s in on_device], basis)
        # get_comm_comp_overlap as time: its share of HTA's communication union. tfprof's: the
        # device's communication union less the steps' communication alone, when the steps are
        # the device window (one step, or none).
        if len(trace.steps) <= 1:
            rank = next(iter(result.overlap_pctg))
            compare(failures, "communication overlapped by compute (get_comm_comp_overlap)",
                    us(device["communication_ns"] - total["communication_ns"]),
                    result.overlap_pctg[rank] / 100 * hta_union, [s.overlap for s in stages],
                    basis)
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------------------------------
# Several ranks in one HTA directory


@pytest.mark.parametrize("paths", [PARAM, SAMPLED], ids=["param_dlrm_8_ranks",
                                                         "hta_trace_filter_2_ranks"])
def test_ranks_loaded_together(hta: HtaRuns, paths: List[Path]) -> None:
    """Per rank, the same figures as each file alone; the kernel-type sums (HTA adds them over
    the ranks) against tfprof's sums over the files, for what tfprof has today: copies alone."""
    together = hta(*paths)
    step_names = frozenset().union(*(raw(p).step_names for p in paths))
    assert sorted(together.ranks) == sorted(raw(p).hta_rank for p in paths)
    for path in paths:
        trace = raw(path)
        alone = hta(path).temporal[trace.hta_rank]
        row = together.temporal[trace.hta_rank]
        for column in ("idle_time(us)", "compute_time(us)", "non_compute_time(us)",
                       "kernel_time(us)"):
            assert row[column] == alone[column], (path.name, column)
    basis = sum(Decimal(str(r["kernel_time(us)"])) for r in together.temporal.values())
    stages = [Decimal(0)] * 6
    tfprof_total = Decimal(0)
    for path in paths:
        for i, figure in enumerate(stage_figures(path, step_names)):
            stages[i] += figure.memory_only
        tfprof_total += us(tfprof_totals(path)["memcpy_ns"])
    failures: List[str] = []
    compare(failures, "MEMORY only, all ranks (memcpy_ns)", tfprof_total,
            together.labels.get(MEMORY, 0.0), stages, basis)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("paths", [PARAM, SAMPLED], ids=["param_dlrm_8_ranks",
                                                         "hta_trace_filter_2_ranks"])
def test_ranks_loaded_together_communication(hta: HtaRuns, paths: List[Path]) -> None:
    """HTA's kernel-type sums over the ranks: COMPUTATION (all its labels) against the sum of
    gpu_compute_ns, COMMUNICATION alone against the sum of communication_ns."""
    together = hta(*paths)
    step_names = frozenset().union(*(raw(p).step_names for p in paths))
    basis = sum(Decimal(str(r["kernel_time(us)"])) for r in together.temporal.values())
    compute, alone = [Decimal(0)] * 6, [Decimal(0)] * 6
    tfprof_compute = tfprof_alone = Decimal(0)
    for path in paths:
        for i, figure in enumerate(stage_figures(path, step_names)):
            compute[i] += figure.compute
            alone[i] += figure.communication_only
        total = tfprof_totals(path)
        tfprof_compute += us(total["gpu_compute_ns"])
        tfprof_alone += us(total["communication_ns"])
    failures: List[str] = []
    compare(failures, "COMPUTATION, all ranks (gpu_compute_ns)", tfprof_compute,
            sum(v for k, v in together.labels.items() if COMPUTATION in k), compute, basis)
    only = (COMMUNICATION, f"{COMMUNICATION} overlapping {MEMORY}")
    compare(failures, "COMMUNICATION without COMPUTATION, all ranks (communication_ns)",
            tfprof_alone, sum(together.labels.get(k, 0.0) for k in only), alone, basis)
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------------------------------
# What HTA cannot read


@pytest.mark.parametrize("path", NO_GPU_TRACES, ids=trace_id)
def test_traces_without_gpu_work(tmp_path: Path, path: Path) -> None:
    """No kernel, copy or memset (host-only slices, the CUPTI range profiler's trace): tfprof says
    so; HTA loads them but its temporal breakdown has no GPU row to start from."""
    summary = tfprof_summary(path)
    assert summary["has_gpu"] is False and summary["devices"] == []
    (tmp_path / path.name).symlink_to(path)
    analysis = TraceAnalysis(trace_dir=str(tmp_path))
    frame = analysis.t.get_trace(raw(path).hta_rank)
    assert not frame["stream"].ne(-1).any()
    with pytest.raises(IndexError):
        analysis.get_temporal_breakdown(visualize=False)


def test_hta_refuses_a_bare_event_array(tmp_path: Path) -> None:
    """The Dec 2020 Kineto trace is a bare JSON array, which tfprof reads and HTA does not; the
    other tests hand HTA the same events wrapped in {"traceEvents": ...}."""
    (bare,) = [p for p in TRACES if raw(p).bare_array]
    (tmp_path / bare.name).symlink_to(bare)
    with pytest.raises(AttributeError):
        TraceAnalysis(trace_dir=str(tmp_path))
    assert tfprof_summary(bare)["has_gpu"]


@pytest.mark.parametrize("path", GPU_TRACES, ids=trace_id)
def test_rank(hta: HtaRuns, path: Path) -> None:
    """HTA's rank (its regex over the text, 0 when absent) is tfprof's rank, or 0 without one."""
    result = hta(path)
    assert list(result.temporal) == [tfprof_summary(path)["rank"] or 0]
