"""Prints a short summary of a tfprof Chrome trace: rows, steps, and where each row's time went.

Usage: summarize_trace.py TRACE.json[.gz]
"""
import collections
import gzip
import json
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as file:
        return json.load(file)


def main():
    path = sys.argv[1]
    trace = load(path)
    events = trace["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X"]
    steps = sorted((e for e in spans if e.get("cat") == "step"), key=lambda e: e["ts"])
    meta = trace.get("tfprof", {})
    print(f"trace: {path}")
    print(f"  {len(events)} events, {meta.get('events_recorded', '?')} recorded, "
          f"{trace.get('dropped_events', '?')} dropped, clock {meta.get('clock', '?')}")
    if steps:
        durations = sorted(s["dur"] for s in steps)
        print(f"  {len(steps)} steps: median {durations[len(durations) // 2] / 1000:.3f} ms, "
              f"max {durations[-1] / 1000:.3f} ms")
    # Self time per op and row: a span's duration minus its direct children's.
    by_row = collections.defaultdict(list)
    for span in spans:
        if span.get("cat") != "step":
            by_row[span["tid"]].append(span)
    for tid, row in sorted(by_row.items(), key=lambda item: names.get(item[0], "")):
        row.sort(key=lambda e: (e["ts"], -e["dur"]))
        self_time = collections.Counter()
        stack = []
        for span in row:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= span["ts"]:
                stack.pop()
            if stack:
                self_time[stack[-1]["name"]] -= span["dur"]
            self_time[span["name"]] += span["dur"]
            stack.append(span)
        total = sum(self_time.values()) or 1
        print(f"  row '{names.get(tid, tid)}': {len(row)} spans")
        for name, duration in self_time.most_common(5):
            print(f"    {name:<32} {duration / 1000:10.3f} ms self  {100 * duration / total:5.1f}%")


if __name__ == "__main__":
    main()
