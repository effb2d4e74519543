"""Writing TensorFlow step statistics by hand (protobuf wire format, TFRecord framing), so the
conversion tests need no TensorFlow."""

from __future__ import annotations

import struct
from typing import Dict, List, Optional, Sequence, Tuple


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value) if value else b""


def _bytes(field: int, value: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(value)) + value


def _text(field: int, value: str) -> bytes:
    return _bytes(field, value.encode()) if value else b""


def op(
    name: str,
    label: str,
    start_us: int,
    duration_us: int,
    thread: int = 0,
    outputs: Sequence[Tuple[str, int]] = (),
) -> bytes:
    """A NodeExecStats; `outputs` are (allocator, requested bytes) per output tensor."""
    body = _text(1, name) + _int(2, start_us) + _int(4, duration_us) + _int(5, duration_us)
    for slot, (allocator, size) in enumerate(outputs):
        allocation = _int(1, size) + _text(3, allocator)
        tensor = _int(1, 1) + _bytes(4, allocation)  # DT_FLOAT
        body += _bytes(7, _int(1, slot) + _bytes(3, tensor))
    return body + _text(8, label) + _int(10, thread)


def device(name: str, ops: Sequence[bytes], thread_names: Optional[Dict[int, str]] = None) -> bytes:
    body = _text(1, name) + b"".join(_bytes(2, node) for node in ops)
    for thread, thread_name in (thread_names or {}).items():
        body += _bytes(3, _int(1, thread) + _text(2, thread_name))
    return body


def step_stats(devices: Sequence[bytes]) -> bytes:
    return b"".join(_bytes(1, dev) for dev in devices)


def run_metadata(devices: Sequence[bytes]) -> bytes:
    return _bytes(1, step_stats(devices))


def _crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _masked(data: bytes) -> bytes:
    crc = _crc32c(data)
    return struct.pack("<I", (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


def record(payload: bytes) -> bytes:
    length = struct.pack("<Q", len(payload))
    return length + _masked(length) + payload + _masked(payload)


def event_file(runs: List[Tuple[str, int, bytes]]) -> bytes:
    """A TensorBoard event file: file_version, then one tagged_run_metadata per (tag, step, run)."""
    data = record(_bytes(3, b"brain.Event:2"))
    for tag, step, metadata in runs:
        tagged = _text(1, tag) + _bytes(2, metadata)
        data += record(_int(2, step) + _bytes(8, tagged))
    return data


CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


def small_run(base_us: int, step_node: Optional[str] = None) -> bytes:
    """a -> b -> c on threads 11 and 12 of the CPU; optionally tfprof's step node."""
    ops = [
        op("a", "a = Const()", base_us, 10, 11, [("cpu", 16)]),
        op("b", "b = Square(a)", base_us + 20, 10, 12, [("cpu", 16)]),
        op("c", "c = Add(a, b)", base_us + 40, 10, 11),
    ]
    if step_node:
        ops.append(op(step_node, f"{step_node} = TrainingStep()", base_us - 5, 100, 11))
    return run_metadata([device(CPU, ops, {11: "main", 12: "loader"})])
