"""An unmodified PyTorch training loop (it knows nothing of tfprof), for `tfprof run`.

  torch_train.py [--steps N] [--input-ms MS] [--workers W] [--profiler DIR] [--own-trace PATH]
                 [--record-function] [--profiler-no-export] [--hidden H] [--nvtx-steps]

Trains an MLP for N optimizer steps on a map-style dataset whose every sample takes MS
milliseconds to load (the slow input pipeline: the trainer waits on the DataLoader), with W
loader worker processes. --profiler DIR also runs torch.profiler (CPU activity, one
ProfilerStep#N a step) and exports its Chrome trace into DIR; --own-trace PATH wraps the loop in
the program's own `tfprof.trace(PATH)`; --record-function labels each step's loss computation
with torch.profiler.record_function("loss"); --profiler-no-export runs torch.profiler and writes
nothing (for benchmarks/bench_frameworks.py); --nvtx-steps marks each step, its fetch included,
with an NVTX range "step N" (the nvtx package). The last line gives the median step time, measured
by the loop itself from one optimizer step's end to the next. --until FILE trains epoch after
epoch of N steps until FILE exists (for `tfprof run --on-demand`, captured while it runs), and
prints "training" once its first step is done.
"""
import argparse
import contextlib
import os
import statistics
import time
import warnings

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

BATCH = 32
HIDDEN = 1024  # enough compute a step that a fast loader is a small share of it (--hidden)


class SlowDataset(Dataset):
    def __init__(self, samples, input_ms):
        self.samples = samples
        self.input_s = input_ms / 1000.0
        self.data = torch.randn(samples, 64)
        self.labels = torch.randint(0, 10, (samples,))

    def __len__(self):
        return self.samples

    def __getitem__(self, index):
        if self.input_s:
            time.sleep(self.input_s)
        return self.data[index], self.labels[index]


class Net(nn.Module):
    def __init__(self, hidden=HIDDEN):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, 10)

    def forward(self, x):
        return self.head(self.encoder(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--input-ms", type=float, default=0.0)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--profiler")
    parser.add_argument("--own-trace")
    parser.add_argument("--record-function", action="store_true")
    parser.add_argument("--profiler-no-export", action="store_true")
    parser.add_argument("--nvtx-steps", action="store_true")
    parser.add_argument("--hidden", type=int, default=HIDDEN, help="the MLP's width: the work a step")
    parser.add_argument("--until", help="train until this file exists")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    loader = DataLoader(SlowDataset(args.steps * BATCH, args.input_ms), batch_size=BATCH,
                        num_workers=args.workers)
    model = Net(args.hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_function = nn.CrossEntropyLoss()
    with contextlib.ExitStack() as stack:
        profiler = None
        if args.profiler or args.profiler_no_export:
            warnings.filterwarnings("ignore", module="torch.profiler")
            profiler = stack.enter_context(torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU],
                schedule=torch.profiler.schedule(wait=0, warmup=0, active=args.steps, repeat=1),
                on_trace_ready=torch.profiler.tensorboard_trace_handler(args.profiler)
                if args.profiler else None))
        if args.own_trace:
            import tfprof
            stack.enter_context(tfprof.trace(args.own_trace))
        step_ms = []
        last = time.perf_counter()
        batches = iter(loader)
        number = 0
        while number < args.steps or (args.until and not os.path.exists(args.until)):
            if args.until and number > 0 and number % args.steps == 0:
                for _ in batches:  # the epoch's end
                    pass
                batches = iter(loader)
            if args.nvtx_steps:
                import nvtx
                step_range = nvtx.annotate(f"step {number}")
                step_range.__enter__()
            inputs, labels = next(batches)
            optimizer.zero_grad()
            outputs = model(inputs)
            with torch.profiler.record_function("loss") if args.record_function else contextlib.nullcontext():
                loss = loss_function(outputs, labels)
            loss.backward()
            optimizer.step()
            if profiler is not None:
                profiler.step()
            if args.nvtx_steps:
                step_range.__exit__(None, None, None)
            now = time.perf_counter()
            step_ms.append((now - last) * 1e3)
            last = now
            number += 1
            if args.until and number == 1:
                print("training", flush=True)
        for _ in batches:  # the epoch's end, as a for loop over the loader reaches it
            pass
    print(f"trained {number} steps, loss {loss.item():.3f}, median step "
          f"{statistics.median(step_ms[1:] or step_ms):.3f} ms")


if __name__ == "__main__":
    main()
