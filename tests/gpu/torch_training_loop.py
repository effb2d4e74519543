"""A small PyTorch training loop for the GPU kit: a conv net on synthetic 32x32 images fed by a
DataLoader (two worker processes, pinned memory), the same work whatever traces it:

  --tracer tfprof  tfprof.trace(TRACE, cuda="on"), a tfprof.step per step, spans for the phases
  --tracer torch   torch.profiler (CPU and CUDA activities), a ProfilerStep#N range per step (as
                   prof.step() marks them under a schedule; without one it marks none),
                   record_function for the phases; export_chrome_trace(TRACE), and its
                   key_averages() GPU time per op into the result (op_device_us)
  --tracer nvtx    torch.autograd.profiler.emit_nvtx() and an NVTX range "step N" per step, for
                   running under `tfprof run` (the preload records NVTX ranges as ops and steps)
  --tracer none    untraced

The work is deterministic (seeded data, cuDNN autotuning off), so two processes launch the same
kernels. Before tracing starts, untraced warm-up steps load the libraries' kernels and create
their handles, and a second of matrix products brings the GPU's clock up from idle, so kernel
durations compare between processes. Writes --result, a JSON object: the tracer, the tfprof binding used, the device, torch's
version and each step's wall time in ms (the loop reads the loss every step, as training loops
that log do, so a step ends when its GPU work has).

Usage: torch_training_loop.py --tracer tfprof|torch|nvtx|none --result JSON [--trace PATH]
                              [--steps N]
With --tracer tfprof the tfprof package is used, else (when it cannot be imported) the C library
named by TFPROF_LIBRARY through ctypes.
"""
import argparse
import contextlib
import ctypes
import json
import os
import time

import torch
from torch import nn

BATCH = 64
IMAGE = 32
CLASSES = 10


