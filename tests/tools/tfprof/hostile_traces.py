"""Builds the hostile trace shapes of issue 32 (items 6 and 7) at a chosen size: many overlapping
events on one row, one step number repeated, many events, many thread ids, many processes, deep
nesting, many distinct names and long names, in Chrome JSON (plain or gzip) and XPlane. The other
formats tfprof reads (.pftrace, StepStats .pb/.tfrecord, TensorBoard event files) are made from
the JSON with `tfprof convert`, so each shape reaches every reader.

Used by tests/tools/tfprof/test_hostile_inputs.py (small sizes, time and memory limits) and
benchmarks/bench_hostile_inputs.py (the figures in benchmarks/RESULTS.md); run directly it writes
one file: python tests/tools/tfprof/hostile_traces.py SHAPE EVENTS OUT.{json,json.gz,xplane.pb}
"""

from __future__ import annotations

import gzip
import pathlib
import sys
from typing import Callable, Dict, Iterator

from protobuf_wire import encode_field as _field

# The shapes: each yields `events` Chrome trace events (dicts written as JSON text by hand, as
# json.dumps of a 100 MB list would dominate the time of a benchmark).
Shape = Callable[[int], Iterator[str]]


def _span(name: str, ts_us: float, dur_us: float, pid: int = 1, tid: int = 1,
          cat: str = "cpu_op") -> str:
    return (f'{{"ph":"X","cat":"{cat}","name":"{name}","pid":{pid},"tid":{tid},'
            f'"ts":{ts_us:.3f},"dur":{dur_us:.3f}}}')


def overlapping(events: int) -> Iterator[str]:
    """Events 1 ms long starting 1 ns apart on one row: every one overlaps all the others."""
    for i in range(events):
        yield _span(f"op{i % 16}", i / 1000.0, 1000.0)


def repeated_steps(events: int) -> Iterator[str]:
    """One step number marked again and again (ProfilerStep#1 each time), an op in each."""
    for i in range(events // 2):
        yield _span("ProfilerStep#1", i * 10.0, 8.0, cat="user_annotation")
        yield _span("op", i * 10.0 + 1, 5.0)


def many_events(events: int) -> Iterator[str]:
    """Plain short events, one after the other on four rows."""
    for i in range(events):
        yield _span(f"op{i % 64}", i * 2.0, 1.0, tid=1 + i % 4)


def many_threads(events: int) -> Iterator[str]:
    """Every event on its own thread id."""
    for i in range(events):
        yield _span("op", i * 2.0, 1.0, tid=1000 + i)


def many_processes(events: int) -> Iterator[str]:
    """Every event in its own process."""
    for i in range(events):
        yield _span("op", i * 2.0, 1.0, pid=1000 + i)


def deep_nesting(events: int) -> Iterator[str]:
    """Each event inside the one before: nesting as deep as the trace is long."""
    for i in range(events):
        yield _span(f"level{i % 16}", i * 0.001, (events - i) * 0.002 + 1)


def distinct_names(events: int) -> Iterator[str]:
    """Every event with a name of its own."""
    for i in range(events):
        yield _span(f"op_{i:09d}", i * 2.0, 1.0)


LONG_NAME_BYTES = 4096


def long_names(events: int) -> Iterator[str]:
    """Every event with its own 4 KiB name: the file is mostly names."""
    for i in range(events):
        yield _span(f"{i:09d}" + "n" * (LONG_NAME_BYTES - 9), i * 2.0, 1.0)


ONE_LONG_NAME_BYTES = 64 << 10


def one_long_name(events: int) -> Iterator[str]:
    """Every event with the same 64 KiB name (an XPlane states it once: see write_xplane)."""
    name = "n" * ONE_LONG_NAME_BYTES
    for i in range(events):
        yield _span(name, i * 2.0, 1.0)


SHAPES: Dict[str, Shape] = {
    "overlapping": overlapping,
    "repeated_steps": repeated_steps,
    "many_events": many_events,
    "many_threads": many_threads,
    "many_processes": many_processes,
    "deep_nesting": deep_nesting,
    "distinct_names": distinct_names,
    "long_names": long_names,
    "one_long_name": one_long_name,
}


def write_json(shape: str, events: int, path: pathlib.Path) -> pathlib.Path:
    """Writes the shape as a Chrome trace, gzip-compressed when the name ends in .gz."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as out:  # type: ignore[operator]
        out.write('{"traceEvents":[\n')
        for index, event in enumerate(SHAPES[shape](events)):
            out.write(event if index == 0 else ",\n" + event)
        out.write('\n],"displayTimeUnit":"ns"}\n')
    return path


# ---- XPlane: the shapes that an XSpace states differently from JSON ----

def _xevent(metadata_id: int, offset_ns: int, duration_ns: int) -> bytes:
    return _field(4, _field(1, metadata_id) + _field(2, offset_ns * 1000) +
                  _field(3, duration_ns * 1000))


def write_xplane(shape: str, events: int, path: pathlib.Path,
                 long_name_bytes: int = 4 << 20) -> pathlib.Path:
    """An XSpace of one host plane ("/host:CPU"): `one_long_name` is the issue's 4 MB file (one
    event metadata whose name is `long_name_bytes` long, used by every event); `overlapping` puts
    the events 1 ms long, 1 ns apart on one line; `many_threads` gives each event its own line;
    `many_events` puts them one after another on one line."""
    if shape == "one_long_name":
        names = [b"n" * long_name_bytes]
        lines = [[_xevent(1, i * 2000, 1000) for i in range(events)]]
    elif shape == "overlapping":
        names = [b"op"]
        lines = [[_xevent(1, i, 1_000_000) for i in range(events)]]
    elif shape == "many_threads":
        names = [b"op"]
        lines = [[_xevent(1, i * 2000, 1000)] for i in range(events)]
    elif shape == "many_events":
        names = [b"op"]
        lines = [[_xevent(1, i * 2000, 1000) for i in range(events)]]
    else:
        raise ValueError(f"no XPlane form of {shape}")
    body = _field(1, 1) + _field(2, b"/host:CPU")
    for line_id, line_events in enumerate(lines, start=1):
        body += _field(3, _field(1, line_id) + _field(2, b"thread %d" % line_id) +
                       _field(3, 1_000_000_000) + b"".join(line_events))
    for ident, name in enumerate(names, start=1):
        body += _field(4, _field(1, ident) + _field(2, _field(1, ident) + _field(2, name)))
    path.write_bytes(_field(1, body))
    return path


def write(shape: str, events: int, path: pathlib.Path) -> pathlib.Path:
    if path.name.endswith(".xplane.pb"):
        return write_xplane(shape, events, path)
    return write_json(shape, events, path)


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in SHAPES:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(SHAPES)}}} EVENTS OUT")
    write(sys.argv[1], int(sys.argv[2]), pathlib.Path(sys.argv[3]))
