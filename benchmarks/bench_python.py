"""What a tfprof span costs Python code, against baselines measured in the same run.

    python benchmarks/bench_python.py [--loops N] [--rounds R] [--json]

Context manager, per `with ...: pass`:
  baseline   `with contextlib.nullcontext(): pass`
  inactive   `with tfprof.span("x"): pass`, no trace running      target <= 1.2x baseline
  active     the same inside `tfprof.trace()`                      target <= 2.0x baseline
Decorated function, per call of a function whose body is `return None`, measured the same way:
  baseline   the function decorated with a do-nothing context manager, the decorator form of
             nullcontext (a `contextlib.ContextDecorator` whose __enter__/__exit__ do nothing)
  inactive / active `@tfprof.span`, as above, same targets.
  Printed for reference, without targets: the undecorated call, and the call under the cheapest
  possible Python decorator (a pass-through `functools.wraps` wrapper) with the ratios to it.

Each variant runs `loops` iterations of an unrolled-by-10 loop; the variants are measured in turn,
`rounds` times, and each keeps its fastest round (the one least disturbed by the machine). Exits 1
if a target is missed. With --json, prints the figures as one JSON line instead (ns per operation
by variant, and the events recorded and dropped): benchmarks/bench_hot_paths.py runs it in several
processes and reports medians.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import platform
import sys
import time
from typing import Callable, Dict, List

import tfprof

UNROLL = 10


def make_loop(body: str, namespace: Dict[str, object]) -> Callable[[int], None]:
    """A function running `body` UNROLL times per iteration, compiled once."""
    lines = ["def run(loops):", "    for _ in range(loops):"]
    lines += ["        " + body] * UNROLL
    exec("\n".join(lines), namespace)  # noqa: S102 - benchmark code generated here
    return namespace["run"]  # type: ignore[return-value]


def plain() -> None:
    return None


def passthrough(func: Callable[[], None]) -> Callable[[], None]:
    @functools.wraps(func)
    def wrapper() -> None:
        return func()

    return wrapper


@passthrough
def wrapped() -> None:
    return None


class NullDecorator(contextlib.ContextDecorator):
    def __enter__(self) -> "NullDecorator":
        return self

    def __exit__(self, *exc: object) -> None:
        return None


@NullDecorator()
def null_decorated() -> None:
    return None


@tfprof.span
def decorated() -> None:
    return None


def build_variants() -> Dict[str, Callable[[int], None]]:
    namespace: Dict[str, object] = {
        "contextlib": contextlib, "tfprof": tfprof, "plain": plain, "wrapped": wrapped,
        "null_decorated": null_decorated, "decorated": decorated,
    }
    return {
        "nullcontext": make_loop("with contextlib.nullcontext(): pass", namespace),
        "span": make_loop('with tfprof.span("x"): pass', namespace),
        "plain call": make_loop("plain()", namespace),
        "wraps call": make_loop("wrapped()", namespace),
        "null-decorated call": make_loop("null_decorated()", namespace),
        "decorated call": make_loop("decorated()", namespace),
    }


def measure(run: Callable[[int], None], loops: int) -> float:
    """Nanoseconds per operation for one round."""
    start = time.perf_counter_ns()
    run(loops)
    return (time.perf_counter_ns() - start) / (loops * UNROLL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=100_000, help="iterations per round (x10 operations)")
    parser.add_argument("--rounds", type=int, default=15, help="rounds per variant; the fastest counts")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args()

    variants = build_variants()
    best: Dict[str, float] = {}

    def record(key: str, value: float) -> None:
        best[key] = min(best.get(key, float("inf")), value)

    # Enough ring for every event of a round, so the active figures are of recorded, not dropped,
    # events (checked below).
    trace_options = {"buffer_events": 1 << 22}
    dropped_total = 0
    recorded_total = 0
    for _ in range(args.rounds):
        for name, run in variants.items():
            record(f"{name} (no trace)", measure(run, args.loops))
        trace = tfprof.trace(**trace_options).start()
        try:
            for name in ("span", "decorated call"):
                record(f"{name} (trace active)", measure(variants[name], args.loops))
        finally:
            trace.stop()
        dropped_total += trace.stats.events_dropped
        recorded_total += trace.stats.events_recorded

    if args.json:
        print(json.dumps({"ns": best, "events_recorded": recorded_total, "events_dropped": dropped_total}))
        return 0 if dropped_total == 0 else 1

    def ratio(key: str, baseline: str) -> float:
        return best[key] / best[baseline]

    checks: List[tuple[str, float, float]] = [
        ("span, no trace / nullcontext", ratio("span (no trace)", "nullcontext (no trace)"), 1.2),
        ("span, trace active / nullcontext", ratio("span (trace active)", "nullcontext (no trace)"), 2.0),
        ("decorated, no trace / null decorator", ratio("decorated call (no trace)", "null-decorated call (no trace)"), 1.2),
        ("decorated, trace active / null decorator", ratio("decorated call (trace active)", "null-decorated call (no trace)"), 2.0),
    ]
    references = [
        ("decorated, no trace / functools.wraps", ratio("decorated call (no trace)", "wraps call (no trace)")),
        ("decorated, trace active / functools.wraps", ratio("decorated call (trace active)", "wraps call (no trace)")),
    ]
    print(f"tfprof {tfprof.__version__} Python benchmark: Python {platform.python_version()} on "
          f"{platform.machine()}, best of {args.rounds} rounds x {args.loops * UNROLL} operations")
    for key in ("nullcontext (no trace)", "span (no trace)", "span (trace active)",
                "plain call (no trace)", "wraps call (no trace)", "null-decorated call (no trace)",
                "decorated call (no trace)",
                "decorated call (trace active)"):
        print(f"  {key:32s} {best[key]:8.1f} ns")
    print(f"  decorated call, trace active, beyond an undecorated call: "
          f"{best['decorated call (trace active)'] - best['plain call (no trace)']:.1f} ns")
    all_met = True
    for label, value, target in checks:
        met = value <= target
        all_met &= met
        print(f"  {label:44s} {value:5.2f}x  (target <= {target:.1f}x)  {'met' if met else 'MISSED'}")
    for label, value in references:
        print(f"  {label:44s} {value:5.2f}x  (reference, no target)")
    print(f"  events recorded {recorded_total}, dropped {dropped_total}")
    if dropped_total:
        print("  events were dropped: the active figures are not of recorded events")
        all_met = False
    print(f"  targets: {'all met' if all_met else 'NOT all met'}")
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
