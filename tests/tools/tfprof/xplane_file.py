"""An XSpace (`*.xplane.pb`) decoded field by field from the protobuf wire format, following
xplane.proto's published field numbers, in plain Python: a check of tfprof's reader that shares
none of its code. The interop tests (tests/interop) decode the same files with TensorFlow's own
xplane_pb2 as well."""

from __future__ import annotations

import dataclasses
import pathlib
import struct
from typing import Dict, Iterator, List, Tuple, Union

Value = Union[int, float, str, bytes]


def _varint(data: bytes, at: int) -> Tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _fields(data: bytes) -> Iterator[Tuple[int, int, Union[int, bytes]]]:
    at = 0
    while at < len(data):
        tag, at = _varint(data, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, at = _varint(data, at)
            yield number, wire, value
        elif wire == 1:
            yield number, wire, data[at:at + 8]
            at += 8
        elif wire == 2:
            length, at = _varint(data, at)
            yield number, wire, data[at:at + length]
            at += length
        elif wire == 5:
            yield number, wire, data[at:at + 4]
            at += 4
        else:
            raise ValueError(f"wire type {wire} at byte {at}")


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


def decode(path: pathlib.Path) -> Space:
    data = path.read_bytes()
    planes, hostnames = [], []
    for number, _, raw in _fields(data):
        if number == 4:
            hostnames.append(raw.decode("utf-8", "replace"))
        if number != 1:
            continue
        plane_id, name, raw_lines, raw_stats = 0, "", [], []
        event_meta: Dict[int, Tuple[str, List[bytes]]] = {}
        stat_names: Dict[int, str] = {}
        for field, _, value in _fields(raw):
            if field == 1:
                plane_id = _signed(value)
            elif field == 2:
                name = value.decode("utf-8", "replace")
            elif field == 3:
                raw_lines.append(value)
            elif field == 6:
                raw_stats.append(value)
            elif field in (4, 5):
                key, entry = 0, b""
                for f, _, v in _fields(value):
                    if f == 1:
                        key = _signed(v)
                    elif f == 2:
                        entry = v
                if field == 5:
                    stat_names[key] = next((v.decode("utf-8", "replace")
                                            for f, _, v in _fields(entry) if f == 2), "")
                else:
                    meta_name, display, stats = "", "", []
                    for f, _, v in _fields(entry):
                        if f == 2:
                            meta_name = v.decode("utf-8", "replace")
                        elif f == 4:
                            display = v.decode("utf-8", "replace")
                        elif f == 5:
                            stats.append(v)
                    event_meta[key] = (meta_name or display, stats)
        lines = []
        for raw_line in raw_lines:
            line_id, line_name, display, ts, events = 0, "", "", 0, []
            for field, _, value in _fields(raw_line):
                if field == 1:
                    line_id = _signed(value)
                elif field == 2:
                    line_name = value.decode("utf-8", "replace")
                elif field == 11:
                    display = value.decode("utf-8", "replace")
                elif field == 3:
                    ts = _signed(value)
                elif field == 4:
                    meta, offset, duration, stats = 0, 0, 0, {}
                    for f, _, v in _fields(value):
                        if f == 1:
                            meta = _signed(v)
                        elif f == 2:
                            offset = _signed(v)
                        elif f == 3:
                            duration = _signed(v)
                        elif f == 4:
                            stat_name, stat_value = _stat(v, stat_names)
                            stats[stat_name] = stat_value
                    event_name, meta_stats = event_meta.get(meta, ("", []))
                    merged = dict(_stat(s, stat_names) for s in meta_stats)
                    merged.update(stats)
                    events.append(Event(event_name, offset, duration, merged))
            lines.append(Line(line_id, line_name or display, ts, events))
        planes.append(Plane(plane_id, name, lines,
                            dict(_stat(s, stat_names) for s in raw_stats)))
    return Space(planes, hostnames)


# ---- writing: small XSpaces with known content, for the cases no public file has ----

def _encode_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, value: Union[int, bytes, str]) -> bytes:
    if isinstance(value, int):
        return _encode_varint(number << 3) + _encode_varint(value)
    if isinstance(value, str):
        value = value.encode()
    return _encode_varint(number << 3 | 2) + _encode_varint(len(value)) + value


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
