"""Protocol Buffers' wire format by hand, for tests that read or write TensorFlow's and XLA's
messages (RunMetadata, Event, XSpace) without their generated classes."""

from __future__ import annotations

from typing import Iterator, Tuple, Union


def decode_varint(data: bytes, at: int) -> Tuple[int, int]:
    """The varint at `at`, and where the next field starts."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def fields(data: bytes) -> Iterator[Tuple[int, int, Union[int, bytes]]]:
    """(field number, wire type, value) of each field of a message: an int for a varint, the
    bytes for the rest."""
    at = 0
    while at < len(data):
        tag, at = decode_varint(data, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, at = decode_varint(data, at)
            yield number, wire, value
        elif wire == 1:
            yield number, wire, data[at:at + 8]
            at += 8
        elif wire == 2:
            length, at = decode_varint(data, at)
            yield number, wire, data[at:at + length]
            at += length
        elif wire == 5:
            yield number, wire, data[at:at + 4]
            at += 4
        else:
            raise ValueError(f"wire type {wire} at byte {at}")


def encode_varint(value: int) -> bytes:
    """A varint; a negative value as its 64-bit two's complement, as int64 fields have it."""
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


def encode_field(number: int, value: Union[int, bytes, str]) -> bytes:
    """A field: an int as a varint, bytes or a str (UTF-8) length-delimited."""
    if isinstance(value, int):
        return encode_varint(number << 3) + encode_varint(value)
    if isinstance(value, str):
        value = value.encode()
    return encode_varint(number << 3 | 2) + encode_varint(len(value)) + value
