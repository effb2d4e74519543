"""Reading a Perfetto trace in tests with Perfetto's own schema: the `perfetto` package's
generated classes (perfetto.protos.perfetto.trace.perfetto_trace_pb2), and the import rules of
Perfetto's trace processor written out here independently of tfprof's reader: interning per
packet sequence (cleared with SEQ_INCREMENTAL_STATE_CLEARED), TracePacketDefaults, sequence-scoped
incremental clocks set by ClockSnapshots, compressed_packets batches inflated in place, and slices
paired per track by a stack after a stable sort by time."""

from __future__ import annotations

import collections
import zlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

BOOTTIME = 6
REALTIME = 1


@dataclass
class Track:
    uuid: int
    parent: int = 0
    name: str = ""
    pid: Optional[int] = None  # process tracks, and thread tracks (their process)
    tid: Optional[int] = None  # thread tracks
    process_name: str = ""
    labels: List[str] = field(default_factory=list)
    counter: bool = False
    unit_name: str = ""


@dataclass
class Slice:
    track: int
    name: str
    category: str
    begin_ns: int
    end_ns: int
    args: Dict[str, Any]
    flow_ids: List[int]
    terminating_flow_ids: List[int]
    depth: int = 0


@dataclass
class Decoded:
    tracks: Dict[int, Track] = field(default_factory=dict)
    slices: List[Slice] = field(default_factory=list)
    instants: List[Slice] = field(default_factory=list)
    counters: List[Tuple[int, int, float]] = field(default_factory=list)  # track, ns, value
    realtime_minus_boottime: Optional[int] = None
    packets: int = 0

    def row(self, uuid: int) -> Track:
        """The track a slice is drawn in, lanes folded into the row they extend."""
        track = self.tracks[uuid]
        parent = self.tracks.get(track.parent)
        if parent is not None and parent.pid is None and track.name == parent.name:
            return self.row(parent.uuid)  # a lane of a named row
        if parent is not None and parent.tid is not None and track.name == parent.name:
            return parent  # a lane of a thread
        return track

    def process_of(self, uuid: int) -> Track:
        track = self.tracks[uuid]
        while track.tid is not None or track.pid is None:
            track = self.tracks[track.parent]
            if track.tid is None and track.pid is not None:
                break
        return track

    def info(self) -> Dict[str, Any]:
        infos = [s for s in self.instants if s.name == "tfprof trace info"]
        assert infos, "no tfprof trace info instant"
        return infos[-1].args["tfprof"]


def _annotation_value(annotation: Any, interned: Dict[str, Dict[int, str]]) -> Any:
    kind = annotation.WhichOneof("value")
    if kind is None:
        if annotation.dict_entries:
            return {_annotation_name(e, interned): _annotation_value(e, interned)
                    for e in annotation.dict_entries}
        if annotation.array_values:
            return [_annotation_value(e, interned) for e in annotation.array_values]
        return None
    if kind == "string_value_iid":
        return interned["strings"][annotation.string_value_iid]
    return getattr(annotation, kind)


def _annotation_name(annotation: Any, interned: Dict[str, Dict[int, str]]) -> str:
    if annotation.HasField("name_iid"):
        return interned["annotation_names"][annotation.name_iid]
    return annotation.name


class _Sequence:
    def __init__(self) -> None:
        self.clear()
        self.default_clock = BOOTTIME
        self.default_track = 0
        # Sequence-scoped clocks: id -> [last value in the clock's units, incremental, multiplier,
        # boottime minus the clock at the last snapshot (ns)].
        self.clocks: Dict[int, List[Any]] = {}

    def clear(self) -> None:
        self.interned: Dict[str, Dict[int, str]] = collections.defaultdict(dict)

    def to_boottime(self, packet: Any) -> Optional[int]:
        if not packet.HasField("timestamp"):
            return None
        clock = packet.timestamp_clock_id if packet.HasField("timestamp_clock_id") else self.default_clock
        if clock == BOOTTIME:
            return packet.timestamp
        state = self.clocks[clock]
        value = state[0] + packet.timestamp if state[1] else packet.timestamp
        state[0] = value
        return value * state[2] + state[3]


def packets_of(data: bytes) -> List[Any]:
    """The TracePackets of a trace, each compressed_packets batch (a zlib stream of a serialized
    Trace) replaced by the packets it holds, in place, as the trace processor reads them."""
    trace = pb.Trace()
    trace.ParseFromString(data)
    packets: List[Any] = []
    for packet in trace.packet:
        if packet.HasField("compressed_packets"):
            packets.extend(packets_of(zlib.decompress(packet.compressed_packets)))
        else:
            packets.append(packet)
    return packets


