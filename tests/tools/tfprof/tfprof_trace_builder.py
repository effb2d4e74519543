"""Builds Chrome trace JSON shaped exactly like tfprof's (runtime/export/chrome_trace_writer.cc
and gpu_chrome_rows.cc) with known content, so that tests know the right answers.

Times are given in nanoseconds on a monotonic clock; `start_monotonic_ns`/`start_unix_ns` make
the header that maps them to wall-clock time.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Dict, List, Optional, Sequence, Tuple

MS = 1_000_000
US = 1_000


def _micros(ns: int) -> float:
    return round(ns / 1000.0, 3)


class TfprofTrace:
    def __init__(self, pid: int = 4242, start_monotonic_ns: int = 0,
                 start_unix_ns: int = 1_700_000_000_000_000_000, gpu_pid: int = 0,
                 dropped_events: int = 0, gpu_records_dropped: int = 0,
                 memory_dropped_events: int = 0, discarded_events: int = 0) -> None:
        self.pid = pid
        self.gpu_pid = gpu_pid
        self.start_monotonic_ns = start_monotonic_ns
        self.start_unix_ns = start_unix_ns
        self.dropped_events = dropped_events
        self.gpu_records_dropped = gpu_records_dropped
        self.memory_dropped_events = memory_dropped_events
        self.discarded_events = discarded_events
        self.events: List[Dict[str, Any]] = [
            {"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": "python"}},
        ]
        self.threads: Dict[int, str] = {}
        self.end_ns = start_monotonic_ns

    def _at(self, ns: int) -> int:
        t = self.start_monotonic_ns + ns
        self.end_ns = max(self.end_ns, t)
        return t

    def thread(self, tid: int, name: str) -> "TfprofTrace":
        self.threads[tid] = name
        self.events.append({"ph": "M", "pid": self.pid, "tid": tid, "name": "thread_name",
                            "args": {"name": name}})
        return self

    def step(self, number: int, begin_ns: int, end_ns: int) -> "TfprofTrace":
        self.events.append({"ph": "X", "cat": "step", "name": f"step {number}", "pid": self.pid,
                            "tid": 2000000000, "ts": _micros(self._at(begin_ns)),
                            "dur": _micros(end_ns - begin_ns), "args": {"step": number}})
        self._at(end_ns)
        return self

    def span(self, name: str, begin_ns: int, end_ns: int, tid: int = 1,
             cat: str = "user_annotation") -> "TfprofTrace":
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": self.pid, "tid": tid,
                            "ts": _micros(self._at(begin_ns)), "dur": _micros(end_ns - begin_ns),
                            "args": {}})
        self._at(end_ns)
        return self

    def kernel(self, name: str, begin_ns: int, end_ns: int, stream: int = 7,
               device: int = 0, correlation: int = 1) -> "TfprofTrace":
        self.events.append({"ph": "X", "cat": "kernel", "name": name, "pid": self.gpu_pid + device,
                            "tid": stream, "ts": _micros(self._at(begin_ns)),
                            "dur": _micros(end_ns - begin_ns),
                            "args": {"device": device, "context": 1, "stream": stream,
                                     "correlation": correlation}})
        self._at(end_ns)
        return self

    def memcpy(self, kind: str, begin_ns: int, end_ns: int, nbytes: int, stream: int = 7,
               device: int = 0) -> "TfprofTrace":
        self.events.append({"ph": "X", "cat": "gpu_memcpy",
                            "name": f"Memcpy {kind} (Pinned -> Device)",
                            "pid": self.gpu_pid + device, "tid": stream,
                            "ts": _micros(self._at(begin_ns)), "dur": _micros(end_ns - begin_ns),
                            "args": {"device": device, "context": 1, "stream": stream,
                                     "correlation": 9, "bytes": nbytes, "kind": kind}})
        self._at(end_ns)
        return self

    def document(self) -> Dict[str, Any]:
        return {
            "displayTimeUnit": "ns",
            "dropped_events": self.dropped_events,
            "gpu_records_dropped": self.gpu_records_dropped,
            "tfprof": {
                "version": "0.1.0", "clock": "monotonic", "pid": self.pid,
                "command_line": ["python", "train.py"],
                "start_time_unix_ns": self.start_unix_ns,
                "start_time_monotonic_ns": self.start_monotonic_ns,
                "end_time_monotonic_ns": self.end_ns,
                "events_recorded": len(self.events),
                "unmatched_span_ends": 0, "unmatched_step_ends": 0,
                "memory_dropped_events": self.memory_dropped_events,
                "discarded_events": self.discarded_events,
                "gpu": {},
                "timestamps": "CLOCK_MONOTONIC microseconds",
            },
            "traceEvents": self.events,
        }

    def write(self, path: pathlib.Path) -> pathlib.Path:
        path.write_text(json.dumps(self.document()))
        return path


def input_bound_trace(steps: int = 5, step_ms: int = 100,
                      kernels: Sequence[Tuple[str, int]] = (("volta_sgemm_128x64_nn", 50),),
                      **kwargs: Any) -> TfprofTrace:
    """Each step: 40% of it the host waits in IteratorGetNext with the GPU idle, then train_step
    launches `kernels` back to back from 42% of the step, each (name, percent of the step) for
    50% in all, and copies 100 MB in 5%; the GPU is idle 45%. The kernels' correlation ids
    count from 1 over the whole trace."""
    trace = TfprofTrace(**kwargs).thread(1, "MainThread")
    unit = step_ms * MS // 100
    for index in range(steps):
        b = index * 100 * unit
        trace.step(index + 1, b, b + 100 * unit)
        trace.span("IteratorGetNext", b, b + 40 * unit)
        trace.span("train_step", b + 40 * unit, b + 100 * unit)
        trace.span("cudaLaunchKernel", b + 41 * unit, b + 42 * unit, cat="cuda_runtime")
        begin = 42
        for number, (name, percent) in enumerate(kernels):
            trace.kernel(name, b + begin * unit, b + (begin + percent) * unit,
                         correlation=index * len(kernels) + number + 1)
            begin += percent
        trace.memcpy("HtoD", b + 92 * unit, b + 97 * unit, 100_000_000)
    return trace
