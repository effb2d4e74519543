"""A training loop annotated with NVTX only, as many programs are: it never imports tfprof.

Run under ``tfprof run``, its ``step N`` ranges become tfprof steps and its ``forward`` and
``backward`` ranges spans (test_tfprof_run.py checks the trace).
Usage: nvtx_training_script.py [--steps N]
"""

import argparse

import nvtx


@nvtx.annotate("forward")
def forward(batch: int) -> int:
    return sum(value * batch for value in range(20_000))


def backward(activations: int) -> int:
    with nvtx.annotate("backward"):
        return sum(activations % (value + 1) for value in range(20_000))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    steps = parser.parse_args().steps
    for number in range(steps):
        nvtx.push_range(f"step {number}")
        backward(forward(number))
        nvtx.pop_range()
    print(f"trained {steps} steps")


if __name__ == "__main__":
    main()
