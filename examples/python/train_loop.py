"""A small training loop profiled with tfprof, in the style of the input-bound loops users ask
about: a loader thread decodes and augments batches and hands them over a bounded queue; the
main thread runs forward, backward and the optimizer update per step.

    python examples/python/train_loop.py [OUTPUT_PATH] [--steps N]

Open the trace in https://ui.perfetto.dev: a `Steps` row, a `loader` row and a `MainThread`
row; `wait_for_batch` on MainThread shows how long each step waited for input.
"""

from __future__ import annotations

import argparse
import hashlib
import queue
import threading
import time

import tfprof

BATCH_BYTES = 64 * 1024


@tfprof.span
def decode(index: int) -> bytearray:
    """Stands in for JPEG decoding: hashing is CPU work the GIL lets through in chunks."""
    data = bytearray(BATCH_BYTES)
    digest = hashlib.sha256(index.to_bytes(8, "little"))
    for offset in range(0, BATCH_BYTES, 4096):
        digest.update(data[offset : offset + 4096])
    data[:32] = digest.digest()
    time.sleep(0.005)  # reading the file: slower than a step computes, so the loop is input-bound
    return data


@tfprof.span("augment")
def augment(batch: bytearray) -> bytes:
    with tfprof.span("random_crop"):
        cropped = bytes(batch[: BATCH_BYTES // 2])
    with tfprof.span("flip"):
        return cropped[::-1]


def loader(batches: "queue.Queue[bytes | None]", steps: int) -> None:
    for index in range(steps):
        with tfprof.span("load_batch"):
            batch = augment(decode(index))
        batches.put(batch)
        tfprof.counter("queue_depth", batches.qsize())
    batches.put(None)


def compute(batch: bytes) -> float:
    with tfprof.span("forward"):
        loss = sum(batch[:4096]) / 4096.0
        time.sleep(0.001)
    with tfprof.span("backward"):
        time.sleep(0.002)
    with tfprof.span("optimizer_update"):
        time.sleep(0.0005)
    return loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", nargs="?", default="train_loop.json", help="trace path (.json or .json.gz)")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    with tfprof.trace(args.output) as trace:
        batches: "queue.Queue[bytes | None]" = queue.Queue(maxsize=2)
        thread = threading.Thread(target=loader, args=(batches, args.steps), name="loader")
        thread.start()
        for step in range(args.steps):
            with tfprof.step(step):
                with tfprof.span("wait_for_batch"):
                    batch = batches.get()
                assert batch is not None
                loss = compute(batch)
                tfprof.counter("loss", loss)
        thread.join()
    stats = trace.stats
    print(f"train_loop: {args.steps} steps, {stats.events_recorded} events recorded, "
          f"{stats.events_dropped} dropped, {stats.threads} threads -> {args.output}")


if __name__ == "__main__":
    main()
