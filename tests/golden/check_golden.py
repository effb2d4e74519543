"""Golden outputs of today's writers, byte for byte, so a change to any of them shows in review.

    python tests/golden/check_golden.py SYNTHETIC_GPU_TRACE TFPROF [--update]

SYNTHETIC_GPU_TRACE (tests/support/synthetic_gpu_trace.cc) exports one fixed session (host steps
and spans, real CUPTI records of kernels, copies and a memset) through the runtime's exporter in
every format; TFPROF (the command) converts its .pb and .json to the other formats with its own
engine. Each file is compared with tests/golden/<name>. What depends on the machine is replaced
before the comparison: the library version, the libcupti path, the host name and the scratch
directory's path.

One writer per format: the runtime's session export and the command's conversion of the same
session's Chrome JSON must give the same RunMetadata, TFRecord and XPlane bytes (checked before
the golden files; the XPlane is the one a TensorBoard log directory gets beside its event file). A difference prints what changed (a diff for text, the first differing offset for binary
files) and fails. When the change is intended, run again with --update and commit the new files with a
note on why they changed.
"""

import argparse
import difflib
import json
import pathlib
import socket
import subprocess
import sys
import tempfile
import zlib

GOLDEN = pathlib.Path(__file__).resolve().parent


def run(*command):
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed ({result.returncode}):\n{result.stderr}")
    return result.stdout


def outputs(synthetic, tfprof, scratch):
    """name -> path of every output to compare."""
    files = {}
    for name in ("session.json", "session.pb", "session.tfrecord"):
        run(synthetic, scratch / name)
        files[name] = scratch / name
    logs = scratch / "logs"
    run(synthetic, f"{logs}/")
    [event_file] = list(logs.glob("events.out.tfevents.*"))
    files["session.tfevents"] = event_file
    # Beside it, the XPlane profile of TensorBoard's Profile tab (named for this machine).
    [profile] = list(logs.glob("plugins/profile/*/*.xplane.pb"))
    files["session.xplane.pb"] = profile
    # Perfetto from the .pb only: converted from the JSON, or exported, the trace info would hold
    # the libcupti path, which no byte-level normalisation can replace inside length-prefixed
    # protobuf fields (a version string of another length changes the golden file too: --update).
    for source, target in (("session.pb", "convert_pb.json"), ("session.json", "convert_json.pb"),
                           ("session.json", "convert_json.tfrecord"),
                           ("session.pb", "convert_pb.pftrace"),
                           ("session.json", "convert_json.xplane.pb")):
        run(tfprof, "convert", scratch / source, "-o", scratch / target)
        files[target] = scratch / target
    return files


def _varint(data: bytes, at: int):
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def inflate_perfetto_batches(data: bytes) -> bytes:
    """A .pftrace with each packet that is a compressed_packets batch (field 50: a zlib stream of
    Trace.packet fields) replaced by the packets it holds. The golden file keeps the packets, not
    zlib's bytes, which change with zlib's version."""
    out, at = bytearray(), 0
    while at < len(data):
        start = at
        tag, at = _varint(data, at)
        length, at = _varint(data, at)
        payload, at = data[at:at + length], at + length
        inner_tag, inner_at = _varint(payload, 0) if payload else (0, 0)
        if tag == (1 << 3 | 2) and inner_tag == (50 << 3 | 2):
            inner_length, inner_at = _varint(payload, inner_at)
            if inner_at + inner_length == len(payload):  # the batch is the packet's only field
                out += inflate_perfetto_batches(zlib.decompress(payload[inner_at:]))
                continue
        out += data[start:at]
    return bytes(out)


def normalizer(tfprof, session_json, scratch):
    version = run(tfprof, "--version").split()[-1]
    header = json.loads(session_json.read_text())["tfprof"]
    library = header["gpu"].get("cupti", "")
    host = socket.gethostname()
    pairs = [(str(scratch), "@SCRATCH@"), (version, "@VERSION@"), (host, "@HOST@")]
    if library:
        pairs.insert(0, (library, "@LIBCUPTI@"))

    def normalize(data: bytes) -> bytes:
        for old, new in pairs:
            data = data.replace(old.encode(), new.encode())
        return data

    return normalize


def describe(name, expected: bytes, actual: bytes) -> str:
    if name.endswith(".json"):
        diff = difflib.unified_diff(expected.decode(errors="replace").splitlines(),
                                    actual.decode(errors="replace").splitlines(),
                                    f"golden/{name}", f"new/{name}", lineterm="", n=1)
        return "\n".join(list(diff)[:60])
    offset = next((i for i, (a, b) in enumerate(zip(expected, actual)) if a != b),
                  min(len(expected), len(actual)))
    return (f"{name}: {len(expected)} bytes in the golden file, {len(actual)} now; first difference "
            f"at byte {offset}: {expected[offset:offset + 32]!r} vs {actual[offset:offset + 32]!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("synthetic")
    parser.add_argument("tfprof")
    parser.add_argument("--update", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tfprof-golden-") as scratch_name:
        scratch = pathlib.Path(scratch_name)
        files = outputs(args.synthetic, args.tfprof, scratch)
        normalize = normalizer(args.tfprof, files["session.json"], scratch)
        failures = []
        # The session's own TensorFlow files, and the same session read back from its Chrome JSON
        # and written again: one model, one writer, so the same bytes.
        for own, converted in (("session.pb", "convert_json.pb"),
                               ("session.tfrecord", "convert_json.tfrecord"),
                               ("session.xplane.pb", "convert_json.xplane.pb")):
            if files[own].read_bytes() != files[converted].read_bytes():
                failures.append(describe(f"{converted} (against {own})", files[own].read_bytes(),
                                         files[converted].read_bytes()))
        for name, path in sorted(files.items()):
            data = path.read_bytes()
            if name.endswith(".pftrace"):
                data = inflate_perfetto_batches(data)
            actual = normalize(data)
            golden = GOLDEN / name
            if args.update:
                golden.write_bytes(actual)
                continue
            if not golden.exists():
                failures.append(f"{name}: no golden file (run with --update)")
            elif golden.read_bytes() != actual:
                failures.append(describe(name, golden.read_bytes(), actual))
        if args.update:
            print(f"updated {len(files)} golden files in {GOLDEN}")
            return
        if failures:
            sys.exit("golden outputs changed:\n\n" + "\n\n".join(failures) +
                     "\n\nIf intended: python tests/golden/check_golden.py ... --update")
        print(f"{len(files)} outputs match their golden files")


if __name__ == "__main__":
    main()
