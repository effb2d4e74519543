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
    # Rows are (pid, tid): GPU streams reuse small tids in their device's process.
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    processes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    spans = [e for e in events if e["ph"] == "X"]
    steps = sorted((e for e in spans if e.get("cat") == "step"), key=lambda e: e["ts"])
    meta = trace.get("tfprof", {})
    print(f"trace: {path}")
    print(f"  {len(events)} events, {meta.get('events_recorded', '?')} recorded, "
          f"{trace.get('dropped_events', '?')} dropped, clock {meta.get('clock', '?')}")
    gpu = meta.get("gpu")
    if gpu:
        print(f"  GPU {gpu['state']}{': ' + gpu['reason'] if gpu.get('reason') else ''}: "
              f"{gpu['kernels']} kernels, {gpu['memcpys']} copies, {gpu['memsets']} memsets, "
              f"{gpu['api_calls']} API calls; {gpu['records_dropped']} records dropped, "
              f"{gpu['late_records']} late")
    if steps:
        durations = sorted(s["dur"] for s in steps)
        print(f"  {len(steps)} steps: median {durations[len(durations) // 2] / 1000:.3f} ms, "
              f"max {durations[-1] / 1000:.3f} ms")
    # Self time per op and row: a span's duration minus its direct children's. Step spans (host
    # Steps rows, per-stream GPU step spans) only group the others.
    by_row = collections.defaultdict(list)
    for span in spans:
        if span.get("cat") not in ("step", "gpu_user_annotation"):
            by_row[(span["pid"], span["tid"])].append(span)

    def row_name(row):
        name = names.get(row, row[1])
        return f"{processes[row[0]]}: {name}" if processes.get(row[0], "").startswith("GPU") else name

    for row_id, row in sorted(by_row.items(), key=lambda item: str(row_name(item[0]))):
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
        print(f"  row '{row_name(row_id)}': {len(row)} spans")
        for name, duration in self_time.most_common(5):
            print(f"    {name:<32} {duration / 1000:10.3f} ms self  {100 * duration / total:5.1f}%")


if __name__ == "__main__":
    main()