def decode(path: Any) -> Decoded:
    with open(path, "rb") as file:
        packets = packets_of(file.read())
    decoded = Decoded(packets=len(packets))
    sequences: Dict[int, _Sequence] = collections.defaultdict(_Sequence)
    events: Dict[int, List[Tuple[int, int, int, Any, Dict[str, Dict[int, str]]]]] = collections.defaultdict(list)
    order = 0
    for packet in packets:
        sequence = sequences[packet.trusted_packet_sequence_id]
        if packet.sequence_flags & 1 or packet.incremental_state_cleared:
            sequence.clear()
        if packet.HasField("trace_packet_defaults"):
            defaults = packet.trace_packet_defaults
            if defaults.HasField("timestamp_clock_id"):
                sequence.default_clock = defaults.timestamp_clock_id
            if defaults.track_event_defaults.HasField("track_uuid"):
                sequence.default_track = defaults.track_event_defaults.track_uuid
        if packet.HasField("interned_data"):
            data = packet.interned_data
            for entry in data.event_names:
                sequence.interned["names"][entry.iid] = entry.name
            for entry in data.event_categories:
                sequence.interned["categories"][entry.iid] = entry.name
            for entry in data.debug_annotation_names:
                sequence.interned["annotation_names"][entry.iid] = entry.name
            for entry in data.debug_annotation_string_values:
                sequence.interned["strings"][entry.iid] = entry.str.decode()
        if packet.HasField("clock_snapshot"):
            readings = {clock.clock_id: clock for clock in packet.clock_snapshot.clocks}
            boottime = readings[BOOTTIME].timestamp if BOOTTIME in readings else None
            if boottime is not None and REALTIME in readings:
                decoded.realtime_minus_boottime = readings[REALTIME].timestamp - boottime
            for clock_id, clock in readings.items():
                if clock_id >= 64 and boottime is not None:
                    multiplier = clock.unit_multiplier_ns or 1
                    sequence.clocks[clock_id] = [clock.timestamp, clock.is_incremental, multiplier,
                                                 boottime - clock.timestamp * multiplier]
        if packet.HasField("track_descriptor"):
            descriptor = packet.track_descriptor
            track = Track(uuid=descriptor.uuid, parent=descriptor.parent_uuid, name=descriptor.name)
            if descriptor.HasField("process"):
                track.pid = descriptor.process.pid
                track.process_name = descriptor.process.process_name
                track.labels = list(descriptor.process.process_labels)
            if descriptor.HasField("thread"):
                track.pid = descriptor.thread.pid
                track.tid = descriptor.thread.tid
                track.name = descriptor.thread.thread_name
            if descriptor.HasField("counter"):
                track.counter = True
                track.unit_name = descriptor.counter.unit_name
            assert track.uuid not in decoded.tracks or decoded.tracks[track.uuid] == track, (
                f"track {track.uuid} described twice, differently")
            decoded.tracks[track.uuid] = track
        ns = sequence.to_boottime(packet)
        if packet.HasField("track_event"):
            event = packet.track_event
            assert packet.sequence_flags & 2, "a track event that does not say it needs the state"
            uuid = event.track_uuid if event.HasField("track_uuid") else sequence.default_track
            events[uuid].append((ns, order, event.type, event, sequence.interned))
            order += 1
    for uuid, track_events in events.items():
        assert uuid in decoded.tracks, f"events on track {uuid}, never described"
        track_events.sort(key=lambda item: (item[0], item[1]))  # stable: file order on ties
        stack: List[Slice] = []
        for ns, _, kind, event, interned in track_events:
            if kind == pb.TrackEvent.TYPE_SLICE_END:
                assert stack, f"an END with no open slice on track {uuid} at {ns}"
                stack.pop().end_ns = ns
                continue
            if kind == pb.TrackEvent.TYPE_COUNTER:
                value = event.double_counter_value if event.HasField("double_counter_value") else event.counter_value
                decoded.counters.append((uuid, ns, value))
                continue
            name = interned["names"][event.name_iid] if event.HasField("name_iid") else event.name
            categories = [interned["categories"][iid] for iid in event.category_iids] + list(event.categories)
            args = {_annotation_name(a, interned): _annotation_value(a, interned)
                    for a in event.debug_annotations}
            item = Slice(uuid, name, ",".join(categories), ns, ns, args, list(event.flow_ids),
                         list(event.terminating_flow_ids), depth=len(stack))
            if kind == pb.TrackEvent.TYPE_INSTANT:
                decoded.instants.append(item)
            else:
                assert kind == pb.TrackEvent.TYPE_SLICE_BEGIN, kind
                stack.append(item)
                decoded.slices.append(item)
        assert not stack, f"slices never ended on track {uuid}: {[s.name for s in stack]}"
    return decoded
