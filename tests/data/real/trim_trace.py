#!/usr/bin/env python3
"""Deterministically trim a PyTorch profiler (Kineto) Chrome trace to whole steps.

Python 3 standard library only. Used to shrink some of the real third-party
traces in this directory; README.md lists the exact command for every file
that was trimmed or recompressed.

Usage:
  trim_trace.py IN OUT --steps K          keep the first K ProfilerStep#N windows
  trim_trace.py IN OUT --recompress       keep every event, only (re)compress
  trim_trace.py IN.tar.gz OUT --tar-member NAME (--steps K | --recompress)

IN may be plain JSON, gzip-compressed JSON, or (with --tar-member) a member of a
tar archive. OUT is gzip-compressed (level 9, mtime 0, no file name) when it
ends in ".gz", plain otherwise.

What is kept when trimming (--steps K):
  * The window is [start of the earliest kept step, end of the latest kept
    step], where steps are host-side complete events ("ph": "X") named
    "ProfilerStep#N" (not category gpu_user_annotation), taken in time order.
  * Every metadata event ("ph": "M") and every event of category "Trace"
    (the profiler's own span and "Iteration Start" marker).
  * Every other non-flow event whose "ts" lies inside the window, except
    device-side activity (categories kernel/Kernel, gpu_memcpy/Memcpy,
    gpu_memset/Memset) that carries args.correlation: such an event is kept
    iff a kept runtime/driver event (cuda_runtime/Runtime/cuda_driver) has the
    same correlation id, whatever its own "ts" (kernels run after the step
    that launched them ends).
  * A flow (events with "ph" s/t/f sharing cat and id) is kept iff every one
    of its events is anchored on a kept complete event of the same pid and
    tid (same "ts", or "ts" inside the slice); pid and tid are compared as
    text, because PyTorch 1.8/1.9 write a slice's tid as a string and the
    tid of its flow start as a number.
Kept events are copied byte for byte, in their original order, and so is
everything outside the "traceEvents" array; numbers are never re-printed, so
fractional-nanosecond timestamps and integers wider than 64 bits survive.
"""

import argparse
import bisect
import decimal
import gzip
import json
import re
import sys
import tarfile

DEVICE_CATS = {"kernel", "Kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset"}
RUNTIME_CATS = {"cuda_runtime", "Runtime", "cuda_driver"}
FLOW_PHASES = {"s", "t", "f"}
WS = re.compile(r"[ \t\n\r]*")


def read_input(path, member):
    if member is not None:
        with tarfile.open(path, "r:*") as tar:
            raw = tar.extractfile(member).read()
    else:
        with open(path, "rb") as f:
            raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw


def split_trace(text):
    """Return (prefix, [(start, end)] of each traceEvents element, suffix)."""
    dec = json.JSONDecoder(parse_float=decimal.Decimal)
    pos = WS.match(text, 0).end()
    if text[pos] == "[":  # bare array of events
        array_open = pos
    else:
        if text[pos] != "{":
            raise ValueError("top level is neither an object nor an array")
        pos += 1
        array_open = None
        while True:
            pos = WS.match(text, pos).end()
            if text[pos] == "}":
                break
            key, pos = dec.raw_decode(text, pos)
            pos = WS.match(text, pos).end()
            if text[pos] != ":":
                raise ValueError("expected ':' at offset %d" % pos)
            pos = WS.match(text, pos + 1).end()
            if key == "traceEvents":
                array_open = pos
                if text[pos] != "[":
                    raise ValueError("traceEvents is not an array")
                pos = skip_array(text, pos, dec, None)
            else:
                _, pos = dec.raw_decode(text, pos)
            pos = WS.match(text, pos).end()
            if text[pos] == ",":
                pos += 1
        if array_open is None:
            raise ValueError("no traceEvents array")
    spans = []
    array_close = skip_array(text, array_open, dec, spans)  # index after ']'
    return text[: array_open + 1], spans, text[array_close - 1 :]


def skip_array(text, pos, dec, spans):
    pos += 1  # past '['
    while True:
        pos = WS.match(text, pos).end()
        if text[pos] == "]":
            return pos + 1
        start = pos
        _, pos = dec.raw_decode(text, pos)
        if spans is not None:
            spans.append((start, pos))
        pos = WS.match(text, pos).end()
        if text[pos] == ",":
            pos += 1
        elif text[pos] != "]":
            raise ValueError("expected ',' or ']' at offset %d" % pos)


