"""`tfprof convert/merge ... -o X.pftrace`: Perfetto's protobuf trace, decoded with Perfetto's own
schema (the `perfetto` package's perfetto_trace_pb2, perfetto_file.py), holds every slice,
instant, counter, flow, track and argument that tfprof's Chrome JSON of the same input holds, at
the same nanosecond. Every real trace of the corpus goes through it, and merged ranks."""

from __future__ import annotations

import collections
import decimal
import json
import pathlib
import zlib
from typing import Any, Dict, List, Tuple

import pytest

from conftest import ROOT, run_tfprof
from perfetto_file import Decoded, decode, pb

REAL = ROOT / "tests" / "data" / "real"
CORPUS = sorted(p for p in REAL.rglob("*") if p.is_file() and p.suffix in (".gz", ".json")
                and "trim_trace" not in p.name)
DLRM = sorted((REAL / "param" / "dlrm_kineto").glob("*.json.gz"))


def ns(value: Any) -> int:
    return int(decimal.Decimal(str(value)) * 1000)


# What a .pftrace does not hold of another producer's trace that tfprof's JSON keeps as the file
# had it (a converted PyTorch or TensorFlow timeline trace): the file's args, the flows as the file drew them (the .pftrace draws tfprof's launch arrows), a
# ProfilerStep's category and row (it is a step on the Steps row there, by its own name), and
# Kineto's whole-trace span and global instants.
# Of the args, those every kind carries in both: the step and the correlation id (the JSON's
# args of a foreign trace are checked against its input in test_lossless_convert.py).
COMPARED_KEYS = {"step", "correlation"}


def foreign(events: Dict[str, Any]) -> bool:
    """Whether the JSON was converted from another producer's Chrome trace."""
    return any("Chrome trace" in source.get("format", "")
               and not source["format"].startswith("tfprof")
               for source in events["header"].get("sources", []))


def as_pftrace_holds(events: Dict[str, Any]) -> Dict[str, Any]:
    """`events` (json_events or perfetto_events) less what a .pftrace cannot hold of a foreign
    trace."""
    def args(pairs):
        return tuple(p for p in pairs if p[0] in COMPARED_KEYS)

    slices = []
    for row, cat, name, begin, end, pairs in events["slices"]:
        if name.startswith("ProfilerStep#") and cat != "gpu_user_annotation":
            slices.append(((row[0], "<step>"), "step", name, begin, end, ()))
        else:
            slices.append((row, cat, name, begin, end, args(pairs)))
    instants = [(row, name, at, args(pairs)) for row, name, at, pairs in events["instants"]]
    return dict(events, slices=slices, instants=instants, flows=[])


def json_events(path: pathlib.Path) -> Dict[str, Any]:
    """tfprof's Chrome JSON as comparable records: rows by (pid, row name)."""
    data = json.loads(path.read_text(), parse_float=decimal.Decimal)
    events = data["traceEvents"]
    row_names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
                 if e["ph"] == "M" and e["name"] == "thread_name"}
    process_names = {e["pid"]: e["args"]["name"] for e in events
                     if e["ph"] == "M" and e["name"] == "process_name"}
    slices, instants, counters, ranges, flows = [], [], [], [], []
    begins = {}
    for e in events:
        row = (e.get("pid"), row_names.get((e.get("pid"), e.get("tid")), ""))
        if e.get("cat") == "Trace" or e.get("s") == "g":
            continue  # Kineto's whole-trace events, kept as they were in a JSON only
        if e["ph"] == "X":
            slices.append((row, e["cat"], e["name"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]),
                           canonical_args(e.get("args", {}))))
        elif e["ph"] == "i":
            instants.append((row, e["name"], ns(e["ts"]), canonical_args(e.get("args", {}))))
        elif e["ph"] == "C":
            for series, value in e["args"].items():
                counters.append((e["pid"], e["name"], series, ns(e["ts"]), float(value)))
        elif e["ph"] == "b":
            begins[e["id"]] = (e, row)
        elif e["ph"] == "e":
            begin, begin_row = begins.pop(e["id"])
            ranges.append((e["pid"], e["name"], ns(begin["ts"]), ns(e["ts"]), begin_row[1], row[1]))
        elif e["ph"] == "s":
            flows.append((row, ns(e["ts"])))
    return {"slices": slices, "instants": instants, "counters": counters, "ranges": ranges,
            "flows": flows, "process_names": process_names, "header": data.get("tfprof", {})}


