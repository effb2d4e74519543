"""Type-checked by test_interop.py with `mypy --strict`: the public API as users write it."""

from __future__ import annotations

import tfprof


@tfprof.span
def load(count: int) -> list[int]:
    return list(range(count))


@tfprof.span("preprocess")
def preprocess(batch: list[int]) -> list[float]:
    return [value / 2 for value in batch]


def main(path: str) -> int:
    with tfprof.trace(path, buffer_events=4096, clock="tsc") as trace:
        for number in range(2):
            with tfprof.step(number), tfprof.span("train_step"):
                values: list[float] = preprocess(load(4))
                tfprof.counter("batch", len(values))
                tfprof.instant("done")
    stats: tfprof.Stats = trace.stats
    trace.export(path + ".gz")
    version: str = tfprof.__version__
    return stats.events_recorded + len(version)


def convert_usage(path: str) -> None:
    tfprof.convert(path, path + ".json", layout="timeline", show_memory=True, rows="lanes")
    tfprof.convert(path, path + ".tfrecord", format="tfrecord")
    tfprof.merge([path, path + ".tfrecord"], "merged.json.gz", layout="timeline", show_dataflow=False, salvage=True)
    tfprof.merge([path, path + ".tfrecord"], "merged.pb", align="start")


def summary_usage(path: str) -> int:
    summary: tfprof.Summary = tfprof.summarize(path, top=5, input_ops=["*Loader*"], salvage=True)
    steps: tfprof.Table[tfprof.Step] = summary.steps
    slowest: int = max(step.duration_ns for step in steps)
    kernels: list[str] = [kernel.name for kernel in summary.top_kernels if kernel.communication]
    advice: list[str] = [text for finding in summary.findings for text in finding.recommendations]
    with tfprof.trace() as trace:
        pass
    again: tfprof.Summary = trace.summary()
    return slowest + len(kernels) + len(advice) + len(again.steps) + len(summary.text())


def capture_usage() -> bool:
    tfprof.listen(cuda="off", buffer_events=65536)
    tfprof.unlisten()
    tfprof.listen("cuda=off,buffer_events=65536", max_memory_mb=64)
    listening: bool = tfprof.is_listening()
    tfprof.unlisten()
    return listening