def thread_key(e):
    # PyTorch 1.8/1.9 traces write a slice's tid as a JSON string ("25738")
    # but the tid of the flow start bound to it as a number (25738).
    return (str(e.get("pid")), str(e.get("tid")))


def num(v):
    return decimal.Decimal(str(v)) if v is not None else None


def trim(events, steps):
    host_steps = sorted(
        (
            e
            for e in events
            if e.get("ph") == "X"
            and str(e.get("name", "")).startswith("ProfilerStep#")
            and e.get("cat") != "gpu_user_annotation"
        ),
        key=lambda e: num(e["ts"]),
    )
    if len(host_steps) < steps:
        raise SystemExit("trace has %d ProfilerStep windows, %d requested" % (len(host_steps), steps))
    chosen = host_steps[:steps]
    t0 = min(num(e["ts"]) for e in chosen)
    t1 = max(num(e["ts"]) + num(e.get("dur", 0)) for e in chosen)

    keep = [False] * len(events)
    runtime_corr = set()
    for i, e in enumerate(events):
        ph, cat = e.get("ph"), e.get("cat")
        if ph in FLOW_PHASES:
            continue
        if ph == "M" or cat == "Trace":
            keep[i] = True
            continue
        args = e.get("args") or {}
        if cat in DEVICE_CATS and "correlation" in args:
            continue  # decided below, by correlation id
        ts = num(e.get("ts"))
        if ts is not None and t0 <= ts <= t1:
            keep[i] = True
            if cat in RUNTIME_CATS and "correlation" in args:
                runtime_corr.add(args["correlation"])
    for i, e in enumerate(events):
        args = e.get("args") or {}
        if e.get("cat") in DEVICE_CATS and "correlation" in args and e.get("ph") not in FLOW_PHASES:
            keep[i] = args["correlation"] in runtime_corr

    # Kept complete events per (pid, tid), for anchoring flow endpoints.
    slices = {}
    for i, e in enumerate(events):
        if keep[i] and e.get("ph") == "X":
            ts = num(e["ts"])
            slices.setdefault(thread_key(e), []).append((ts, ts + num(e.get("dur", 0))))
    index = {}
    for k, v in slices.items():
        v.sort()
        starts = [s for s, _ in v]
        maxend, m = [], None
        for _, end in v:
            m = end if m is None or end > m else m
            maxend.append(m)
        index[k] = (starts, maxend)

    def anchored(e):
        k = thread_key(e)
        if k not in index:
            return False
        starts, maxend = index[k]
        ts = num(e.get("ts"))
        j = bisect.bisect_right(starts, ts) - 1
        return j >= 0 and maxend[j] >= ts

    flows = {}
    for i, e in enumerate(events):
        if e.get("ph") in FLOW_PHASES:
            flows.setdefault((e.get("cat"), e.get("id")), []).append(i)
    for members in flows.values():
        ok = all(anchored(events[i]) for i in members)
        for i in members:
            keep[i] = ok
    return keep, len(chosen)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--tar-member", default=None)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--steps", type=int)
    g.add_argument("--recompress", action="store_true")
    a = ap.parse_args()

    raw = read_input(a.input, a.tar_member)
    if a.recompress:
        out = raw
    else:
        text = raw.decode("utf-8", "surrogateescape")
        prefix, spans, suffix = split_trace(text)
        events = [json.loads(text[s:e], parse_float=decimal.Decimal) for s, e in spans]
        keep, nsteps = trim(events, a.steps)
        kept = [text[s:e] for (s, e), k in zip(spans, keep) if k]
        body = prefix + "\n  " + ",\n  ".join(kept) + "\n" + suffix
        out = body.encode("utf-8", "surrogateescape")
        print(
            "%s: kept %d of %d events (%d step%s)"
            % (a.output, len(kept), len(events), nsteps, "" if nsteps == 1 else "s"),
            file=sys.stderr,
        )
    if a.output.endswith(".gz"):
        out = gzip.compress(out, compresslevel=9, mtime=0)
    with open(a.output, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
