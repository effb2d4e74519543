"""Runs the example training loop and checks that its trace is one Perfetto and chrome://tracing
would open: valid JSON in the Chrome trace event format, every row named, spans properly nested
on each row, steps on their own row, ops named like the example's, counters present.

Usage: check_example_trace.py TRAINING_LOOP_BINARY WORK_DIR
"""
import collections
import json
import os
import subprocess
import sys

REQUIRED_KEYS = {"X": {"name", "ph", "ts", "dur", "pid", "tid"},
                 "i": {"name", "ph", "ts", "pid", "tid", "s"},
                 "C": {"name", "ph", "ts", "pid", "args"},
                 "M": {"name", "ph", "pid", "args"}}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check_nesting(rows):
    for tid, spans in rows.items():
        spans.sort(key=lambda e: (round(e["ts"] * 1000), -round(e["dur"] * 1000)))
        open_ends = []
        for span in spans:
            begin = round(span["ts"] * 1000)
            end = begin + round(span["dur"] * 1000)
            while open_ends and open_ends[-1] <= begin:
                open_ends.pop()
            if open_ends and end > open_ends[-1]:
                fail(f"row {tid}: {span['name']} [{begin}, {end}) overlaps its parent ending at {open_ends[-1]}")
            open_ends.append(end)


def main():
    binary, work_dir = sys.argv[1], sys.argv[2]
    os.makedirs(work_dir, exist_ok=True)
    trace_path = os.path.join(work_dir, "training_loop.json")
    steps = 12
    result = subprocess.run([binary, trace_path, str(steps)], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        fail(f"training_loop exited {result.returncode}: {result.stderr}")
    with open(trace_path, encoding="utf-8") as file:
        trace = json.load(file)

    events = trace["traceEvents"]
    if trace.get("displayTimeUnit") != "ns" or trace.get("dropped_events") != 0:
        fail("top-level metadata is wrong: " + json.dumps({k: v for k, v in trace.items() if k != "traceEvents"}))
    for event in events:
        missing = REQUIRED_KEYS.get(event["ph"], {"ph"}) - event.keys()
        if missing:
            fail(f"event lacks {sorted(missing)}: {event}")
        for key in ("ts", "dur"):
            if key in event and not isinstance(event[key], (int, float)):
                fail(f"{key} is not a number: {event}")

    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    rows = collections.defaultdict(list)
    for event in events:
        if event["ph"] == "X":
            rows[event["tid"]].append(event)
            if (event["pid"], event["tid"]) not in names:
                fail(f"row {event['tid']} has no thread_name")
    check_nesting(rows)

    row_names = sorted(names.values())
    if row_names != ["Steps", "compute", "input_pipeline"]:
        fail(f"rows are {row_names}")
    span_counts = collections.Counter(e["name"] for e in events if e["ph"] == "X")
    for op in ("forward", "MatMul", "backward", "MatMul_grad", "ApplyAdam", "IteratorGetNext", "DecodeJpeg", "WaitForInput"):
        if span_counts[op] != steps:
            fail(f"expected {steps} '{op}' spans, found {span_counts[op]}")
    step_spans = sorted((e for e in events if e["ph"] == "X" and e.get("cat") == "step"), key=lambda e: e["ts"])
    if [e["name"] for e in step_spans] != [f"step {n}" for n in range(steps)]:
        fail("steps are " + str([e["name"] for e in step_spans]))
    for event in events:
        if event["ph"] == "X" and event["name"] == "forward" and "step" not in event.get("args", {}):
            fail("a forward span carries no step")
    if not any(e["ph"] == "C" and e["name"] == "input_queue_depth" for e in events):
        fail("no input_queue_depth counter")
    print(f"ok: {len(events)} events, {len(rows)} rows, {len(step_spans)} steps, nesting valid")


if __name__ == "__main__":
    main()
