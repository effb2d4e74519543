"""An XSpace (`*.xplane.pb`) decoded field by field from the protobuf wire format, following
xplane.proto's published field numbers, in plain Python: a check of tfprof's reader that shares
none of its code. The interop tests (tests/interop) decode the same files with TensorFlow's own
xplane_pb2 as well."""

from __future__ import annotations

import dataclasses
import pathlib
import struct
from typing import Dict, List, Tuple, Union

from protobuf_wire import encode_field as _field
from protobuf_wire import fields as _fields

Value = Union[int, float, str, bytes]


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


@dataclasses.dataclass
class Event:
    name: str
    offset_ps: int
    duration_ps: int
    stats: Dict[str, Value]


@dataclasses.dataclass
class Line:
    id: int
    name: str
    timestamp_ns: int
    events: List[Event]


@dataclasses.dataclass
class Plane:
    id: int
    name: str
    lines: List[Line]
    stats: Dict[str, Value]


@dataclasses.dataclass
class Space:
    planes: List[Plane]
    hostnames: List[str]

    def plane(self, name: str) -> Plane:
        return next(p for p in self.planes if p.name == name)


def _stat(data: bytes, stat_names: Dict[int, str]) -> Tuple[str, Value]:
    name, value = "", None
    for number, _, raw in _fields(data):
        if number == 1:
            name = stat_names.get(raw, "")
        elif number == 2:
            value = struct.unpack("<d", raw)[0]
        elif number == 3:
            value = raw
        elif number == 4:
            value = _signed(raw)
        elif number in (5, 6):
            value = raw.decode("utf-8", "replace")
        elif number == 7:
            value = stat_names.get(raw, "")
    return name, value


class _Message:
    """A message's fields by number: a repeated field's values in order; a singular field reads
    as its last value (as protobuf's parsers do), or its default when absent."""

    def __init__(self, data: bytes) -> None:
        self._values: Dict[int, List[Union[int, bytes]]] = {}
        for number, _, value in _fields(data):
            self._values.setdefault(number, []).append(value)

    def all(self, number: int) -> List[Union[int, bytes]]:
        return self._values.get(number, [])

    def int64(self, number: int) -> int:
        return _signed(self._values[number][-1]) if number in self._values else 0

    def raw(self, number: int) -> bytes:
        return self._values[number][-1] if number in self._values else b""

    def text(self, number: int) -> str:
        return self.raw(number).decode("utf-8", "replace")


def _line(line: _Message, event_meta: Dict[int, Tuple[str, List[bytes]]],
          stat_names: Dict[int, str]) -> Line:
    """An XLine: id 1, name 2 (else display name 11), timestamp_ns 3, events 4 (metadata id 1,
    offset_ps 2, duration_ps 3, stats 4 over their metadata's stats)."""
    events = []
    for raw in line.all(4):
        event = _Message(raw)
        name, meta_stats = event_meta.get(event.int64(1), ("", []))
        stats = dict(_stat(s, stat_names) for s in meta_stats)
        stats.update(_stat(s, stat_names) for s in event.all(4))
        events.append(Event(name, event.int64(2), event.int64(3), stats))
    return Line(line.int64(1), line.text(2) or line.text(11), line.int64(3), events)


def _plane(plane: _Message) -> Plane:
    """An XPlane: id 1, name 2, lines 3, event metadata 4 (name 2, else display name 4; stats 5)
    and stat metadata 5 (name 2), each a map entry (key 1, value 2), and stats 6."""
    stat_names = {}
    for raw in plane.all(5):
        entry = _Message(raw)
        stat_names[entry.int64(1)] = _Message(entry.raw(2)).text(2)
    event_meta = {}
    for raw in plane.all(4):
        entry = _Message(raw)
        meta = _Message(entry.raw(2))
        event_meta[entry.int64(1)] = (meta.text(2) or meta.text(4), meta.all(5))
    lines = [_line(_Message(raw), event_meta, stat_names) for raw in plane.all(3)]
    return Plane(plane.int64(1), plane.text(2), lines,
                 dict(_stat(s, stat_names) for s in plane.all(6)))


def decode(path: pathlib.Path) -> Space:
    """An XSpace: planes 1, hostnames 4."""
    space = _Message(path.read_bytes())
    return Space([_plane(_Message(raw)) for raw in space.all(1)],
                 [name.decode("utf-8", "replace") for name in space.all(4)])


# ---- writing: small XSpaces with known content, for the cases no public file has ----

# An event to write: (name, start ns from the line's start, duration ns, {stat: int or str}).
WrittenEvent = Tuple[str, int, int, Dict[str, Union[int, str]]]


def encode(planes: List[Tuple[str, int, List[Tuple[int, str, int, List[WrittenEvent]]]]],
           hostname: str = "", plane_stats: Dict[str, Dict[str, int]] = None) -> bytes:
    """An XSpace of `planes`: (name, id, lines), each line (id, name, timestamp_ns, events).
    `plane_stats` gives plane-level int stats by plane name (the Task Environment's start)."""
    out = b""
    for plane_name, plane_id, lines in planes:
        event_ids: Dict[str, int] = {}
        stat_ids: Dict[str, int] = {}

        def stat_id(name: str) -> int:
            return stat_ids.setdefault(name, len(stat_ids) + 1)

        def stat(name: str, value: Union[int, str]) -> bytes:
            body = _field(1, stat_id(name))
            body += _field(4, value) if isinstance(value, int) else _field(5, value)
            return body

        body = _field(1, plane_id) + _field(2, plane_name)
        for line_id, line_name, timestamp_ns, events in lines:
            line = _field(1, line_id) + _field(2, line_name) + _field(3, timestamp_ns)
            for name, start_ns, duration_ns, stats in events:
                event = _field(1, event_ids.setdefault(name, len(event_ids) + 1))
                event += _field(2, start_ns * 1000) + _field(3, duration_ns * 1000)
                for key, value in stats.items():
                    event += _field(4, stat(key, value))
                line += _field(4, event)
            body += _field(3, line)
        for key, value in (plane_stats or {}).get(plane_name, {}).items():
            body += _field(6, stat(key, value))
        for name, ident in event_ids.items():
            body += _field(4, _field(1, ident) + _field(2, _field(1, ident) + _field(2, name)))
        for name, ident in stat_ids.items():
            body += _field(5, _field(1, ident) + _field(2, _field(1, ident) + _field(2, name)))
        out += _field(1, body)
    if hostname:
        out += _field(4, hostname)
    return out