def canonical_args(args: Dict[str, Any]) -> Tuple[Tuple[str, Any], ...]:
    result = []
    for key, value in args.items():
        if key == "memory bandwidth (GB/s)":
            value = round(float(value), 3)
        elif isinstance(value, decimal.Decimal):
            value = float(value)
        elif isinstance(value, list):
            value = tuple(value)
        elif value is True:
            value = True
        result.append((key, value))
    return tuple(sorted(result))


def perfetto_events(decoded: Decoded) -> Dict[str, Any]:
    def row_of(uuid: int) -> Tuple[int, str]:
        row = decoded.row(uuid)
        process = decoded.process_of(row.uuid)
        return (process.pid, row.name)

    slices, ranges = [], []
    for s in decoded.slices:
        args = dict(s.args)
        if s.category == "range":
            thread_names = {(t.pid, t.tid): t.name for t in decoded.tracks.values() if t.tid is not None}
            pid = decoded.process_of(s.track).pid
            begin_row = thread_names[(pid, args.pop("thread"))]
            end_row = thread_names[(pid, args.pop("end thread"))] if "end thread" in args else begin_row
            ranges.append((pid, s.name, s.begin_ns, s.end_ns, begin_row, end_row))
            continue
        slices.append((row_of(s.track), s.category, s.name, s.begin_ns, s.end_ns, canonical_args(args)))
    instants = [(row_of(i.track), i.name, i.begin_ns, canonical_args(i.args))
                for i in decoded.instants if i.name != "tfprof trace info"]
    counters = []
    for uuid, at, value in decoded.counters:
        track = decoded.tracks[uuid]
        counters.append((decoded.process_of(uuid).pid, track.name, track.unit_name, at, value))
    # A flow starts on a launch call and ends on GPU work of the same correlation id.
    starts = {fid: s for s in decoded.slices for fid in s.flow_ids}
    ends = {fid: s for s in decoded.slices for fid in s.terminating_flow_ids}
    assert set(starts) == set(ends), "flows that never end, or end without a start"
    for fid, start in starts.items():
        # (PyTorch 1.8-1.10's own categories, which a conversion keeps, in the old traces.)
        assert start.category in ("cuda_runtime", "cuda_driver", "Runtime"), start
        assert ends[fid].category in ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy",
                                      "Memset"), ends[fid]
        assert start.args["correlation"] == ends[fid].args["correlation"] == fid & 0xFFFFFFFF
    flows = [(row_of(s.track), s.begin_ns) for s in starts.values()]
    process_names = {t.pid: t.process_name for t in decoded.tracks.values()
                     if t.tid is None and t.pid is not None and t.process_name}
    return {"slices": slices, "instants": instants, "counters": counters, "ranges": ranges,
            "flows": flows, "process_names": process_names}


def assert_same_content(json_path: pathlib.Path, pftrace: pathlib.Path) -> Decoded:
    expected = json_events(json_path)
    decoded = decode(pftrace)
    got = perfetto_events(decoded)
    if foreign(expected):
        expected, got = as_pftrace_holds(expected), as_pftrace_holds(got)
    for key in ("slices", "instants", "counters", "ranges", "flows"):
        want = collections.Counter(expected[key])
        have = collections.Counter(got[key])
        assert want == have, (
            f"{key}: {sum(want.values())} in the JSON, {sum(have.values())} in the .pftrace; "
            f"only in JSON: {list((want - have).elements())[:3]}; "
            f"only in .pftrace: {list((have - want).elements())[:3]}")
    assert got["process_names"] == expected["process_names"]
    # The header the JSON has, in the trace info.
    info = decoded.info()
    header = expected["header"]
    for key in ("pid", "hostname", "events_recorded", "dropped_events", "gpu_records_dropped"):
        if key in header:
            assert info[key] == header[key], key
    if "start_time_unix_ns" in header:
        assert info["start_time_unix_ns"] == header["start_time_unix_ns"]
        assert decoded.realtime_minus_boottime == (header["start_time_unix_ns"]
                                                   - header["start_time_monotonic_ns"])
    return decoded


