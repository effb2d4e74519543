"""What `tfprof run`'s framework integrations cost a training step, against the same loop
untraced (and for PyTorch with TFPROF_TORCH_OPS=on and under torch.profiler with CPU activity),
in one run.

--framework torch (default): each round runs tests/interop/programs/torch_train.py (an MLP on a
fast in-memory DataLoader on one CPU thread: --hidden 2048 gives about 13 ms a step, --hidden 1024
about 4 ms). --framework keras: tests/interop/programs/keras_fit.py (an MLP fitted on an in-memory
tf.data pipeline; --hidden 1024 gives about 5 ms a step), with TensorFlow's profiler on (tfprof
run's default under Keras: tf.data input waits) and off. Each mode runs once a round, each in a
fresh process, modes alternating; the program measures its own median step. Reported: per mode
the median of the rounds' medians, their spread, and the ratio to the untraced loop.

Target (issue 31): tfprof's integration at its defaults adds at most 3% to the step.

Usage: python benchmarks/bench_frameworks.py [--framework torch|keras] [--rounds R] [--steps N]
                                             [--hidden H] [--tfprof PATH]
  Run with a Python that has the framework and tfprof (scripts/test.sh's build/venv-tf); --tfprof
  is the command (default: the one next to this Python). Exits 1 when the target is not met.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import sysconfig
import tempfile

PROGRAMS = os.path.join(os.path.dirname(__file__), "..", "tests", "interop", "programs")
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
    parser.add_argument("--framework", choices=("torch", "keras"), default="torch")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--hidden", type=int)
    parser.add_argument("--onednn", choices=("1", "0"), default="1",
                        help="keras: TF_ENABLE_ONEDNN_OPTS (TensorFlow's default on x86 is 1; with 0 "
                             "its Eigen thread pool runs the ops, which TensorFlow's profiler slows)")
    parser.add_argument("--tfprof", default=os.path.join(sysconfig.get_path("scripts"), "tfprof"))
    args = parser.parse_args()
    if args.hidden is None:
        args.hidden = 2048 if args.framework == "torch" else 1024
    script = "torch_train.py" if args.framework == "torch" else "keras_fit.py"
    program = [sys.executable, os.path.abspath(os.path.join(PROGRAMS, script)), "--steps", str(args.steps),
               "--hidden", str(args.hidden)]
    defaults = "tfprof run (module depth 3)" if args.framework == "torch" else "tfprof run (TF profiler on)"
    with tempfile.TemporaryDirectory() as work:
        def under_tfprof(name, *extra):
            return [args.tfprof, "run", "--log-level", "error", *extra, "-o", os.path.join(work, name), "--",
                    *program]

        base_env = None if args.framework == "torch" else {**os.environ, "TF_ENABLE_ONEDNN_OPTS": args.onednn}
        modes = {"untraced": (program, base_env), defaults: (under_tfprof("t.json"), base_env)}
        if args.framework == "torch":
            modes["tfprof run, TFPROF_TORCH_OPS=on"] = (under_tfprof("o.json"),
                                                        {**os.environ, "TFPROF_TORCH_OPS": "on"})
            modes["torch.profiler (CPU)"] = ([*program, "--profiler-no-export"], None)
        else:
            modes["tfprof run, TF profiler off"] = (under_tfprof("p.json"),
                                                    {**base_env, "TFPROF_TENSORFLOW_PROFILER": "off"})
        modes["tfprof run, frameworks off"] = (under_tfprof("u.json", "--frameworks", "off"), base_env)
        results = {mode: [] for mode in modes}
        for _ in range(args.rounds):
            for mode, (command, env) in modes.items():
                results[mode].append(median_step_ms(command, env))
    framework = __import__(args.framework)
    base = statistics.median(results["untraced"])
    print(f"{args.framework} step time: {args.steps} steps of {script} --hidden {args.hidden}, median of "
          f"{args.rounds} processes per mode ({args.framework} {framework.__version__}, Python {sys.version.split()[0]}"
          f"{'' if args.framework == 'torch' else ', TF_ENABLE_ONEDNN_OPTS=' + args.onednn})")
    print(f"  {'mode':<30} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'ratio':>7}")
    for mode, values in results.items():
        median = statistics.median(values)
        print(f"  {mode:<30} {median:>10.3f} {min(values):>8.3f} {max(values):>8.3f} {median / base:>7.3f}")
    ratio = statistics.median(results[defaults]) / base
    met = ratio <= TARGET
    print(f"verdict: {'target met' if met else 'target NOT met'}: tfprof's {args.framework} integration adds "
          f"{(ratio - 1) * 100:.1f}% to the step (target <= {(TARGET - 1) * 100:.0f}%)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