def make_model():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * (IMAGE // 2) ** 2, 128), nn.ReLU(), nn.Linear(128, CLASSES))


WARMUP_STEPS = 3
CLOCK_WARMUP_S = 1.0


def make_loader(batches):
    generator = torch.Generator().manual_seed(0)
    images = torch.randn(batches * BATCH, 3, IMAGE, IMAGE, generator=generator)
    labels = torch.randint(0, CLASSES, (batches * BATCH,), generator=generator)
    dataset = torch.utils.data.TensorDataset(images, labels)
    return torch.utils.data.DataLoader(dataset, batch_size=BATCH, shuffle=False, num_workers=2,
                                       pin_memory=True)


class CtypesTfprof:
    """tfprof through its C ABI (TFPROF_LIBRARY), where the Python package could not be built."""

    def __init__(self, library):
        self.lib = ctypes.CDLL(library)
        self.lib.prof_last_error.restype = ctypes.c_char_p
        self.lib.prof_begin_step.argtypes = [ctypes.c_int64]
        self.lib.prof_span_begin.argtypes = [ctypes.c_char_p]

    @contextlib.contextmanager
    def trace(self, path, cuda):
        options = f"output={path},cuda={cuda}".encode()
        if self.lib.prof_start(options) != 0:
            raise RuntimeError(f"prof_start: {self.lib.prof_last_error().decode()}")
        try:
            yield
        finally:
            if self.lib.prof_stop() != 0:
                raise RuntimeError(f"prof_stop: {self.lib.prof_last_error().decode()}")

    @contextlib.contextmanager
    def step(self, number):
        self.lib.prof_begin_step(number)
        try:
            yield
        finally:
            self.lib.prof_end_step()

    @contextlib.contextmanager
    def span(self, name):
        self.lib.prof_span_begin(name.encode())
        try:
            yield
        finally:
            self.lib.prof_span_end()


def tfprof_binding():
    try:
        import tfprof
        return tfprof, "python package"
    except ImportError as error:
        library = os.environ.get("TFPROF_LIBRARY")
        if not library:
            raise RuntimeError(f"import tfprof failed ({error}) and TFPROF_LIBRARY is not set")
        return CtypesTfprof(library), f"ctypes ({error})"


class Phases:
    """Names the phases of a step for the tracer in use; each returns a context manager."""

    def __init__(self, tracer, tfprof=None):
        self.tracer, self.tfprof = tracer, tfprof

    def step(self, number):
        if self.tracer == "tfprof":
            return self.tfprof.step(number)
        if self.tracer == "torch":
            return torch.profiler.record_function(f"ProfilerStep#{number}")
        if self.tracer == "nvtx":
            return nvtx_range(f"step {number}")
        return contextlib.nullcontext()

    def phase(self, name):
        if self.tracer == "tfprof":
            return self.tfprof.span(name)
        if self.tracer == "torch":
            return torch.profiler.record_function(name)
        if self.tracer == "nvtx":
            return nvtx_range(name)
        return contextlib.nullcontext()



@contextlib.contextmanager
def nvtx_range(name):
    torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()


class Training:
    """The model, optimizer and data; `step` runs one training step in the given phases."""

    def __init__(self, steps):
        self.model = make_model().cuda()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.loss_function = nn.CrossEntropyLoss()
        self.batches = iter(make_loader(WARMUP_STEPS + steps))

    def step(self, number, phases):
        with phases.step(number):
            with phases.phase("data"):
                images, labels = next(self.batches)
                images = images.cuda(non_blocking=True)
                labels = labels.cuda(non_blocking=True)
            with phases.phase("forward"):
                loss = self.loss_function(self.model(images), labels)
            with phases.phase("backward"):
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
            with phases.phase("optimizer"):
                self.optimizer.step()
            return loss.item()

    def warm_up(self):
        """Untraced: first-use work (library handles, kernel loading), then the GPU's clock."""
        for number in range(WARMUP_STEPS):
            self.step(-1 - number, Phases("none"))
        matrix = torch.randn(4096, 4096, device="cuda")
        begin = time.perf_counter()
        while time.perf_counter() - begin < CLOCK_WARMUP_S:
            matrix = (matrix @ matrix).clamp_(-1, 1)
            torch.cuda.synchronize()


def train(training, steps, phases):
    step_ms = []
    for number in range(steps):
        begin = time.perf_counter()
        loss = training.step(number, phases)
        step_ms.append((time.perf_counter() - begin) * 1e3)
    return step_ms, loss


def device_time_by_op(profiler):
    """torch.profiler's own per-op GPU time (key_averages()): {op name: [calls, device time of
    the kernels launched directly in it (self), with its children's (total)]} in us, for ops
    that launched any GPU work. Torch 2.4 renamed cuda_time to device_time: both are tried."""
    def attribute(row, *names):
        for name in names:
            if hasattr(row, name):
                return float(getattr(row, name))
        return 0.0
    found = {}
    for row in profiler.key_averages():
        total = attribute(row, "device_time_total", "cuda_time_total")
        if total > 0:
            found[row.key] = [row.count, attribute(row, "self_device_time_total",
                                                   "self_cuda_time_total"), total]
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tracer", choices=("tfprof", "torch", "nvtx", "none"), required=True)
    parser.add_argument("--trace", help="the trace's path (tfprof, torch)")
    parser.add_argument("--result", required=True)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    if args.tracer in ("tfprof", "torch") and not args.trace:
        parser.error(f"--tracer {args.tracer} needs --trace")
    if not torch.cuda.is_available():
        raise SystemExit("torch_training_loop: torch sees no CUDA device")
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True

    training = Training(args.steps)
    training.warm_up()
    binding = None
    op_device_us = None
    if args.tracer == "tfprof":
        tfprof, binding = tfprof_binding()
        with tfprof.trace(args.trace, cuda="on"):
            step_ms, loss = train(training, args.steps, Phases("tfprof", tfprof=tfprof))
    elif args.tracer == "torch":
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities) as profiler:
            step_ms, loss = train(training, args.steps, Phases("torch"))
        profiler.export_chrome_trace(args.trace)
        op_device_us = device_time_by_op(profiler)
    elif args.tracer == "nvtx":
        with torch.autograd.profiler.emit_nvtx():
            step_ms, loss = train(training, args.steps, Phases("nvtx"))
    else:
        step_ms, loss = train(training, args.steps, Phases("none"))

    with open(args.result, "w", encoding="utf-8") as file:
        json.dump({"tracer": args.tracer, "binding": binding, "steps": args.steps,
                   "step_ms": step_ms, "loss": loss, "device": torch.cuda.get_device_name(0),
                   "torch": torch.__version__, "torch_cuda": torch.version.cuda,
                   "op_device_us": op_device_us}, file)


if __name__ == "__main__":
    main()