@pytest.mark.parametrize("trace", CORPUS, ids=lambda p: str(p.relative_to(REAL)))
def test_every_corpus_trace_holds_what_its_json_holds(tfprof_exe, tmp_path, trace):
    run_tfprof(tfprof_exe, "convert", trace, "-o", tmp_path / "t.json")
    run_tfprof(tfprof_exe, "convert", trace, "-o", tmp_path / "t.pftrace")
    decoded = assert_same_content(tmp_path / "t.json", tmp_path / "t.pftrace")
    assert decoded.slices, "no slice at all"
    # Its packets in deflated batches, and at least 3.5x smaller than the JSON (issue 36), however
    # small the trace; and every track named.
    top_level = pb.Trace()
    top_level.ParseFromString((tmp_path / "t.pftrace").read_bytes())
    assert sum(p.HasField("compressed_packets") for p in top_level.packet) >= 2  # events, info
    assert (tmp_path / "t.pftrace").stat().st_size * 3.5 <= (tmp_path / "t.json").stat().st_size
    for track in decoded.tracks.values():
        assert track.name or track.pid is not None, track


def test_kernels_carry_their_launch_shape_and_flow(tfprof_exe, tmp_path):
    run_tfprof(tfprof_exe, "convert", DLRM[0], "-o", tmp_path / "t.pftrace")
    decoded = decode(tmp_path / "t.pftrace")
    kernels = [s for s in decoded.slices if s.category == "kernel"]
    raw = json.loads(__import__("gzip").open(DLRM[0], "rt").read())
    raw_kernels = [e for e in raw["traceEvents"] if e.get("cat") == "kernel"]
    assert len(kernels) == len(raw_kernels) > 100
    shaped = [k for k in kernels if "grid" in k.args]
    assert shaped and all(len(k.args["grid"]) == 3 and len(k.args["block"]) == 3 for k in shaped)
    # Every kernel whose launch is in the file is the end of one flow from that launch.
    launches = {s.args["correlation"]: s for s in decoded.slices if s.category == "cuda_runtime"
                and s.flow_ids}
    ended = [k for k in kernels if k.terminating_flow_ids]
    assert len(ended) >= 0.9 * len(kernels)
    for kernel in ended:
        launch = launches[kernel.args["correlation"]]
        assert launch.begin_ns <= kernel.begin_ns
        assert launch.flow_ids == kernel.terminating_flow_ids


def test_merged_ranks_keep_groups_and_steps_per_rank(tfprof_exe, tmp_path):
    run_tfprof(tfprof_exe, "merge", *DLRM[:2], "-o", tmp_path / "m.json")
    run_tfprof(tfprof_exe, "merge", *DLRM[:2], "-o", tmp_path / "m.pftrace")
    decoded = assert_same_content(tmp_path / "m.json", tmp_path / "m.pftrace")
    groups = decoded.info()["process_groups"]
    assert sorted({g["group"] for g in groups}) == [0, 1]
    assert sorted({g["rank"] for g in groups}) == [0, 1]
    steps = [s for s in decoded.slices if s.category == "step"]
    assert len({decoded.process_of(s.track).pid for s in steps}) == 2


def test_format_option_and_unknown_names(tfprof_exe, tmp_path):
    run_tfprof(tfprof_exe, "convert", DLRM[0], "-o", tmp_path / "t.bin", "--format", "perfetto")
    assert decode(tmp_path / "t.bin").slices
    run_tfprof(tfprof_exe, "convert", DLRM[0], "-o", tmp_path / "t.perfetto-trace")
    assert decode(tmp_path / "t.perfetto-trace").slices
    result = run_tfprof(tfprof_exe, "convert", DLRM[0], "-o", tmp_path / "t.bin", "--format",
                        "perfeto", check=2)
    assert "perfetto" in result.stderr


