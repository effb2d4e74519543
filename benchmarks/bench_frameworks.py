"""What `tfprof run`'s PyTorch integration costs a training step, against the same loop untraced
and under torch.profiler (CPU activity), in one run.

Each round runs tests/interop/programs/torch_train.py (an MLP on a fast in-memory DataLoader on
one CPU thread: --hidden 2048 gives about 13 ms a step, --hidden 1024 about 4 ms) once in each
mode, each in a fresh process, modes alternating; the program measures its own median step. Reported: per mode the
median of the rounds' medians, their spread, and the ratio to the untraced loop.

Target (issue 31): tfprof at the default module depth adds at most 3% to the step.

Usage: python benchmarks/bench_frameworks.py [--rounds R] [--steps N] [--hidden H] [--tfprof PATH]
  Run with a Python that has torch and tfprof (scripts/test.sh's build/venv-tf); --tfprof is the
  command (default: the one next to this Python). Exits 1 when the target is not met.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import sysconfig
import tempfile

PROGRAM = os.path.join(os.path.dirname(__file__), "..", "tests", "interop", "programs", "torch_train.py")
TARGET = 1.03


def median_step_ms(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    match = re.search(r"median step ([0-9.]+) ms", result.stdout)
    if result.returncode != 0 or match is None:
        sys.exit(f"bench_frameworks: {' '.join(command)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return float(match[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--hidden", type=int, default=2048)
    parser.add_argument("--tfprof", default=os.path.join(sysconfig.get_path("scripts"), "tfprof"))
    args = parser.parse_args()
    program = [sys.executable, os.path.abspath(PROGRAM), "--steps", str(args.steps), "--hidden",
               str(args.hidden)]
    with tempfile.TemporaryDirectory() as work:
        modes = {
            "untraced": program,
            "tfprof run (module depth 3)": [args.tfprof, "run", "--log-level", "error", "-o",
                                            os.path.join(work, "t.json"), "--", *program],
            "tfprof run, frameworks off": [args.tfprof, "run", "--log-level", "error", "--frameworks",
                                           "off", "-o", os.path.join(work, "u.json"), "--", *program],
            "torch.profiler (CPU)": [*program, "--profiler-no-export"],
        }
        results = {mode: [] for mode in modes}
        for _ in range(args.rounds):
            for mode, command in modes.items():
                results[mode].append(median_step_ms(command))
    base = statistics.median(results["untraced"])
    print(f"PyTorch step time: {args.steps} steps of torch_train.py --hidden {args.hidden}, median of {args.rounds} processes "
          f"per mode (torch {__import__('torch').__version__}, Python {sys.version.split()[0]})")
    print(f"  {'mode':<30} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'ratio':>7}")
    for mode, values in results.items():
        median = statistics.median(values)
        print(f"  {mode:<30} {median:>10.3f} {min(values):>8.3f} {max(values):>8.3f} {median / base:>7.3f}")
    ratio = statistics.median(results["tfprof run (module depth 3)"]) / base
    met = ratio <= TARGET
    print(f"verdict: {'target met' if met else 'target NOT met'}: tfprof's PyTorch integration adds "
          f"{(ratio - 1) * 100:.1f}% to the step (target <= {(TARGET - 1) * 100:.0f}%)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
