# %% [markdown]
# # Where did the time go? `tfprof.summarize` in a notebook
#
# A notebook in the percent format (open it with Jupytext, VS Code or PyCharm as cells, or run it
# as a script: `python examples/python/summary_notebook.py [TRACE_PATH]`). It profiles a small
# loop whose steps wait for their input, then reads the figures of `tfprof summary` as objects.

# %%
import sys
import time

import tfprof

path = sys.argv[1] if len(sys.argv) > 1 else "summary_notebook.json"


def next_batch(index: int) -> list[int]:
    # Named like PyTorch's loader, so the summary counts this span as waiting for input.
    with tfprof.span("enumerate(DataLoader)#next"):
        time.sleep(0.004)  # reading from a slow disk
        return list(range(index, index + 64))


with tfprof.trace(path) as trace:
    for step in range(8):
        with tfprof.step(step):
            batch = next_batch(step)
            with tfprof.span("forward"):
                total = sum(value * value for value in batch)
                time.sleep(0.001)

# %% The summary: in Jupyter the last expression of a cell shows as HTML (steps, findings, top ops).
summary = trace.summary()  # the same as tfprof.summarize(path)
summary

# %% Every key of `tfprof summary --json` is an attribute; times are in nanoseconds.
for finding in summary.findings:
    print(f"{finding.kind}: {finding.title}")
waits = [step.input_wait_ns / step.duration_ns for step in summary.steps]
print(f"{len(summary.steps)} steps, input wait {min(waits):.0%} to {max(waits):.0%} of each step")

# %% The tables as DataFrames, where pandas is installed.
try:
    steps = summary.to_pandas("steps")
    print(steps[["number", "duration_ns", "input_wait_ns", "host_compute_ns"]])
except ImportError as error:
    print(error)