def summary_of(tfprof_exe, path: pathlib.Path) -> Dict[str, Any]:
    result = run_tfprof(tfprof_exe, "summary", "--json", path)
    summary = json.loads(result.stdout)
    for trace in summary["traces"]:
        for key in ("path", "format", "events"):  # the JSON counts its metadata events too
            trace.pop(key, None)
        # The memory PyTorch's "[memory]" events tell is in their args, which .pftrace does not
        # keep (docs/chrome-trace.md): only memory counters survive the conversion.
        trace["memory"]["devices"] = [device for device in trace["memory"]["devices"]
                                      if device["source"] != "[memory] events"]
    return summary


@pytest.mark.parametrize("trace", CORPUS, ids=lambda p: str(p.relative_to(REAL)))
def test_every_corpus_trace_reads_back_to_the_same_summary(tfprof_exe, tmp_path, trace):
    run_tfprof(tfprof_exe, "convert", trace, "-o", tmp_path / "t.json")
    run_tfprof(tfprof_exe, "convert", trace, "-o", tmp_path / "t.pftrace")
    assert summary_of(tfprof_exe, tmp_path / "t.pftrace") == summary_of(tfprof_exe, tmp_path / "t.json")
    # And back to JSON: the same content as the JSON written from the original.
    run_tfprof(tfprof_exe, "convert", tmp_path / "t.pftrace", "-o", tmp_path / "back.json")
    original, back = json_events(tmp_path / "t.json"), json_events(tmp_path / "back.json")
    if foreign(original):
        original, back = as_pftrace_holds(original), as_pftrace_holds(back)
    for key in ("slices", "instants", "counters", "ranges", "flows", "process_names"):
        if key == "process_names":
            assert back[key] == original[key]
        else:
            assert collections.Counter(back[key]) == collections.Counter(original[key]), key


def in_compressed_batches(packets: List[Any], batch_bytes: int) -> bytes:
    """A Trace whose packets are Perfetto's compressed_packets batches, as its tracing service
    writes a compressed trace: each batch a zlib stream of serialized Trace.packet fields."""
    out, batch = pb.Trace(), pb.Trace()

    def flush() -> None:
        if batch.packet:
            out.packet.add().compressed_packets = zlib.compress(batch.SerializeToString())
            del batch.packet[:]

    for packet in packets:
        batch.packet.add().CopyFrom(packet)
        if batch.ByteSize() >= batch_bytes:
            flush()
    flush()
    return out.SerializeToString()


PERFETTO_TRACES = sorted(p for p in (REAL / "perfetto").rglob("*") if p.is_file()
                         and p.suffix in (".pftrace", ".perfetto-trace"))


@pytest.mark.parametrize("trace", PERFETTO_TRACES, ids=lambda p: str(p.relative_to(REAL)))
def test_other_producers_traces_read_the_same_in_compressed_batches(tfprof_exe, tmp_path, trace):
    # Their packet sequences, interned names and clocks cross the batches' edges (small batches:
    # many edges); tfprof reads the same trace as from the plain file.
    original = pb.Trace()
    original.ParseFromString(trace.read_bytes())
    packed = tmp_path / ("packed" + trace.suffix)
    packed.write_bytes(in_compressed_batches(list(original.packet), 16 << 10))
    assert len(pb.Trace.FromString(packed.read_bytes()).packet) < len(original.packet)
    summary = summary_of(tfprof_exe, trace)
    assert summary_of(tfprof_exe, packed) == summary
    run_tfprof(tfprof_exe, "convert", trace, "-o", tmp_path / "plain.json")
    run_tfprof(tfprof_exe, "convert", packed, "-o", tmp_path / "packed.json")
    plain = json.loads((tmp_path / "plain.json").read_text())
    from_packed = json.loads((tmp_path / "packed.json").read_text())
    assert from_packed["traceEvents"] == plain["traceEvents"]
    # Something was read from inside the batches: track events (tokio's), or the tracing service's
    # TraceStats (the Android and QML traces hold no track events).
    assert len(plain["traceEvents"]) > 10 or summary["traces"][0]["losses"]["perfetto"] is not None


def test_report_and_merge_take_pftrace_inputs(tfprof_exe, tmp_path):
    for index, trace in enumerate(DLRM[:2]):
        run_tfprof(tfprof_exe, "convert", trace, "-o", tmp_path / f"r{index}.pftrace")
    run_tfprof(tfprof_exe, "merge", tmp_path / "r0.pftrace", tmp_path / "r1.pftrace",
               "-o", tmp_path / "m.json")
    run_tfprof(tfprof_exe, "merge", *DLRM[:2], "-o", tmp_path / "direct.json")
    assert summary_of(tfprof_exe, tmp_path / "m.json") == summary_of(tfprof_exe, tmp_path / "direct.json")
    run_tfprof(tfprof_exe, "report", tmp_path / "r0.pftrace", "-o", tmp_path / "r0.html")
    html = (tmp_path / "r0.html").read_text()
    assert "tfprof Perfetto trace" in html or "r0.pftrace" in html


def test_a_trace_written_as_the_perfetto_sdk_writes_it(tfprof_exe, tmp_path):
    """Another producer's layout, built here with Perfetto's own classes: a sequence per thread
    whose defaults name its track, timestamps on an incremental clock in microsecond units,
    interned names, a process and two threads; nested slices, an instant and a counter."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    trace = pb.Trace()

    def packet(sequence: int) -> Any:
        p = trace.packet.add()
        p.trusted_packet_sequence_id = sequence
        return p

    process = packet(1)
    process.track_descriptor.uuid = 100
    process.track_descriptor.process.pid = 42
    process.track_descriptor.process.process_name = "trainer"
    expected = []
    for sequence, (tid, thread_name) in enumerate([(43, "main"), (44, "loader")], start=2):
        thread_uuid = 200 + tid
        first = packet(sequence)
        first.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        first.trace_packet_defaults.timestamp_clock_id = 64
        first.trace_packet_defaults.track_event_defaults.track_uuid = thread_uuid
        descriptor = packet(sequence)
        descriptor.track_descriptor.uuid = thread_uuid
        descriptor.track_descriptor.parent_uuid = 100
        descriptor.track_descriptor.thread.pid = 42
        descriptor.track_descriptor.thread.tid = tid
        descriptor.track_descriptor.thread.thread_name = thread_name
        snapshot = packet(sequence)
        snapshot.timestamp = 1_000_000
        snapshot.timestamp_clock_id = BOOTTIME = 6
        clock = snapshot.clock_snapshot.clocks.add()
        clock.clock_id, clock.timestamp, clock.is_incremental, clock.unit_multiplier_ns = 64, 1000, True, 1000
        boot = snapshot.clock_snapshot.clocks.add()
        boot.clock_id, boot.timestamp = BOOTTIME, 1_000_000
        # outer [1.000 ms + 10 us, + 50 us], inner [+20 us, +30 us], all in us deltas.
        names = [(1, f"{thread_name} outer"), (2, f"{thread_name} inner")]
        for delta, kind, name_iid in [(10, 1, 1), (10, 1, 2), (10, 2, 0), (20, 2, 0)]:
            p = packet(sequence)
            p.timestamp = delta
            p.sequence_flags = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
            p.track_event.type = kind
            if name_iid:
                p.track_event.name_iid = name_iid
                p.track_event.category_iids.append(1)
                if name_iid == 1:
                    for iid, name in names:
                        entry = p.interned_data.event_names.add()
                        entry.iid, entry.name = iid, name
                    category = p.interned_data.event_categories.add()
                    category.iid, category.name = 1, "app"
        expected += [(f"{thread_name} outer", 1_010_000, 1_050_000), (f"{thread_name} inner", 1_020_000, 1_030_000)]
    path = tmp_path / "sdk.pftrace"
    path.write_bytes(trace.SerializeToString())

    run_tfprof(tfprof_exe, "convert", path, "-o", tmp_path / "sdk.json")
    events = json.loads((tmp_path / "sdk.json").read_text())["traceEvents"]
    slices = sorted((e["name"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events if e["ph"] == "X")
    assert slices == sorted(expected)
    threads = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert {"main", "loader"} <= threads
    summary = json.loads(run_tfprof(tfprof_exe, "summary", "--json", path).stdout)["traces"][0]
    assert summary["format"] == "Perfetto trace"
    ops = {op["name"]: op for op in summary["top_ops_by_total"]}
    assert ops["main outer"]["total_ns"] == 40_000 and ops["main outer"]["self_ns"] == 30_000
